// The scheduler's view of the cluster: tasks (pods), jobs (PodGroup + pods), nodes and queues,
// held in dense vectors and addressed by small integer ids.
//
// A ClusterSnapshot is a value: the cache builds one per session, the session mutates its own
// copy, and nothing in it points back into the cache. Every vector is sorted by a stable key
// (namespace/name), so iteration order is the same for the same cluster.
#ifndef LAHAR_API_CLUSTER_INFO_H_
#define LAHAR_API_CLUSTER_INFO_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/duration.h"
#include "api/objects.h"
#include "api/resources.h"
#include "api/throughput.h"
#include "api/wait_reason.h"

namespace lahar {

using TaskId = int32_t;
using JobId = int32_t;
using NodeId = int32_t;
using QueueId = int32_t;
inline constexpr int32_t kNoId = -1;
inline constexpr int32_t kNoShape = -1;  // TaskInfo::shape not numbered
inline constexpr int32_t kNoRoleMinimum = -1;  // TaskInfo::role_index: its role has no minTaskMember

struct Topology;  // api/topology.h

enum class TaskStatus : uint8_t {
  kPending,    // waiting for a node
  kAllocated,  // given a node in this session; bound when the statement commits
  kPipelined,  // promised a node whose resources are still being released
  kBinding,    // bind issued, not yet observed
  kBound,      // bound by the apiserver, not yet running
  kRunning,
  kReleasing,  // being evicted or deleted; still holds its node's resources
  kSucceeded,
  kFailed,
};
inline constexpr size_t kTaskStatusCount = 9;
std::string_view TaskStatusName(TaskStatus status);

// Holds a node and counts towards its job's gang (Allocated, Binding, Bound, Running).
inline bool IsPlaced(TaskStatus s) {
  return s == TaskStatus::kAllocated || s == TaskStatus::kBinding || s == TaskStatus::kBound ||
         s == TaskStatus::kRunning;
}
// Uses resources of its node (placed, or releasing).
inline bool HoldsNode(TaskStatus s) { return IsPlaced(s) || s == TaskStatus::kReleasing; }

struct TaskInfo {
  // What a snapshot resets and most passes read first, on one cache line.
  TaskId id = kNoId;
  JobId job = kNoId;
  TaskStatus status = TaskStatus::kPending;
  NodeId node = kNoId;
  std::shared_ptr<const Pod> pod;  // immutable: names, labels, constraints
  Resources request;               // effective requests (no "pods" entry: counted separately)
  Resources limit;                 // effective limits (missing limits = requests)
  std::string role;                // volcano.sh/task-spec, "" when unset
  // The place of `role` among its job's min_task_member (in the map's order), set with the job,
  // or kNoRoleMinimum: per-role counts are vectors indexed by it, not maps of role names.
  int32_t role_index = kNoRoleMinimum;
  int32_t task_priority = 0;       // higher first
  int64_t index = 0;               // pod index within its job (rank); lower first
  bool best_effort = false;        // requests nothing
  bool gated = false;              // has scheduling gates (pod->scheduling_gates): fits no node
  bool preemptable = true;         // pod annotation volcano.sh/preemptable is not "false"
  // Tasks with the same scheduling constraints (selector, affinity, tolerations, gates) share a class,
  // so predicate plugins can cache node results per class instead of per pod.
  int32_t constraint_class = 0;
  // Tasks of one constraint class with the same requests and limits share a shape (numbered by
  // the cache, once per pod change), so that a session compares and hashes shapes as numbers.
  // kNoShape: not numbered (a snapshot made by hand); compare the fields.
  int32_t shape = kNoShape;

