// The `preempt` action (spec 3, 3.1): inside one queue, a starving job whose min cannot be placed
// takes room from jobs of lower priority (PodGroup priorityClassName value); equal priority never
// preempts. Victims, cheapest first, by the victim planner (scheduler/framework/victims.h): the
// elastic workers of lower-priority jobs, then lower-priority jobs whole (lowest priority, most
// recently started, fewest pods), protected ones never, and only when a dry run shows that the
// starving job's whole min then fits. Evictions carry "preempted-for <namespace>/<job>"; a job
// taken whole goes back to Pending and is scheduled again when there is room.
#ifndef LAHAR_ACTIONS_PREEMPT_PREEMPT_H_
#define LAHAR_ACTIONS_PREEMPT_PREEMPT_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

std::vector<ArgumentSpec> PreemptArguments();
absl::StatusOr<std::unique_ptr<Action>> NewPreemptAction(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_ACTIONS_PREEMPT_PREEMPT_H_
