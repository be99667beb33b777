// Status writes of PodGroups and Queues go to the `status` subresource where the CRD has one
// and to the object itself where it does not: Lahar's CRDs have it for both, Volcano's PodGroup
// CRD has none (`subresources: {}`), so .../podgroups/NAME/status is a 404 there. Which layout
// is installed is found out once from API discovery (GET /apis/GROUP/VERSION lists
// "podgroups/status" only when the subresource exists; readable by every authenticated user),
// and again when a write shows that the CRD has changed since.
#ifndef LAHAR_SCHEDULER_DAEMON_STATUS_PATCHER_H_
#define LAHAR_SCHEDULER_DAEMON_STATUS_PATCHER_H_

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "cache/kube/client.h"

namespace lahar {

// The resources of an APIResourceList (a discovery document) that have a status subresource:
// {"podgroups", "queues"} when the list names "podgroups/status" and "queues/status".
absl::StatusOr<std::set<std::string, std::less<>>> ResourcesWithStatus(std::string_view api_resource_list);

// Whether `object` (JSON) shows the JSON merge patch `patch` applied: every field the patch
// sets has that value, every field it sets to null is absent. Objects are compared field by
// field (other writers' fields may be there too), anything else as a whole.
bool MergePatchApplied(std::string_view patch, std::string_view object);

class StatusPatcher {
 public:
  using RequestFn = std::function<absl::StatusOr<HttpResult>(std::string_view method, std::string_view target,
                                                        std::string_view body, std::string_view content_type)>;

  // `group_version_path`: the discovery document of the resources, e.g.
  // "/apis/scheduling.volcano.sh/v1beta1". `send` makes one request (KubeClient::Request).
  StatusPatcher(RequestFn send, std::string group_version_path);
  StatusPatcher(KubeClient& client, std::string group_version_path);

  // Merge-patches `patch`, which holds only `status`, into the object at `object_path` (of
  // `resource`, e.g. "podgroups"): to OBJECT/status when the resource has the subresource, else
  // to the object itself, which then changes status only (a merge patch carries no
  // resourceVersion, so it never conflicts with other writers). When the answer says the
  // layout has changed (a 404 from .../status; status dropped by a write to the object because
  // the subresource appeared), discovery is asked again and, if it now says otherwise, the
  // write is sent the other way. A write to the object whose status was dropped although
  // discovery still says there is no subresource (discovery lags a CRD change) is an
  // Unavailable error, so that the caller writes again later.
  absl::StatusOr<HttpResult> Patch(std::string_view resource, std::string_view object_path, std::string_view patch);

  // Whether `resource` has a status subresource, asking discovery when not known. An
  // unanswered discovery reads as yes (the usual layout) and is asked again next time.
  bool HasStatusSubresource(std::string_view resource);

  int64_t discoveries() const;  // discovery requests answered, for tests

 private:
  struct Discovered {
    std::set<std::string, std::less<>> with_status;
    bool answered = false;  // false: discovery failed, every resource presumed to have status
  };
  std::shared_ptr<const Discovered> Current();
  // Drops `seen` unless another thread has already replaced it.
  void Forget(const std::shared_ptr<const Discovered>& seen);
  absl::StatusOr<HttpResult> SendPatch(std::string_view object_path, bool to_subresource, std::string_view patch);

  const RequestFn send_;
  const std::string group_version_path_;
  mutable std::mutex mu_;
  std::shared_ptr<const Discovered> current_;  // null: not asked yet, or forgotten
  int64_t discoveries_ = 0;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_DAEMON_STATUS_PATCHER_H_