  const std::string& name() const { return pod->meta.name; }
  const std::string& namespace_() const { return pod->meta.namespace_; }
  std::string key() const { return pod->meta.namespace_ + "/" + pod->meta.name; }
};

struct JobInfo {
  // What every session pass reads comes first, so that a pass over thousands of waiting jobs
  // touches a few cache lines of each (the names and annotations after them are read rarely).
  JobId id = kNoId;
  QueueId queue = kNoId;
  int32_t min_available = 1;
  int32_t priority = 0;
  PodGroupPhase phase = PodGroupPhase::kPending;
  bool has_pod_group = true;   // false for a lone pod treated as a job of one
  bool preemptable = true;     // PodGroup annotation volcano.sh/preemptable is not "false"
  // Goodput (spec 3.2): the PodGroup carries a valid lahar.sh/throughput annotation, even empty,
  // and the points it reports (below), sorted by size.
  bool measured = false;
  // Jobs with equal min_resources (below) share a number, given by the cache once per job change,
  // so that enqueue tells alike jobs apart by numbers. kNoShape: not numbered (a snapshot made
  // by hand); compare the fields.
  int32_t min_resources_number = kNoShape;
  int64_t creation_order = 0;  // a strictly increasing arrival counter: ties in creation time
  // Elastic bookkeeping, kept by the cache across sessions.
  Millis last_scale_time = kNeverMillis;
  std::array<int32_t, kTaskStatusCount> status_count{};
  std::vector<TaskId> tasks;  // every non-terminated task, sorted by name
  Resources allocated;  // requests of placed tasks
  Resources request;    // requests of all tasks that are not finished
  Resources min_resources;
  // Why the job waits, as its owner (the simulator, the daemon) last took it from a session
  // (ClusterCache::NoteWaitReported); null once the job's objects changed since. A session
  // whose reason for the job is the same reports nothing for it (Session::Close).
  std::shared_ptr<const WaitReason> reported_wait;

  std::string namespace_;
  std::string name;
  std::string uid;
  std::map<std::string, int32_t, std::less<>> min_task_member;
  // Every role of min_task_member has at least that many tasks, whatever their states (set by
  // the cache with the tasks): then only failed tasks can leave a role short. False: not known.
  bool roles_have_min_tasks = false;
  std::string priority_class_name;
  int64_t creation_timestamp = 0;
  Millis cooldown_override = -1;  // lahar.sh/elastic-cooldown, -1 when unset
  Millis sla_waiting_time = -1;   // PodGroup annotation (volcano.sh/)sla-waiting-time, -1 when unset
  std::vector<ThroughputPoint> throughput;
  // PodGroup spec.networkTopology (spec 3.3), when set.
  std::optional<NetworkTopology> network_topology;
  // A digest of the job's objects as the cache last received them (PodGroup, pods) and of its
  // last scale time: equal while none of them changed. The phase is not in it.
  uint64_t version = 0;

  std::string key() const { return namespace_ + "/" + name; }
  int32_t Count(TaskStatus s) const { return status_count[static_cast<size_t>(s)]; }
  // Placed tasks plus succeeded ones: what gang readiness counts. Inline: asked of every job of
  // a backlog by most passes.
  int32_t ReadyCount() const { return PlacedCount() + Count(TaskStatus::kSucceeded); }
  int32_t PlacedCount() const {
    return Count(TaskStatus::kAllocated) + Count(TaskStatus::kBinding) + Count(TaskStatus::kBound) +
           Count(TaskStatus::kRunning);
  }
  // No task placed, pipelined or releasing: the job holds, and is promised, nothing on any node.
  bool HoldsNothing() const {
    return PlacedCount() == 0 && Count(TaskStatus::kPipelined) == 0 && Count(TaskStatus::kReleasing) == 0;
  }
  // Pods the owner created: `tasks` holds every pod of the job, finished ones included.
  int32_t MaxCount() const { return static_cast<int32_t>(tasks.size()) - Count(TaskStatus::kFailed); }
  bool IsElastic() const { return MaxCount() > min_available; }
  // More tasks than its min: only such a job can ever have more ready than its min, so workers.
  bool HasTasksBeyondMin() const { return static_cast<int32_t>(tasks.size()) > min_available; }
};

// Adds (sign +1) or removes (-1) `task`, in its current status, to or from `job`'s status
// counts, allocated and request: the one rule the cache and Session::SetTaskStatus count by.
inline void CountTask(const TaskInfo& task, int sign, JobInfo& job) {
  job.status_count[static_cast<size_t>(task.status)] += sign;
  const bool placed = IsPlaced(task.status);
  const bool unfinished = task.status != TaskStatus::kSucceeded && task.status != TaskStatus::kFailed;
  if (sign > 0) {
    if (placed) job.allocated += task.request;
    if (unfinished) job.request += task.request;
  } else {
    if (placed) job.allocated -= task.request;
    if (unfinished) job.request -= task.request;
  }
}

// What the job asks of its queue (the request that caps its queue's deserved share): its
// unfinished pods' requests; while it has fewer pods than its min, at least its minResources,
// because operators (Volcano's job controller, Kubeflow's training-operator) create a job's pods
// only once its PodGroup is admitted, and admission must see the demand to weigh reclaim for it.
// `pods`: the job's pods, finished ones included (its tasks, or a cache's block before they are
// laid out). The request itself when it is the demand (no copy), else `grown`, made to hold it.
inline const Resources& JobDemand(const JobInfo& job, size_t pods, Resources& grown) {
  if (static_cast<int64_t>(pods) >= job.min_available) return job.request;
  grown = job.request.Max(job.min_resources);
  return grown;
}

// A job's fulfillment score (spec 2): (ready - min) / (max - min), exactly 1 when max <= min. Kept
// as a fraction so that equal scores compare equal (2/4 == 3/6).
struct Fulfillment {
  int64_t numerator = 1;
  int64_t denominator = 1;
  double value() const { return static_cast<double>(numerator) / static_cast<double>(denominator); }
};
inline Fulfillment FulfillmentOf(const JobInfo& job) {
  const int64_t span = job.MaxCount() - job.min_available;
  if (span <= 0) return {1, 1};
  return {job.ReadyCount() - job.min_available, span};
}

struct NodeInfo {
  NodeId id = kNoId;
  std::shared_ptr<const Node> node;
  // The version of the cache's sums of what pods hold here (used, limits, releasing and the pod
  // counts) this node was laid out with; 0 once a session changed any of them. A snapshot laid
  // over this one copies them again only when they differ. Beside `node` and `tasks`: a snapshot
  // reads these three of every node, most often nothing else.
  uint64_t held_version = 0;
  std::vector<TaskId> tasks;  // tasks of scheduled jobs on this node
  uint64_t version = 0;  // changes whenever the node object is replaced
  Resources allocatable;
  Resources used;         // requests of every pod on the node (ours and other schedulers')
  Resources releasing;    // part of `used` held by pods being evicted or deleted
  Resources pipelined;    // promised to pipelined tasks
  Resources used_limits;  // limits of every pod on the node
  int32_t pod_count = 0;       // pods holding the node (placed or releasing)
  int32_t releasing_pods = 0;  // of those, pods being evicted or deleted
  int32_t pipelined_pods = 0;  // tasks promised a slot once releasing pods are gone
  int32_t max_pods = 110;
  bool schedulable = true;  // not cordoned and Ready

