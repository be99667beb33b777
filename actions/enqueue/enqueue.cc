#include "actions/enqueue/enqueue.h"

#include "scheduler/framework/session.h"

namespace lahar {
namespace {

class EnqueueAction : public Action {
 public:
  std::string_view Name() const override { return "enqueue"; }
  void Execute(Session& session) override {}
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewEnqueueAction(const Arguments& arguments) {
  return std::make_unique<EnqueueAction>();
}

}  // namespace lahar
