// The sla plugin (Volcano's): no job waits forever. A job's waiting time limit is its PodGroup
// annotation sla-waiting-time, else the argument `sla-waiting-time` (a duration; absent: only
// annotated jobs have one). Once a job has waited longer than its limit since it was created:
//   - JobEnqueueable permits it: it is admitted even where later tiers (proportion, overcommit)
//     would hold it back, when sla sits in an earlier tier than they do (Volcano's combining);
//     a Closed queue still admits nothing;
//   - JobOrder puts it ahead of every job that is not overdue, and overdue jobs by deadline
//     (creation + limit, earliest first). Jobs not overdue are left to the other plugins.
// An admitted overdue job competes for room like any other: allocate serves it first in its
// queue, and preempt and reclaim may evict for it under their usual rules.
#ifndef LAHAR_PLUGINS_SLA_SLA_H_
#define LAHAR_PLUGINS_SLA_SLA_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Arguments: sla-waiting-time (duration, optional).
std::vector<ArgumentSpec> SlaArguments();
absl::StatusOr<std::unique_ptr<Plugin>> NewSlaPlugin(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_SLA_SLA_H_
