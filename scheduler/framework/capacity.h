// What the cluster's nodes can still take, summed over the schedulable ones. Each node's part is
// carried from session to session while the node is as the cache laid it out (WaitMemo::NodeFree),
// so a session sums what changed rather than counting every node again.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_CAPACITY_H_
#define LAHAR_SCHEDULER_FRAMEWORK_CAPACITY_H_

#include "api/resources.h"
#include "scheduler/framework/session.h"

namespace lahar {

// Free capacity on schedulable nodes (idle and releasing, less promises), each node clamped at
// zero. Follows the session's changes: only nodes changed since the last call are counted again.
Resources FreeCapacity(const Session& session);

// Idle capacity on schedulable nodes (NodeInfo::Idle), each node clamped at zero, in the state
// the session is in now.
Resources IdleCapacity(const Session& session);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_CAPACITY_H_
