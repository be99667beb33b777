// The `preempt-elastic-workers` action (spec section 3): gives a starving job its min by
// evicting elastic workers of other jobs, and only when that makes the whole min fit.
//
// Starving jobs (job_rules.h) are served one at a time in job order, each in its own statement,
// by the victim planner (scheduler/framework/victims.h) with this policy: the elastic workers of
// jobs outside their cooldown, of the starving job's own queue or of reclaimable queues. On
// success the statement commits: evictions carry "elastic-preempted-for <namespace>/<job>" and
// every victim job is marked scaled (its cooldown restarts). On failure nothing is evicted.
//
// Pipelined tasks are promises for this session only. In the next session the evicted pods'
// resources are free (after their grace period) and `allocate` places the job on them;
// `elastic-scale` keeps pipelined capacity for it meanwhile.
#ifndef LAHAR_ACTIONS_PREEMPT_ELASTIC_WORKERS_PREEMPT_ELASTIC_WORKERS_H_
#define LAHAR_ACTIONS_PREEMPT_ELASTIC_WORKERS_PREEMPT_ELASTIC_WORKERS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Validates `arguments` and creates the action.
absl::StatusOr<std::unique_ptr<Action>> NewPreemptElasticWorkersAction(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_ACTIONS_PREEMPT_ELASTIC_WORKERS_PREEMPT_ELASTIC_WORKERS_H_
