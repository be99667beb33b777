// The one victim planner (spec 3.1). `preempt`, `reclaim` and `preempt-elastic-workers` (and
// elastic-scale's reservation for starving jobs) call it, each with its own VictimPolicy: which
// jobs may give up what, and the queue limits that must hold while victims are taken.
//
// Victim entries. A job that may be taken from contributes, in its own eviction order:
//   - its elastic workers (job_rules.h: placed tasks beyond min, never the master, never a role
//     below its minTaskMember, highest index first), one entry each, when its policy kind allows
//     elastic workers and it is outside its cooldown (or the policy includes cooldown);
//   - then, when the policy allows whole jobs, one entry with every other placed task: the gang
//     is taken whole, never cut below its min and left running.
// Taking an entry takes every earlier entry of its job first (rank 3 never goes while rank 7
// runs; the whole gang never goes while its workers run). Protected, never entries: tasks of a
// PodGroup or pod annotated volcano.sh/preemptable: "false", tasks the plugin hooks refuse
// (Session::Preemptable for preempt, Session::Reclaimable otherwise: conformance, pdb), and
// tasks placed in the running session.
//
// Rank (cheapest first): every elastic worker before any whole job. Workers: jobs of queues
// above their deserved share first (re-checked as workers are taken), then the most fulfilled
// job (reverse elastic order, re-evaluated after every worker), highest index first. Whole
// jobs: the policy's group first (reclaim: the closest relative in the queue tree), then lowest
// priority, then most recently started (least work lost), then fewest pods, then name.
//
// Plan for one starving job S, in a Statement (a dry run until the caller commits). For each
// task t of S's unplaced min (role minimums first, then count, in task order):
//   a. While S's queue has no room for t (the policy's room test; Session::Allocatable by
//      default), take the next entry of S's own queue, when the policy allows it; else fail.
//   b. If t fits without evictions (idle plus releasing, minus earlier promises), pipeline it.
//   c. Otherwise, on every node that passes the predicates, walk the entries with a task there
//      in rank order, adding what each (with the entries its job must lose first) frees on the
//      node, until t fits. The node's cost is (pods evicted, rank of the last entry it needs);
//      the cheapest node wins (ties: lower node id); its entries are taken and t is pipelined.
//      No node fits t: fail.
// The plan fits when every task is placed and the pipelined-job hooks (gang) agree. Nothing is
// evicted for a gang that would still not fit: the caller discards a failed statement.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_VICTIMS_H_
#define LAHAR_SCHEDULER_FRAMEWORK_VICTIMS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/cluster_info.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"

namespace lahar {

// What of a running job a policy may take.
enum class VictimKind : uint8_t {
  kNone,
  kElasticWorkers,  // only its elastic workers
  kWholeJob,        // its elastic workers, then the whole gang
};

struct VictimPolicy {
  // What of `job` may be taken. Asked once per job when the order is built.
  std::function<VictimKind(const JobInfo& job)> kind;
  // Which plugin hooks protect victims.
  enum class Hooks : uint8_t { kPreemptable, kReclaimable } hooks = Hooks::kReclaimable;
  // Elastic workers of jobs inside their cooldown are entries too, ranked after all others
  // (elastic-scale keeps capacity for starving jobs with them: they come back after it).
  bool include_cooldown = false;
  // Whole jobs in ascending group first (reclaim: siblings before cousins). Null: one group.
  std::function<int64_t(const JobInfo& job)> whole_job_group;
  // May `freed` more be taken from `victim`'s queue, on top of what the plan took already?
  // (reclaim: never below its deserved share). Null: always.
  std::function<bool(const JobInfo& victim, const Resources& freed)> admissible;
  // Told of every entry taken (reclaim keeps its per-queue tallies with it).
  std::function<void(const JobInfo& victim, const Resources& freed)> on_take;
  // Whether S's queue has room for `task` now. Null: Session::Allocatable.
  std::function<bool(const TaskInfo& task)> room;
  // When S's queue has no room, S's own queue's entries may make it (preempt, elastic workers).
  bool make_room_in_own_queue = true;
  // Carried by every eviction: "preempted-for ns/job", ... (EvictionReason). Made into text
  // only when a plan evicts: most plans of a backlog evict nothing.
  struct Reason {
    std::string_view verb;              // a literal: "preempted-for", ...
    const JobInfo* starving = nullptr;  // null: `verb` is the whole reason
    std::string Text() const;
  } reason;
  // `kind` never answers kWholeJob: the plan takes elastic workers only, so a task that fits no
  // node even with every elastic worker of the cluster gone fails without an order collected.
  bool takes_workers_only = false;
};

struct VictimPlan {
  bool fits = false;
  std::vector<std::pair<TaskId, NodeId>> placements;  // pipelined, in task order
  std::vector<TaskId> victims;                        // evicted, in eviction order
  std::vector<JobId> whole_jobs;                      // jobs taken whole
};

// Victim orders of one action, reused across starving jobs that share a key (the caller's: e.g.
// the queue, and the priority for preempt). A starving job is never a victim and failed plans
// are discarded, so until a plan commits the order depends only on what the key captures. Call
// Committed() after committing a plan: orders of whole jobs only are kept, with the entries the
// plan took marked gone (whole-job ranks are fixed: group, priority, start, size, name); orders
// with elastic workers (ranked by shares that the plan moved) are dropped, and so is every
// order when the session has PodDisruptionBudgets (a shared budget allows less after it).
class VictimOrderCache {
 public:
  VictimOrderCache();
  ~VictimOrderCache();
  void Clear();
  void Committed(const Session& session, const VictimPlan& plan);
  // Whether a starving job of `key` with the same unplaced min (shapes) as `job` failed since the
  // last kept plan: then `job` fails alike, and the failed plan's trace, when it left one, is
  // replayed. Asked before a policy is made, it spares making one.
  bool FailsAlike(Session& session, const JobInfo& job, std::pair<int64_t, int64_t> key);
  // The same answer, asked before a key is made, for a job of a class (StarvingClassOf) one of
  // whose jobs FailsAlike found failing since this cache was made: the class shares that key and
  // those shapes. Only until a plan is kept (the classes are those of the state before it).
  bool FailsAsItsClass(Session& session, JobId job);
  // `job` was left alone (no policy): the starving jobs of `key` with its shapes fail alike.
  void LeftAlone(const Session& session, const JobInfo& job, std::pair<int64_t, int64_t> key);
  struct Entries;  // defined where the orders are built
  Entries& entries() { return *entries_; }

