#include "plugins/proportion/proportion.h"

#include "scheduler/framework/session.h"

namespace lahar {
namespace {

class ProportionPlugin : public Plugin {
 public:
  std::string_view Name() const override { return "proportion"; }
  void OnSessionOpen(Session& session) override {}
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewProportionPlugin(const Arguments& arguments) {
  return std::make_unique<ProportionPlugin>();
}

}  // namespace lahar
