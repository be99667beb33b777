// The registry of every built-in action and plugin.
#ifndef LAHAR_SCHEDULER_BUILTINS_H_
#define LAHAR_SCHEDULER_BUILTINS_H_

#include "scheduler/framework/registry.h"

namespace lahar {

// Defined in actions/register.cc and plugins/register.cc: one explicit list each.
absl::Status RegisterBuiltinActions(Registry& registry);
absl::Status RegisterBuiltinPlugins(Registry& registry);

// A process-wide registry holding the built-ins, created on first use and never destroyed.
const Registry& BuiltinRegistry();

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_BUILTINS_H_
