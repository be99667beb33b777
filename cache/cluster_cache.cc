#include "cache/cluster_cache.h"


#include <algorithm>
#include <atomic>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "api/duration.h"
#include "api/state_hash.h"
#include "api/strings.h"
#include "api/topology.h"

namespace lahar {
namespace {

uint64_t HashReason(const WaitReason& reason) {
  StateHash hash;
  hash.Add(static_cast<int32_t>(reason.kind)).Add(reason.subject).Add(reason.limit).Add(reason.detail);
  if (reason.shortage) {
    hash.Add(static_cast<int32_t>(reason.shortage->resource))
        .Add(reason.shortage->limit)
        .Add(reason.shortage->used)
        .Add(reason.shortage->need);
  }
  hash.Add(reason.pods).Add(reason.of).Add(static_cast<int64_t>(reason.counts.size()));
  for (const auto& [text, count] : reason.counts) hash.Add(text).Add(count);
  for (const std::string& name : reason.names) hash.Add(name);
  return hash.value();
}

std::string Key(std::string_view ns, std::string_view name) { return StrCat(ns, "/", name); }

}  // namespace

int64_t PodIndex(const Pod& pod) {
  for (std::string_view label : {"batch.kubernetes.io/job-completion-index",
                                 "training.kubeflow.org/replica-index", "volcano.sh/task-index"}) {
    auto it = pod.meta.labels.find(label);
    int64_t index;
    if (it != pod.meta.labels.end() && absl::SimpleAtoi(it->second, &index)) return index;
  }
  const std::string& name = pod.meta.name;
  size_t dash = name.rfind('-');
  int64_t index;
  if (dash != std::string::npos && dash + 1 < name.size() &&
      absl::SimpleAtoi(ToAbsl(std::string_view(name).substr(dash + 1)), &index) && index >= 0) {
    return index;
  }
  return 0;
}

std::string PodRole(const Pod& pod) {
  auto it = pod.meta.annotations.find(kTaskSpecKey);
  if (it != pod.meta.annotations.end()) return it->second;
  it = pod.meta.labels.find(kTaskSpecKey);
  if (it != pod.meta.labels.end()) return it->second;
  return "";
}

int32_t PodTaskPriority(const Pod& pod) {
  auto it = pod.meta.annotations.find(kTaskPriorityAnnotation);
  int32_t priority;
  if (it != pod.meta.annotations.end() && absl::SimpleAtoi(it->second, &priority)) return priority;
  return pod.priority.value_or(0);
}

PodGroupAnnotations ReadPodGroupAnnotations(const PodGroup& group) {
  PodGroupAnnotations out;
  const StringMap& annotations = group.meta.annotations;
  // The parsed value of the first of `keys` present, or nullopt (absent, or a warning).
  auto read = [&](std::initializer_list<const char*> keys, auto parse) -> decltype(parse(std::string())) {
    for (const char* key : keys) {
      auto it = annotations.find(key);
      if (it == annotations.end()) continue;
      auto parsed = parse(it->second);
      if (!parsed.ok()) {
        out.warnings.push_back(
            StrCat("annotation ", key, ": ", parsed.status().message(), "; the job is scheduled as if it were absent"));
      }
      return parsed;
    }
    return absl::NotFoundError("absent");
  };
  auto throughput = read({kThroughputAnnotation}, [](const std::string& v) { return ParseThroughput(v); });
  if (throughput.ok()) {
    out.measured = true;
    out.throughput = *std::move(throughput);
  }
  auto duration = [](const std::string& v) { return ParseDuration(v); };
  out.cooldown_override = read({kElasticCooldownAnnotation}, duration).value_or(-1);
  out.sla_waiting_time = read({kVolcanoSlaWaitingTimeAnnotation, kSlaWaitingTimeAnnotation}, duration).value_or(-1);
  return out;
}

ClusterCache::ClusterCache(CacheOptions options) : options_(std::move(options)) {}

Resources ClusterCache::NodeCapacity(const Node& node) {
  if (!NodeSchedulable(node)) return Resources();
  Resources capacity = node.allocatable;
  capacity.Set(kPods, 0);
  return capacity;
}

void ClusterCache::UpsertNode(Node node) {
  std::string name = node.meta.name;
  auto [it, added] = nodes_.try_emplace(std::move(name));
  if (!added) {
    if (it->second.node->meta.labels != node.meta.labels) topology_dirty_ = true;
    total_allocatable_ -= NodeCapacity(*it->second.node);
  }
  total_allocatable_ += NodeCapacity(node);
  it->second.node = std::make_shared<const Node>(std::move(node));
  it->second.version = ++next_version_;
  if (!added) return;
  ++node_set_version_;
  // Pods may have named the node before it arrived.
  if (auto held = held_elsewhere_.find(it->first); held != held_elsewhere_.end()) {
    it->second.held = std::move(held->second);
    held_elsewhere_.erase(held);
  }
}

void ClusterCache::DeleteNode(std::string_view name) {
  auto it = nodes_.find(name);
  if (it != nodes_.end()) {
    if (it->second.held.pods > 0) held_elsewhere_.emplace(it->first, std::move(it->second.held));
    total_allocatable_ -= NodeCapacity(*it->second.node);
    nodes_.erase(it);
    ++node_set_version_;
  }
}

int32_t ClusterCache::ConstraintClass(const Pod& pod) {
  // Pods with the same selector, affinity, tolerations and gates fit the same nodes (resources apart).
  std::string signature;
  for (const auto& [k, v] : pod.node_selector) StrAppend(&signature, "s", k, "=", v, ";");
  for (const auto& term : pod.required_node_affinity) {
    signature += "t{";
    for (const auto* list : {&term.match_expressions, &term.match_fields}) {
      for (const auto& r : *list) {
        StrAppend(&signature, r.key, " ", r.operator_);
        for (const auto& v : r.values) StrAppend(&signature, ",", v);
        signature += ";";
      }
      signature += "|";
    }
    signature += "}";
  }
  for (const auto& t : pod.tolerations) StrAppend(&signature, "o", t.key, t.operator_, t.value, t.effect, ";");
  for (const auto& g : pod.scheduling_gates) StrAppend(&signature, "g", g, ";");
  auto [it, inserted] = constraint_classes_.emplace(signature, static_cast<int32_t>(constraint_classes_.size()));
  return it->second;
}

int32_t ClusterCache::ShapeOf(int32_t constraint_class, const Pod& pod) {
  ShapeKey key{constraint_class, pod.requests.NonZero(), pod.limits.NonZero()};
  return shapes_.try_emplace(std::move(key), static_cast<int32_t>(shapes_.size())).first->second;
}

void ClusterCache::MarkDirty(std::string_view job_key) {
  if (!all_dirty_) dirty_jobs_.emplace(job_key);
}

void ClusterCache::Unlink(const std::string& pod_key, const PodEntry& entry) {
  if (!entry.pod) return;
  if (entry.ours) MarkDirty(entry.job_key);
  if (entry.ours) {
    auto job = job_pods_.find(entry.job_key);
    if (job != job_pods_.end()) {
      job->second.erase(pod_key);
      if (job->second.empty()) job_pods_.erase(job);
    }
  } else {
    CountForeign(*entry.pod, -1);
  }
}

void ClusterCache::ReplacePod(PodEntry& entry, std::shared_ptr<const Pod> pod) {
  if (!entry.ours) CountForeign(*entry.pod, -1);
  entry.pod = std::move(pod);
  if (!entry.ours) CountForeign(*entry.pod, +1);
}

void ClusterCache::CountForeign(const Pod& pod, int sign) {
  if (IsTerminal(pod.phase) || pod.node_name.empty()) return;
  CountOnNode(pod.node_name, pod.requests, pod.limits, pod.meta.deleting, sign);
}

void ClusterCache::UpsertPod(Pod pod) {
  std::string key = Key(pod.meta.namespace_, pod.meta.name);
  auto [it, inserted] = pods_.try_emplace(key);
  PodEntry& entry = it->second;
  Unlink(it->first, entry);
  // A confirmed binding or a new incarnation of the pod replaces what we assumed.
  bool same_incarnation = entry.pod && entry.pod->meta.uid == pod.meta.uid;
  if (!same_incarnation || !pod.node_name.empty()) entry.assumed_bound = false;
  if (!same_incarnation) entry.releasing = false;
  if (entry.assumed_bound && pod.node_name.empty() && entry.pod) pod.node_name = entry.pod->node_name;
  entry.constraint_class = ConstraintClass(pod);
  entry.shape = ShapeOf(entry.constraint_class, pod);
  entry.ours = options_.scheduler_names.count(pod.scheduler_name) > 0;
  auto group = pod.meta.annotations.find(kGroupNameAnnotation);
  entry.job_key = group != pod.meta.annotations.end() && !group->second.empty()
                      ? Key(pod.meta.namespace_, group->second)
                      : key + kLonePodSuffix;
  entry.role = PodRole(pod);
  entry.task_priority = PodTaskPriority(pod);
  entry.index = PodIndex(pod);
  entry.pod = std::make_shared<const Pod>(std::move(pod));
  entry.version = ++next_version_;
  if (entry.ours) {
    MarkDirty(entry.job_key);
    job_pods_[entry.job_key][it->first] = &entry;
  } else {
    CountForeign(*entry.pod, +1);
  }
}

void ClusterCache::DeletePod(std::string_view ns, std::string_view name) {
  auto it = pods_.find(Key(ns, name));
  if (it == pods_.end()) return;
  Unlink(it->first, it->second);
  pods_.erase(it);
}

void ClusterCache::UpsertPodGroup(PodGroup group) {
  std::string key = Key(group.meta.namespace_, group.meta.name);
  MarkDirty(key);
  auto it = pod_group_index_.find(key);
  if (it == pod_group_index_.end()) {
    auto [added, _] = pod_groups_.emplace(
        key, PodGroupEntry{std::move(group), next_creation_order_++, kNeverMillis, ++next_version_});
    pod_group_index_.emplace(added->first, &added->second);
  } else {
    it->second->group = std::move(group);
    it->second->version = ++next_version_;
  }
}

void ClusterCache::DeletePodGroup(std::string_view ns, std::string_view name) {
  auto it = pod_groups_.find(Key(ns, name));
  if (it != pod_groups_.end()) {
    MarkDirty(it->first);
    pod_group_index_.erase(it->first);
    pod_groups_.erase(it);
  }
}

void ClusterCache::UpsertQueue(Queue queue) {
  std::string name = queue.meta.name;
  queues_[name] = std::move(queue);
  ++queues_version_;
  MarkAllDirty();  // queue ids may shift
}

void ClusterCache::DeleteQueue(std::string_view name) {
  auto it = queues_.find(name);
  if (it != queues_.end()) queues_.erase(it);
  ++queues_version_;
  MarkAllDirty();
}

void ClusterCache::UpsertPriorityClass(PriorityClass priority_class) {
  std::string name = priority_class.meta.name;
  priority_classes_[name] = std::move(priority_class);
  MarkAllDirty();  // job priorities may change
}

void ClusterCache::DeletePriorityClass(std::string_view name) {
  auto it = priority_classes_.find(name);
  if (it != priority_classes_.end()) priority_classes_.erase(it);
  MarkAllDirty();
}

// A budget changes no job's block: the pdb plugin reads budgets from the snapshot.
void ClusterCache::UpsertPodDisruptionBudget(PodDisruptionBudget pdb) {
  std::string key = StrCat(pdb.meta.namespace_, "/", pdb.meta.name);
  disruption_budgets_[key] = std::make_shared<const PodDisruptionBudget>(std::move(pdb));
}

void ClusterCache::DeletePodDisruptionBudget(std::string_view namespace_, std::string_view name) {
  auto it = disruption_budgets_.find(StrCat(namespace_, "/", name));
  if (it != disruption_budgets_.end()) disruption_budgets_.erase(it);
}

void ClusterCache::UpsertHyperNode(HyperNode hypernode) {
  std::string name = hypernode.meta.name;
  hypernodes_[std::move(name)] = std::move(hypernode);
  topology_dirty_ = true;
}

void ClusterCache::DeleteHyperNode(std::string_view name) {
  auto it = hypernodes_.find(name);
  if (it == hypernodes_.end()) return;
  hypernodes_.erase(it);
  topology_dirty_ = true;
}

std::shared_ptr<const Topology> ClusterCache::CurrentTopology() const {
  if (hypernodes_.empty()) {
    topology_.reset();
    return nullptr;
  }
  if (topology_ && !topology_dirty_ && topology_node_set_version_ == node_set_version_) return topology_;
  // Node ids are positions in name order, as Snapshot lays them out.
  std::vector<NodeInfo> nodes;
  nodes.reserve(nodes_.size());
  for (const auto& [name, entry] : nodes_) {
    NodeInfo info;
    info.id = static_cast<NodeId>(nodes.size());
    info.node = entry.node;
    nodes.push_back(std::move(info));
  }
  topology_ = std::make_shared<const Topology>(BuildTopology(HyperNodes(), nodes));
  topology_dirty_ = false;
  topology_node_set_version_ = node_set_version_;
  return topology_;
}

absl::Status ClusterCache::AssumeBound(std::string_view pod_key, std::string_view node_name) {
  auto it = pods_.find(pod_key);
  if (it == pods_.end()) return absl::NotFoundError(StrCat("pod ", pod_key, " is not in the cache"));
  if (!it->second.pod->node_name.empty()) {
    return absl::FailedPreconditionError(StrCat("pod ", pod_key, " is already on ", it->second.pod->node_name));
  }
  auto pod = std::make_shared<Pod>(*it->second.pod);
  pod->node_name = std::string(node_name);
  ReplacePod(it->second, std::move(pod));
  it->second.assumed_bound = true;
  PodChanged(it->second);
  return absl::OkStatus();
}

absl::Status ClusterCache::MarkReleasing(std::string_view pod_key) {
  auto it = pods_.find(pod_key);
  if (it == pods_.end()) return absl::NotFoundError(StrCat("pod ", pod_key, " is not in the cache"));
  it->second.releasing = true;
  PodChanged(it->second);
  return absl::OkStatus();
}

void ClusterCache::ForgetBound(std::string_view pod_key) {
  auto it = pods_.find(pod_key);
  if (it == pods_.end() || !it->second.assumed_bound) return;
  auto pod = std::make_shared<Pod>(*it->second.pod);
  pod->node_name.clear();
  ReplacePod(it->second, std::move(pod));
  it->second.assumed_bound = false;
  PodChanged(it->second);
}

void ClusterCache::ForgetReleasing(std::string_view pod_key) {
  auto it = pods_.find(pod_key);
  if (it == pods_.end() || !it->second.releasing) return;
  it->second.releasing = false;
  PodChanged(it->second);
}

void ClusterCache::MarkEvictionRefused(std::string_view pod_key, Millis until) {
  // Pods gone or past their time are dropped here, so the map stays as small as the refusals.
  for (auto it = eviction_refused_until_.begin(); it != eviction_refused_until_.end();) {
    it = pods_.count(it->first) == 0 ? eviction_refused_until_.erase(it) : std::next(it);
  }
  eviction_refused_until_[std::string(pod_key)] = until;
}

absl::Status ClusterCache::SetPodGroupPhase(std::string_view job_key, PodGroupPhase phase) {
  auto it = pod_group_index_.find(job_key);
  if (it == pod_group_index_.end()) return absl::NotFoundError(StrCat("podgroup ", job_key, " is not in the cache"));
  it->second->group.phase = phase;
  MarkDirty(job_key);
  return absl::OkStatus();
}

void ClusterCache::RecordScale(std::string_view job_key, Millis when) {
  last_scale_[std::string(job_key)] = when;
  MarkDirty(job_key);
}

void ClusterCache::NoteWaitReported(std::string_view job_key, const WaitReason& reason) {
  if (all_dirty_) return;
  // The job of a PodGroup, else a lone pod's (a job of its own, under a key no group has).
  LaidBlock* entry = FindLaidBlock(job_key);
  if (entry == nullptr) entry = FindLaidBlock(StrCat(job_key, kLonePodSuffix));
  if (entry == nullptr) return;
  // A job whose block is rebuilt before the next snapshot is told its reason again.
  if (dirty_jobs_.count(entry->key) > 0) return;
  std::shared_ptr<const WaitReason>& reported = entry->block->job.reported_wait;
  if (reported != nullptr && (reported.get() == &reason || *reported == reason)) return;
  reported = InternReason(reason);
  for (LaidBlock::Laid& laid : entry->laid) laid.reported_changed = true;
}

std::shared_ptr<const WaitReason> ClusterCache::InternReason(const WaitReason& reason) {
  // The one last interned is found by its address when the owner passes that one back.
  if (last_reported_ != nullptr && (last_reported_.get() == &reason || *last_reported_ == reason)) {
    return last_reported_;
  }
  std::weak_ptr<const WaitReason>& interned = reported_reasons_[HashReason(reason)];
  std::shared_ptr<const WaitReason> equal = interned.lock();
  if (equal == nullptr || !(*equal == reason)) {
    equal = std::make_shared<const WaitReason>(reason);
    interned = equal;  // a different reason under the same hash is replaced: only sharing is lost
  }
  last_reported_ = equal;
  if (reported_reasons_.size() >= reported_reasons_purge_at_) {
    absl::erase_if(reported_reasons_, [](const auto& interned_reason) { return interned_reason.second.expired(); });
    reported_reasons_purge_at_ = std::max<size_t>(64, 2 * reported_reasons_.size());
  }
  return equal;
}

const Pod* ClusterCache::FindPod(std::string_view key) const {
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : it->second.pod.get();
}

const Node* ClusterCache::FindNode(std::string_view name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second.node.get();
}

const PodGroup* ClusterCache::FindPodGroup(std::string_view key) const {
  auto it = pod_group_index_.find(key);
  return it == pod_group_index_.end() ? nullptr : &it->second->group;
}

template <typename Map, typename T, typename Get>
static std::vector<const T*> Collect(const Map& map, Get get) {
  std::vector<const T*> out;
  for (const auto& [key, value] : map) out.push_back(get(value));
  return out;
}

std::vector<const Node*> ClusterCache::Nodes() const {
  return Collect<decltype(nodes_), Node>(nodes_, [](const NodeEntry& n) { return n.node.get(); });
}
std::vector<const Pod*> ClusterCache::Pods() const {
  return Collect<decltype(pods_), Pod>(pods_, [](const PodEntry& e) { return e.pod.get(); });
}
std::vector<const PodGroup*> ClusterCache::PodGroups() const {
  return Collect<decltype(pod_groups_), PodGroup>(pod_groups_, [](const PodGroupEntry& e) { return &e.group; });
}
std::vector<const Queue*> ClusterCache::Queues() const {
  return Collect<decltype(queues_), Queue>(queues_, [](const Queue& q) { return &q; });
}
std::vector<const PriorityClass*> ClusterCache::PriorityClasses() const {
  return Collect<decltype(priority_classes_), PriorityClass>(priority_classes_,
                                                             [](const PriorityClass& p) { return &p; });
}

std::vector<const PodDisruptionBudget*> ClusterCache::PodDisruptionBudgets() const {
  return Collect<decltype(disruption_budgets_), PodDisruptionBudget>(disruption_budgets_,
                                                                     [](const auto& p) { return p.get(); });
}

std::vector<const HyperNode*> ClusterCache::HyperNodes() const {
  std::vector<const HyperNode*> out;
  out.reserve(hypernodes_.size());
  for (const auto& [name, hypernode] : hypernodes_) out.push_back(&hypernode);
  return out;
}

}  // namespace lahar
