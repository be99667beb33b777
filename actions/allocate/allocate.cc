#include "actions/allocate/allocate.h"

#include "scheduler/framework/session.h"

namespace lahar {
namespace {

class AllocateAction : public Action {
 public:
  std::string_view Name() const override { return "allocate"; }
  void Execute(Session& session) override {}
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewAllocateAction(const Arguments& arguments) {
  return std::make_unique<AllocateAction>();
}

}  // namespace lahar
