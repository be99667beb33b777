#include "plugins/predicates/predicates.h"

#include "scheduler/framework/session.h"

namespace lahar {
namespace {

class PredicatesPlugin : public Plugin {
 public:
  std::string_view Name() const override { return "predicates"; }
  void OnSessionOpen(Session& session) override {}
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewPredicatesPlugin(const Arguments& arguments) {
  return std::make_unique<PredicatesPlugin>();
}

}  // namespace lahar
