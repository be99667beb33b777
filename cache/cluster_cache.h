// The scheduler's cache: the Kubernetes objects it has seen (from a watch or from the
// simulator) and the bookkeeping that must outlive a session. Sessions never read it
// directly; they get a ClusterSnapshot, a self-contained copy built by Snapshot().
#ifndef LAHAR_CACHE_CLUSTER_CACHE_H_
#define LAHAR_CACHE_CLUSTER_CACHE_H_

#include <array>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "api/cluster_info.h"
#include "api/objects.h"

namespace lahar {

struct CacheOptions {
  std::set<std::string, std::less<>> scheduler_names = {"lahar"};
  std::string default_queue = "default";
};

class ClusterCache {
 public:
  explicit ClusterCache(CacheOptions options = {});
  // Its indexes point into its own maps' nodes, which a move keeps and a copy would not.
  ClusterCache(const ClusterCache&) = delete;
  ClusterCache& operator=(const ClusterCache&) = delete;
  ClusterCache(ClusterCache&&) = default;
  ClusterCache& operator=(ClusterCache&&) = default;

  void UpsertNode(Node node);
  void DeleteNode(std::string_view name);
  void UpsertPod(Pod pod);
  void DeletePod(std::string_view namespace_, std::string_view name);
  void UpsertPodGroup(PodGroup group);
  void DeletePodGroup(std::string_view namespace_, std::string_view name);
  void UpsertQueue(Queue queue);
  void DeleteQueue(std::string_view name);
  void UpsertPriorityClass(PriorityClass priority_class);
  void DeletePriorityClass(std::string_view name);
  void UpsertPodDisruptionBudget(PodDisruptionBudget pdb);
  void DeletePodDisruptionBudget(std::string_view namespace_, std::string_view name);
  void UpsertHyperNode(HyperNode hypernode);
  void DeleteHyperNode(std::string_view name);

  // Decisions a session made, reflected before the apiserver (or simulator) confirms them,
  // so the next session does not place the same pod twice.
  absl::Status AssumeBound(std::string_view pod_key, std::string_view node_name);
  absl::Status MarkReleasing(std::string_view pod_key);
  // Undo an assumption the apiserver refused (the bind or eviction failed); a no-op once the
  // apiserver has confirmed a node or the pod is gone.
  void ForgetBound(std::string_view pod_key);
  void ForgetReleasing(std::string_view pod_key);
  // The apiserver refused to evict the pod (a PodDisruptionBudget): it is no victim in the
  // snapshots of sessions before `until`, so no session asks again for what was just refused.
  void MarkEvictionRefused(std::string_view pod_key, Millis until);
  absl::Status SetPodGroupPhase(std::string_view job_key, PodGroupPhase phase);
  // Restarts the elastic cooldown of a job.
  void RecordScale(std::string_view job_key, Millis when);
  // The owner took `reason` as why the job waits: later snapshots carry it (JobInfo::
  // reported_wait) until the job's objects change, so that sessions report only new reasons.
  void NoteWaitReported(std::string_view job_key, const WaitReason& reason);
  // An object equal to `reason` shared with every other reason interned equal to it while one
  // of them is held (what NoteWaitReported keeps): owners that keep reasons too hold these.
  std::shared_ptr<const WaitReason> InternReason(const WaitReason& reason);

  const Pod* FindPod(std::string_view key) const;
  const Node* FindNode(std::string_view name) const;
  const PodGroup* FindPodGroup(std::string_view key) const;
  size_t pod_count() const { return pods_.size(); }
  size_t node_count() const { return nodes_.size(); }

  // Which jobs a snapshot lays out: every job, or all but the parked ones (ParkJobs).
  enum class Layout : uint8_t { kEveryJob = 0, kLeaveOutParked = 1 };
  static constexpr size_t kLayouts = 2;

  // Builds the session's view. Pods of other schedulers count against their nodes only.
  // `spent`, the snapshot a finished session handed back, lends its storage: its jobs, tasks and
  // node task lists are assigned over, not allocated anew (a tenth of a simulated week was
  // allocating and freeing them). Its contents do not matter, but for what a session never
  // changes: the jobs it did not mark changed (ClusterSnapshot::job_as_laid_out) and what its
  // nodes' objects alone make (NodeInfo's node, version, allocatable, max_pods, schedulable).
  // Each layout keeps its own record of what it laid out where: a caller that uses both hands
  // each layout the snapshot spent of that layout.
  ClusterSnapshot Snapshot(Millis now, ClusterSnapshot spent = {}, Layout layout = Layout::kEveryJob) const;

