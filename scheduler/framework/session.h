// A scheduling session: one cycle of actions over a private copy of the cluster snapshot,
// with the hooks that the configured plugins registered for it.
//
// Combining rules follow Volcano's framework (pkg/scheduler/framework/session_plugins.go):
// - orders (job, queue, task, elastic): tiers in order, plugins in order; the first hook that
//   tells the two apart decides; ties end in a stable key (creation order, then name);
// - predicates: every enabled hook must pass; node scores: the sum of every hook;
// - job valid / ready / allocatable: every hook must agree; overused: any hook;
// - pipelined / enqueueable / starving: per tier, a reject ends it, otherwise a tier with any
//   permit decides; with no vote at all the answer is permit (starving: false);
// - preemptable / reclaimable victims: intersection within a tier; the first tier that has an
//   opinion decides; with no hook at all every candidate stands (the victim planner and the
//   actions' own rules chose them; hooks only protect).
#ifndef LAHAR_SCHEDULER_FRAMEWORK_SESSION_H_
#define LAHAR_SCHEDULER_FRAMEWORK_SESSION_H_

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/cluster_info.h"
#include "api/wait_reason.h"
#include "scheduler/framework/config.h"
#include "scheduler/framework/decisions.h"
#include "scheduler/framework/free_index.h"
#include "scheduler/framework/hooks.h"
#include "scheduler/framework/interfaces.h"
#include "scheduler/framework/order_key.h"
#include "scheduler/framework/placement.h"
#include "scheduler/framework/registry.h"
#include "scheduler/framework/session_memos.h"
#include "scheduler/framework/wait_memo.h"

namespace lahar {

class Session {
 public:
  // Where sampled node searches resume, and the equivalence cache of the last search. Tasks of
  // one gang usually share requests and constraints, so their candidate nodes and scores are
  // computed once and only the nodes that changed since are re-evaluated. Hooks must therefore
  // depend only on the task's shape (requests, limits, constraint class) and the node, as
  // kube-scheduler's equivalence classes assume. Any transition that frees resources makes
  // other nodes feasible again and invalidates it. What a search returns depends on this
  // history: the session keeps one for its actions, and a caller whose searches must depend
  // only on the cluster's state (the victim planner) keeps its own, fresh per plan.
  class NodeSearch {
   private:
    friend class Session;
    struct Shape {
      int32_t constraint_class;
      Placement placement;
      bool elastic;
      Resources request;
      Resources limit;
      bool operator==(const Shape& o) const {
        return constraint_class == o.constraint_class && placement == o.placement && elastic == o.elastic &&
               request == o.request && limit == o.limit;
      }
    };
    struct Cached {
      bool valid = false;
      Shape shape;
      uint64_t free_epoch = 0;
      std::vector<NodeId> nodes;
      std::vector<double> scores;
      std::vector<uint64_t> versions;
    };
    size_t next_start = 0;
    Cached cache;
  };

  // Instantiates the configured plugins and calls their OnSessionOpen.
  static absl::StatusOr<std::unique_ptr<Session>> Open(ClusterSnapshot cluster,
                                                       const SchedulerConfig& config,
                                                       const Registry& registry);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs the configured actions in order.
  absl::Status RunActions(const Registry& registry);
  // Wall time each action took in RunActions, in configuration order (for metrics only).
  const std::vector<std::pair<std::string, int64_t>>& action_micros() const { return action_micros_; }
  // Calls OnSessionClose and computes job status updates: a job's phase, its scaling, and why
  // it waits when that is not what its owner took last (JobInfo::reported_wait). No mutation
  // after this.
  void Close();

