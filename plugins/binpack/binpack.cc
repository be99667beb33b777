#include "plugins/binpack/binpack.h"

#include "scheduler/framework/session.h"

namespace lahar {
namespace {

class BinpackPlugin : public Plugin {
 public:
  std::string_view Name() const override { return "binpack"; }
  void OnSessionOpen(Session& session) override {}
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewBinpackPlugin(const Arguments& arguments) {
  return std::make_unique<BinpackPlugin>();
}

}  // namespace lahar
