// The backfill action: after allocate, puts to use what allocate leaves alone, without letting
// anything jump ahead of a gang that is still waiting for its min.
//
// Admitted, valid jobs with pending pods are visited in job order (across queues):
// (a) best-effort pods (no requests) go onto any node that passes the predicates and has a pod
//     slot free: the pods beyond the min of a job that has its min, and the min of a job whose
//     min is all best-effort (committed only if the job is then ready);
// (b) a single-pod job (min 1, one pod) that is still pending is placed on idle resources
//     within its queue's allocatable limit, but only while no job ahead of it in job order is
//     still waiting for its min: once a gang waits, the idle capacity is what it waits for, and
//     only best-effort pods (which take no resources) are placed after it.
// Gangs with requests are allocate's work and are never placed here. Placements are
// all-or-nothing per job, like allocate's; backfill never pipelines.
#ifndef LAHAR_ACTIONS_BACKFILL_BACKFILL_H_
#define LAHAR_ACTIONS_BACKFILL_BACKFILL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Validates `arguments` (the node-search arguments of allocate) and creates the action.
absl::StatusOr<std::unique_ptr<Action>> NewBackfillAction(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_ACTIONS_BACKFILL_BACKFILL_H_
