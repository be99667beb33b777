// List + watch of one resource, the way client-go's reflector does it: a paginated list
// replaces what the sink holds, then a watch from the list's resourceVersion streams changes
// (with bookmarks). A broken watch resumes from the last resourceVersion seen; `410 Gone`
// (the version was compacted away) relists; an unreachable apiserver is retried with backoff.
// An optional resource (a CRD that may not be installed) that is not served counts as empty
// and is looked for again now and then, so that a CRD installed later is picked up.
#ifndef LAHAR_CACHE_KUBE_REFLECTOR_H_
#define LAHAR_CACHE_KUBE_REFLECTOR_H_

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cache/kube/client.h"
#include "rapidjson/document.h"

namespace lahar {

enum class WatchEventType { kAdded, kModified, kDeleted };

// Receives one resource's objects (JSON, as the apiserver sent them). Called from the
// reflector's thread only.
class WatchSink {
 public:
  virtual ~WatchSink() = default;
  // The complete current set: objects the sink holds that are not in `objects` are gone.
  virtual void Replace(const std::vector<const rapidjson::Value*>& objects) = 0;
  virtual void Apply(WatchEventType type, const rapidjson::Value& object) = 0;
};

struct ReflectorOptions {
  int page_size = 500;
  std::chrono::seconds watch_timeout{300};  // the server ends each watch after this
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{10000};
  // The resource's API may be absent (HTTP 404, its CRD not installed) or not granted (403,
  // RBAC older than the daemon): then the sink holds nothing, the reflector counts as synced,
  // and the list is tried again every `absent_recheck`.
  bool optional = false;
  std::chrono::milliseconds absent_recheck{10000};
};

class Reflector {
 public:
  // `path` is the collection, e.g. "/api/v1/pods" or "/apis/scheduling.volcano.sh/v1beta1/queues".
  Reflector(KubeClient& client, std::string resource, std::string path, WatchSink& sink, ReflectorOptions options = {});

  // Runs until `stop` is set (or the client shuts down).
  void Run(const std::atomic<bool>& stop);

  const std::string& resource() const { return resource_; }
  // True once the first list has reached the sink.
  bool synced() const { return synced_.load(); }
  int64_t lists() const { return lists_.load(); }
  int64_t events() const { return events_.load(); }
  // An optional resource the apiserver does not serve (or lets us read) at the moment.
  bool absent() const { return absent_.load(); }

 private:
  absl::Status List(const std::atomic<bool>& stop);
  // OK when the server ended the watch normally; NotFound-free contract: returns
  // FailedPrecondition when the resourceVersion is gone (relist needed).
  absl::Status Watch(const std::atomic<bool>& stop);
  void HandleLine(std::string_view line, absl::Status& watch_error);
  // An optional resource is not there (HTTP 404 or 403): empties the sink once, logs once, and
  // returns NotFound so that Run looks again later.
  absl::Status MarkAbsent(int http_status, std::string_view why);

  KubeClient& client_;
  const std::string resource_;
  const std::string path_;
  WatchSink& sink_;
  const ReflectorOptions options_;
  std::string resource_version_;
  std::atomic<bool> synced_{false};
  std::atomic<int64_t> lists_{0};
  std::atomic<int64_t> events_{0};
  std::atomic<bool> absent_{false};
};

// True for the error Watch returns when the resourceVersion has expired (410 Gone).
bool IsGone(const absl::Status& status);

}  // namespace lahar

#endif  // LAHAR_CACHE_KUBE_REFLECTOR_H_
