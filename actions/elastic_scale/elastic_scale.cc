#include "actions/elastic_scale/elastic_scale.h"

#include "scheduler/framework/session.h"

namespace lahar {
namespace {

class ElasticScaleAction : public Action {
 public:
  std::string_view Name() const override { return "elastic-scale"; }
  void Execute(Session& session) override {}
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewElasticScaleAction(const Arguments& arguments) {
  return std::make_unique<ElasticScaleAction>();
}

}  // namespace lahar
