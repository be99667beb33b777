#include "actions/elastic_scale/elastic_scale.h"

#include <memory>
#include <queue>
#include <utility>
#include <vector>

#include "api/log.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"
#include "scheduler/framework/victims.h"

namespace lahar {
namespace {

// Capacity that only idle resources can give to promises already made (pipelined tasks and the
// starving jobs' dry-run plans), per node, and the jobs those plans take workers from.
struct KeptCapacity {
  std::vector<std::pair<NodeId, Resources>> per_node;
  std::vector<bool> gives_up_workers;  // per job
};

KeptCapacity KeepCapacityForStarvingJobs(Session& session, const std::vector<bool>& scalable) {
  KeptCapacity kept;
  kept.gives_up_workers.assign(session.jobs().size(), false);
  std::vector<std::unique_ptr<Statement>> plans;
  // Jobs of one queue share a victim order (as in preempt-elastic-workers), kept current as each
  // plan takes its victims: the plans stay applied, as if committed, until the end.
  const auto order_key = ElasticWorkersOrderKey(session);
  // Shared by the passes of a run: one that stopped at a fit kept no plan (PassInJobOrder).
  VictimOrderCache orders;
  auto pass = [&](const std::vector<JobId>& jobs, bool stop_at_fit) {
    for (JobId id : jobs) {
      if (orders.FailsAsItsClass(session, id)) continue;  // most of a backlog
      const JobInfo& job = session.job(id);
      std::pair<int64_t, int64_t> key{job.queue, 0};
      // A job that must stay inside one network domain keeps capacity in the domain where the
      // fewest workers make room for it, as the evicting actions would take them.
      std::optional<DomainCandidates> where = session.JobDomains(job, /*for_eviction=*/true);
      if (FailsAlikeUnlessConfined(session, orders, job, where.has_value(), key)) continue;
      auto plan_in = [&](Statement& statement) -> std::optional<VictimPlan> {
        VictimPolicy policy = ElasticWorkersPolicy(session, job);
        policy.include_cooldown = true;
        return PlanForStarvingJob(session, statement, id, policy, scalable, &orders, key, order_key(job));
      };
      if (where && !ScopeToFewestVictimsDomain(session, id, *where, plan_in, nullptr)) continue;
      auto statement = std::make_unique<Statement>(session);
      VictimPlan plan = *plan_in(*statement);
      if (where) session.SetJobScope(id, nullptr);  // kept capacity only: allocate places it later
      if (!plan.fits) {
        statement->Discard();  // frees its victims for the next starving job's plan
        continue;
      }
      if (stop_at_fit) {
        statement->Discard();
        return StarvingPass::kStoppedAtFit;
      }
      orders.Committed(session, plan);
      for (TaskId victim : plan.victims) kept.gives_up_workers[session.task(victim).job] = true;
      LAHAR_LOG(2, "elastic-scale") << "keeping capacity for starving " << session.job(id).key() << " ("
                                    << plan.placements.size() << " tasks, " << plan.victims.size()
                                    << " elastic workers to take back)";
      plans.push_back(std::move(statement));
    }
    return plans.empty() ? StarvingPass::kNoneFit : StarvingPass::kSomeFit;
  };
  // Planned as preempt-elastic-workers plans, but for the workers inside their cooldown: when
  // there are none, its runs are of the same class, and one it found fruitless is not tried again.
  const bool same_as_elastic_workers = CooldownChangesNothing(session, scalable);
  PlanUnlessFruitless(session, "elastic-scale", scalable, pass, same_as_elastic_workers ? kElasticWorkersRuns : "");
  for (const NodeInfo& node : session.nodes()) {
    if (node.pipelined_pods == 0) continue;  // nothing promised there
    Resources from_idle = node.pipelined - node.releasing;
    from_idle.ClampNegativeToZero();
    if (!from_idle.IsZero()) kept.per_node.emplace_back(node.id, std::move(from_idle));
  }
  for (auto it = plans.rbegin(); it != plans.rend(); ++it) (*it)->Discard();
  return kept;
}

// Holds capacity as used on its nodes for as long as it lives, so that every fit check and
// node score of the session sees it as taken.
class HeldCapacity {
 public:
  HeldCapacity(Session& session, std::vector<std::pair<NodeId, Resources>> held)
      : session_(session), held_(std::move(held)) {
    for (const auto& [node, amount] : held_) session_.HoldResources(node, amount);
  }
  ~HeldCapacity() {
    for (const auto& [node, amount] : held_) session_.ReleaseHeldResources(node, amount);
  }
  HeldCapacity(const HeldCapacity&) = delete;
  HeldCapacity& operator=(const HeldCapacity&) = delete;