 private:
  std::unique_ptr<Entries> entries_;
};

// Plans starving job `job` into `statement` (see above). `scalable[j]` is Session::Scalable of
// job j at the start of the calling action. With `cache`, the order is looked up by `order_key`
// (by default `key`), and the caller has asked cache->FailsAlike(job, key) first (a job that
// fails alike is not planned). Failures are kept per `key`, which captures the policy's room
// and limits; orders may be shared more widely, by policies that take the same victims.
VictimPlan PlanForStarvingJob(Session& session, Statement& statement, JobId job, const VictimPolicy& policy,
                              const std::vector<bool>& scalable, VictimOrderCache* cache = nullptr,
                              std::pair<int64_t, int64_t> key = {0, 0},
                              std::optional<std::pair<int64_t, int64_t>> order_key = std::nullopt);

// preempt-elastic-workers' policy for `starving` (also elastic-scale's reservation, with
// include_cooldown): the elastic workers of jobs of its own queue or of reclaimable queues.
VictimPolicy ElasticWorkersPolicy(const Session& session, const JobInfo& starving);
// The run class (see PlanUnlessFruitless) of passes that plan every starving job with
// ElasticWorkersPolicy, without include_cooldown or where it changes nothing.
inline constexpr char kElasticWorkersRuns[] = "elastic-workers";
// Whether include_cooldown changes nothing for ElasticWorkersPolicy now: no live job whose
// workers may not go (`scalable` false) has elastic workers, so no job offers more with it.
bool CooldownChangesNothing(const Session& session, const std::vector<bool>& scalable);
// The order key of ElasticWorkersPolicy, decided once per action run: when every queue is
// reclaimable its victims are the same for every starving job, which then share one order;
// otherwise the job's queue.
std::function<std::pair<int64_t, int64_t>(const JobInfo& starving)> ElasticWorkersOrderKey(const Session& session);

// How an evicting action serves starving jobs (see RelieveStarvingJobs).
struct StarvingJobHandler {
  // The key a job's victim order is cached under: jobs with the same key share one order (and
  // their policies the same victims, room and limits) until a plan commits. Made of the job's
  // queue and priority alone, so that a class of starving jobs shares it (StarvingClassOf).
  // Null: the queue.
  std::function<std::pair<int64_t, int64_t>(QueueId queue, int32_t priority)> key;
  // When set, orders are shared by this key instead (policies with the same victims, whatever
  // their room and limits), and `key` keeps the failures apart.
  std::function<std::pair<int64_t, int64_t>(const JobInfo& job)> order_key;
  // The policy for `job`, or nullopt to leave the job alone. Like the policy itself, whether
  // one is given depends only on what the key captures and the job's unplaced min (its shapes),
  // until a plan commits: a job left alone is remembered as failing, and so are the jobs alike.
  std::function<std::optional<VictimPolicy>(const JobInfo& job)> policy;
  // Told of every plan once it is committed (`committed`) or discarded. May be null.
  std::function<void(const VictimPlan& plan, bool committed)> settled;
  // The class of the action's runs (PlanUnlessFruitless); empty: the action's name.
  std::string run_class;
};

// How far a pass over starving jobs went (see PlanUnlessFruitless).
enum class StarvingPass : uint8_t {
  kNoneFit,       // no plan fit: the session is as it was
  kSomeFit,       // plans fit and were committed (or kept)
  kStoppedAtFit,  // asked to stop at the first plan that fits: it did, and discarded that plan
};
// An evicting action's plans for `jobs`, in that order; with `stop_at_fit`, it discards the first
// plan that fits and stops there.
using StarvingPassFn = std::function<StarvingPass(const std::vector<JobId>& jobs, bool stop_at_fit)>;

// The loop of preempt, reclaim and preempt-elastic-workers: every starving job, in job order,
// is planned in its own statement with the handler's policy; a plan that fits is committed and
// its victims settled (SettleVictims), any other is discarded, so nothing is evicted for a job
// that would still not fit. `action` names the log lines.
void RelieveStarvingJobs(Session& session, std::string_view action, const StarvingJobHandler& handler);

// For a job confined to network domains (spec 3.3, Session::JobDomains): plans it in each of
// `where`'s domains with `plan_in` (into a trial statement, then discarded; `discarded`, when set,
// is told of each plan) and scopes the job to the domain whose fitting plan evicts the fewest.
// False, and the job unscoped, when no domain's plan fits (or `plan_in` leaves the job alone).
bool ScopeToFewestVictimsDomain(Session& session, JobId id, DomainCandidates& where,
                                const std::function<std::optional<VictimPlan>(Statement&)>& plan_in,
                                const std::function<void(const VictimPlan&)>& discarded);
// Whether a starving job's plan is known to fail like an earlier one's under `key`
// (VictimOrderCache::FailsAlike). A job confined to a domain (`has_domains`, or scoped) fails or
// fits by its domain, not by its shapes alone: it never does, and `key` becomes one of its own,
// which no other job asks about.
bool FailsAlikeUnlessConfined(Session& session, VictimOrderCache& orders, const JobInfo& job, bool has_domains,
                              std::pair<int64_t, int64_t>& key);

// After a committed plan: jobs taken whole go back to Pending (their owners recreate the pods);
// jobs that lost elastic workers only are marked scaled (their cooldown restarts).
void SettleVictims(Session& session, const VictimPlan& plan);

// Session::Scalable for every live job that may have elastic workers (more tasks than its
// min; false for the others, which never have one), evaluated now (kept while the session
// state holds).
std::vector<bool> ScalableJobs(const Session& session);

// Serves the starving jobs (StarvingJobIds) with `pass`, as a pass in job order would (tried by id
// first when the action's last tried run found no plan; see victims.cc), unless the session's
// WaitMemo remembers a run of `action` that found none in the same state, and remembers this run
// when it finds none. The state is everything the plans read, hashed: the nodes, the queues and
// their deserved shares, every job holding or promised resources and every starving job (by id,
// with what decides their job order: version, queue, priority, phase, whether its workers may
// go, each task's status and node), and the evictions the apiserver refused; with
// PodDisruptionBudgets (their allowances count pods the hash leaves out) every run is tried. The
// hash is made once per session state (Session::state_version). A skipped run's only trace, task
// states changed and undone, is replayed. `pass` must search nodes with a Session::NodeSearch of
// its own, fresh per plan, so that its answers depend on the state alone.
// Runs are remembered by `run_class` and state (empty class: the action's name): actions whose
// passes plan the same starving jobs with the same victims, keys, room and limits (and differ in
// what they do with a plan that fits) give their runs one class, and a run one of them found
// fruitless is skipped by the others in the same state too.
void PlanUnlessFruitless(Session& session, std::string_view action, const std::vector<bool>& scalable,
                         const StarvingPassFn& pass, std::string_view run_class = {});

// The reason of an elastic worker taken back because its job's reports show it does not pay
// (spec 3.2): nobody waits for it.
inline constexpr char kLowGainEvictionReason[] = "elastic-low-gain";

// "<verb> <namespace>/<job>": elastic-preempted-for, preempted-for, reclaimed-for.
std::string EvictionReason(std::string_view verb, const JobInfo& starving);
// The inverse: {verb, "namespace/job"}; the job is empty for a reason of another form.
std::pair<std::string_view, std::string_view> SplitEvictionReason(std::string_view reason);

// FreeCapacity after `plan` was committed, from `free` before it: only the nodes it touched.
void UpdateFreeCapacity(const Session& session, const VictimPlan& plan, Resources& free);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_VICTIMS_H_
