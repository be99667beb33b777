#include "plugins/conformance/conformance.h"

#include <string_view>
#include <vector>

#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/framework/session.h"

namespace lahar {
namespace {

// Compared as string_views, which tell strings of another length apart without reading them:
// asked of every victim candidate of every plan.
constexpr std::string_view kSystemNamespace = "kube-system";
constexpr std::string_view kClusterCritical = "system-cluster-critical";
constexpr std::string_view kNodeCritical = "system-node-critical";

bool Critical(const TaskInfo& task) {
  const Pod& pod = *task.pod;
  return pod.meta.namespace_ == kSystemNamespace || pod.priority_class_name == kClusterCritical ||
         pod.priority_class_name == kNodeCritical;
}

class ConformancePlugin : public Plugin {
 public:
  std::string_view Name() const override { return "conformance"; }

  void OnSessionOpen(Session& session) override {
    const Session* s = &session;
    auto not_critical = [s](const TaskInfo&, const std::vector<TaskId>& candidates) {
      std::vector<TaskId> out;
      out.reserve(candidates.size());  // most candidates stay: one allocation, not one per doubling
      for (TaskId id : candidates) {
        if (!Critical(s->task(id))) out.push_back(id);
      }
      return out;
    };
    session.AddPreemptableFn(not_critical);
    session.AddReclaimableFn(not_critical);
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewConformancePlugin(const Arguments& arguments) {
  return std::make_unique<ConformancePlugin>();
}

}  // namespace lahar
