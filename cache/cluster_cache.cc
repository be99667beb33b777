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

// Job keys of lone pods carry a suffix so that a pod never joins a PodGroup of its own name.
constexpr char kLonePodSuffix[] = "\x01";

bool IsTerminal(PodPhase phase) { return phase == PodPhase::kSucceeded || phase == PodPhase::kFailed; }

TaskStatus StatusOf(const Pod& pod, bool releasing) {
  if (pod.phase == PodPhase::kSucceeded) return TaskStatus::kSucceeded;
  if (pod.phase == PodPhase::kFailed) return TaskStatus::kFailed;
  if (pod.meta.deleting || releasing) return pod.node_name.empty() ? TaskStatus::kFailed : TaskStatus::kReleasing;
  if (pod.node_name.empty()) return TaskStatus::kPending;
  if (pod.phase == PodPhase::kRunning) return TaskStatus::kRunning;
  return TaskStatus::kBound;
}

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

void ClusterCache::UpsertNode(Node node) {
  std::string name = node.meta.name;
  auto [it, added] = nodes_.try_emplace(std::move(name));
  if (!added && it->second.node->meta.labels != node.meta.labels) topology_dirty_ = true;
  it->second.node = std::make_shared<const Node>(std::move(node));
  it->second.version = ++next_version_;
  if (added) ++node_set_version_;
}

void ClusterCache::DeleteNode(std::string_view name) {
  auto it = nodes_.find(name);
  if (it != nodes_.end()) {
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
    foreign_pods_.erase(pod_key);
  }
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
  } else if (!entry.pod->node_name.empty()) {
    foreign_pods_[it->first] = &entry;
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
  auto it = pod_groups_.find(key);
  if (it == pod_groups_.end()) {
    pod_groups_.emplace(key, PodGroupEntry{std::move(group), next_creation_order_++, kNeverMillis, ++next_version_});
  } else {
    it->second.group = std::move(group);
    it->second.version = ++next_version_;
  }
}

void ClusterCache::DeletePodGroup(std::string_view ns, std::string_view name) {
  auto it = pod_groups_.find(Key(ns, name));
  if (it != pod_groups_.end()) {
    MarkDirty(it->first);
    pod_groups_.erase(it);
  }
}

void ClusterCache::UpsertQueue(Queue queue) {
  std::string name = queue.meta.name;
  queues_[name] = std::move(queue);
  MarkAllDirty();  // queue ids may shift
}

void ClusterCache::DeleteQueue(std::string_view name) {
  auto it = queues_.find(name);
  if (it != queues_.end()) queues_.erase(it);
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
  it->second.pod = std::move(pod);
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
  it->second.pod = std::move(pod);
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
  auto it = pod_groups_.find(job_key);
  if (it == pod_groups_.end()) return absl::NotFoundError(StrCat("podgroup ", job_key, " is not in the cache"));
  it->second.group.phase = phase;
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
  auto it = blocks_.find(job_key);
  if (it == blocks_.end() || !it->second.exists) it = blocks_.find(StrCat(job_key, kLonePodSuffix));
  if (it == blocks_.end() || !it->second.exists) return;
  // A job whose block is rebuilt before the next snapshot is told its reason again.
  if (dirty_jobs_.count(it->first) > 0) return;
  std::shared_ptr<const WaitReason>& reported = it->second.job.reported_wait;
  if (reported != nullptr && *reported == reason) return;
  std::weak_ptr<const WaitReason>& interned = reported_reasons_[HashReason(reason)];
  std::shared_ptr<const WaitReason> equal = interned.lock();
  if (equal == nullptr || !(*equal == reason)) {
    equal = std::make_shared<const WaitReason>(reason);
    interned = equal;  // a different reason under the same hash is replaced: only sharing is lost
  }
  reported = std::move(equal);
  if (reported_reasons_.size() >= reported_reasons_purge_at_) {
    absl::erase_if(reported_reasons_, [](const auto& entry) { return entry.second.expired(); });
    reported_reasons_purge_at_ = std::max<size_t>(64, 2 * reported_reasons_.size());
  }
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
  auto it = pod_groups_.find(key);
  return it == pod_groups_.end() ? nullptr : &it->second.group;
}