  // ---- State ----
  Millis now() const { return cluster_.now; }
  const ClusterSnapshot& cluster() const { return cluster_; }
  // The snapshot, moved out once the session is done with it (its storage is reused), with the
  // jobs it changed (a task, the phase or the scale time set, even if undone since) marked as no
  // longer laid out as the cache built them.
  ClusterSnapshot TakeCluster() &&;
  const SchedulerConfig& config() const { return config_; }
  NodeInfo& node(NodeId id) { return cluster_.nodes[id]; }
  QueueInfo& queue(QueueId id) { return cluster_.queues[id]; }
  const TaskInfo& task(TaskId id) const { return cluster_.tasks[id]; }
  const JobInfo& job(JobId id) const { return cluster_.jobs[id]; }
  const NodeInfo& node(NodeId id) const { return cluster_.nodes[id]; }
  const QueueInfo& queue(QueueId id) const { return cluster_.queues[id]; }
  // Every job but those Pending with no task placed, pipelined or releasing (jobs waiting to be
  // admitted, most of a backlog), in id order: the jobs that every action but enqueue works on.
  // A job joins when its phase or a task of it changes; a pass that changes the phase of a job
  // not in it must not hold the list meanwhile.
  const std::vector<JobId>& LiveJobs() const { return live_jobs_; }
  // The live jobs with more tasks than their min, in id order: the only ones that may ever have
  // more ready than their min, so elastic workers (a pass over workers alone need read no other).
  const std::vector<JobId>& LiveElasticJobs() const { return live_elastic_jobs_; }
  std::vector<TaskInfo>& tasks() { return cluster_.tasks; }
  std::vector<JobInfo>& jobs() { return cluster_.jobs; }
  std::vector<NodeInfo>& nodes() { return cluster_.nodes; }
  std::vector<QueueInfo>& queues() { return cluster_.queues; }

  // What earlier sessions left for this one (see WaitMemo), or null.
  WaitMemo* wait_memo() const { return wait_memo_; }
  void set_wait_memo(WaitMemo* memo) { wait_memo_ = memo; }
  // Plugins whose answers change with time alone (a cooldown ends, an sla deadline passes) say
  // when; expiry() is the earliest such instant after now.
  void ExpiresAt(Millis at) {
    if (at > now() && at < expiry_) expiry_ = at;
  }
  // The same for one job's own deadline: its answers change with its own clock, so it is not
  // judged by what it shares with jobs alike it (ParkableWhileAdmitted).
  void ExpiresAt(Millis at, JobId job) {
    ExpiresAt(at);
    if (own_deadline_.empty()) own_deadline_.assign(cluster_.jobs.size(), false);
    own_deadline_[job] = true;
  }
  bool HasOwnDeadline(JobId job) const { return !own_deadline_.empty() && own_deadline_[job]; }
  Millis expiry() const { return expiry_; }
  // Task state changes so far in the session (SetTaskStatus calls).
  uint64_t task_state_changes() const { return task_state_changes_; }
  // Names the state of everything the jobs' rules read (tasks, job phases, scale times) and of
  // the nodes' amounts (resources held included): a new name at every change, never reused, and the old one back when a statement undoes its
  // changes (RestoreVersions), so what was derived from that state is valid again.
  uint64_t state_version() const { return state_version_; }
  // Job phase and scale-time changes so far (SetJobPhase, MarkScaled): statements do not undo them.
  uint64_t job_changes() const { return job_changes_; }
  // Statement::Discard, after undoing a run of changes no other change interleaved with: the
  // state and the touched jobs are as they were at these versions.
  void RestoreVersions(uint64_t state, const std::vector<std::pair<JobId, uint64_t>>& jobs);
  // Results derived from the session's state, kept while that state holds (session_memos.h).
  using Memos = SessionMemos;
  Memos& memos() const { return memos_; }
  // Names the states of the job's tasks, as state_version() does for the whole.
  uint64_t job_tasks_version(JobId job) const { return job_tasks_version_[job]; }
  // Invalidates every cached node search, as a transition that frees resources does: replays
  // the trace of a skipped run that changed task states and undid them.
  void ForgetCachedSearches() { ++free_epoch_; }
  // The trace a statement leaves that changed task states and was discarded, for a caller that
  // knows it would have and skips making it: task_state_changes() moves, and cached node
  // searches are forgotten.
  void ReplayDiscardedChanges() {
    ++task_state_changes_;
    ForgetCachedSearches();
  }

