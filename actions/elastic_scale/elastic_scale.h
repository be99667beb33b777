// The `elastic-scale` action (spec section 3): gives capacity that no pending min needs to
// elastic workers, one pod at a time, always to the least fulfilled job. Runs after `allocate`.
//
// Contract:
// 1. Capacity kept for mins. Before placing anything, every starving job (see
//    actions/preempt_elastic_workers/preempt_elastic_workers.h), in job order, is planned as
//    `preempt-elastic-workers` would plan it, except that workers of jobs inside their cooldown
//    may be victims too (ranked after all others): they come back when the cooldown ends, and
//    the starving job should find its capacity still free then. The plans are dry runs and are
//    discarded; what stays is, per node, the capacity they promised that only idle resources can
//    give: max(0, pipelined - releasing), which also covers tasks pipelined earlier in the
//    session. That capacity is held as used while the action runs (Session::HoldResources), so
//    no elastic worker is placed into it. A starving job that could not fit even with every elastic worker taken
//    back (too big, wrong nodes, queue limits) keeps nothing: it does not block extras.
//    A job that gives up workers in one of those plans gets no new ones in this session.
// 2. Candidates: eligible jobs (valid, in a known open queue, Inqueue or Running) whose min is
//    placed (MinPlaced: count, per-role minimums, gang readiness), that have pending tasks, that
//    are Scalable (outside their cooldown) at the start of the action, and that give up no
//    workers in step 1's plans.
// 3. Placement: a priority queue of candidates in Session::ElasticOrderLess order (least
//    fulfilled first; the elastic plugin breaks ties by GPUs, cpu, memory per pod). Pop the first
//    job, take its next pending task in task order (master / rank 0 first), and place it if its
//    queue allows it (Session::Allocatable: capability and deserved share) and a node fits it
//    with the elastic predicates (FindBestNode(task, kIdle, elastic=true)). Each pod is its own
//    statement, committed at once (extras are not a gang). The job goes back into the queue with
//    its new score, so the next pod again goes to the least fulfilled job:
//    O((jobs + placements) log jobs) comparisons. A job whose next task cannot be placed stops
//    growing for this session (its later tasks are not placed out of order).
// 4. Cooldown: the whole scale-up of a job in one session is one change. The first pod marks the
//    job scaled (Session::MarkScaled: its cooldown restarts with this session); it keeps
//    receiving pods in this session because scalability was decided in step 2.
#ifndef LAHAR_ACTIONS_ELASTIC_SCALE_ELASTIC_SCALE_H_
#define LAHAR_ACTIONS_ELASTIC_SCALE_ELASTIC_SCALE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Validates `arguments` and creates the action.
absl::StatusOr<std::unique_ptr<Action>> NewElasticScaleAction(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_ACTIONS_ELASTIC_SCALE_ELASTIC_SCALE_H_
