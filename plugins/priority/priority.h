// The priority plugin: Volcano's job and task ordering by priority, and the matching rule for
// preemption victims.
//
// - JobOrder: higher job priority (its PriorityClass value) first.
// - TaskOrder: higher task priority (volcano.sh/task-priority, else spec.priority) first.
// - Preemptable: a task of another job is a victim only when its job's priority is lower than
//   the preemptor's job's; a task of the preemptor's own job only when its task priority is
//   lower than the preemptor's.
#ifndef LAHAR_PLUGINS_PRIORITY_PRIORITY_H_
#define LAHAR_PLUGINS_PRIORITY_PRIORITY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Takes no arguments.
absl::StatusOr<std::unique_ptr<Plugin>> NewPriorityPlugin(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_PRIORITY_PRIORITY_H_
