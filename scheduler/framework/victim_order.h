// The victim planner's orders (victims.h says what entries and ranks are): what a policy may
// take, collected cheaply, then ranked when a plan has to walk it. Internal to the planner
// (victims.cc); actions use victims.h.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_VICTIM_ORDER_H_
#define LAHAR_SCHEDULER_FRAMEWORK_VICTIM_ORDER_H_

#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "scheduler/framework/victims.h"

namespace lahar {
namespace victims_internal {

struct Entry {
  JobId job;
  int32_t position;           // index in its job's list (eviction order)
  absl::InlinedVector<TaskId, 1> tasks;  // what taking it evicts (one pod for an elastic worker)
  Resources freed;            // their requests
  bool whole = false;
};

// What a set of nodes offers pods once more is freed on each (its future idle plus that, per
// resource, and pod slots) in the session state `made_at` (Session::state_version, which every
// change of node amounts moves): the most any one offers and the sum of what each offers (at
// least zero). A pod asking more than the most of some resource fits none of them; n pods
// asking more than the sum fit n times on none together (PodsFittingWithFreed counts no more).
// Made in one pass over the set, it spares a pass per pod asked about, as most pods of a
// backlog fit none.
struct RoomBound {
  Resources most, total;
  int32_t most_slots = 0;
  int64_t total_slots = 0;
  uint64_t made_at = UINT64_MAX;
  uint64_t first_asked_at = UINT64_MAX;

  // Whether to make the bound (Reset, Add) before the pass a pod is asked about: not for the
  // first ask with the nodes as they are (a pass may stop at its first node that fits, and in
  // many states only one pod is asked about), for the second.
  bool WorthMaking(uint64_t state_version) {
    if (made_at == state_version) return false;
    if (first_asked_at == state_version) return true;
    first_asked_at = state_version;
    return false;
  }
  void Reset(uint64_t state_version);
  // A node of the set, with `freed` and `pods` more free there.
  void Add(const NodeInfo& node, const Resources& freed, int32_t pods);
  // Whether no node of the set could take a pod asking `request`, and whether fewer than
  // `count` such pods fit on them all; false when not made for the nodes as they are.
  bool NoneFits(const Resources& request, uint64_t state_version) const;
  bool FewerFit(const Resources& request, size_t count, uint64_t state_version) const;
};

// Every entry of a plan. Collected first (cheap: which jobs may give up what, and what that
// could free on each node), ranked only when a plan needs to walk the entries (rank = index in
// `ranked`): a plan that no node could serve even with every entry taken fails without it.
struct VictimOrder {
  // Collected (CollectVictims).
  std::map<JobId, std::vector<TaskId>> worker_lists;  // elastic workers per job, eviction order
  std::vector<Entry> whole;                            // whole-job entries, not ranked yet
  Resources reachable;  // free capacity plus everything entries free
  struct NodeBound {
    NodeId node;
    Resources freed;  // the requests of every entry's tasks there
    int32_t pods = 0;
  };
  std::vector<NodeBound> node_bounds;  // by node id; nodes with an entry's task only
  std::vector<int32_t> bound_index;    // per node id: its index in node_bounds, or -1
  mutable RoomBound room;              // of the nodes in node_bounds, with their entries taken
  // Elastic workers are ranked by the queues' shares and the jobs' fulfillment when the order is
  // built; a committed plan changes both, so such an order is not reused after one.
  bool has_workers = false;

