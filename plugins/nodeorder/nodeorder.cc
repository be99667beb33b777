#include "plugins/nodeorder/nodeorder.h"

#include "scheduler/framework/session.h"

namespace lahar {
namespace {

class NodeorderPlugin : public Plugin {
 public:
  std::string_view Name() const override { return "nodeorder"; }
  void OnSessionOpen(Session& session) override {}
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewNodeorderPlugin(const Arguments& arguments) {
  return std::make_unique<NodeorderPlugin>();
}

}  // namespace lahar