  const std::string& name() const { return node->meta.name; }
  // Idle capacity not promised to pipelined tasks (promises use releasing resources first).
  Resources Idle() const {
    Resources promised_beyond_releasing = pipelined - releasing;
    promised_beyond_releasing.ClampNegativeToZero();
    return allocatable - used - promised_beyond_releasing;
  }
  // What will be free once releasing pods are gone, minus what is promised already.
  Resources FutureIdle() const { return allocatable - used + releasing - pipelined; }
  // FutureIdle's amount of one resource, without making the sum.
  int64_t FutureIdleOf(ResourceId r) const {
    return allocatable.Get(r) - used.Get(r) + releasing.Get(r) - pipelined.Get(r);
  }
  // Pod slots, counted like resources: promises take releasing pods' slots first.
  int32_t IdlePodSlots() const { return max_pods - pod_count - std::max(0, pipelined_pods - releasing_pods); }
  int32_t FuturePodSlots() const { return max_pods - pod_count + releasing_pods - pipelined_pods; }
};

struct QueueInfo {
  QueueId id = kNoId;
  std::string name;
  int32_t weight = 1;
  Resources capability;  // empty: unlimited; otherwise only the named resources are capped
  Resources guarantee;
  Resources deserved;    // from the Queue spec; plugins compute the effective share
  bool open = true;
  bool reclaimable = true;
  int32_t priority = 0;
  // The queue tree (spec 2.1). `parent` is kNoId for a top-level queue; children in id order.
  QueueId parent = kNoId;
  std::vector<QueueId> children;
  int32_t depth = 0;  // 0 at the top level
  // Why the queue cannot be used (its parent is missing, or it is part of a cycle): its jobs
  // wait with this reason and nothing is evicted for them. Empty when the queue is sound.
  std::string broken;
  // Something wrong that was mended (a capability above the parent's, capped to it); reported.
  std::string warning;