  // ---- Hook registration (from Plugin::OnSessionOpen) ----
  // The order hooks of jobs may give a `key` besides: the same order, as values of each job (see
  // OrderKey). Without one, the ranking of elastic victims calls the hook for every comparison.
  void AddJobOrderFn(JobCompareFn fn, JobOrderTiesFn ties_alike = nullptr, JobKeyFn key = nullptr);
  void AddQueueOrderFn(QueueCompareFn fn);
  void AddTaskOrderFn(TaskCompareFn fn);
  void AddPredicateFn(PredicateFn fn);
  void AddNodeOrderFn(NodeScoreFn fn);
  void AddJobValidFn(JobValidFn fn);
  void AddJobReadyFn(JobTestFn fn);
  void AddJobPipelinedFn(JobVoteFn fn);
  void AddJobStarvingFn(JobTestFn fn);
  // The admission hooks (the four below that take an AdmissionFactsFn) say which jobs they
  // judge by admission facts alone; see AdmissionFactsFn.
  void AddJobEnqueueableFn(JobVoteFn fn, AdmissionFactsFn by_facts = nullptr);
  // A plugin that decides whether the cluster can hold an admitted job (overcommit) replaces
  // enqueue's own check (free capacity plus what the evicting actions could take).
  void AddClusterAdmissionFn(ClusterAdmissionFn fn, AdmissionFactsFn by_facts = nullptr);
  // Told of every admission (Volcano's JobEnqueued), so that votes later in the session count it.
  void AddJobEnqueuedFn(JobEnqueuedFn fn);
  // `if_grown` answers the same question for every queue at once, its jobs holding more (see
  // MayBecomeOverused); without it, any growth may make any queue overused.
  void AddOverusedFn(QueueTestFn fn, QueueGrowthTestFn if_grown = nullptr);
  void AddAllocatableFn(AllocatableFn fn);
  void AddQueueLimitFn(QueueLimitFn fn, AdmissionFactsFn by_facts = nullptr);
  void AddPreemptableFn(VictimsFn fn);
  void AddReclaimableFn(VictimsFn fn);
  void AddElasticOrderFn(JobCompareFn fn, JobKeyFn key = nullptr);
  // Which of two jobs gives up an elastic worker first (<0: left); see ElasticVictimOrderLess.
  void AddElasticVictimOrderFn(JobCompareFn fn, JobKeyFn key = nullptr);
  void AddScalableFn(JobTestFn fn);
  // Whether the job may be given one more elastic worker now (goodput: its next worker is
  // expected to pay, and every size up to its current one has been measured).
  void AddElasticGrowFn(JobTestFn fn);
  // How many of the job's elastic workers no longer pay and are taken back, nobody waiting.
  void AddElasticShedFn(JobCountFn fn);
  void AddElasticPredicateFn(PredicateFn fn);
  void AddEventHandler(EventHandler handler);
  // Runs `fn` once, just before the session next changes a task's state (never, when it changes
  // none): a plugin makes what it reads of the state as it is now only when first asked, or then.
  void BeforeNextTaskChange(std::function<void()> fn);
  void AddJobDomainsFn(JobDomainsFn fn);
  // Refuses to admit a job that its placement rules say can never start (a hard network-topology
  // job no domain could hold even empty); the cluster's and queues' checks come after it.
  void AddJobAdmissionFn(ClusterAdmissionFn fn, AdmissionFactsFn by_facts = nullptr);

