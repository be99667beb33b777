// The pdb plugin (Volcano's): never plans an eviction that a PodDisruptionBudget would refuse.
//
// Preemptable and Reclaimable keep, of the candidates offered (in their eviction order), those
// whose every budget still allows one more disruption, counting the candidates kept before
// them: a budget that allows one disruption lets one candidate through. A whole gang is
// offered with all its pods, so a budget that covers it lets it go only when the budget allows
// every one of them.
//
// What a budget allows: with a status from the disruption controller, status.disruptionsAllowed
// (0 while status.observedGeneration lags metadata.generation, as the eviction API rules),
// less the pods it selects that this session has already begun to evict. Without a status (the
// simulator, or before the controller ran): the pods it selects that are running less those
// spec.minAvailable keeps, or spec.maxUnavailable less those not running (percentages of the
// pods it selects, rounded up). Budgets of several jobs are counted per job offered: the
// eviction API refuses what a plan takes beyond them, and the daemon reports it.
#ifndef LAHAR_PLUGINS_PDB_PDB_H_
#define LAHAR_PLUGINS_PDB_PDB_H_

#include <memory>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Takes no arguments.
absl::StatusOr<std::unique_ptr<Plugin>> NewPdbPlugin(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_PDB_PDB_H_
