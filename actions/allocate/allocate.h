// The allocate action: places the *min* of every admitted job, all-or-nothing per job.
//
// Queues are visited in the session's queue order (proportion: lowest share first), one job at
// a time, and a queue goes back into the order after each of its jobs, so shares stay current.
// Inside a queue, jobs come in job order (priority, gang, drf, ...), and inside a job the tasks
// that complete its min come in task order (task priority, then pod index: rank 0 first).
// Elastic workers beyond the min are left to the elastic-scale action.
//
// Per job, in one statement: a task goes where the queue still allows it (Allocatable) onto the
// best node with idle room, else onto room that releasing pods will free (pipelined). Then
// - the job is ready -> commit (its allocated pods bind);
// - all of its min found room, part of it only on releasing resources -> hold the statement to
//   the end of the action (nothing after it takes that room), then roll it back: the gang binds
//   whole in a later session, once the releasing pods are gone;
// - otherwise -> roll back, and record why the job waits (spec 7): kind no-fit, e.g. "3/8 pods
//   unschedulable: 5 nodes have too little nvidia.com/gpu, 2 have taint dedicated=infra"; kind
//   queue-limit, e.g. "queue research: capability nvidia.com/gpu 16, allocated 12, needs 8", when
//   only the queue stood in the way; kind gated, e.g. "2 pods have scheduling gates:
//   example.com/quota", when scheduling gates kept pods of the min off every node.
// Jobs of a queue found Overused when its turn comes wait for a later session.
#ifndef LAHAR_ACTIONS_ALLOCATE_ALLOCATE_H_
#define LAHAR_ACTIONS_ALLOCATE_ALLOCATE_H_

#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/cluster_info.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

class Session;

// Validates `arguments` and creates the action. Accepted arguments (read by Session::Open):
// minNodesToFind, minPercentageOfNodesToFind, percentageOfNodesToFind.
absl::StatusOr<std::unique_ptr<Action>> NewAllocateAction(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_ACTIONS_ALLOCATE_ALLOCATE_H_