  // Parks jobs of the snapshot laid out last (by its job ids): waiting jobs that its session
  // refused as it refused `representative`, for reasons that depend on what they share alone
  // (CycleResult::Parkable). Snapshots laid out with kLeaveOutParked leave them out and name them
  // in ClusterSnapshot::parked until one of them changes (that job comes back), the
  // representative changes (its class comes back), every block is rebuilt (queues, priority
  // classes) or UnparkAll. A job that changed since that snapshot, or that is laid out for a
  // class, is not parked.
  //
  // In the session's own order among jobs the job order ties (creation time, arrival, key;
  // JobOrderTiesFn), a class's first job stays laid out, its second is the representative, and
  // only jobs after that one are parked: a member's turn never comes before the
  // representative's, and one job alike may be admitted without its class coming back. When the
  // first job changes (admitted), the representative takes its place and the next member
  // stands for the class. A class needs three jobs.
  void ParkJobs(JobId representative, const std::vector<JobId>& members);
  // Brings back every job of the named classes (indices in the parked_representatives of the
  // kLeaveOutParked snapshot laid out last): its session needed them
  // (CycleResult::parked_classes_needed).
  void UnparkClasses(const std::vector<int32_t>& parked_classes);
  void UnparkAll();
  bool AnyParked() const { return parked_count_ > 0; }

  // Every object, in a stable order (for /debug/snapshot and lahar-sim snapshot files).
  std::vector<const Node*> Nodes() const;
  std::vector<const Pod*> Pods() const;
  std::vector<const PodGroup*> PodGroups() const;
  std::vector<const Queue*> Queues() const;
  std::vector<const PriorityClass*> PriorityClasses() const;
  std::vector<const PodDisruptionBudget*> PodDisruptionBudgets() const;
  std::vector<const HyperNode*> HyperNodes() const;
  // The topology the next snapshot carries (built now if the HyperNodes or nodes changed), or
  // null without HyperNodes. Its problems are what a feeder reports (log, Event).
  std::shared_ptr<const Topology> CurrentTopology() const;

 private:
  // Everything a snapshot needs from a pod, derived once when the pod changes rather than on
  // every session.
  struct PodEntry {
    std::shared_ptr<const Pod> pod;
    int32_t constraint_class = 0;
    int32_t shape = kNoShape;  // TaskInfo::shape
    bool assumed_bound = false;  // node set by AssumeBound, not confirmed
    bool releasing = false;      // evicted by us, not yet gone
    bool ours = false;           // scheduled by one of our scheduler names
    std::string job_key;         // ns/group, or the pod's own key when it has no group
    std::string role;
    int32_t task_priority = 0;
    int64_t index = 0;
    uint64_t version = 0;  // new whenever anything above changes
  };
  struct PodGroupEntry {
    PodGroup group;
    int64_t creation_order = 0;
    Millis last_scale_time = kNeverMillis;
    // New whenever the PodGroup is replaced; not when only the phase the scheduler decided is
    // recorded (SetPodGroupPhase): JobInfo::phase carries that.
    uint64_t version = 0;
  };

  // A job's part of a snapshot with job-relative ids (tasks 0..n-1), cached between sessions
  // and rebuilt only when one of the job's objects changes: a session's snapshot then costs a
  // copy per pod instead of a rebuild from the objects.
  struct JobBlock {
    bool exists = false;  // false: pods waiting for a PodGroup that has not arrived
    JobInfo job;
    std::vector<TaskInfo> tasks;
    std::vector<const std::string*> node_names;  // per task; null when it holds no node
    // node_names resolved to snapshot node ids, valid while node_set_version equals the
    // cache's: ids follow the set of node names, which rarely changes between sessions.
    std::vector<NodeId> node_ids;
    uint64_t node_set_version = 0;
    const std::string* queue = nullptr;           // the PodGroup's queue name
    const std::string* priority_class = nullptr;  // the PodGroup's or lone pod's class
    uint64_t build = 0;  // unique in the process: names this rebuild (ClusterSnapshot::job_builds)
    // The job's queue id and priority as the snapshot of this build resolved them: a change of
    // queues or priority classes rebuilds every block, so they hold while `resolved` is `build`.
    uint64_t resolved = 0;
    QueueId queue_id = kNoId;
    int32_t priority = 0;
    // What this build added to its queue's demand (CountDemand), and under which queue name.
    Resources demand;
    std::string demand_queue;
  };

