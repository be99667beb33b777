#include "actions/preempt_elastic_workers/preempt_elastic_workers.h"

#include <string>
#include <vector>

#include "api/log.h"
#include "api/strings.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"
#include "scheduler/framework/victims.h"

namespace lahar {
namespace {

class PreemptElasticWorkersAction : public Action {
 public:
  std::string_view Name() const override { return "preempt-elastic-workers"; }

  void Execute(Session& session) override {
    const std::vector<bool> scalable = ScalableJobs(session);
    VictimOrderCache orders;
    for (JobId id : StarvingJobs(session)) {
      const JobInfo& job = session.job(id);
      VictimPolicy policy = ElasticWorkersPolicy(session, job);
      Statement statement(session);
      VictimPlan plan = PlanForStarvingJob(session, statement, id, policy, scalable, &orders, {job.queue, 0});
      if (!plan.fits) {
        statement.Discard();
        LAHAR_LOG(2, "preempt-elastic-workers") << job.key() << ": min does not fit, nothing evicted";
        continue;
      }
      statement.Commit();
      orders.Clear();
      SettleVictims(session, plan);
      LAHAR_LOG(2, "preempt-elastic-workers") << job.key() << ": pipelined " << plan.placements.size()
                                              << " tasks, evicted " << plan.victims.size() << " elastic workers";
    }
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewPreemptElasticWorkersAction(const Arguments& arguments) {
  if (!arguments.values().empty()) {
    return absl::InvalidArgumentError(StrCat(arguments.owner(), ": unknown argument \"",
                                             arguments.values().begin()->first,
                                             "\" (preempt-elastic-workers takes no arguments)"));
  }
  return std::make_unique<PreemptElasticWorkersAction>();
}

}  // namespace lahar
