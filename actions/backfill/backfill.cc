#include "actions/backfill/backfill.h"

#include "scheduler/framework/session.h"

namespace lahar {
namespace {

class BackfillAction : public Action {
 public:
  std::string_view Name() const override { return "backfill"; }
  void Execute(Session& session) override {}
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewBackfillAction(const Arguments& arguments) {
  return std::make_unique<BackfillAction>();
}

}  // namespace lahar
