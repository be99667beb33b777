// The wait reasons (spec 7) that more than one action gives, built from what the action saw.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_WAIT_REASONS_H_
#define LAHAR_SCHEDULER_FRAMEWORK_WAIT_REASONS_H_

#include <vector>

#include "api/cluster_info.h"
#include "api/wait_reason.h"
#include "scheduler/framework/session.h"

namespace lahar {

// Pods kept off every node by their scheduling gates (kind `gated`): "2 pods have scheduling
// gates: example.com/quota", gate names deduplicated and sorted.
WaitReason SchedulingGatesReason(const std::vector<const TaskInfo*>& gated);

// `unplaced` pods of the job's min fit no node; `errors` are the first one's (kind `no-fit`):
// "1/3 pods unschedulable: 2 nodes have too little cpu".
WaitReason NoFitReason(const JobInfo& job, int32_t unplaced, const FitErrors& errors);

// `pods` of the job wait for `terminating` tasks to release their nodes (kind
// `waiting-for-victims`): "3 pods of default/low-1 are terminating for it".
WaitReason TerminatingForReason(const Session& session, const JobInfo& job, int32_t pods,
                                const std::vector<TaskId>& terminating);

// The tasks being released on `nodes` (each node counted once).
std::vector<TaskId> ReleasingTasksOn(const Session& session, std::vector<NodeId> nodes);

// The queue's refusal of the job under `check`, as the plugin that refused explains it, else
// in general words naming `limit`.
WaitReason QueueLimitOrGeneral(const Session& session, QueueCheck check, const JobInfo& job,
                               const Resources& request, std::string_view limit);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_WAIT_REASONS_H_
