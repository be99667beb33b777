#include "plugins/drf/drf.h"

#include "scheduler/framework/session.h"

namespace lahar {
namespace {

class DrfPlugin : public Plugin {
 public:
  std::string_view Name() const override { return "drf"; }
  void OnSessionOpen(Session& session) override {}
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewDrfPlugin(const Arguments& arguments) {
  return std::make_unique<DrfPlugin>();
}

}  // namespace lahar
