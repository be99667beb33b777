// TODO(owner): replace this stub with the priority plugin.
#ifndef LAHAR_PLUGINS_PRIORITY_PRIORITY_H_
#define LAHAR_PLUGINS_PRIORITY_PRIORITY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Validates `arguments` and creates the plugin.
absl::StatusOr<std::unique_ptr<Plugin>> NewPriorityPlugin(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_PRIORITY_PRIORITY_H_
