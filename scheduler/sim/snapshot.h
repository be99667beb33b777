// lahar-sim's second input format (spec 6.2): a snapshot of a live cluster, as
// `kubectl get nodes,pods,podgroups,queues,priorityclasses -A -o yaml` prints it (or the
// daemon's /debug/snapshot), turned into the same SimInput as a scenario file.
#ifndef LAHAR_SCHEDULER_SIM_SNAPSHOT_H_
#define LAHAR_SCHEDULER_SIM_SNAPSHOT_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/sim/scenario.h"

namespace lahar {

// Bound pods stay where they are; pending pods of schedulers lahar and volcano are scheduled
// (each job's pods as they are written, scheduling gates included); pods of other schedulers
// count against their nodes only. A pod naming a PodGroup the snapshot lacks is an error.
absl::StatusOr<SimInput> LoadSnapshot(std::string_view text);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_SIM_SNAPSHOT_H_
