#include "actions/preempt_elastic_workers/preempt_elastic_workers.h"

#include "api/log.h"
#include "api/status_macros.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"
#include "scheduler/framework/victims.h"

namespace lahar {
namespace {

// Takes back the elastic workers that a job's own reports show do not pay (spec 3.2), whether
// or not anybody waits: highest index first, outside the job's cooldown, never below its min,
// never a pod annotated not preemptable.
void ShedUnpaidWorkers(Session& session) {
  if (!session.HasElasticShedHooks()) return;
  for (const JobInfo& job : session.cluster().jobs) {
    int32_t shed = session.ElasticWorkersToShed(job);  // 0 for most jobs, and cheap to ask
    if (shed <= 0 || !job.preemptable || !ElasticEligible(session, job) || !session.Scalable(job)) continue;
    Statement statement(session);
    const std::vector<TaskId> workers = ElasticWorkers(session, job);  // a copy: evictions change the memo's job
    for (TaskId worker : workers) {
      if (shed == 0) break;
      if (!session.task(worker).preemptable) continue;
      statement.Evict(worker, kLowGainEvictionReason);
      --shed;
    }
    if (statement.empty()) continue;
    LAHAR_LOG(2, "preempt-elastic-workers") << job.key() << ": taking back workers that gained less than minGain";
    statement.Commit();
    session.MarkScaled(job.id);
  }
}

class PreemptElasticWorkersAction : public Action {
 public:
  std::string_view Name() const override { return "preempt-elastic-workers"; }

  void Execute(Session& session) override {
    StarvingJobHandler handler;
    handler.policy = [&session](const JobInfo& job) -> std::optional<VictimPolicy> {
      return ElasticWorkersPolicy(session, job);
    };
    handler.order_key = ElasticWorkersOrderKey(session);
    handler.run_class = kElasticWorkersRuns;
    RelieveStarvingJobs(session, Name(), handler);
    ShedUnpaidWorkers(session);
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewPreemptElasticWorkersAction(const Arguments& arguments) {
  return std::make_unique<PreemptElasticWorkersAction>();
}

}  // namespace lahar
