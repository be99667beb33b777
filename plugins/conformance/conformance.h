// The conformance plugin (Volcano's): critical pods are never victims. Preemptable and
// Reclaimable refuse every pod in namespace kube-system and every pod of priority class
// system-cluster-critical or system-node-critical, whatever the action evicting for.
#ifndef LAHAR_PLUGINS_CONFORMANCE_CONFORMANCE_H_
#define LAHAR_PLUGINS_CONFORMANCE_CONFORMANCE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Takes no arguments.
absl::StatusOr<std::unique_ptr<Plugin>> NewConformancePlugin(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_CONFORMANCE_CONFORMANCE_H_
