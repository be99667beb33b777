// The enqueue action: admits Pending PodGroups (phase Pending -> Inqueue) when their queue and
// the cluster can hold their minResources. Only admitted jobs are considered by allocate and
// the actions after it; pods without a PodGroup are admitted from the start.
//
// Jobs are taken one at a time from the first queue in queue order, in job order within it;
// after each job its queue goes back into the order (as in Volcano). A job is admitted when
// - its queue exists and is open,
// - the job is valid (JobInvalidReason),
// - the plugins' enqueueable vote permits it (proportion: the queue's capability / share), and
// - the cluster-wide headroom still holds its minResources: idle resources of schedulable nodes
//   plus what releasing pods will free, minus what the jobs admitted earlier in this session
//   reserved. A job that does not fit is skipped; a smaller one after it may still be admitted.
//   A plugin with a cluster admission hook (overcommit) replaces this check with its own.
// Jobs admitted in an earlier session reserve nothing here: allocate places them this session or
// they wait, and this gate only keeps the number of admitted, unplaceable gangs small.
#ifndef LAHAR_ACTIONS_ENQUEUE_ENQUEUE_H_
#define LAHAR_ACTIONS_ENQUEUE_ENQUEUE_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Validates `arguments` (enqueue takes none) and creates the action.
std::vector<ArgumentSpec> EnqueueArguments();
absl::StatusOr<std::unique_ptr<Action>> NewEnqueueAction(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_ACTIONS_ENQUEUE_ENQUEUE_H_