  // Ranked (RankVictims).
  bool is_ranked = false;
  std::vector<Entry> ranked;
  int32_t worker_entries = 0;  // the elastic workers' entries, ranked first
  std::vector<std::vector<int32_t>> job_ranks;  // per job id: ranks in its own eviction order
  std::vector<std::vector<int32_t>> node_ranks;     // per node: ranks with a task there, ascending
  // Entries taken by plans committed since the order was ranked (a prefix of each job's list).
  std::vector<bool> gone;
  int32_t min_entry_pods = INT32_MAX;  // the fewest pods of any entry: no node costs fewer
};
// What of a running job may be taken, whatever the policy's kind: its elastic workers that may
// go, in order, and whether the job may then be taken whole (with `rest`, its other placed tasks).
struct Candidate {
  bool eligible = false;  // preemptable, its min placed, elastic-eligible
  std::vector<TaskId> workers;
  Resources workers_freed;     // what the workers request, summed once for every order made
  bool whole_known = true;     // false: made for a policy that takes workers only; no whole part
  bool whole_allowed = false;  // none protected, none placed in this session
  std::vector<TaskId> rest;
  Resources rest_freed;
};

// The candidates of one action run, per job id, made when first needed. Few of a backlog's jobs
// are ever asked about (those holding their min), so a slot per job says where its candidate
// is, instead of a table of every job made and freed in every run.
class Candidates {
 public:
  // Room for jobs of ids below `jobs`, `asked` of which may be asked about (made without moving
  // those made before).
  void Size(size_t jobs, size_t asked) {
    if (slot_.size() < jobs) slot_.resize(jobs, -1);
    made_.reserve(asked);
  }
  // The job's candidate, unset when not made yet; valid until another job's is asked for.
  std::optional<Candidate>& operator[](JobId job) {
    int32_t& slot = slot_[static_cast<size_t>(job)];
    if (slot < 0) {
      slot = static_cast<int32_t>(made_.size());
      made_.emplace_back();
    }
    return made_[static_cast<size_t>(slot)];
  }
  // Unmade again (its job changed).
  void Forget(JobId job) {
    if (static_cast<size_t>(job) < slot_.size() && slot_[job] >= 0) made_[static_cast<size_t>(slot_[job])].reset();
  }
  void Clear() {
    slot_.clear();
    made_.clear();
  }

