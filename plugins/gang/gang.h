// TODO(owner): replace this stub with the gang plugin.
#ifndef LAHAR_PLUGINS_GANG_GANG_H_
#define LAHAR_PLUGINS_GANG_GANG_H_

#include <memory>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Validates `arguments` and creates the plugin.
absl::StatusOr<std::unique_ptr<Plugin>> NewGangPlugin(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_GANG_GANG_H_
