#include "plugins/priority/priority.h"

#include "scheduler/framework/session.h"

namespace lahar {
namespace {

class PriorityPlugin : public Plugin {
 public:
  std::string_view Name() const override { return "priority"; }
  void OnSessionOpen(Session& session) override {}
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewPriorityPlugin(const Arguments& arguments) {
  return std::make_unique<PriorityPlugin>();
}

}  // namespace lahar
