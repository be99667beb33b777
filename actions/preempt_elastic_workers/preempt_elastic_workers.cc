#include "actions/preempt_elastic_workers/preempt_elastic_workers.h"

#include "api/status_macros.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/victims.h"

namespace lahar {
namespace {

class PreemptElasticWorkersAction : public Action {
 public:
  std::string_view Name() const override { return "preempt-elastic-workers"; }

  void Execute(Session& session) override {
    StarvingJobHandler handler;
    handler.policy = [&session](const JobInfo& job) -> std::optional<VictimPolicy> {
      return ElasticWorkersPolicy(session, job);
    };
    RelieveStarvingJobs(session, Name(), handler);
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewPreemptElasticWorkersAction(const Arguments& arguments) {
  return std::make_unique<PreemptElasticWorkersAction>();
}

}  // namespace lahar
