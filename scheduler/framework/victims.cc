#include "scheduler/framework/victims.h"

#include <algorithm>
#include <climits>
#include <queue>
#include <set>
#include <tuple>

#include "absl/cleanup/cleanup.h"
#include "api/log.h"
#include "api/state_hash.h"
#include "api/strings.h"
#include "scheduler/framework/job_rules.h"

namespace lahar {
namespace {

struct Entry {
  JobId job;
  int32_t position;           // index in its job's list (eviction order)
  std::vector<TaskId> tasks;  // what taking it evicts
  Resources freed;            // their requests
  bool whole = false;
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
  // Elastic workers are ranked by the queues' shares and the jobs' fulfillment when the order is
  // built; a committed plan changes both, so such an order is not reused after one.
  bool has_workers = false;

  // Ranked (RankVictims).
  bool is_ranked = false;
  std::vector<Entry> ranked;
  std::vector<std::vector<int32_t>> job_ranks;  // per job id: ranks in its own eviction order
  std::vector<std::vector<int32_t>> node_ranks;     // per node: ranks with a task there, ascending
  // Entries taken by plans committed since the order was ranked (a prefix of each job's list).
  std::vector<bool> gone;
  int32_t min_entry_pods = INT32_MAX;  // the fewest pods of any entry: no node costs fewer
};

// Protected whatever the hooks say: annotated volcano.sh/preemptable "false", or its eviction
// was just refused by the apiserver (a PodDisruptionBudget the plan did not know of).
bool Unpreemptable(const Session& session, const TaskInfo& task) {
  if (!task.preemptable) return true;
  const auto& refused = session.cluster().eviction_refused;
  return !refused.empty() && refused.count(task.key()) != 0;
}

// The job's start: its earliest running pod's start time; a pod not yet started counts as now.
int64_t StartOf(const Session& session, const JobInfo& job) {
  int64_t start = INT64_MAX;
  for (TaskId t : job.tasks) {
    const TaskInfo& task = session.task(t);
    if (!IsPlaced(task.status)) continue;
    const int64_t started = task.pod->start_time_ms < 0 ? INT64_MAX : task.pod->start_time_ms;
    start = std::min(start, started);
  }
  return start;
}

// The allowed subset of `tasks` for `preemptor` by the policy's hooks (no hooks: all), sorted.
std::vector<TaskId> AllowedByHooks(const Session& session, const VictimPolicy& policy, const TaskInfo& preemptor,
                                   const std::vector<TaskId>& tasks) {
  std::vector<TaskId> allowed = policy.hooks == VictimPolicy::Hooks::kPreemptable
                                    ? session.Preemptable(preemptor, tasks)
                                    : session.Reclaimable(preemptor, tasks);
  std::sort(allowed.begin(), allowed.end());
  return allowed;
}

// What of a running job may be taken, whatever the policy's kind: its elastic workers that may
// go, in order, and whether the job may then be taken whole (with `rest`, its other placed tasks).
struct Candidate {
  bool eligible = false;  // preemptable, its min placed, elastic-eligible
  std::vector<TaskId> workers;
  bool whole_allowed = false;  // none protected, none placed in this session
  std::vector<TaskId> rest;
  Resources rest_freed;
};

Candidate CandidateOf(Session& session, const JobInfo& job, const TaskInfo& preemptor, const VictimPolicy& policy,
                      const std::vector<bool>& scalable) {
  Candidate candidate;
  // MinPlaced first: it is a count for most jobs, and most of a backlog has nothing placed.
  if (!job.preemptable || !MinPlaced(session, job) || !ElasticEligible(session, job)) return candidate;
  candidate.eligible = true;
  // The placed tasks in the job's own eviction order (its elastic workers first), as the
  // hooks see them: a budget (pdb) spends its allowance on the first it is offered.
  const bool workers_may_go = scalable[job.id] || policy.include_cooldown;
  std::vector<TaskId> placed = workers_may_go ? ElasticWorkers(session, job) : std::vector<TaskId>();
  const size_t offered_workers = placed.size();
  std::vector<TaskId> offered(placed);
  std::sort(offered.begin(), offered.end());
  bool busy = false;  // placed in this session: never a victim
  for (TaskId t : job.tasks) {
    const TaskInfo& task = session.task(t);
    if (!IsPlaced(task.status)) continue;
    busy = busy || task.status == TaskStatus::kAllocated || task.status == TaskStatus::kBinding;
    if (!std::binary_search(offered.begin(), offered.end(), t)) placed.push_back(t);
  }
  const std::vector<TaskId> allowed = AllowedByHooks(session, policy, preemptor, placed);
  auto protected_task = [&](TaskId t) {
    return !std::binary_search(allowed.begin(), allowed.end(), t) || Unpreemptable(session, session.task(t));
  };
  for (size_t i = 0; i < offered_workers; ++i) {
    if (protected_task(placed[i])) break;  // the ones after it may only go after it
    candidate.workers.push_back(placed[i]);
  }
  candidate.whole_allowed = !busy && std::none_of(placed.begin(), placed.end(), protected_task);
  for (size_t i = candidate.workers.size(); i < placed.size(); ++i) {
    candidate.rest.push_back(placed[i]);
    candidate.rest_freed += session.task(placed[i]).request;
  }
  return candidate;
}

// `candidates` (per job id, computed when first needed) may be shared by the orders of one
// action run until a plan is kept: a candidate does not depend on the policy's kind.
VictimOrder CollectVictims(Session& session, const JobInfo& starving, const TaskInfo& preemptor,
                           const VictimPolicy& policy, const std::vector<bool>& scalable,
                           std::vector<std::optional<Candidate>>& candidates) {
  VictimOrder order;
  order.reachable = FreeCapacity(session);
  candidates.resize(session.cluster().jobs.size());
  std::vector<std::pair<NodeId, TaskId>> on_nodes;
  auto add = [&](const std::vector<TaskId>& tasks) {
    for (TaskId t : tasks) {
      const TaskInfo& task = session.task(t);
      order.reachable += task.request;
      if (task.node != kNoId) on_nodes.emplace_back(task.node, t);
    }
  };
  for (const JobInfo& job : session.cluster().jobs) {
    if (job.id == starving.id) continue;
    const VictimKind kind = policy.kind(job);  // cheap: asked before the candidate is made
    if (kind == VictimKind::kNone) continue;
    std::optional<Candidate>& candidate = candidates[job.id];
    if (!candidate) candidate = CandidateOf(session, job, preemptor, policy, scalable);
    if (!candidate->eligible) continue;
    if (kind == VictimKind::kWholeJob && candidate->whole_allowed) {
      order.whole.push_back(Entry{job.id, static_cast<int32_t>(candidate->workers.size()), candidate->rest,
                                  candidate->rest_freed, true});
      add(candidate->rest);
    }
    if (!candidate->workers.empty()) {
      order.worker_lists.emplace(job.id, candidate->workers);
      add(candidate->workers);
    }
  }
  order.has_workers = !order.worker_lists.empty();
  std::sort(on_nodes.begin(), on_nodes.end());
  order.bound_index.assign(session.nodes().size(), -1);
  for (const auto& [node, task] : on_nodes) {
    if (order.node_bounds.empty() || order.node_bounds.back().node != node) {
      order.bound_index[node] = static_cast<int32_t>(order.node_bounds.size());
      order.node_bounds.push_back({node, {}, 0});
    }
    order.node_bounds.back().freed += session.task(task).request;
    ++order.node_bounds.back().pods;
  }
  return order;
}

// Whether `node` could take `task` with every entry of the order taken there: a bound, since
// what the policy admits and what earlier plans took only leave less. Predicates not asked.
bool NodeMayFit(const Session& session, const VictimOrder& order, NodeId id, const TaskInfo& task) {
  const int32_t index = order.bound_index[id];
  if (index < 0) return false;
  const VictimOrder::NodeBound& bound = order.node_bounds[index];
  const NodeInfo& node = session.node(id);
  return node.schedulable && node.FuturePodSlots() + bound.pods > 0 &&
         task.request.FitsIn(node.FutureIdle() + bound.freed);
}

bool SomeNodeMayFit(const Session& session, const VictimOrder& order, const TaskInfo& task) {
  for (const VictimOrder::NodeBound& bound : order.node_bounds) {
    if (NodeMayFit(session, order, bound.node, task) && session.Predicate(task, session.node(bound.node)).ok()) {
      return true;
    }
  }
  return false;
}

// Elastic workers ranked from the worker lists of an order: orders of one action run with the same
// lists (preempt-elastic-workers' for every queue, when all are reclaimable) rank them once. The
// rank depends on the lists and the session's state, which no plan changes until one is kept.
using WorkerLists = std::map<JobId, std::vector<TaskId>>;
using RankedWorkers = std::vector<std::pair<WorkerLists, std::vector<Entry>>>;

// Ranks a collected order (see victims.h for the ranks), reusing `shared` workers when given.
void RankVictims(Session& session, const VictimPolicy& policy, const std::vector<bool>& scalable, VictimOrder& order,
                 RankedWorkers* shared) {
  order.is_ranked = true;
  order.node_ranks.resize(session.nodes().size());
  order.job_ranks.resize(session.cluster().jobs.size());
  auto add = [&order](Entry entry) {
    order.job_ranks[entry.job].push_back(static_cast<int32_t>(order.ranked.size()));
    order.ranked.push_back(std::move(entry));
  };

  WorkerLists& worker_lists = order.worker_lists;
  const std::vector<Entry>* ranked_before = nullptr;
  if (shared != nullptr && !worker_lists.empty()) {
    for (const auto& [lists, entries] : *shared) {
      if (lists == worker_lists) ranked_before = &entries;
    }
  }
  if (ranked_before != nullptr) {
    for (const Entry& e : *ranked_before) add(e);
  } else if (!worker_lists.empty()) {
    // A queue is above its deserved share when the Overused hooks say so (Volcano's sense:
    // allocated >= deserved in every resource) or when it holds more than the deserved share a
    // plugin reported in some resource. The second matters for elastic queues: their deserved
    // share is capped by their request, which includes their pending extras, so in abundant
    // resources (the cpu of a GPU job) they never reach it.
    const std::map<QueueId, Resources>& deserved = session.queue_deserved();
    std::vector<Resources> queue_allocated(session.queues().size());
    for (const JobInfo& job : session.cluster().jobs) {
      if (job.queue != kNoId) queue_allocated[job.queue] += job.allocated;
    }
    auto above_share = [&](QueueId queue) {
      if (session.Overused(session.queue(queue))) return true;
      auto it = deserved.find(queue);
      return it != deserved.end() && !queue_allocated[queue].LessEqual(it->second);
    };
    // Workers are taken for real in a scratch statement, so that the elastic order and the
    // Overused hooks see each job and queue after the workers ranked before; undone at the end.
    auto less = [&session](JobId a, JobId b) { return session.ElasticOrderLess(session.job(a), session.job(b)); };
    using Heap = std::priority_queue<JobId, std::vector<JobId>, decltype(less)>;  // most fulfilled on top
    std::map<JobId, int32_t> cursor;
    Statement scratch(session);
    auto take = [&](JobId job) {
      int32_t& next = cursor[job];
      const TaskId task = worker_lists[job][next];
      const Resources& request = session.task(task).request;
      add(Entry{job, next, {task}, request, false});
      scratch.Evict(task, "");
      queue_allocated[session.job(job).queue] -= request;
      ++next;
      return next < static_cast<int32_t>(worker_lists[job].size());
    };
    for (int pass = 0; pass < 2; ++pass) {  // outside their cooldown, then (when included) inside
      Heap overused(less);
      Heap rest(less);
      for (const auto& [job, workers] : worker_lists) {
        if (scalable[job] != (pass == 0)) continue;
        (above_share(session.job(job).queue) ? overused : rest).push(job);
      }
      while (!overused.empty()) {
        const JobId job = overused.top();
        overused.pop();
        if (!above_share(session.job(job).queue)) {
          rest.push(job);  // its queue is back within its share: ranked with the others
          continue;
        }
        if (take(job)) overused.push(job);
      }
      while (!rest.empty()) {
        const JobId job = rest.top();
        rest.pop();
        if (take(job)) rest.push(job);
      }
    }
    scratch.Discard();
    if (shared != nullptr) shared->emplace_back(worker_lists, order.ranked);
  }

  // Whole jobs: the policy's group, lowest priority, most recently started, fewest pods, name.
  std::vector<std::tuple<int64_t, int32_t, int64_t, size_t, JobId, size_t>> keys;
  for (size_t i = 0; i < order.whole.size(); ++i) {
    const JobInfo& job = session.job(order.whole[i].job);
    const int64_t group = policy.whole_job_group ? policy.whole_job_group(job) : 0;
    keys.emplace_back(group, job.priority, -StartOf(session, job), order.whole[i].tasks.size(), job.id, i);
  }
  std::sort(keys.begin(), keys.end());
  for (const auto& key : keys) add(std::move(order.whole[std::get<5>(key)]));
  order.whole.clear();
  order.gone.assign(order.ranked.size(), false);
  for (const Entry& e : order.ranked) {
    order.min_entry_pods = std::min(order.min_entry_pods, static_cast<int32_t>(e.tasks.size()));
  }

  for (size_t r = 0; r < order.ranked.size(); ++r) {
    NodeId last = kNoId;
    std::vector<NodeId> nodes;
    for (TaskId t : order.ranked[r].tasks) nodes.push_back(session.task(t).node);
    std::sort(nodes.begin(), nodes.end());
    for (NodeId n : nodes) {
      if (n != last && n != kNoId) order.node_ranks[n].push_back(static_cast<int32_t>(r));
      last = n;
    }
  }
}

}  // namespace

struct VictimOrderCache::Entries {
  std::map<std::pair<int64_t, int64_t>, VictimOrder> orders;
  std::vector<int32_t> taken;  // PlanForStarvingJob's scratch, all -1 between plans
  std::vector<std::optional<Candidate>> candidates;  // shared by the orders until a plan is kept
  // Plans that failed before the gang hooks were asked, by order key and the shapes of the
  // unplaced min, and whether they changed task states (and undid them). Until a plan is kept,
  // another starving job of that key and those shapes fails the same way: its plan reads the
  // same state, order and policy, and searches nodes afresh (PlanForStarvingJob).
  std::map<uint64_t, bool> failures;
  RankedWorkers ranked_workers;  // until a plan is kept
};
namespace {

// What makes two starving jobs' plans alike: the order key and the shapes of the unplaced min.
uint64_t ShapesKey(const Session& session, const JobInfo& job, std::pair<int64_t, int64_t> key) {
  return StateHash().Add(key.first).Add(key.second).Add(MinShapesHash(session, job)).value();
}

}  // namespace

VictimOrderCache::VictimOrderCache() : entries_(std::make_unique<Entries>()) {}
VictimOrderCache::~VictimOrderCache() = default;
void VictimOrderCache::Clear() {
  entries_->orders.clear();
  entries_->ranked_workers.clear();
  entries_->candidates.clear();
  entries_->failures.clear();
}

bool VictimOrderCache::FailsAlike(Session& session, const JobInfo& job, std::pair<int64_t, int64_t> key) {
  if (entries_->failures.empty()) return false;
  std::optional<std::vector<TaskId>> tasks = UnplacedMinTasks(session, job);
  if (!tasks.has_value() || tasks->empty()) return false;
  auto failed = entries_->failures.find(ShapesKey(session, job, key));
  if (failed == entries_->failures.end()) return false;
  if (failed->second) session.ForgetCachedSearches();  // the trace the failed plan left
  LAHAR_LOG(2, "victims") << job.key() << ": fails as a starving job of the same shapes did";
  return true;
}

void VictimOrderCache::Committed(const Session& session, const VictimPlan& plan) {
  // A budget shared by several jobs allows less for each once one of them lost pods.
  if (!session.cluster().disruption_budgets.empty()) return Clear();
  entries_->failures.clear();
  entries_->candidates.clear();
  entries_->ranked_workers.clear();
  std::set<JobId> victim_jobs;
  for (TaskId v : plan.victims) victim_jobs.insert(session.task(v).job);
  for (auto it = entries_->orders.begin(); it != entries_->orders.end();) {
    VictimOrder& order = it->second;
    if (order.has_workers || !order.is_ranked) {
      it = entries_->orders.erase(it);
      continue;
    }
    // An entry with a pod no longer placed is gone; what the victims free is free capacity now,
    // less what the plan pipelined (the free part of `reachable` follows FreeCapacity).
    for (JobId job : victim_jobs) {
      for (int32_t r : order.job_ranks[job]) {
        const Entry& e = order.ranked[r];
        if (order.gone[r] || std::all_of(e.tasks.begin(), e.tasks.end(), [&](TaskId t) {
              return IsPlaced(session.task(t).status);
            })) {
          continue;
        }
        order.gone[r] = true;
        order.reachable -= e.freed;
      }
    }
    UpdateFreeCapacity(session, plan, order.reachable);
    ++it;
  }
}

std::vector<bool> ScalableJobs(const Session& session) {
  std::vector<bool> scalable(session.cluster().jobs.size());
  for (const JobInfo& job : session.cluster().jobs) scalable[job.id] = session.Scalable(job);
  return scalable;
}

VictimPolicy ElasticWorkersPolicy(const Session& session, const JobInfo& starving) {
  VictimPolicy policy;
  const Session* s = &session;
  const QueueId own = starving.queue;
  policy.kind = [s, own](const JobInfo& job) {
    return job.queue == own || s->queue(job.queue).reclaimable ? VictimKind::kElasticWorkers : VictimKind::kNone;
  };
  policy.reason = EvictionReason("elastic-preempted-for", starving);
  return policy;
}

namespace {

// RelieveStarvingJobs' loop; whether any plan fit.
bool RelieveEach(Session& session, std::string_view action, const StarvingJobHandler& handler,
                 const std::vector<JobId>& starving, const std::vector<bool>& scalable) {
  bool any_fit = false;
  VictimOrderCache orders;
  for (JobId id : starving) {
    const JobInfo& job = session.job(id);
    const std::pair<int64_t, int64_t> key = handler.key ? handler.key(job) : std::pair<int64_t, int64_t>{job.queue, 0};
    if (orders.FailsAlike(session, job, key)) {
      LAHAR_LOG(2, action) << job.key() << ": min does not fit, nothing evicted";
      continue;
    }
    std::optional<VictimPolicy> policy = handler.policy(job);
    if (!policy) continue;
    Statement statement(session);
    VictimPlan plan = PlanForStarvingJob(session, statement, id, *policy, scalable, &orders, key);
    if (!plan.fits) {
      statement.Discard();
      LAHAR_LOG(2, action) << job.key() << ": min does not fit, nothing evicted";
      if (handler.settled) handler.settled(plan, /*committed=*/false);
      continue;
    }
    statement.Commit();
    any_fit = true;
    orders.Committed(session, plan);
    SettleVictims(session, plan);
    if (handler.settled) handler.settled(plan, /*committed=*/true);
    LAHAR_LOG(2, action) << job.key() << ": pipelined " << plan.placements.size() << " tasks, evicted "
                         << plan.victims.size() << " pods";
  }
  return any_fit;
}

void HashJob(const Session& session, const JobInfo& job, const std::vector<bool>& scalable, StateHash& hash) {
  hash.Add(job.version).Add(job.queue).Add(job.priority).Add(static_cast<int32_t>(job.phase)).Add(scalable[job.id]);
  for (TaskId t : job.tasks) {
    const TaskInfo& task = session.task(t);
    hash.Add(static_cast<int32_t>(task.status)).Add(task.node);
  }
}

// PlanUnlessFruitless' fingerprint of the state, nullopt when it cannot be had.
std::optional<uint64_t> StarvingRunFingerprint(const Session& session, std::string_view action,
                                               const std::vector<JobId>& starving, const std::vector<bool>& scalable) {
  const ClusterSnapshot& cluster = session.cluster();
  if (!cluster.disruption_budgets.empty()) return std::nullopt;
  Session::Memos& memos = session.memos();
  if (memos.fingerprint_version == session.state_version()) {
    return StateHash().Add(action).Add(*memos.fingerprint).value();
  }
  StateHash hash;
  for (const NodeInfo& node : cluster.nodes) {
    hash.Add(node.version).Add(node.schedulable).Add(node.max_pods).Add(node.allocatable).Add(node.used);
    hash.Add(node.releasing).Add(node.pipelined).Add(node.used_limits);
    hash.Add(node.pod_count).Add(node.releasing_pods).Add(node.pipelined_pods);
  }
  for (const QueueInfo& queue : cluster.queues) {
    hash.Add(queue.name).Add(queue.weight).Add(queue.capability).Add(queue.guarantee).Add(queue.open);
    hash.Add(queue.reclaimable).Add(queue.priority).Add(queue.parent);
    hash.Add(queue.deserved);
  }
  for (const auto& [queue, deserved] : session.queue_deserved()) hash.Add(queue).Add(deserved);
  for (const std::string& pod : cluster.eviction_refused) hash.Add(pod);
  // Jobs holding or promised resources (the victims and what they hold), in job order.
  hash.Add(uint64_t{0xa11});
  for (const JobInfo& job : cluster.jobs) {
    const int32_t unplaced = job.Count(TaskStatus::kPending) + job.Count(TaskStatus::kSucceeded) + job.Count(TaskStatus::kFailed);
    if (static_cast<size_t>(unplaced) < job.tasks.size()) HashJob(session, job, scalable, hash);
  }
  hash.Add(uint64_t{0x57a});
  for (JobId id : starving) HashJob(session, session.job(id), scalable, hash);
  memos.fingerprint_version = session.state_version();
  memos.fingerprint = hash.value();
  return StateHash().Add(action).Add(hash.value()).value();
}

}  // namespace

void RelieveStarvingJobs(Session& session, std::string_view action, const StarvingJobHandler& handler) {
  const std::vector<bool> scalable = ScalableJobs(session);
  const std::vector<JobId> starving = StarvingJobs(session);
  PlanUnlessFruitless(session, action, starving, scalable, [&] { return RelieveEach(session, action, handler, starving, scalable); });
}

void PlanUnlessFruitless(Session& session, std::string_view action, const std::vector<JobId>& starving,
                         const std::vector<bool>& scalable, const std::function<bool()>& plan_all) {
  WaitMemo* memo = session.wait_memo();
  std::optional<uint64_t> fingerprint;
  if (memo != nullptr && memo->enabled() && !starving.empty()) {
    fingerprint = StarvingRunFingerprint(session, action, starving, scalable);
  }
  if (fingerprint) {
    if (const WaitMemo::FruitlessRun* run = memo->Find(action, *fingerprint, session.now())) {
      if (run->touched) session.ForgetCachedSearches();
      memo->CountSkipped();
      LAHAR_LOG(2, action) << starving.size() << " starving jobs: nothing changed since no plan fit, not tried again";
      return;
    }
  }
  const uint64_t changes_before = session.task_state_changes();
  const bool any_fit = plan_all();
  if (!fingerprint) return;
  memo->CountTried();
  if (any_fit) {
    memo->Forget(action);
  } else {
    memo->Remember(action, {*fingerprint, session.task_state_changes() != changes_before, session.expiry()});
  }
}

void SettleVictims(Session& session, const VictimPlan& plan) {
  const std::set<JobId> whole(plan.whole_jobs.begin(), plan.whole_jobs.end());
  for (JobId job : whole) session.SetJobPhase(job, PodGroupPhase::kPending);
  for (TaskId victim : plan.victims) {
    const JobId job = session.task(victim).job;
    if (whole.count(job) == 0 && !session.WasScaled(job)) session.MarkScaled(job);
  }
}

std::string EvictionReason(std::string_view verb, const JobInfo& starving) {
  return StrCat(verb, " ", starving.namespace_, "/", starving.name);
}

std::pair<std::string_view, std::string_view> SplitEvictionReason(std::string_view reason) {
  const size_t space = reason.find(' ');
  if (space == std::string_view::npos) return {reason, {}};
  return {reason.substr(0, space), reason.substr(space + 1)};
}

void UpdateFreeCapacity(const Session& session, const VictimPlan& plan, Resources& free) {
  // Per touched node: its future idle now, and before the plan (victims were not releasing yet,
  // the placements not promised), each clamped at zero as FreeCapacity counts them.
  std::map<NodeId, Resources> change;  // what the plan added to the node's future idle
  for (TaskId v : plan.victims) change[session.task(v).node] += session.task(v).request;
  for (const auto& [task, node] : plan.placements) change[node] -= session.task(task).request;
  for (const auto& [id, delta] : change) {
    const NodeInfo& node = session.node(id);
    if (!node.schedulable) continue;
    Resources now = node.FutureIdle();
    Resources before = now - delta;
    now.ClampNegativeToZero();
    before.ClampNegativeToZero();
    free += now;
    free -= before;
  }
}

Resources FreeCapacity(const Session& session) {
  Resources total;
  for (const NodeInfo& node : session.cluster().nodes) {
    if (!node.schedulable) continue;
    Resources free = node.FutureIdle();
    free.ClampNegativeToZero();
    total += free;
  }
  return total;
}

VictimPlan PlanForStarvingJob(Session& session, Statement& statement, JobId job_id, const VictimPolicy& policy,
                              const std::vector<bool>& scalable, VictimOrderCache* cache,
                              std::pair<int64_t, int64_t> key) {
  VictimPlan plan;
  const JobInfo& job = session.job(job_id);
  std::optional<std::vector<TaskId>> tasks = UnplacedMinTasks(session, job);
  if (!tasks.has_value() || tasks->empty()) return plan;
  const QueueInfo& queue = session.queue(job.queue);
  auto room = [&](const TaskInfo& task) {
    return policy.room ? policy.room(task) : session.Allocatable(queue, task);
  };

  uint64_t shapes = 0;
  if (cache != nullptr) {
    if (cache->FailsAlike(session, job, key)) return plan;
    shapes = ShapesKey(session, job, key);
  }
  const uint64_t changes_before = session.task_state_changes();
  bool gang_asked = false;
  absl::Cleanup remember_failure = [&] {
    if (cache != nullptr && !plan.fits && !gang_asked) {
      cache->entries().failures.emplace(shapes, session.task_state_changes() != changes_before);
    }
  };

  std::optional<VictimOrder> own_order;  // collected when the first task needs evictions
  const TaskInfo& preemptor = session.task(tasks->front());
  auto collected = [&]() -> VictimOrder& {
    if (cache != nullptr) {
      auto [it, inserted] = cache->entries().orders.try_emplace(key);
      if (inserted) it->second = CollectVictims(session, job, preemptor, policy, scalable, cache->entries().candidates);
      return it->second;
    }
    if (!own_order) {
      std::vector<std::optional<Candidate>> candidates;
      own_order = CollectVictims(session, job, preemptor, policy, scalable, candidates);
    }
    return *own_order;
  };
  auto ensure_order = [&]() -> const VictimOrder& {
    VictimOrder& order = collected();
    if (!order.is_ranked) {
      RankVictims(session, policy, scalable, order, cache != nullptr ? &cache->entries().ranked_workers : nullptr);
    }
    return order;
  };

  // Necessary condition: the unplaced min fits in what is free plus everything the entries free.
  {
    Resources need;
    for (TaskId t : *tasks) need += session.task(t).request;
    if (!need.FitsIn(collected().reachable)) {
      LAHAR_LOG(2, "victims") << job.key() << ": min exceeds free plus takeable capacity";
      return plan;
    }
  }

  // Per victim job: how many entries of its list are taken, by this plan or by plans committed
  // since the order was built (those lead the list); -1: not looked at yet. With a cache the
  // vector is reused from plan to plan and only the entries this plan touched are reset, so a
  // plan costs what it looks at, not the number of jobs.
  std::vector<int32_t> own_taken;
  std::vector<int32_t>& taken = cache != nullptr ? cache->entries().taken : own_taken;
  // Node searches of this plan alone: what it finds depends on the state, never on other plans.
  Session::NodeSearch search;
  if (taken.size() != session.cluster().jobs.size()) taken.assign(session.cluster().jobs.size(), -1);
  std::vector<JobId> touched;
  absl::Cleanup reset_taken = [&taken, &touched] {
    for (JobId j : touched) taken[j] = -1;
  };
  auto entries_taken = [&](JobId victim) -> int32_t& {
    int32_t& count = taken[victim];
    if (count < 0) {
      touched.push_back(victim);
      count = 0;
      const VictimOrder& order = ensure_order();
      for (int32_t r : order.job_ranks[victim]) {
        if (!order.gone[r]) break;
        ++count;
      }
    }
    return count;
  };
  auto is_taken = [&](const Entry& e) { return e.position < entries_taken(e.job); };
  // What taking entry `rank` takes when its job's entries before position `first` are gone
  // already: it and the entries of its job between. With a `node`, also what they free there.
  struct Cost {
    int32_t pods = 0;
    Resources freed;
    Resources freed_on_node;
    int32_t pods_on_node = 0;  // the pod slots it frees there
  };
  auto cost_from = [&](int32_t rank, int32_t first, NodeId node) {
    const VictimOrder& order = ensure_order();
    const Entry& e = order.ranked[rank];
    const std::vector<int32_t>& ranks = order.job_ranks[e.job];
    Cost cost;
    for (int32_t p = first; p <= e.position; ++p) {
      const Entry& step = order.ranked[ranks[p]];
      cost.pods += static_cast<int32_t>(step.tasks.size());
      cost.freed += step.freed;
      if (node == kNoId) continue;
      for (TaskId v : step.tasks) {
        if (session.task(v).node != node) continue;
        cost.freed_on_node += session.task(v).request;
        ++cost.pods_on_node;
      }
    }
    return cost;
  };
  // Whether the policy lets entry `rank` go, on top of `already` taken from its queue.
  auto admissible = [&](int32_t rank, int32_t first, const Resources& already) {
    if (!policy.admissible) return true;
    const Entry& e = ensure_order().ranked[rank];
    return policy.admissible(session.job(e.job), already + cost_from(rank, first, kNoId).freed);
  };
  auto take_through = [&](int32_t rank) {
    const VictimOrder& order = ensure_order();
    const Entry& e = order.ranked[rank];
    int32_t& done = entries_taken(e.job);
    const std::vector<int32_t>& ranks = order.job_ranks[e.job];
    for (; done <= e.position; ++done) {
      const Entry& step = order.ranked[ranks[done]];
      for (TaskId victim : step.tasks) {
        statement.Evict(victim, policy.reason);
        plan.victims.push_back(victim);
      }
      if (step.whole) plan.whole_jobs.push_back(step.job);
      if (policy.on_take) policy.on_take(session.job(step.job), step.freed);
    }
  };

  for (TaskId t : *tasks) {
    const TaskInfo& task = session.task(t);
    // a. Room in the queue, from the queue's own entries if the policy allows.
    while (!room(task)) {
      std::optional<int32_t> next;
      if (policy.make_room_in_own_queue) {
        const VictimOrder& order = ensure_order();
        for (size_t r = 0; r < order.ranked.size() && !next; ++r) {
          const Entry& e = order.ranked[r];
          if (session.job(e.job).queue == job.queue && !is_taken(e) &&
              admissible(static_cast<int32_t>(r), entries_taken(e.job), Resources())) {
            next = static_cast<int32_t>(r);
          }
        }
      }
      if (!next) {
        LAHAR_LOG(2, "victims") << job.key() << ": queue " << queue.name << " has no room for " << task.key();
        return plan;
      }
      take_through(*next);
    }
    // b. Room on a node without (more) evictions.
    NodeId node = session.FindBestNode(task, Placement::kFutureIdle, /*elastic=*/false, /*errors=*/nullptr, &search);
    if (node != kNoId) {
      statement.Pipeline(t, node);
      plan.placements.emplace_back(t, node);
      continue;
    }
    // c. The node where the fewest evictions make room, when some node may have it.
    if (!SomeNodeMayFit(session, collected(), task)) {
      LAHAR_LOG(2, "victims") << job.key() << ": " << task.key() << " fits no node even after evictions";
      return plan;
    }
    const VictimOrder& order = ensure_order();
    NodeId best = kNoId;
    int32_t best_pods = 0;
    int32_t best_rank = 0;
    std::vector<int32_t> best_needed;
    std::vector<int32_t> needed;
    // Per job: entries this node's walk takes; per victim queue: what it takes (few of each).
    std::vector<std::pair<JobId, int32_t>> through;
    std::vector<std::pair<QueueId, Resources>> walk_freed;
    auto visit = [&](NodeId id) {
      const NodeInfo& candidate = session.node(id);
      if (!NodeMayFit(session, order, id, task) || !session.Predicate(task, candidate).ok()) return;
      Resources available = candidate.FutureIdle();
      int32_t slots = candidate.FuturePodSlots();
      int32_t pods = 0;
      through.clear();
      walk_freed.clear();
      needed.clear();
      for (int32_t r : order.node_ranks[id]) {
        const Entry& e = order.ranked[r];
        if (is_taken(e)) continue;
        auto it = std::find_if(through.begin(), through.end(), [&e](const auto& p) { return p.first == e.job; });
        if (it == through.end()) it = through.insert(through.end(), {e.job, entries_taken(e.job)});
        if (e.position < it->second) continue;  // taken by an entry of its job earlier in this walk
        // The entries of its job before it go too: their pods count, and those on this node free room.
        const QueueId victim_queue = session.job(e.job).queue;
        auto q = std::find_if(walk_freed.begin(), walk_freed.end(),
                              [victim_queue](const auto& p) { return p.first == victim_queue; });
        if (q == walk_freed.end()) q = walk_freed.insert(walk_freed.end(), {victim_queue, Resources()});
        Resources& queue_freed = q->second;
        const Cost cost = cost_from(r, it->second, id);
        if (policy.admissible && !policy.admissible(session.job(e.job), queue_freed + cost.freed)) continue;
        it->second = e.position + 1;
        queue_freed += cost.freed;
        available += cost.freed_on_node;
        slots += cost.pods_on_node;
        pods += cost.pods;
        needed.push_back(r);
        if (!task.request.FitsIn(available) || slots <= 0) continue;
        if (best == kNoId || pods < best_pods || (pods == best_pods && (r < best_rank || (r == best_rank && id < best)))) {
          best = id;
          best_pods = pods;
          best_rank = r;
          best_needed = needed;
        }
        return;
      }
    };
    // Nodes in the rank order of their live entries: a node is (pods, rank of its last needed
    // entry) at best (its first live entry's rank, the smallest entry's pods), so once a node
    // costs no more pods than the smallest entry has, no node first met at a later rank beats it.
    std::vector<bool> visited(session.nodes().size(), false);
    for (int32_t r = 0; r < static_cast<int32_t>(order.ranked.size()); ++r) {
      if (best != kNoId && best_pods <= order.min_entry_pods && r > best_rank) break;
      const Entry& e = order.ranked[r];
      if (is_taken(e)) continue;
      for (TaskId v : e.tasks) {
        const NodeId id = session.task(v).node;
        if (id == kNoId || visited[id]) continue;
        visited[id] = true;
        visit(id);
      }
    }
    if (best == kNoId) {
      LAHAR_LOG(2, "victims") << job.key() << ": " << task.key() << " fits no node even after evictions";
      return plan;
    }
    for (int32_t r : best_needed) {
      if (!is_taken(order.ranked[r])) take_through(r);
    }
    if (!session.ResourceFit(task, session.node(best), Placement::kFutureIdle).ok()) {
      LAHAR_WARN("victims") << task.key() << " does not fit " << session.node(best).name()
                            << " after the planned evictions";
      return plan;
    }
    statement.Pipeline(t, best);
    plan.placements.emplace_back(t, best);
  }
  gang_asked = true;
  plan.fits = session.JobPipelined(job);
  return plan;
}

}  // namespace lahar
