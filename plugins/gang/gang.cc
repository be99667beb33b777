#include "plugins/gang/gang.h"

#include "scheduler/framework/session.h"

namespace lahar {
namespace {

class GangPlugin : public Plugin {
 public:
  std::string_view Name() const override { return "gang"; }
  void OnSessionOpen(Session& session) override {}
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewGangPlugin(const Arguments& arguments) {
  return std::make_unique<GangPlugin>();
}

}  // namespace lahar
