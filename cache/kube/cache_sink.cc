#include "cache/kube/cache_sink.h"

#include <set>

#include "api/decode.h"
#include "api/strings.h"
#include "cache/kube/json_fields.h"

namespace lahar {
namespace {

std::string KeyOf(std::string_view namespace_, std::string_view name) {
  return namespace_.empty() ? std::string(name) : StrCat(namespace_, "/", name);
}

}  // namespace

std::string_view ObjectKindName(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kNode: return "Node";
    case ObjectKind::kPod: return "Pod";
    case ObjectKind::kPodGroup: return "PodGroup";
    case ObjectKind::kQueue: return "Queue";
    case ObjectKind::kPriorityClass: return "PriorityClass";
    case ObjectKind::kPodDisruptionBudget: return "PodDisruptionBudget";
    case ObjectKind::kHyperNode: return "HyperNode";
  }
  return "Object";
}

CacheSink::CacheSink(ObjectKind kind, ClusterCache& cache, std::mutex& cache_mu, InvalidFn on_invalid,
                     ObserveFn observe)
    : kind_(kind), cache_(cache), cache_mu_(cache_mu), on_invalid_(std::move(on_invalid)), observe_(std::move(observe)) {}

void CacheSink::UpsertLocked(const rapidjson::Value& object) {
  absl::Status status;
  switch (kind_) {
    case ObjectKind::kNode: {
      absl::StatusOr<Node> node = DecodeNode(object);
      if (node.ok()) cache_.UpsertNode(*std::move(node));
      status = node.status();
      break;
    }
    case ObjectKind::kPod: {
      absl::StatusOr<Pod> pod = DecodePod(object);
      if (pod.ok()) cache_.UpsertPod(*std::move(pod));
      status = pod.status();
      break;
    }
    case ObjectKind::kPodGroup: {
      absl::StatusOr<PodGroup> group = DecodePodGroup(object);
      if (group.ok() && on_invalid_) {
        for (std::string& warning : ReadPodGroupAnnotations(*group).warnings) {
          on_invalid_(InvalidObject{kind_, MetadataField(object, "namespace"), MetadataField(object, "name"),
                                    MetadataField(object, "uid"), MetadataField(object, "resourceVersion"),
                                    std::move(warning), /*ignored=*/false});
        }
      }
      if (group.ok()) cache_.UpsertPodGroup(*std::move(group));
      status = group.status();
      break;
    }
    case ObjectKind::kQueue: {
      absl::StatusOr<Queue> queue = DecodeQueue(object);
      if (queue.ok()) cache_.UpsertQueue(*std::move(queue));
      status = queue.status();
      break;
    }
    case ObjectKind::kPriorityClass: {
      absl::StatusOr<PriorityClass> priority_class = DecodePriorityClass(object);
      if (priority_class.ok()) cache_.UpsertPriorityClass(*std::move(priority_class));
      status = priority_class.status();
      break;
    }
    case ObjectKind::kPodDisruptionBudget: {
      absl::StatusOr<PodDisruptionBudget> pdb = DecodePodDisruptionBudget(object);
      if (pdb.ok()) cache_.UpsertPodDisruptionBudget(*std::move(pdb));
      status = pdb.status();
      break;
    }
    case ObjectKind::kHyperNode: {
      absl::StatusOr<HyperNode> hypernode = DecodeHyperNode(object);
      if (hypernode.ok()) cache_.UpsertHyperNode(*std::move(hypernode));
      status = hypernode.status();
      break;
    }
  }
  if (!status.ok() && on_invalid_) {
    on_invalid_(InvalidObject{kind_, MetadataField(object, "namespace"), MetadataField(object, "name"),
                              MetadataField(object, "uid"), MetadataField(object, "resourceVersion"),
                              std::string(status.message())});
  }
}

void CacheSink::DeleteLocked(std::string_view namespace_, std::string_view name) {
  switch (kind_) {
    case ObjectKind::kNode: cache_.DeleteNode(name); break;
    case ObjectKind::kPod: cache_.DeletePod(namespace_, name); break;
    case ObjectKind::kPodGroup: cache_.DeletePodGroup(namespace_, name); break;
    case ObjectKind::kQueue: cache_.DeleteQueue(name); break;
    case ObjectKind::kPriorityClass: cache_.DeletePriorityClass(name); break;
    case ObjectKind::kPodDisruptionBudget: cache_.DeletePodDisruptionBudget(namespace_, name); break;
    case ObjectKind::kHyperNode: cache_.DeleteHyperNode(name); break;
  }
}

void CacheSink::Apply(WatchEventType type, const rapidjson::Value& object) {
  if (observe_) observe_(type, object);
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (type == WatchEventType::kDeleted) {
    DeleteLocked(MetadataField(object, "namespace"), MetadataField(object, "name"));
  } else {
    UpsertLocked(object);
  }
}

void CacheSink::Replace(const std::vector<const rapidjson::Value*>& objects) {
  if (observe_) {
    for (const rapidjson::Value* object : objects) observe_(WatchEventType::kAdded, *object);
  }
  std::set<std::string> listed;
  for (const rapidjson::Value* object : objects) {
    listed.insert(KeyOf(MetadataField(*object, "namespace"), MetadataField(*object, "name")));
  }
  std::lock_guard<std::mutex> lock(cache_mu_);
  // What the cache holds of this kind that the list no longer has was deleted meanwhile.
  std::vector<std::pair<std::string, std::string>> gone;
  auto collect = [&](const auto& items) {
    for (const auto* item : items) {
      if (!listed.count(KeyOf(item->meta.namespace_, item->meta.name))) {
        gone.emplace_back(item->meta.namespace_, item->meta.name);
      }
    }
  };
  switch (kind_) {
    case ObjectKind::kNode: collect(cache_.Nodes()); break;
    case ObjectKind::kPod: collect(cache_.Pods()); break;
    case ObjectKind::kPodGroup: collect(cache_.PodGroups()); break;
    case ObjectKind::kQueue: collect(cache_.Queues()); break;
    case ObjectKind::kPriorityClass: collect(cache_.PriorityClasses()); break;
    case ObjectKind::kPodDisruptionBudget: collect(cache_.PodDisruptionBudgets()); break;
    case ObjectKind::kHyperNode: collect(cache_.HyperNodes()); break;
  }
  for (const auto& [namespace_, name] : gone) DeleteLocked(namespace_, name);
  for (const rapidjson::Value* object : objects) UpsertLocked(*object);
}

}  // namespace lahar