  // ---- Combined queries (from actions) ----
  bool JobOrderLess(const JobInfo& l, const JobInfo& r) const;
  bool QueueOrderLess(const QueueInfo& l, const QueueInfo& r) const;
  bool TaskOrderLess(const TaskInfo& l, const TaskInfo& r) const;
  // Least-fulfilled first (elastic plugin); falls back to JobOrderLess.
  bool ElasticOrderLess(const JobInfo& l, const JobInfo& r) const;
  // True when `l` gives up its last elastic worker before `r`: by the victim-order hooks, then
  // the reverse of ElasticOrderLess (the job that would be served last gives up first).
  bool ElasticVictimOrderLess(const JobInfo& l, const JobInfo& r) const;
  // Whether every hook ElasticVictimOrderLess asks gave a key; then `key` is made the job's key
  // of that order: Compare(key of l, key of r) < 0 exactly when ElasticVictimOrderLess(l, r).
  bool ElasticVictimOrderKeyed() const;
  void ElasticVictimKey(const JobInfo& job, OrderKey& key) const;
  // Every grow hook agrees (true without any).
  bool ElasticMayGrow(const JobInfo& job) const;
  // The most any shed hook asks for (0 without any).
  int32_t ElasticWorkersToShed(const JobInfo& job) const;
  bool HasElasticShedHooks() const { return !elastic_shed_.empty(); }
  FitResult Predicate(const TaskInfo& task, const NodeInfo& node) const;
  FitResult ElasticPredicate(const TaskInfo& task, const NodeInfo& node) const;
  double NodeScore(const TaskInfo& task, const NodeInfo& node) const;
  std::optional<WaitReason> JobInvalidReason(const JobInfo& job) const;
  // Whether no valid hook refuses the job, remembered by job_tasks_version(): the hooks judge a
  // job by its own tasks (gang: how many can run), which is what the version names.
  bool JobValid(const JobInfo& job) const;
  bool JobReady(const JobInfo& job) const;
  bool JobPipelined(const JobInfo& job) const;
  bool JobStarving(const JobInfo& job) const;
  bool JobEnqueueable(const JobInfo& job) const;
  bool HasClusterAdmissionHooks() const { return !cluster_admission_.empty(); }
  // Every admission hook judges this job by its admission facts alone (AdmissionFactsFn).
  bool JudgedByAdmissionFacts(const JobInfo& job) const;
  // Every job-order hook ties this job with the jobs alike it (JobOrderTiesFn).
  bool JobOrderTiesAlike(const JobInfo& job) const;
  // Whether `job` comes after every member of the parked class in job order: of the class's
  // queue and priority, tied by every job-order hook as they are, and after its last member
  // (ClusterSnapshot::parked_last) in the order the session keeps among tied jobs.
  bool ComesAfterParkedClass(const JobInfo& job, int32_t parked_class) const;
  // The first refusal of the cluster admission hooks, or nullopt.
  std::optional<WaitReason> ClusterAdmissionRefusal(const JobInfo& job, const Resources& need) const;
  // The first refusal of the job admission hooks, or nullopt.
  std::optional<WaitReason> JobAdmissionRefusal(const JobInfo& job, const Resources& need) const;
  // Sets a Pending job Inqueue and tells the JobEnqueued hooks (which may rely on the phase it
  // had: Pending).
  void AdmitJob(JobId job, const Resources& need);
  bool Overused(const QueueInfo& queue) const;
  // Per queue: whether it could be Overused at some point while the jobs of every queue q place
  // at most `growth[q]` more (allocate's placements only add); true where a hook cannot say.
  std::vector<bool> MayBecomeOverused(const std::vector<Resources>& growth) const;
  bool Allocatable(const QueueInfo& queue, const TaskInfo& task) const;
  // Why the job's queue refuses it under `check` (the first queue-limit hook that says), or
  // nullopt when no hook explains it.
  std::optional<WaitReason> QueueLimitReason(QueueCheck check, const JobInfo& job, const Resources& request) const;
  bool Scalable(const JobInfo& job) const;
  std::vector<TaskId> Preemptable(const TaskInfo& preemptor, const std::vector<TaskId>& candidates) const;
  std::vector<TaskId> Reclaimable(const TaskInfo& preemptor, const std::vector<TaskId>& candidates) const;
  bool HasElasticHooks() const;
  // The first domains hook's answer for `job`, or nullopt (no constraint: place it anywhere).
  std::optional<DomainCandidates> JobDomains(const JobInfo& job, bool for_eviction) const;

