// What Lahar has of Volcano's scheduler: its actions and plugins by name, and the compatibility
// table the README shows (`lahar-sim plugins` prints it from the registry, so it cannot drift).
#ifndef LAHAR_SCHEDULER_FRAMEWORK_VOLCANO_H_
#define LAHAR_SCHEDULER_FRAMEWORK_VOLCANO_H_

#include <string>
#include <string_view>

#include "scheduler/framework/registry.h"

namespace lahar {

// The names Volcano's scheduler registers (volcano-sh/volcano, pkg/scheduler/*/factory.go).
bool IsVolcanoAction(std::string_view name);
bool IsVolcanoPlugin(std::string_view name);

// Markdown: every Volcano action and plugin (supported or not) and every one of Lahar's own,
// with the declared arguments of those in `registry`; then the enable flags.
std::string VolcanoCompatibilityTable(const Registry& registry);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_VOLCANO_H_
