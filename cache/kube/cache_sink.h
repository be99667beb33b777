// Feeds a ClusterCache from reflectors: decodes each object once into Lahar's object model and
// applies it under the mutex that the scheduling loop takes to snapshot the cache.
#ifndef LAHAR_CACHE_KUBE_CACHE_SINK_H_
#define LAHAR_CACHE_KUBE_CACHE_SINK_H_

#include <functional>
#include <mutex>
#include <string>

#include "cache/cluster_cache.h"
#include "cache/kube/reflector.h"

namespace lahar {

enum class ObjectKind { kNode, kPod, kPodGroup, kQueue, kPriorityClass, kPodDisruptionBudget, kHyperNode };
std::string_view ObjectKindName(ObjectKind kind);  // "Node", "Pod", ...

// An object the apiserver accepted but Lahar cannot use (a quantity that overflows, a
// minMember out of range): reported, never applied. The cache keeps the last good version.
struct InvalidObject {
  ObjectKind kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string message;
  // False: the object is used, and only the parts `message` names are not (a PodGroup's bad
  // annotation).
  bool ignored = true;
};

class CacheSink : public WatchSink {
 public:
  using InvalidFn = std::function<void(const InvalidObject&)>;
  // Sees every object as it arrives (before decoding), e.g. to remember the status last
  // written, so that unchanged status is not written again.
  using ObserveFn = std::function<void(WatchEventType, const rapidjson::Value&)>;

  CacheSink(ObjectKind kind, ClusterCache& cache, std::mutex& cache_mu, InvalidFn on_invalid, ObserveFn observe = {});

  void Replace(const std::vector<const rapidjson::Value*>& objects) override;
  void Apply(WatchEventType type, const rapidjson::Value& object) override;

 private:
  // Decodes and upserts; reports and skips objects that do not decode. Caller holds cache_mu_.
  void UpsertLocked(const rapidjson::Value& object);
  void DeleteLocked(std::string_view namespace_, std::string_view name);

  const ObjectKind kind_;
  ClusterCache& cache_;
  std::mutex& cache_mu_;
  InvalidFn on_invalid_;
  ObserveFn observe_;
};

}  // namespace lahar

#endif  // LAHAR_CACHE_KUBE_CACHE_SINK_H_