  // What a node offers pods: its allocatable, pods apart (they are counted, not summed), or
  // nothing when it is cordoned or not Ready.
  static Resources NodeCapacity(const Node& node);
  static bool NodeSchedulable(const Node& node) { return !node.unschedulable && node.ready; }

  // Job keys of lone pods carry a suffix so that a pod never joins a PodGroup of its own name.
  static constexpr char kLonePodSuffix[] = "\x01";

  int32_t ConstraintClass(const Pod& pod);
  int32_t ShapeOf(int32_t constraint_class, const Pod& pod);
  void Unlink(const std::string& pod_key, const PodEntry& entry);
  void MarkDirty(std::string_view job_key);
  // A pod entry of ours changed in place: a new version, and its job's block is rebuilt.
  void PodChanged(PodEntry& entry) {
    entry.version = ++next_version_;
    MarkDirty(entry.job_key);
  }
  void MarkAllDirty() { all_dirty_ = true; }
  void RebuildBlock(const std::string& job_key, JobBlock& block) const;
  // Adds (sign +1, remembered in the block) or removes (-1) what the block's job asks of its
  // queue, and what it holds, to or from queue_sums_.
  void CountDemand(JobBlock& block, int sign) const;

  CacheOptions options_;
  // What pods hold on a node (placed or releasing), ours and other schedulers': a job block's
  // part is added when it is built and taken away before it is rebuilt or dropped, another
  // scheduler's pod's when it is stored and removed, so that a snapshot copies each node's sums
  // instead of adding up every pod that holds one.
  struct NodeHeld {
    // Moves with every count (NodeInfo::held_version). First, beside NodeEntry::node: a snapshot
    // reads both of every node, most often nothing else.
    uint64_t version = 1;
    Resources used;
    Resources used_limits;
    Resources releasing;
    int32_t pods = 0;
    int32_t releasing_pods = 0;
    // Adds (sign +1) or takes away (-1) one pod.
    void Count(const Resources& request, const Resources& limit, bool releasing_pod, int sign);
  };
  struct NodeEntry {
    std::shared_ptr<const Node> node;
    uint64_t version = 0;  // NodeInfo::version
    mutable NodeHeld held;
  };
  std::map<std::string, NodeEntry, std::less<>> nodes_;
  std::map<std::string, PodEntry, std::less<>> pods_;  // key "ns/name"
  std::map<std::string, PodGroupEntry, std::less<>> pod_groups_;
  // pod_groups_' entries by key, hashed: the simulator looks up every job told its reason.
  absl::flat_hash_map<std::string_view, PodGroupEntry*> pod_group_index_;
  std::map<std::string, Queue, std::less<>> queues_;
  uint64_t queues_version_ = 1;  // moves with every queue stored or deleted
  // The queues as a snapshot lays them out (by name, the tree linked, before the guarantees are
  // checked against the cluster's size) and their ids by name: made again when queues_version_
  // moves, copied into each snapshot otherwise.
  mutable uint64_t laid_queues_version_ = 0;
  mutable std::vector<QueueInfo> laid_queues_;
  mutable std::map<std::string_view, QueueId, std::less<>> laid_queue_ids_;
  std::map<std::string, PriorityClass, std::less<>> priority_classes_;
  std::map<std::string, std::shared_ptr<const PodDisruptionBudget>, std::less<>> disruption_budgets_;  // ns/name
  std::map<std::string, HyperNode, std::less<>> hypernodes_;
  // Rebuilt when a HyperNode changes (topology_dirty_), a node is added or removed, or node
  // labels change (labelMatch members read them).
  mutable std::shared_ptr<const Topology> topology_;
  mutable bool topology_dirty_ = true;
  mutable uint64_t topology_node_set_version_ = 0;
  std::map<std::string, int32_t, std::less<>> constraint_classes_;
  using ShapeKey = std::tuple<int32_t, std::vector<std::pair<ResourceId, int64_t>>,
                              std::vector<std::pair<ResourceId, int64_t>>>;
  std::map<ShapeKey, int32_t> shapes_;  // TaskInfo::shape by class, requests and limits
  // JobInfo::min_resources_number by min_resources (built while a snapshot is laid out).
  mutable std::map<std::vector<std::pair<ResourceId, int64_t>>, int32_t> min_resources_numbers_;
  std::map<std::string, Millis, std::less<>> last_scale_;  // survives PodGroup updates
  std::map<std::string, Millis, std::less<>> eviction_refused_until_;  // pod key -> until
  // Our pods by job key, then by pod key (both sorted): a snapshot walks jobs without lookups.
  std::map<std::string, std::map<std::string_view, const PodEntry*>, std::less<>> job_pods_;
  // Snapshot blocks by job key, and the keys whose objects changed since the last snapshot.
  mutable std::map<std::string, JobBlock, std::less<>> blocks_;
  // A block that exists (JobBlock::exists), with what a snapshot reads of it for every job: most
  // jobs of a backlog are laid out as before, and reading their blocks (one allocation each) was
  // a cache miss per job and session.
  struct LaidBlock {
    std::string_view key;
    JobBlock* block = nullptr;
    uint64_t build = 0;
    int32_t task_count = 0;
    // Per layout: where the last snapshot of that layout laid out its build `build` (builds
    // only move forward, so a build other than that one no such snapshot holds), and whether
    // NoteWaitReported changed the block since.
    struct Laid {
      uint64_t build = 0;
      int32_t at = -1;
      bool reported_changed = false;
    };
    std::array<Laid, kLayouts> laid{};
    bool holds_nodes = false;  // some task names a node: its node's usage is summed anew each time
    // The block's node_ids, resolved for node set node_ids_version (0: not resolved since the
    // block was built), here so that a snapshot keeping the job as laid out reads no block.
    const NodeId* node_ids = nullptr;
    uint64_t node_ids_version = 0;
    // When last laid out, a task of it named a node that is gone (the task failed there, so the
    // job's request, and its demand, are not its block's).
    bool node_gone = false;
    // Parked (ParkJobs): the class it belongs to (-1: none), and whether it is the class's
    // representative, the one job of the class kLeaveOutParked snapshots lay out.
    int32_t parked_class = -1;
    bool representative = false;
    int32_t first_of = -1;  // the class whose first job it is (laid out ahead of the representative)
    // The job's creation time and arrival (OrderOf), here so that a snapshot listing thousands
    // of parked jobs does not read each one's block.
    int64_t creation_timestamp = 0;
    int64_t creation_order = 0;
  };
  // Where a job falls among jobs alike in the session's own order (Session::JobOrderLess after
  // the hooks): creation time, arrival, key.
  struct OrderKey {
    int64_t creation_timestamp = 0;
    int64_t creation_order = 0;
    std::string_view key;
    auto operator<=>(const OrderKey&) const = default;
  };
  static OrderKey OrderOf(const LaidBlock& entry) {
    return {entry.creation_timestamp, entry.creation_order, entry.key};
  }
  // The blocks that exist, in key order (job ids follow it): a snapshot walks this instead of the
  // map, and it changes only when a job comes or goes.
  mutable std::vector<LaidBlock> existing_blocks_;
  // The entry of `key` in existing_blocks_, or null.
  LaidBlock* FindLaidBlock(std::string_view key) const;
  // Per job id of the snapshot laid out last: its entry in existing_blocks_ (ParkJobs).
  mutable std::vector<int32_t> last_laid_entries_;
  // Per entry of existing_blocks_: its key and, when it is a parked job (of a class, not its
  // representative), its class (else -1). A snapshot that leaves the parked jobs out names them from these
  // slots, without reading their entries (a backlog parks most of its jobs).
  mutable std::vector<ClusterSnapshot::ParkedJob> park_slots_;
  mutable int64_t parked_count_ = 0;
  // The classes made so far (indices are not reused until UnparkAll), and per class its
  // representative's place and its parked members' in order (the first takes the
  // representative's place, the last ends the class: ClusterSnapshot::parked_last).
  mutable int32_t parked_classes_ = 0;
  mutable std::vector<OrderKey> representative_order_;
  mutable std::vector<std::vector<OrderKey>> class_members_;  // sorted
  // Parks `entries` (not parked, not laid out for a class; in OrderKey order) as members of
  // `parked_class`.
  void ParkMembers(const std::vector<LaidBlock*>& entries, int32_t parked_class) const;
  // Brings back a parked job whose objects changed, or the class of a representative that did.
  void UnparkChanged(LaidBlock& entry) const;
  // Takes a parked member out of the parked jobs; it keeps its class (to stand for it, or be
  // told to leave it by the caller).
  void UnparkMember(LaidBlock& entry) const;
  void UnparkClass(int32_t parked_class) const;
  // The class's first job changed: its representative is laid out first, its next member stands
  // for it (the class is gone when none is left).
  void PassFirstPlace(int32_t parked_class) const;
  // Numbers the classes that still have a representative from 0, in the order they were made,
  // once most classes are gone: sessions size their per-class lists by the count.
  void RenumberClassesIfMostAreGone();
  // What pods hold on nodes the cache does not have (not seen yet, or gone), by name
  // (NodeEntry::held for the others).
  mutable std::map<std::string, NodeHeld, std::less<>> held_elsewhere_;
  // Per queue name, over the laid-out jobs that name it: JobDemand summed (ClusterSnapshot::
  // queue_demand) and what their placed tasks request (queue_allocated), kept as blocks are
  // rebuilt.
  struct QueueSums {
    Resources demand;
    Resources allocated;
  };
  mutable std::map<std::string, QueueSums, std::less<>> queue_sums_;
  // Adds (sign +1) or takes away (-1) one pod to or from the sums of the node it names.
  void CountOnNode(const std::string& node_name, const Resources& request, const Resources& limit,
                   bool releasing, int sign) const;
  // The same for every task of `block` that holds its node.
  void CountHeld(const JobBlock& block, int sign) const;
  // The same for a pod of another scheduler, when it holds its node (bound, not finished).
  void CountForeign(const Pod& pod, int sign);
  // Replaces the pod of a stored entry in place (an assumed binding), keeping the node sums.
  void ReplacePod(PodEntry& entry, std::shared_ptr<const Pod> pod);
  mutable std::set<std::string, std::less<>> dirty_jobs_;
  mutable bool all_dirty_ = true;
  // Reported reasons by hash: jobs that reported equal reasons share one object, so that a
  // session finds a reason unchanged by its address (most waiting jobs share a few reasons).
  absl::flat_hash_map<uint64_t, std::weak_ptr<const WaitReason>> reported_reasons_;
  size_t reported_reasons_purge_at_ = 64;  // drops the expired entries when the map reaches it
  // The reason last interned: a session tells many jobs in turn one same reason, each then
  // found here without hashing it.
  std::shared_ptr<const WaitReason> last_reported_;
  uint64_t node_set_version_ = 1;  // bumped when a node name is added or removed
  // Node ids by name (positions in name order), and the entries by id, made again when the set
  // of names changes (a snapshot walks the vector, not the map).
  mutable absl::flat_hash_map<absl::string_view, NodeId> node_ids_;
  mutable std::vector<const NodeEntry*> node_entries_;
  mutable uint64_t node_ids_version_ = 0;
  // The schedulable nodes' allocatable (NodeCapacity), kept as nodes come, change and go.
  Resources total_allocatable_;
  uint64_t next_version_ = 0;  // pod, PodGroup and node versions come from it
  int64_t next_creation_order_ = 0;
};

// The pod's index within its job (spec section 2): completion index, replica index,
// volcano task index labels, else the trailing -N of its name; 0 when none.
int64_t PodIndex(const Pod& pod);
// The pod's task role: annotation or label volcano.sh/task-spec.
std::string PodRole(const Pod& pod);
// The pod's task priority: annotation volcano.sh/task-priority, else spec.priority.
int32_t PodTaskPriority(const Pod& pod);
// What the cache reads from a PodGroup's annotations into its job: lahar.sh/elastic-cooldown,
// (volcano.sh/)sla-waiting-time (Volcano's wins), lahar.sh/throughput. A value that does not
// parse is left unset (the job is scheduled as if it were absent) and named in `warnings` as
// "annotation <key>: <why>; ...", for whoever feeds the cache to report.
struct PodGroupAnnotations {
  Millis cooldown_override = -1;
  Millis sla_waiting_time = -1;
  bool measured = false;
  std::vector<ThroughputPoint> throughput;
  std::vector<std::string> warnings;
};
PodGroupAnnotations ReadPodGroupAnnotations(const PodGroup& group);

}  // namespace lahar

#endif  // LAHAR_CACHE_CLUSTER_CACHE_H_
