// The gang plugin: a job runs with at least its min pods (PodGroup spec.minMember, plus the
// per-role minimums of spec.minTaskMember) or not at all.
//
// - JobValid: a job with fewer pods (tasks not Failed) than its min, or with fewer pods of a
//   role than that role's minimum, can never become ready and is not scheduled.
// - JobReady: placed + succeeded tasks reach min, and per role reach its minimum.
// - JobPipelined (vote): permit when placed + succeeded + pipelined tasks reach min (and per
//   role), reject otherwise. JobStarving: the opposite.
// - JobOrder: jobs that do not have their gang yet go first (count only, as Volcano).
// Victims are not this plugin's: the victim planner (scheduler/framework/victims.h) takes a
// job's elastic workers or the whole gang, never part of its min.
// - OnSessionClose: every job waiting for its gang that has pending tasks and that no action
//   explained this session waits with kind no-fit, "x/y pods unschedulable: r of minAvailable m ready".
#ifndef LAHAR_PLUGINS_GANG_GANG_H_
#define LAHAR_PLUGINS_GANG_GANG_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/cluster_info.h"
#include "api/wait_reason.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Takes no arguments.
absl::StatusOr<std::unique_ptr<Plugin>> NewGangPlugin(const Arguments& arguments);

// Tasks that can still be part of the gang: every task that has not failed.
int32_t GangValidCount(const JobInfo& job);

// Why `job` can never be ready with the pods it has ("NotEnoughPods: 2/3 pods, minAvailable 3"),
// or nullopt. `tasks` is the snapshot's task vector (for per-role counts).
std::optional<WaitReason> GangInvalidReason(const JobInfo& job, const std::vector<TaskInfo>& tasks);

// The job has its gang: placed + succeeded tasks reach min_available and, for every role of
// min_task_member, that role's minimum. With `count_pipelined`, pipelined tasks count too
// (the job will have its gang once the resources being released are free).
bool GangReady(const JobInfo& job, const std::vector<TaskInfo>& tasks, bool count_pipelined = false);

// How many more tasks the job needs for its gang: the larger of (min - ready) and the sum of
// per-role shortfalls; 0 when ready.
int32_t GangShortfall(const JobInfo& job, const std::vector<TaskInfo>& tasks, bool count_pipelined = false);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_GANG_GANG_H_
