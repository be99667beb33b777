#include "actions/preempt_elastic_workers/preempt_elastic_workers.h"

#include "scheduler/framework/session.h"

namespace lahar {
namespace {

class PreemptElasticWorkersAction : public Action {
 public:
  std::string_view Name() const override { return "preempt-elastic-workers"; }
  void Execute(Session& session) override {}
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewPreemptElasticWorkersAction(const Arguments& arguments) {
  return std::make_unique<PreemptElasticWorkersAction>();
}

}  // namespace lahar
