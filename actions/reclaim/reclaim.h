// The `reclaim` action (spec 2.1, 3, 3.1): between queues. A starving job whose queue is below
// its deserved share takes back what other queues hold beyond theirs, decided at each level of
// the queue tree. For starving job S of leaf queue R and a candidate victim job of queue V, with
// L the lowest common ancestor of R and V (the root when they share none):
//   - V, and every queue between V and L, must be reclaimable and stay at or above its deserved
//     share after the eviction in every contested resource (one that S's min needs and the
//     cluster has too little of free): a queue is never taken below its deserved or guarantee;
//   - R, and every queue between R and L, must stay within its deserved share with S's min
//     placed: the reclaiming queue never rises above its own deserved;
//   - victims whose L is deeper come first: a sibling team is asked before another department.
// Deserved shares are those a plugin reported for the session (proportion: by weight down the
// tree; capacity: as written). Victims and the dry run are the victim planner's
// (scheduler/framework/victims.h): elastic workers first, then whole jobs, never for nothing.
// Evictions carry "reclaimed-for <namespace>/<job>".
#ifndef LAHAR_ACTIONS_RECLAIM_RECLAIM_H_
#define LAHAR_ACTIONS_RECLAIM_RECLAIM_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

std::vector<ArgumentSpec> ReclaimArguments();
absl::StatusOr<std::unique_ptr<Action>> NewReclaimAction(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_ACTIONS_RECLAIM_RECLAIM_H_
