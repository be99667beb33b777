// The `preempt-elastic-workers` action (spec section 3): gives a starving job its min by
// evicting elastic workers of other jobs, and only when that makes the whole min fit.
//
// Starving job: eligible (valid, in a known queue, Inqueue or Running) and its min is not
// covered by ready plus pipelined tasks, while it has the pending pods to reach it: a new
// Inqueue job, or a running job whose min was raised or which lost a pod. Starving jobs are
// served one at a time in job order (Session::JobOrderLess); each gets its own statement.
//
// Victims (candidates): the elastic workers (scheduler/framework/elastic_workers.h: placed tasks
// beyond min, never the master, never a role below its minTaskMember, highest index first) of
// the other jobs whose min is placed and that are Scalable (outside their cooldown) at the start
// of the action, skipping jobs of another queue that is not reclaimable. They are ranked in one
// victim order that is computed, as a dry run, by taking workers one at a time:
//   1. from jobs of queues above their deserved share first, re-checked as workers are taken,
//      since taking them can bring the queue back within its share. Above = the Overused hooks
//      say so (Volcano's sense: allocated >= deserved in every resource), or the queue holds
//      more than the deserved share a plugin reported (Session::queue_deserved, proportion) in
//      some resource. The second matters for elastic queues: proportion caps a deserved share by
//      the queue's request, which includes its pending extras, so in abundant resources (the cpu
//      of a GPU job) an elastic queue never reaches its deserved share and is never Overused;
//   2. then from the most fulfilled job (reverse Session::ElasticOrderLess), re-evaluated after
//      every worker taken, so scale-down keeps fulfillment balanced as scale-up does;
//   3. within a job, highest index first (reverse task order): a job's workers are always taken
//      as a prefix of its own list (never rank 3 while rank 7 runs).
//
// Plan for one starving job S, in a Statement (a dry run until committed). For each task t of
// S's unplaced min (UnplacedMinTasks: role minimums first, then count, in task order):
//   a. While S's queue cannot take t (Session::Allocatable is false, e.g. at its capability
//      because of its own jobs' extras), evict the next victim of S's own queue in victim order.
//      None left: the plan fails.
//   b. If t fits somewhere without evictions (FindBestNode on Placement::kFutureIdle: idle plus
//      what is being released, minus earlier promises), pipeline it there.
//   c. Otherwise, for every node that passes the predicates and has a free pod slot, walk the
//      victims on that node in victim order, adding what each frees, until t fits. Evicting
//      that victim also evicts, by rule 3, the workers its job must lose before it (possibly on
//      other nodes). The node's cost is (number of evictions, rank of the last victim it
//      needs); the cheapest node wins (ties: lower node id), its evictions are made and t is
//      pipelined there. No node can fit t: the plan fails.
//   Fewest evictions come first because every eviction changes the victim's worker count, which
//   restarts its training from a checkpoint; among equally cheap nodes the victim order decides.
//   Victims on nodes that do not help t are never evicted, except where rule 3 requires it.
//   The plan succeeds when every task is placed and the pipelined-job hooks (gang) agree.
// On success the statement commits: evictions are recorded with reason
// "elastic-preempted-for <namespace>/<job>" and every victim job is marked scaled (its worker
// count changed: its cooldown restarts). On failure the statement is discarded: no eviction
// is made for a gang that would still not fit.
//
// Pipelined tasks are promises for this session only. In the next session the evicted pods'
// resources are free (after their grace period) and `allocate`, which runs before
// `elastic-scale`, places S on them; `elastic-scale` itself keeps pipelined capacity for S (see
// actions/elastic_scale/elastic_scale.h). Until the pods are gone, S stays starving, and this
// action re-pipelines it onto the releasing capacity without new evictions (step b).
#ifndef LAHAR_ACTIONS_PREEMPT_ELASTIC_WORKERS_PREEMPT_ELASTIC_WORKERS_H_
#define LAHAR_ACTIONS_PREEMPT_ELASTIC_WORKERS_PREEMPT_ELASTIC_WORKERS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"
#include "scheduler/framework/statement.h"

namespace lahar {

// Which jobs may give up workers in a plan.
enum class VictimScope {
  kOutsideCooldown,  // the action: only jobs that were Scalable at its start
  // elastic-scale's reservation: also jobs inside their cooldown, ranked after all others
  // (their workers come back once the cooldown ends, so capacity is kept for the starving job).
  kIncludingCooldown,
};

struct StarvingJobPlan {
  bool fits = false;
  std::vector<std::pair<TaskId, NodeId>> placements;  // pipelined, in task order
  std::vector<TaskId> victims;                        // evicted, in eviction order
};

// Victim orders of one action, reused across starving jobs of the same queue: a starving job is
// never a victim and failed plans are discarded, so until a plan commits the order depends only
// on the starving job's queue and the scope. Call Clear() after committing.
class VictimOrderCache {
 public:
  VictimOrderCache();
  ~VictimOrderCache();
  void Clear();
  struct Entries;  // defined where the orders are built
  Entries& entries() { return *entries_; }

 private:
  std::unique_ptr<Entries> entries_;
};

// Plans S = `job` into `statement` as described above. `scalable[j]` is Session::Scalable of
// job j at the start of the calling action. On failure the statement holds a partial plan that
// the caller discards; on success the caller commits or discards it.
StarvingJobPlan PlanStarvingJob(Session& session, Statement& statement, JobId job,
                                const std::vector<bool>& scalable, VictimScope scope,
                                const std::string& reason, VictimOrderCache* cache = nullptr);

// Session::Scalable for every job, evaluated now.
std::vector<bool> ScalableJobs(const Session& session);

// "elastic-preempted-for <namespace>/<job>".
std::string ElasticPreemptionReason(const JobInfo& starving);

// Validates `arguments` and creates the action.
absl::StatusOr<std::unique_ptr<Action>> NewPreemptElasticWorkersAction(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_ACTIONS_PREEMPT_ELASTIC_WORKERS_PREEMPT_ELASTIC_WORKERS_H_