namespace {

// Moves the jobs of `snap` (a spent snapshot) that the next layout keeps, and their tasks, to
// their places in it: job i of the layout is build builds[i] with task_counts[i] tasks, laid in
// order. Afterwards snap.job_builds[i] == builds[i] exactly when the
// job there, with its tasks at their new offset, is that build; jobs and tasks are sized for the
// layout. Both layouts are in key order, so a kept job's source never lies under the place of a
// kept job moved before it: those moving towards the front go first to last, the others last to
// first.
void MoveKeptJobs(const std::vector<uint64_t>& builds, const std::vector<int32_t>& task_counts, ClusterSnapshot& snap) {
  const size_t spent = std::min(snap.jobs.size(), snap.job_builds.size());
  snap.job_builds.resize(spent);
  std::vector<TaskId> spent_offset(spent);
  for (size_t j = 0; j < spent; ++j) spent_offset[j] = snap.jobs[j].tasks.empty() ? 0 : snap.jobs[j].tasks.front();
  struct Kept {
    size_t from_job, to_job, from_task, to_task, tasks;
  };
  std::vector<Kept> moved;
  absl::flat_hash_map<uint64_t, size_t> spent_slot;
  size_t offset = 0;
  for (size_t i = 0; i < builds.size(); offset += static_cast<size_t>(task_counts[i]), ++i) {
    const auto tasks = static_cast<size_t>(task_counts[i]);
    if (i < spent && snap.job_builds[i] == builds[i] && (tasks == 0 || spent_offset[i] == offset)) continue;
    if (spent_slot.empty()) {
      spent_slot.reserve(spent);
      for (size_t j = 0; j < spent; ++j) spent_slot.emplace(snap.job_builds[j], j);
    }
    auto it = spent_slot.find(builds[i]);
    if (it == spent_slot.end()) continue;
    moved.push_back({it->second, i, static_cast<size_t>(spent_offset[it->second]), offset, tasks});
  }
  const size_t task_count = offset;  // every job's tasks, laid out
  snap.jobs.resize(std::max(snap.jobs.size(), builds.size()));
  snap.job_builds.resize(std::max(spent, builds.size()), 0);
  snap.tasks.resize(std::max(snap.tasks.size(), task_count));
  auto move_job = [&](const Kept& k) {
    if (k.from_job == k.to_job) return;
    snap.jobs[k.to_job] = std::move(snap.jobs[k.from_job]);
    snap.job_builds[k.to_job] = snap.job_builds[k.from_job];
    snap.job_builds[k.from_job] = 0;
  };
  auto move_tasks = [&](const Kept& k) {
    if (k.from_task == k.to_task) return;
    if (k.from_task > k.to_task) {
      std::move(snap.tasks.begin() + k.from_task, snap.tasks.begin() + k.from_task + k.tasks, snap.tasks.begin() + k.to_task);
    } else {
      std::move_backward(snap.tasks.begin() + k.from_task, snap.tasks.begin() + k.from_task + k.tasks,
                         snap.tasks.begin() + k.to_task + k.tasks);
    }
  };
  for (const Kept& k : moved) {
    if (k.from_job > k.to_job) move_job(k);
  }
  for (auto k = moved.rbegin(); k != moved.rend(); ++k) {
    if (k->from_job < k->to_job) move_job(*k);
  }
  for (const Kept& k : moved) {
    if (k.from_task > k.to_task) move_tasks(k);
  }
  for (auto k = moved.rbegin(); k != moved.rend(); ++k) {
    if (k->from_task < k->to_task) move_tasks(*k);
  }
  snap.jobs.resize(builds.size());
  snap.job_builds.resize(builds.size());
  snap.tasks.resize(task_count);
}

}  // namespace