 private:
  Session& session_;
  std::vector<std::pair<NodeId, Resources>> held_;
};

class ElasticScaleAction : public Action {
 public:
  std::string_view Name() const override { return "elastic-scale"; }

  void Execute(Session& session) override {
    const std::vector<bool> scalable = ScalableJobs(session);
    KeptCapacity kept = KeepCapacityForStarvingJobs(session, scalable);
    HeldCapacity held(session, std::move(kept.per_node));

    // Each candidate's pending tasks in task order, and the next one to place.
    std::vector<std::vector<TaskId>> pending(session.jobs().size());
    std::vector<size_t> next(session.jobs().size(), 0);
    auto first_served_on_top = [&session](JobId a, JobId b) {
      return session.ElasticOrderLess(session.job(b), session.job(a));
    };
    std::priority_queue<JobId, std::vector<JobId>, decltype(first_served_on_top)> jobs(
        first_served_on_top);
    // A Pending job is not ElasticEligible; one without tasks beyond its min is not scalable.
    for (JobId id : session.LiveElasticJobs()) {
      const JobInfo& job = session.job(id);
      // The counts first: most live jobs have no pending task, or (a backlog) not their min.
      if (job.Count(TaskStatus::kPending) == 0 || !MinReadyByCount(job)) continue;
      if (!scalable[job.id] || kept.gives_up_workers[job.id]) continue;
      if (!ElasticEligible(session, job) || !session.queue(job.queue).open || !MinPlaced(session, job)) continue;
      pending[job.id] =
          TasksInOrder(session, job, [](const TaskInfo& t) { return t.status == TaskStatus::kPending; });
      jobs.push(job.id);
    }

    while (!jobs.empty()) {
      const JobId id = jobs.top();
      jobs.pop();
      const JobInfo& job = session.job(id);
      const TaskInfo& task = session.task(pending[id][next[id]]);
      if (!session.ElasticMayGrow(job)) {
        LAHAR_LOG(2, "elastic-scale") << job.key() << ": its next worker is not expected to pay";
        continue;
      }
      if (!session.Allocatable(session.queue(job.queue), task)) {
        LAHAR_LOG(2, "elastic-scale") << job.key() << ": queue " << session.queue(job.queue).name
                                      << " cannot take " << task.key();
        continue;
      }
      const NodeId node = session.FindBestNode(task, Placement::kIdle, /*elastic=*/true);
      if (node == kNoId) {
        LAHAR_LOG(2, "elastic-scale") << job.key() << ": no node fits elastic worker " << task.key();
        continue;
      }
      Statement statement(session);
      statement.Allocate(task.id, node);
      statement.Commit();
      if (!session.WasScaled(id)) session.MarkScaled(id);
      LAHAR_LOG(2, "elastic-scale") << job.key() << ": elastic worker " << task.key() << " on "
                                    << session.node(node).name() << ", fulfillment now "
                                    << FulfillmentOf(job).value();
      if (++next[id] < pending[id].size()) jobs.push(id);
    }
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewElasticScaleAction(const Arguments& arguments) {
  return std::make_unique<ElasticScaleAction>();
}

}  // namespace lahar