  // ---- Where a job's pods may go ----
  // Confines every node search for the job's tasks to `nodes` (sorted ids; null: anywhere), as
  // a hard network-topology constraint does. The pointee must outlive the session.
  void SetJobScope(JobId job, const std::vector<NodeId>* nodes) { job_scope_[job] = nodes; }
  const std::vector<NodeId>* JobScope(JobId job) const { return job_scope_[job]; }
  bool InJobScope(JobId job, NodeId node) const {
    const std::vector<NodeId>* scope = job_scope_[job];
    return scope == nullptr || std::binary_search(scope->begin(), scope->end(), node);
  }
  // Changes whenever a node's usage or object changes (for plugins that sum over nodes).
  uint64_t node_version(NodeId node) const { return node_version_[node]; }
  // No session changed the node since the cache counted what its pods hold (nothing is pipelined
  // on it then): its amounts are what its object and that count (WaitMemo::NodeStamp) say, so
  // what was made of them in an earlier session holds.
  bool NodeAsLaidOut(NodeId node) const { return cluster_.nodes[node].held_version != 0 && node_version_[node] == 0; }

  // Resources and pod count fit: the check every placement makes, whatever the plugins. With
  // `short_of`, also which resource the node is short of first (the lowest id), once the pod
  // count fits.
  FitResult ResourceFit(const TaskInfo& task, const NodeInfo& node, Placement placement,
                        int* short_of = nullptr) const;
  // The best node for `task` (highest score; ties to the lower node id, i.e. name), or kNoId.
  // `elastic` adds the elastic predicates. With `errors`, every node is examined and the
  // reasons for rejecting them are counted; a refusal of the pod itself (kSchedulingGated)
  // counts on a node even when the node is also too full.
  // `search` replaces the session's own search state (see NodeSearch).
  NodeId FindBestNode(const TaskInfo& task, Placement placement, bool elastic = false,
                      FitErrors* errors = nullptr, NodeSearch* search = nullptr);
  // Whether FindBestNode(task, placement) would find a node, without ranking any: the first node
  // that fits ends the scan. Leaves the same trace on the session as that search (where no node
  // has room, the next search need not look), and none on the actions' shared search state.
  bool SomeNodeFits(const TaskInfo& task, Placement placement);
  void set_node_search_options(const NodeSearchOptions& options) { search_options_ = options; }

  // ---- Mutation (from Statement) ----
  // Moves a task to `status` on `node`, keeping job counts, node usage and plugin handlers in
  // step. The only way task state changes within a session.
  void SetTaskStatus(TaskId task, TaskStatus status, NodeId node);
  // Counts `amount` of the node as used although no task holds it (an action keeping capacity
  // for promises it made in a dry run), until ReleaseHeldResources gives it back. Every fit
  // check and score sees it as taken; the node-search cache is kept consistent.
  void HoldResources(NodeId node, const Resources& amount);
  void ReleaseHeldResources(NodeId node, const Resources& amount);