  bool IsLeaf() const { return children.empty(); }
};

struct ClusterSnapshot {
  Millis now = 0;
  std::vector<NodeInfo> nodes;
  std::vector<JobInfo> jobs;
  std::vector<TaskInfo> tasks;
  std::vector<QueueInfo> queues;
  std::map<std::string, int32_t, std::less<>> priority_classes;  // name -> value
  std::vector<std::shared_ptr<const PodDisruptionBudget>> disruption_budgets;  // by ns/name
  // Pods (ns/name) whose eviction the apiserver refused lately: never victims until it passes.
  std::set<std::string, std::less<>> eviction_refused;
  Resources total_allocatable;  // over schedulable nodes
  // Per queue id: JobDemand summed over the queue's own jobs (not its children's), as the cache
  // kept it while jobs came and went, so that a session does not sum a backlog it leaves alone.
  // Empty in a snapshot made another way: then the jobs are summed.
  std::vector<Resources> queue_demand;
  // Per queue id: what the queue's own jobs' placed tasks request (their JobInfo::allocated
  // summed), kept the same way; empty in a snapshot made another way.
  std::vector<Resources> queue_allocated;
  // The HyperNodes resolved against `nodes` (spec 3.3); null when the cluster has none.
  std::shared_ptr<const Topology> topology;
  // Per job: the cache's build of the job it was laid out from (0: none). A snapshot built over
  // this one keeps the tasks of a job laid out from the same build at the same place, and only
  // resets what a session changes of them (status and node, see Session::SetTaskStatus).
  std::vector<uint64_t> job_builds;
  // Per job: true while the job and its tasks are exactly as the snapshot laid them out, false
  // once a session may have changed them (Session::TakeCluster). A snapshot built over this one
  // leaves such a job as it is, but for its ids. Bytes, not bits: the layout reads one a job.
  std::vector<uint8_t> job_as_laid_out;
  // Per job: the id of its first task as the snapshot laid it out (0 for a job without tasks),
  // so that a snapshot built over this one finds where each spent job's tasks lie without reading
  // the job. Sessions never renumber tasks; empty in a snapshot made another way.
  std::vector<TaskId> job_first_task;
  // The cache's version of the set of node names when it laid this snapshot out: the node ids
  // of the tasks it kept as laid out hold while the next one is laid at the same version.
  uint64_t node_set_version = 0;
  // Waiting jobs the snapshot leaves out (ClusterCache::ParkJobs, the simulator's): Pending ones
  // refused, or admitted ones set aside as fitting nowhere, in every session as their class's
  // representative, a job laid out here, is,
  // so a session judges the representative only and tells the class the same
  // (RunSchedulingCycle). Empty in every other snapshot.
  struct ParkedJob {
    std::string_view key;      // the cache's, valid while the snapshot's session runs
    int32_t parked_class = 0;  // an index in parked_representatives
  };
  std::vector<ParkedJob> parked;  // in key order
  std::vector<JobId> parked_representatives;  // per class; kNoId: none is laid out here
  // Per class: how many of `parked` are of it, counted as they are listed (empty: not counted,
  // ask `parked`).
  std::vector<int32_t> parked_counts;
  // Per class: its last member in the order the session keeps among jobs the job-order hooks
  // tie (JobOrderTiesFn): creation time, arrival, then key (empty when no member is left).
  struct ParkedClassEnd {
    int64_t creation_timestamp = 0;
    int64_t creation_order = 0;
    std::string_view key;  // the cache's, as ParkedJob::key
    // Whether `job` comes after that member in that order.
    bool Before(const JobInfo& job) const {
      if (creation_timestamp != job.creation_timestamp) return creation_timestamp < job.creation_timestamp;
      if (creation_order != job.creation_order) return creation_order < job.creation_order;
      return key < job.key();  // ties of creation time and arrival are rare (lone pods)
    }
  };
  std::vector<ParkedClassEnd> parked_last;  // per class

  // Recomputes every job's (one job's) status counts, allocated and request from its tasks.
  void RecomputeJobAggregates();
  void RecountJob(JobInfo& job) const;
  QueueId FindQueue(std::string_view name) const;
  // True when `ancestor` is `queue` or above it in the tree.
  bool IsAncestor(QueueId ancestor, QueueId queue) const;
  JobId FindJob(std::string_view key) const;
  NodeId FindNode(std::string_view name) const;
};

// Resolves the queue tree: `parents[q]` is queue q's spec.parent ("" or "root" = top level).
// Sets parent, children, depth, broken (missing parent, cycle) and caps each capability at its
// parent's (with a warning). Queues must have ids 0..n-1 in vector order.
void LinkQueueTree(std::vector<QueueInfo>& queues, const std::vector<std::string>& parents);

// Adds a warning to every top-level queue with a guarantee when the top-level guarantees add up
// to more than `total` (the schedulable nodes' allocatable) in some resource.
void CheckQueueGuarantees(std::vector<QueueInfo>& queues, const Resources& total);

}  // namespace lahar

#endif  // LAHAR_API_CLUSTER_INFO_H_
