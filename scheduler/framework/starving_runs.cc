// Runs of an evicting action over its starving jobs (RelieveStarvingJobs, PlanUnlessFruitless):
// each job planned in job order, alike jobs failing as their first did, and a run that found no
// plan not tried again while nothing it reads changed. The plans themselves are victims.cc's.
#include "scheduler/framework/victims.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "api/log.h"
#include "api/state_hash.h"
#include "api/topology.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/victim_order.h"
#include "scheduler/framework/wait_memo.h"
#include "scheduler/framework/wait_reasons.h"

namespace lahar {
namespace {

// RelieveStarvingJobs' pass over `starving` (see PassInJobOrder), with the orders of the run.
StarvingPass RelieveEach(Session& session, std::string_view action, const StarvingJobHandler& handler,
                         const std::vector<JobId>& starving, const std::vector<bool>& scalable, bool stop_at_fit,
                         VictimOrderCache& orders) {
  bool any_fit = false;
  for (JobId id : starving) {
    const JobInfo& job = session.job(id);
    if (orders.FailsAsItsClass(session, id)) {  // most of a backlog, once one of its class failed
      LAHAR_LOG(2, action) << job.key() << ": min does not fit, nothing evicted";
      continue;
    }
    std::pair<int64_t, int64_t> key =
        handler.key ? handler.key(job.queue, job.priority) : std::pair<int64_t, int64_t>{job.queue, 0};
    const std::pair<int64_t, int64_t> order_key = handler.order_key ? handler.order_key(job) : key;
    std::optional<DomainCandidates> where = session.JobDomains(job, /*for_eviction=*/true);
    if (FailsAlikeUnlessConfined(session, orders, job, where.has_value(), key)) {
      LAHAR_LOG(2, action) << job.key() << ": min does not fit, nothing evicted";
      continue;
    }
    // Plans `job` into `statement`, or nullopt when the handler leaves it alone.
    auto plan_in = [&](Statement& statement) -> std::optional<VictimPlan> {
      std::optional<VictimPolicy> policy = handler.policy(job);
      if (!policy) return std::nullopt;
      return PlanForStarvingJob(session, statement, id, *policy, scalable, &orders, key, order_key);
    };
    if (where) {
      auto discarded = [&handler](const VictimPlan& plan) {
        if (handler.settled) handler.settled(plan, /*committed=*/false);
      };
      if (!ScopeToFewestVictimsDomain(session, id, *where, plan_in, discarded)) {
        LAHAR_LOG(2, action) << job.key() << ": min fits no single domain, nothing evicted";
        continue;
      }
    }
    Statement statement(session);
    std::optional<VictimPlan> planned = plan_in(statement);
    if (!planned) {
      if (where) session.SetJobScope(id, nullptr);
      orders.LeftAlone(session, job, key);
      continue;
    }
    VictimPlan& plan = *planned;
    if (!plan.fits) {
      statement.Discard();
      if (where) session.SetJobScope(id, nullptr);
      LAHAR_LOG(2, action) << job.key() << ": min does not fit, nothing evicted";
      if (handler.settled) handler.settled(plan, /*committed=*/false);
      continue;
    }
    if (stop_at_fit) {
      statement.Discard();
      if (where) session.SetJobScope(id, nullptr);
      if (handler.settled) handler.settled(plan, /*committed=*/false);
      return StarvingPass::kStoppedAtFit;
    }
    statement.Commit();
    if (where && !where->confine) session.SetJobScope(id, nullptr);
    any_fit = true;
    orders.Committed(session, plan);
    SettleVictims(session, plan);
    // Its victims; or, when it only took room that earlier plans' victims are releasing, those.
    std::vector<TaskId> terminating = plan.victims;
    if (terminating.empty()) {
      std::vector<NodeId> nodes;
      for (const auto& [task, node] : plan.placements) nodes.push_back(node);
      terminating = ReleasingTasksOn(session, std::move(nodes));
    }
    session.SetWaitReason(id, TerminatingForReason(session, job, static_cast<int32_t>(plan.placements.size()), terminating));
    if (handler.settled) handler.settled(plan, /*committed=*/true);
    LAHAR_LOG(2, action) << job.key() << ": pipelined " << plan.placements.size() << " tasks, evicted "
                         << plan.victims.size() << " pods";
  }
  return any_fit ? StarvingPass::kSomeFit : StarvingPass::kNoneFit;
}

void HashJob(const Session& session, const JobInfo& job, const std::vector<bool>& scalable, StateHash& hash) {
  hash.Add(job.version).Add(job.queue).Add(job.priority).Add(static_cast<int32_t>(job.phase)).Add(scalable[job.id]);
  // Most of a backlog: every task pending, on no node, which their count says.
  if (job.Count(TaskStatus::kPending) == static_cast<int32_t>(job.tasks.size())) {
    hash.Add(uint64_t{0x9e4d}).Add(static_cast<int64_t>(job.tasks.size()));
    return;
  }
  auto hash_tasks = [&] {
    StateHash tasks;
    for (TaskId t : job.tasks) {
      const TaskInfo& task = session.task(t);
      tasks.Add(static_cast<int32_t>(task.status)).Add(task.node);
    }
    return tasks.value();
  };
  // Tasks as the snapshot laid them out (none moved in the session) are as their job's objects
  // and the node set say: hashed once for as long as those stay.
  WaitMemo* memo = session.wait_memo();
  if (job.version == 0 || session.job_tasks_version(job.id) != 0 || memo == nullptr) {
    hash.Add(hash_tasks());
    return;
  }
  WaitMemo::TasksPart& part =
      memo->TasksPartOf(StateHash().Add(uint64_t{0x7a5c}).Add(job.version).Add(session.cluster().node_set_version).value());
  if (!part.known) part = {true, hash_tasks(), part.asked};
  hash.Add(part.hash);
}

// PlanUnlessFruitless' fingerprint of the state, nullopt when it cannot be had.
std::optional<uint64_t> StarvingRunFingerprint(const Session& session, std::string_view run_class,
                                               const std::vector<JobId>& starving, const std::vector<bool>& scalable) {
  const ClusterSnapshot& cluster = session.cluster();
  if (!cluster.disruption_budgets.empty()) return std::nullopt;
  Session::Memos& memos = session.memos();
  if (memos.fingerprint_version == session.state_version()) {
    return StateHash().Add(run_class).Add(*memos.fingerprint).value();
  }
  StateHash hash;
  std::vector<WaitMemo::NodePart>& parts = session.wait_memo()->node_parts();
  parts.resize(cluster.nodes.size());
  for (const NodeInfo& node : cluster.nodes) {
    // A node no session changed since the cache counted what its pods hold, as its part was made before.
    const bool as_laid_out = session.NodeAsLaidOut(node.id);
    WaitMemo::NodePart& part = parts[node.id];
    if (!as_laid_out || !part.stamp.Matches(node)) {
      StateHash node_hash;
      node_hash.Add(node.version).Add(node.schedulable).Add(node.max_pods).Add(node.allocatable).Add(node.used);
      node_hash.Add(node.releasing).Add(node.pipelined).Add(node.used_limits);
      node_hash.Add(node.pod_count).Add(node.releasing_pods).Add(node.pipelined_pods);
      if (!as_laid_out) {
        hash.Add(node_hash.value());
        continue;
      }
      part = {WaitMemo::NodeStamp::Of(node), node_hash.value()};
    }
    hash.Add(part.hash);
  }
  for (const QueueInfo& queue : cluster.queues) {
    hash.Add(queue.name).Add(queue.weight).Add(queue.capability).Add(queue.guarantee).Add(queue.open);
    hash.Add(queue.reclaimable).Add(queue.priority).Add(queue.parent);
    hash.Add(queue.deserved);
  }
  for (const auto& [queue, deserved] : session.queue_deserved()) hash.Add(queue).Add(deserved);
  for (const std::string& pod : cluster.eviction_refused) hash.Add(pod);
  if (cluster.topology) hash.Add(cluster.topology->digest);
  // Jobs holding or promised resources (the victims and what they hold), in job order.
  hash.Add(uint64_t{0xa11});
  for (JobId id : session.LiveJobs()) {  // the others hold nothing
    const JobInfo& job = cluster.jobs[id];
    if (!job.HoldsNothing()) HashJob(session, job, scalable, hash);
  }
  // The starving jobs by id: the state hashed decides their job order too.
  hash.Add(uint64_t{0x57a});
  for (JobId id : starving) HashJob(session, session.job(id), scalable, hash);
  memos.fingerprint_version = session.state_version();
  memos.fingerprint = hash.value();
  return StateHash().Add(run_class).Add(hash.value()).value();
}

// `pass` over the starving jobs as in job order (StarvingJobs), for less when no plan fits. Then
// the order the jobs are tried in changes nothing (a failed plan is discarded and leaves the
// session as it was), so when the last tried run of `action` found no plan (WaitMemo), `pass` is
// run over them by id (`by_id`) first, asked to stop at the first plan that fits; only then are
// they ranked and `pass` run again from the state before (a job's network-domain scope is put
// back between the passes). Which way is cheaper is only guessed: the decisions are the same.
// Whether any plan fit.
bool PassInJobOrder(Session& session, std::string_view action, const std::vector<JobId>& by_id,
                    const StarvingPassFn& pass) {
  const WaitMemo* memo = session.wait_memo();
  if (memo == nullptr || !memo->LastRunFruitless(action)) {
    return pass(StarvingJobs(session), /*stop_at_fit=*/false) == StarvingPass::kSomeFit;
  }
  std::vector<std::pair<JobId, const std::vector<NodeId>*>> scopes;
  scopes.reserve(by_id.size());
  for (JobId id : by_id) scopes.emplace_back(id, session.JobScope(id));
  if (pass(by_id, /*stop_at_fit=*/true) == StarvingPass::kNoneFit) return false;
  for (const auto& [id, scope] : scopes) session.SetJobScope(id, scope);
  return pass(StarvingJobs(session), /*stop_at_fit=*/false) == StarvingPass::kSomeFit;
}

}  // namespace

bool ScopeToFewestVictimsDomain(Session& session, JobId id, DomainCandidates& where,
                                const std::function<std::optional<VictimPlan>(Statement&)>& plan_in,
                                const std::function<void(const VictimPlan&)>& discarded) {
  const std::vector<NodeId>* best = nullptr;
  size_t best_victims = 0;
  while (const std::vector<NodeId>* domain = where.next()) {
    session.SetJobScope(id, domain);
    Statement trial(session);
    std::optional<VictimPlan> plan = plan_in(trial);
    trial.Discard();
    if (!plan) break;
    if (discarded) discarded(*plan);
    if (plan->fits && (best == nullptr || plan->victims.size() < best_victims)) {
      best = domain;
      best_victims = plan->victims.size();
    }
  }
  session.SetJobScope(id, best);
  return best != nullptr;
}

bool FailsAlikeUnlessConfined(Session& session, VictimOrderCache& orders, const JobInfo& job, bool has_domains,
                              std::pair<int64_t, int64_t>& key) {
  if (!has_domains && session.JobScope(job.id) == nullptr) return orders.FailsAlike(session, job, key);
  key = {std::numeric_limits<int64_t>::min() + job.id, 0};
  return false;
}

void RelieveStarvingJobs(Session& session, std::string_view action, const StarvingJobHandler& handler) {
  const std::vector<bool> scalable = ScalableJobs(session);
  // One cache for both passes of a run (PassInJobOrder): a pass that stopped at a fit kept no
  // plan, so the next starts from the state its orders and failures were found in.
  VictimOrderCache orders;
  PlanUnlessFruitless(
      session, action, scalable,
      [&](const std::vector<JobId>& jobs, bool stop_at_fit) {
        return RelieveEach(session, action, handler, jobs, scalable, stop_at_fit, orders);
      },
      handler.run_class);
}

void PlanUnlessFruitless(Session& session, std::string_view action, const std::vector<bool>& scalable,
                         const StarvingPassFn& pass, std::string_view run_class) {
  const std::vector<JobId> starving = StarvingJobIds(session);  // a copy: plans change the memo
  WaitMemo* memo = session.wait_memo();
  std::optional<uint64_t> fingerprint;
  if (memo != nullptr && memo->enabled() && !starving.empty()) {
    fingerprint = StarvingRunFingerprint(session, run_class.empty() ? action : run_class, starving, scalable);
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
  const bool any_fit = PassInJobOrder(session, action, starving, pass);
  // Admitted jobs left out fail as their representatives did while no plan fits; after one
  // that does, their turns would decide.
  if (any_fit) {
    for (const Session::ParkedAdmitted& parked : session.parked_admitted()) session.NeedParkedClass(parked.parked_class);
  }
  if (!fingerprint) return;
  memo->CountTried();
  if (any_fit) {
    memo->Forget(action);
  } else {
    memo->Remember(action, {*fingerprint, session.task_state_changes() != changes_before, session.expiry()});
  }
}

}  // namespace lahar