  // ---- Decisions ----
  void RecordBinding(TaskId task, NodeId node) { bindings_.push_back({task, node}); }
  void RecordEviction(TaskId task, std::string reason) { evictions_.push_back({task, std::move(reason)}); }
  // Sets the job's phase for the status update (e.g. Pending -> Inqueue).
  void SetJobPhase(JobId job, PodGroupPhase phase);
  // Records why a job waits this session (the last reason set wins). True when it is the
  // reason the job reported (JobInfo::reported_wait) and no update was made for the job.
  bool SetWaitReason(JobId job, WaitReason&& reason);
  bool SetWaitReason(JobId job, const WaitReason& reason);
  // A reason an action gives many jobs in one session (alike refusals, a shape that fits no
  // node). The cache shares one object among jobs that reported equal reasons, so once one job's
  // reported object is found equal to it, the jobs that reported that very object are told it
  // without a comparison.
  struct SharedWaitReason {
    WaitReason reason;
    const WaitReason* equal_reported = nullptr;  // a JobInfo::reported_wait found equal to it
    JobId judged = kNoId;  // the job it was made for, when an action says (enqueue)
  };
  // SetWaitReason(job, shared.reason), by the address of the job's reported reason when it can.
  void SetSharedWaitReason(JobId job, SharedWaitReason& shared);
  // Whether an action set the job's reason this session.
  bool HasWaitReason(JobId job) const { return ToldWaitReason(job) != nullptr; }
  // The reason the job is told this session (null: none), until Close settles the updates.
  const WaitReason* ToldWaitReason(JobId job) const {
    const int32_t index = job_update_index_[job];
    if (index >= 0) return job_updates_[index].waiting ? &*job_updates_[index].waiting : nullptr;
    // Set only when the reason equals the reported one, so that one is there.
    return reason_as_reported_[job] ? cluster_.jobs[job].reported_wait.get() : nullptr;
  }
  // The effective deserved share of a queue as a plugin computed it (proportion), for status,
  // metrics and reports. Last report wins.
  void ReportQueueDeserved(QueueId queue, Resources deserved);
  const std::map<QueueId, Resources>& queue_deserved() const { return queue_deserved_; }
  // ---- Parked jobs (ClusterSnapshot::parked) ----
  // `member`, a waiting job, was told the reason `representative` was told for what the two
  // share alone (enqueue's alike refusals of Pending jobs, allocate's of admitted jobs that fit
  // nowhere): it may be parked, unless either ends the session in another phase or with another
  // reason (kept for CycleResult::parkable by Close).
  void NoteParkable(JobId member, JobId representative) { parkable_.emplace_back(member, representative); }
  // The classes of admitted jobs left out of the session: each representative (laid out), and
  // how many jobs alike it (ParkableWhileAdmitted, AdmittedAlike) are not. Whatever a plugin
  // sums over admitted jobs counts them as it counts their representative.
  struct ParkedAdmitted {
    JobId representative;
    int32_t members;
    int32_t parked_class;  // its index in ClusterSnapshot::parked_representatives
  };
  const std::vector<ParkedAdmitted>& parked_admitted() const { return parked_admitted_; }
  // After Close: the noted pairs that hold, in the order noted.
  const std::vector<std::pair<JobId, JobId>>& parkable() const { return parkable_; }
  // An action would decide differently with the parked jobs of a class in the session (enqueue
  // would admit one, allocate would place one): the session stops after it, and its owner runs
  // it again with that class's jobs laid out (`parked_class` indexes
  // ClusterSnapshot::parked_representatives).
  void NeedParkedClass(int32_t parked_class) { parked_classes_needed_.push_back(parked_class); }
  // The same for each of `parked_classes`; whether there were any (the action then returns).
  bool NeedParkedClasses(const std::vector<int32_t>& parked_classes) {
    parked_classes_needed_.insert(parked_classes_needed_.end(), parked_classes.begin(), parked_classes.end());
    return !parked_classes.empty();
  }
  bool needs_parked_jobs() const { return !parked_classes_needed_.empty(); }
  // The classes needed back, sorted.
  std::vector<int32_t> ParkedClassesNeeded() const;

  // Marks a job whose elastic worker count changed (restarts its cooldown).
  void MarkScaled(JobId job);
  bool WasScaled(JobId job) const;
  // The job's update, or null (after Close: only updates that tell the owner something).
  const JobStatusUpdate* FindUpdate(JobId job) const {
    const int32_t index = job_update_index_[job];
    return index >= 0 ? &job_updates_[index] : nullptr;
  }

  const std::vector<Binding>& bindings() const { return bindings_; }
  const std::vector<Eviction>& evictions() const { return evictions_; }
  // After Close, in job order.
  const std::vector<JobStatusUpdate>& job_updates() const { return job_updates_; }

 private:
  Session(ClusterSnapshot cluster, const SchedulerConfig& config);

  template <typename Fn>
  struct Hook {
    int tier;
    Fn fn;
  };
  // False when the opening plugin has the extension point disabled: the hook is not added.
  template <typename Fn>
  bool AddHook(std::vector<Hook<Fn>>& hooks, ExtensionPoint point, Fn fn);
  // Files an admission hook's AdmissionFactsFn (`added`: the hook was added).
  void NoteAdmissionFacts(bool added, AdmissionFactsFn by_facts);

