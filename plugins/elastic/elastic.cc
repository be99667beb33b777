#include "plugins/elastic/elastic.h"

#include "scheduler/framework/session.h"

namespace lahar {
namespace {

class ElasticPlugin : public Plugin {
 public:
  std::string_view Name() const override { return "elastic"; }
  void OnSessionOpen(Session& session) override {}
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewElasticPlugin(const Arguments& arguments) {
  return std::make_unique<ElasticPlugin>();
}

}  // namespace lahar
