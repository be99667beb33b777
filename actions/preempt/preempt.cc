#include "actions/preempt/preempt.h"

#include <vector>

#include "api/log.h"
#include "api/strings.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"
#include "scheduler/framework/victims.h"

namespace lahar {
namespace {

class PreemptAction : public Action {
 public:
  std::string_view Name() const override { return "preempt"; }

  void Execute(Session& session) override {
    const std::vector<bool> scalable = ScalableJobs(session);
    VictimOrderCache orders;
    for (JobId id : StarvingJobs(session)) {
      const JobInfo& job = session.job(id);
      VictimPolicy policy;
      const QueueId queue = job.queue;
      const int32_t priority = job.priority;
      policy.kind = [queue, priority](const JobInfo& other) {
        return other.queue == queue && other.priority < priority ? VictimKind::kWholeJob : VictimKind::kNone;
      };
      policy.hooks = VictimPolicy::Hooks::kPreemptable;
      policy.reason = EvictionReason("preempted-for", job);
      Statement statement(session);
      VictimPlan plan = PlanForStarvingJob(session, statement, id, policy, scalable, &orders, {queue, priority});
      if (!plan.fits || plan.victims.empty()) {
        // A plan that fits without victims is allocate's work (or waits for releasing pods).
        statement.Discard();
        continue;
      }
      statement.Commit();
      orders.Clear();
      SettleVictims(session, plan);
      LAHAR_LOG(2, "preempt") << job.key() << ": pipelined " << plan.placements.size() << " tasks, evicted "
                              << plan.victims.size() << " pods of lower priority";
    }
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewPreemptAction(const Arguments& arguments) {
  if (!arguments.values().empty()) {
    return absl::InvalidArgumentError(StrCat(arguments.owner(), ": unknown argument \"",
                                             arguments.values().begin()->first, "\" (preempt takes no arguments)"));
  }
  return std::make_unique<PreemptAction>();
}

}  // namespace lahar