  ClusterSnapshot cluster_;
  const SchedulerConfig& config_;
  std::vector<std::unique_ptr<Plugin>> plugins_;
  // The plugin whose OnSessionOpen is running: hooks are filed under its tier and flags.
  const PluginOption* opening_plugin_ = nullptr;
  int opening_tier_ = 0;

  std::vector<Hook<JobCompareFn>> job_order_;
  std::vector<Hook<QueueCompareFn>> queue_order_;
  std::vector<Hook<TaskCompareFn>> task_order_;
  std::vector<Hook<PredicateFn>> predicates_;
  std::vector<Hook<NodeScoreFn>> node_order_;
  std::vector<Hook<JobValidFn>> job_valid_;
  std::vector<Hook<JobTestFn>> job_ready_;
  std::vector<Hook<JobVoteFn>> job_pipelined_;
  std::vector<Hook<JobTestFn>> job_starving_;
  std::vector<Hook<JobVoteFn>> job_enqueueable_;
  std::vector<Hook<ClusterAdmissionFn>> cluster_admission_;
  std::vector<AdmissionFactsFn> admission_facts_;  // of every admission hook added
  bool admission_hook_without_facts_ = false;
  std::vector<JobOrderTiesFn> job_order_ties_;  // of every job-order hook added
  bool job_order_hook_without_ties_ = false;
  std::vector<Hook<JobEnqueuedFn>> job_enqueued_;
  struct OverusedTest {
    QueueTestFn now;
    QueueGrowthTestFn if_grown;
  };
  std::vector<Hook<OverusedTest>> overused_;
  std::vector<Hook<AllocatableFn>> allocatable_;
  std::vector<Hook<QueueLimitFn>> queue_limit_;
  std::vector<Hook<VictimsFn>> preemptable_;
  std::vector<Hook<VictimsFn>> reclaimable_;
  std::vector<Hook<JobCompareFn>> elastic_order_;
  std::vector<Hook<JobTestFn>> scalable_;
  std::vector<Hook<JobCompareFn>> elastic_victim_order_;
  // The keys of the job order, elastic order and elastic victim order hooks, one per hook (empty
  // for a hook that gave none).
  std::vector<JobKeyFn> job_order_keys_;
  std::vector<JobKeyFn> elastic_order_keys_;
  std::vector<JobKeyFn> elastic_victim_order_keys_;
  std::vector<Hook<JobTestFn>> elastic_grow_;
  std::vector<Hook<JobCountFn>> elastic_shed_;
  std::vector<Hook<PredicateFn>> elastic_predicates_;
  std::vector<EventHandler> event_handlers_;
  std::vector<std::function<void()>> before_next_task_change_;
  std::vector<Hook<JobDomainsFn>> job_domains_;
  std::vector<Hook<ClusterAdmissionFn>> job_admission_;
  std::vector<const std::vector<NodeId>*> job_scope_;

  // The per-job flags below are bytes, not std::vector<bool>: most are read for every job of a
  // backlog, where a bit's shift and mask cost more than the flag's use.
  std::vector<JobId> live_jobs_;  // LiveJobs()
  std::vector<JobId> live_elastic_jobs_;  // LiveElasticJobs()
  std::vector<uint8_t> live_;     // per job: in live_jobs_
  // Per job: a task, its phase or its scale time was set in this session (even if a statement
  // undid it), so its laid-out copy may differ; TakeCluster marks these alone.
  std::vector<uint8_t> touched_;
  // Every change to a job goes through here: it becomes live and touched.
  void NoteJobChanged(JobId job);