 private:
  std::vector<int32_t> slot_;  // per job: its place in made_, or -1
  std::vector<std::optional<Candidate>> made_;
};

// The ranked orders of one action run whose elastic workers another order with the same worker
// lists takes as they are (preempt-elastic-workers' for every queue, when all are reclaimable):
// the rank depends on the lists and the session's state, which no plan changes until one is
// kept, and the orders stay where they are until then (VictimOrderCache::Committed).
using RankedWorkers = std::vector<const VictimOrder*>;

// `candidates` (per job id, computed when first needed) may be shared by the orders of one
// action run until a plan is kept: a candidate does not depend on the policy's kind.
VictimOrder CollectVictims(Session& session, const JobInfo& starving, const TaskInfo& preemptor,
                           const VictimPolicy& policy, const std::vector<bool>& scalable,
                           Candidates& candidates);

// Per node, what the elastic workers of every live job hold there (ElasticWorkers): a bound on
// what any order of elastic workers frees there, whatever a policy's kind, cooldown and hooks
// keep of them. Each job's part is counted by its tasks' version (Session::job_tasks_version), so
// a session counts again only the jobs whose tasks changed since it last asked. With a WaitMemo
// the holdings go on to the next session: a part counted as the snapshot laid its job out is
// kept under the job's CarriedWorkersKey, and a later session whose job has that key again (its
// objects and the node set unchanged, so its tasks' states and nodes too) takes the part as it
// is; the parts of jobs that changed or went are taken out of the sums when a session starts.
struct WorkerHoldings {
  struct Held {
    Resources freed;
    int32_t pods = 0;
  };
  std::vector<Held> per_node;
  struct Part {
    uint64_t version = 0;  // Session::job_tasks_version when counted
    uint64_t key = 0;      // CarriedWorkersKey when counted as laid out; 0: not carried
    JobId job = kNoId;     // in the session counting
    std::vector<std::pair<NodeId, Resources>> workers;  // each counted worker's node and request
  };
  std::vector<Part> parts;       // of the live jobs counted so far
  std::vector<int32_t> part_of;  // per job id: its index in parts, or -1
  absl::flat_hash_map<uint64_t, int32_t> part_by_key;  // the parts with a key, by it
  uint64_t node_set_version = UINT64_MAX;  // the node set the node ids of the parts are of
  uint64_t state_version = UINT64_MAX;     // Session::state_version() when last brought up to date
  // Of the nodes holding workers, and of all nodes, with every worker gone
  // (SomeNodeMayFitWithAnyWorkers, FewerFitWithAnyWorkers).
  mutable RoomBound room_with_workers, room_of_all;
  // The last answers of the two, with what they were asked in: the alike pods of a backlog ask
  // again and again in one state, and a pod's shape (TaskInfo::shape: its constraint class and
  // requests) decides what a node answers it.
  struct LastFit {
    uint64_t state_version = UINT64_MAX;
    int32_t shape = kNoShape;
    bool fits = false;
  };
  struct LastFewer {
    uint64_t state_version = UINT64_MAX;
    Resources request;
    size_t count = 0;
    bool fewer = false;
  };
  mutable LastFit last_fit;
  mutable LastFewer last_fewer;
};

// The session's WorkerHoldings, brought up to its state.
const WorkerHoldings& CountWorkerHoldings(const Session& session);
// SomeNodeMayFit with every elastic worker of the cluster taken (`holdings`, counted in the
// current state): false when no order of elastic workers could make room for `task` anywhere.
bool SomeNodeMayFitWithAnyWorkers(const Session& session, const WorkerHoldings& holdings, const TaskInfo& task);

// Whether fewer than `count` pods asking `request` each fit on all the nodes together, with
// every elastic worker of the cluster taken (`holdings`, counted in the current state) and the
// predicates not asked: a bound, as SomeNodeMayFitWithAnyWorkers is for one pod.
bool FewerFitWithAnyWorkers(const Session& session, const WorkerHoldings& holdings, const Resources& request,
                            size_t count);

// Whether `node` could take `task` with every entry of the order taken there: a bound, since
// what the policy admits and what earlier plans took only leave less. Predicates not asked.
bool NodeMayFit(const Session& session, const VictimOrder& order, NodeId id, const TaskInfo& task);
// NodeMayFit for some node that passes the predicates.
bool SomeNodeMayFit(const Session& session, const VictimOrder& order, const TaskInfo& task);

// Ranks a collected order, reusing `shared` workers when given (and adding its own to it).
void RankVictims(Session& session, const VictimPolicy& policy, const std::vector<bool>& scalable, VictimOrder& order,
                 RankedWorkers* shared);

// What makes two starving jobs' plans alike: the order key and the shapes of the unplaced min.
uint64_t ShapesKey(const Session& session, const JobInfo& job, std::pair<int64_t, int64_t> key);

}  // namespace victims_internal

struct VictimOrderCache::Entries {
  std::map<std::pair<int64_t, int64_t>, victims_internal::VictimOrder> orders;
  std::vector<int32_t> taken;  // PlanForStarvingJob's scratch, all -1 between plans
  victims_internal::Candidates candidates;  // shared by the orders until a plan is kept
  // Plans that failed before the gang hooks were asked, by order key and the shapes of the
  // unplaced min, and whether they changed task states (and undid them). Until a plan is kept,
  // another starving job of that key and those shapes fails the same way: its plan reads the
  // same state, order and policy, and searches nodes afresh (PlanForStarvingJob).
  std::map<uint64_t, bool> failures;
  // The entry of `failures` last found, for a run of alike jobs (cleared with it).
  std::optional<std::pair<uint64_t, bool>> last_failure;
  victims_internal::RankedWorkers ranked_workers;  // until a plan is kept
  // FailsAsItsClass': StarvingClassOf when first asked, and per class whether its jobs fail
  // alike (1; 2: replaying a trace) or not known (0). Off for good once a plan is kept.
  std::vector<int32_t> class_of;
  std::vector<int8_t> class_fails;
  bool classes_off = false;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_VICTIM_ORDER_H_
