// TODO(owner): replace this stub with the elastic plugin.
#ifndef LAHAR_PLUGINS_ELASTIC_ELASTIC_H_
#define LAHAR_PLUGINS_ELASTIC_ELASTIC_H_

#include <memory>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Validates `arguments` and creates the plugin.
absl::StatusOr<std::unique_ptr<Plugin>> NewElasticPlugin(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_ELASTIC_ELASTIC_H_