  NodeSearchOptions search_options_;
  NodeSearch search_;  // the actions' searches share it
  std::optional<NodeId> FindInCache(const TaskInfo& task, const NodeSearch::Shape& shape, NodeSearch& search);
  // The node's score for `task`, or nullopt when it does not fit (counted in `errors`).
  std::optional<double> Evaluate(const TaskInfo& task, const NodeInfo& node, Placement placement, bool elastic,
                                 FitErrors* errors) const;
  // FindBestNode with fit errors, outside a job's scope: every node examined, from the first.
  NodeId ExplainingSearch(const TaskInfo& task, Placement placement, bool elastic, FitErrors& errors);
  // FindBestNode within a job's scope: every node of it examined, no sampling, no cache.
  NodeId FindBestNodeIn(const std::vector<NodeId>& scope, const TaskInfo& task, Placement placement, bool elastic,
                        FitErrors* errors);
  // Per numbered shape, gates and placement: free_epoch_ + 1 when a search found no node for a
  // task of it (not elastic; predicates judge a task by its constraint class and gates, which
  // the shape and index carry). Until a node becomes freer, none is found again.
  mutable std::vector<uint64_t> no_room_epoch_;
  uint64_t* NoRoomEntry(const TaskInfo& task, Placement placement) const;

  WaitMemo* wait_memo_ = nullptr;
  Millis expiry_ = std::numeric_limits<Millis>::max();
  std::vector<bool> own_deadline_;  // per job, once a plugin gave one a deadline
  uint64_t task_state_changes_ = 0;
  uint64_t job_changes_ = 0;
  uint64_t version_counter_ = 0;
  uint64_t state_version_ = 0;
  std::vector<uint64_t> job_tasks_version_;
  mutable Memos memos_;
  std::vector<uint64_t> node_version_;
  uint64_t free_epoch_ = 0;
  FreeIndex free_index_;  // where searches may find room (FindBestNode, SomeNodeFits)
  size_t unindexed_misses_ = 0;  // nodes searches met that did not fit, before any tree was built
  // After node `at`, which `task` does not fit: the first node before `end` that may have room
  // for it in the resource `at` is short of and in those indexed already (FreeIndex), or simply
  // the next one.
  size_t SkipNodesShortOf(const TaskInfo& task, Placement placement, size_t at, size_t end);
  // Every change of a node's amounts goes through here: its version, and the index.
  void NodeChanged(NodeId node) {
    ++node_version_[node];
    free_index_.Touch(node);
  }

  std::vector<Binding> bindings_;
  std::vector<Eviction> evictions_;
  std::vector<JobStatusUpdate> job_updates_;
  std::map<QueueId, Resources> queue_deserved_;
  std::vector<int32_t> job_update_index_;  // per job: index into job_updates_ or -1
  std::vector<PodGroupPhase> opened_phase_;  // per update: the job's phase when the session opened
  // Per job without an update: the last reason set was the one it reported (reported_wait), so
  // no update was made for it (most waiting jobs in most sessions); one made later starts from it.
  std::vector<uint8_t> reason_as_reported_;
  JobStatusUpdate& UpdateFor(JobId job);
  void RunBeforeNextTaskChange();  // out of SetTaskStatus's line: most calls have none to run
  // SetTaskStatus; with kNodes false (ScratchEvictions), everything but the nodes and the jobs'
  // touched marks is kept in step: for a change undone before anything reads those. A template,
  // so that SetTaskStatus's own line tests nothing more.
  template <bool kNodes>
  void ChangeTaskStatus(TaskId task, TaskStatus status, NodeId node);
  friend class ScratchEvictions;
  // Whether `reason`, set for a job without an update, is the one it reported (then noted).
  bool AsReported(JobId job, const WaitReason& reason);
  // Close: drops the updates that tell the owner only the reason it took last (JobInfo::
  // reported_wait: the job's phase is as it was and it was not scaled), and lists the rest in
  // job order (namespace/name), not in the order the actions came to them.
  void SettleUpdates();
  bool closed_ = false;
  std::vector<std::pair<JobId, JobId>> parkable_;  // (member, representative)
  std::vector<ParkedAdmitted> parked_admitted_;
  std::vector<int32_t> parked_classes_needed_;
  std::vector<std::pair<std::string, int64_t>> action_micros_;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_SESSION_H_