ClusterSnapshot ClusterCache::Snapshot(Millis now, ClusterSnapshot spent) const {
  ClusterSnapshot snap;
  snap.now = now;
  snap.jobs = std::move(spent.jobs);
  snap.tasks = std::move(spent.tasks);
  snap.job_builds = std::move(spent.job_builds);

  // Queues, with the default queue always present, by name.
  std::vector<const Queue*> queues;
  Queue default_queue;
  default_queue.meta.name = options_.default_queue;
  if (queues_.find(options_.default_queue) == queues_.end()) queues.push_back(&default_queue);
  for (const auto& [name, q] : queues_) queues.push_back(&q);
  std::sort(queues.begin(), queues.end(), [](const Queue* a, const Queue* b) { return a->meta.name < b->meta.name; });
  std::map<std::string_view, QueueId, std::less<>> queue_ids;
  std::vector<std::string> parents;
  for (const Queue* q : queues) {
    QueueInfo info;
    info.id = static_cast<QueueId>(snap.queues.size());
    info.name = q->meta.name;
    info.weight = q->weight;
    info.capability = q->capability;
    info.guarantee = q->guarantee;
    info.deserved = q->deserved;
    info.open = q->open;
    info.reclaimable = q->reclaimable;
    info.priority = q->priority;
    snap.queues.push_back(std::move(info));
    parents.push_back(q->parent);
  }
  LinkQueueTree(snap.queues, parents);
  for (const QueueInfo& q : snap.queues) queue_ids[q.name] = q.id;
  const QueueId default_queue_id = queue_ids.at(options_.default_queue);

  int32_t default_priority = 0;
  for (const auto& [pod_key, until] : eviction_refused_until_) {
    if (now < until) snap.eviction_refused.insert(pod_key);
  }
  snap.disruption_budgets.reserve(disruption_budgets_.size());
  for (const auto& [key, pdb] : disruption_budgets_) snap.disruption_budgets.push_back(pdb);
  for (const auto& [name, pc] : priority_classes_) {
    snap.priority_classes[name] = pc.value;
    if (pc.global_default) default_priority = pc.value;
  }
  auto priority_of = [&](const std::string& class_name, int32_t fallback) {
    auto it = priority_classes_.find(class_name);
    return it != priority_classes_.end() ? it->second.value : fallback;
  };

  // Nodes in name order (the map's order).
  // Laid over the spent snapshot's nodes: what a node holds is summed anew below, in vectors
  // that keep their size and storage.
  absl::flat_hash_map<absl::string_view, NodeId> node_ids;
  node_ids.reserve(nodes_.size());
  snap.nodes = std::move(spent.nodes);
  snap.nodes.resize(nodes_.size());
  NodeId next_node = 0;
  for (const auto& [name, entry] : nodes_) {
    const std::shared_ptr<const Node>& node = entry.node;
    NodeInfo& info = snap.nodes[next_node];
    info.id = next_node++;
    if (info.node != node) info.node = node;
    info.version = entry.version;
    info.allocatable = node->allocatable;
    info.max_pods = static_cast<int32_t>(node->allocatable.Get(kPods) > 0 ? node->allocatable.Get(kPods) : 110);
    info.allocatable.Set(kPods, 0);  // pods are counted, not summed as a resource
    info.schedulable = !node->unschedulable && node->ready;
    info.used.SetZero();
    info.releasing.SetZero();
    info.pipelined.SetZero();
    info.used_limits.SetZero();
    info.pod_count = 0;
    info.releasing_pods = 0;
    info.pipelined_pods = 0;
    info.tasks.clear();
    if (info.schedulable) snap.total_allocatable += info.allocatable;
    node_ids[ToAbsl(node->meta.name)] = info.id;
  }
  CheckQueueGuarantees(snap.queues, snap.total_allocatable);
  snap.topology = CurrentTopology();
  auto find_node = [&](const std::string& name) -> NodeId {
    auto it = node_ids.find(ToAbsl(name));
    return it == node_ids.end() ? kNoId : it->second;
  };

  // Pods of other schedulers count against their nodes only.
  for (const auto& [key, entry] : foreign_pods_) {
    const Pod& pod = *entry->pod;
    if (IsTerminal(pod.phase) || pod.node_name.empty()) continue;
    NodeId id = find_node(pod.node_name);
    if (id == kNoId) continue;
    NodeInfo& info = snap.nodes[id];
    info.used += pod.requests;
    info.used_limits += pod.limits;
    ++info.pod_count;
    if (pod.meta.deleting) {
      info.releasing += pod.requests;
      ++info.releasing_pods;
    }
  }

  // Bring the job blocks up to date, then lay them out in namespace/name order.
  if (all_dirty_) {
    blocks_.clear();
    existing_blocks_.clear();
    for (const auto& [key, group] : pod_groups_) dirty_jobs_.insert(key);
    for (const auto& [key, pods] : job_pods_) dirty_jobs_.insert(key);
    all_dirty_ = false;
  }
  auto by_key = [](const std::pair<std::string_view, JobBlock*>& entry, std::string_view key) {
    return entry.first < key;
  };
  for (const std::string& key : dirty_jobs_) {
    auto [it, inserted] = blocks_.try_emplace(key);
    JobBlock& block = it->second;
    const bool existed = !inserted && block.exists;
    RebuildBlock(key, block);
    if (existed != block.exists) {
      auto at = std::lower_bound(existing_blocks_.begin(), existing_blocks_.end(), std::string_view(it->first), by_key);
      if (block.exists) {
        existing_blocks_.insert(at, {it->first, &block});
      } else {
        existing_blocks_.erase(at);
      }
    }
    if (!block.exists && pod_groups_.count(key) == 0 && job_pods_.count(key) == 0) blocks_.erase(it);
  }
  dirty_jobs_.clear();

  // The spent snapshot's jobs that this one keeps are moved to their new places (jobs come and
  // go between sessions, shifting the rest), so that only new builds are copied from blocks;
  // jobs and tasks are sized once (regrowing the vectors moved them all again).
  std::vector<uint64_t> builds;
  std::vector<int32_t> task_counts;
  builds.reserve(existing_blocks_.size());
  task_counts.reserve(existing_blocks_.size());
  for (const auto& [key, block] : existing_blocks_) {
    builds.push_back(block->build);
    task_counts.push_back(static_cast<int32_t>(block->tasks.size()));
  }
  MoveKeptJobs(builds, task_counts, snap);
  size_t tasks_laid = 0;
  JobId next_job = 0;
  for (const auto& [key, block_ptr] : existing_blocks_) {
    JobBlock& block = *block_ptr;
    if (block.node_set_version != node_set_version_) {
      block.node_ids.resize(block.node_names.size());
      for (size_t i = 0; i < block.node_names.size(); ++i) {
        block.node_ids[i] = block.node_names[i] == nullptr ? kNoId : find_node(*block.node_names[i]);
      }
      block.node_set_version = node_set_version_;
    }
    const JobId job_id = next_job++;
    const auto offset = static_cast<TaskId>(tasks_laid);
    // The spent snapshot's copy of this very build, tasks and all, is in place (MoveKeptJobs).
    const bool tasks_in_place = snap.job_builds[job_id] == block.build;
    snap.job_builds[job_id] = block.build;
    JobInfo& job = snap.jobs[job_id];
    if (tasks_in_place) {
      // The spent job was laid out from this very build: a session changes only its counts
      // (Session::SetTaskStatus), phase and scale time, so only those are put back.
      job.status_count = block.job.status_count;
      job.allocated = block.job.allocated;
      job.request = block.job.request;
      job.phase = block.job.phase;
      job.last_scale_time = block.job.last_scale_time;
      if (job.reported_wait != block.job.reported_wait) job.reported_wait = block.job.reported_wait;
    } else {
      job = block.job;  // assigned over the spent job: its strings and vectors keep their storage
    }
    job.id = job_id;
    // Queue ids and priorities depend on every queue and class: resolved once per build.
    if (block.resolved != block.build) {
      block.resolved = block.build;
      int32_t class_priority =
          block.priority_class->empty() ? default_priority : priority_of(*block.priority_class, default_priority);
      if (job.has_pod_group) {
        auto q = queue_ids.find(*block.queue);
        block.queue_id = q == queue_ids.end() ? kNoId : q->second;
        block.priority = class_priority;
      } else {
        block.queue_id = default_queue_id;
        block.priority = block.tasks.front().pod->priority.value_or(class_priority);
      }
    }
    job.queue = block.queue_id;
    job.priority = block.priority;
    job.tasks.resize(block.tasks.size());
    bool node_gone = false;
    for (size_t i = 0; i < block.tasks.size(); ++i) {
      TaskInfo& task = snap.tasks[tasks_laid++];
      if (tasks_in_place) {
        task.status = block.tasks[i].status;
        task.node = block.tasks[i].node;
      } else {
        task = block.tasks[i];
      }
      task.id = offset + static_cast<TaskId>(i);
      task.job = job_id;
      if (block.node_names[i] != nullptr) {
        task.node = block.node_ids[i];
        if (task.node == kNoId) {
          task.status = TaskStatus::kFailed;  // its node is gone
          node_gone = true;
        } else {
          NodeInfo& info = snap.nodes[task.node];
          info.used += task.request;
          info.used_limits += task.limit;
          ++info.pod_count;
          if (task.status == TaskStatus::kReleasing) {
            info.releasing += task.request;
            ++info.releasing_pods;
          }
        }
      }
      job.tasks[i] = task.id;
    }
    if (node_gone) snap.RecountJob(job);
  }
  // Each node's tasks, in id order, in vectors sized once.
  std::vector<int32_t> on_node(snap.nodes.size(), 0);
  for (const TaskInfo& task : snap.tasks) {
    if (task.node != kNoId) ++on_node[task.node];
  }
  for (NodeInfo& node : snap.nodes) node.tasks.reserve(on_node[node.id]);
  for (const TaskInfo& task : snap.tasks) {
    if (task.node != kNoId) snap.nodes[task.node].tasks.push_back(task.id);
  }
  return snap;
}

void ClusterCache::RebuildBlock(const std::string& key, JobBlock& block) const {
  static std::atomic<uint64_t> next_build{1};
  block = JobBlock();
  block.build = next_build.fetch_add(1, std::memory_order_relaxed);
  auto group_it = pod_groups_.find(key);
  auto pods_it = job_pods_.find(key);
  static const std::map<std::string_view, const PodEntry*> kNoPods;
  const auto& members = pods_it == job_pods_.end() ? kNoPods : pods_it->second;
  const PodGroupEntry* group = group_it == pod_groups_.end() ? nullptr : &group_it->second;
  const PodEntry* lone = nullptr;
  if (group == nullptr) {
    // Pods naming a PodGroup that has not arrived yet wait for it; a pod without a group
    // annotation is a job of its own.
    if (members.size() != 1 || members.begin()->second->job_key.back() != kLonePodSuffix[0]) return;
    lone = members.begin()->second;
  }
  block.exists = true;
  JobInfo& job = block.job;
  // The job's objects as they are now: their versions, and the scale time kept beside them.
  StateHash version;
  version.Add(group != nullptr ? group->version : uint64_t{0});
  for (const auto& [pod_key, entry] : members) version.Add(entry->version);
  if (group != nullptr) {
    const PodGroup& pg = group->group;
    block.queue = &pg.queue;
    block.priority_class = &pg.priority_class_name;
    job.namespace_ = pg.meta.namespace_;
    job.name = pg.meta.name;
    job.uid = pg.meta.uid;
    job.min_available = pg.min_member;
    job.min_task_member = pg.min_task_member;
    job.min_resources = pg.min_resources;
    job.network_topology = pg.network_topology;
    job.priority_class_name = pg.priority_class_name;
    job.phase = pg.phase;
    job.creation_timestamp = pg.meta.creation_timestamp;
    job.creation_order = group->creation_order;
    auto preemptable = pg.meta.annotations.find(kPreemptableAnnotation);
    job.preemptable = preemptable == pg.meta.annotations.end() || preemptable->second != "false";
    PodGroupAnnotations read = ReadPodGroupAnnotations(pg);  // warnings: reported by the feeder
    job.cooldown_override = read.cooldown_override;
    job.sla_waiting_time = read.sla_waiting_time;
    job.measured = read.measured;
    job.throughput = std::move(read.throughput);
  } else {
    const Pod& pod = *lone->pod;
    block.priority_class = &pod.priority_class_name;
    job.namespace_ = pod.meta.namespace_;
    job.name = pod.meta.name;
    job.uid = pod.meta.uid;
    job.has_pod_group = false;
    job.min_available = 1;
    job.min_resources = pod.requests;
    job.priority_class_name = pod.priority_class_name;
    job.phase = pod.node_name.empty() ? PodGroupPhase::kInqueue : PodGroupPhase::kRunning;
    job.creation_timestamp = pod.meta.creation_timestamp;
    job.creation_order = -1;
  }
  auto scaled = last_scale_.find(job.key());
  if (scaled != last_scale_.end()) job.last_scale_time = scaled->second;
  job.version = version.Add(job.last_scale_time).value();
  block.tasks.reserve(members.size());
  for (const auto& [pod_key, entry] : members) {
    const Pod& pod = *entry->pod;
    TaskInfo task;
    task.pod = entry->pod;
    task.request = pod.requests;
    task.limit = pod.limits;
    task.role = entry->role;
    task.task_priority = entry->task_priority;
    task.index = entry->index;
    task.best_effort = pod.requests.IsZero();
    task.gated = !pod.scheduling_gates.empty();
    auto preemptable = pod.meta.annotations.find(kPreemptableAnnotation);
    task.preemptable = preemptable == pod.meta.annotations.end() || preemptable->second != "false";
    task.constraint_class = entry->constraint_class;
    task.status = StatusOf(pod, entry->releasing);
    if (task.status == TaskStatus::kFailed && !IsTerminal(pod.phase)) continue;  // deleted before binding
    block.node_names.push_back(HoldsNode(task.status) ? &pod.node_name : nullptr);
    block.tasks.push_back(std::move(task));
  }
  // Counted once per change of the job, not per snapshot.
  for (const TaskInfo& task : block.tasks) CountTask(task, +1, job);
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
