// One job of a scenario file (spec 5, `jobs[i]`): its PodGroup, pods and scaling, read and
// checked, with errors that name the line and the path.
#ifndef LAHAR_SCHEDULER_SIM_SCENARIO_JOB_H_
#define LAHAR_SCHEDULER_SIM_SCENARIO_JOB_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/objects.h"
#include "scheduler/sim/scenario.h"
#include "scheduler/sim/scenario_reader.h"

namespace lahar {

// `priority_classes` are the classes known so far (name to value). A job that gives its class a
// value the scenario did not know yet adds it to `new_classes`; one that names a known class
// with another value, or an unknown class without one, is an error.
absl::StatusOr<SimJob> ReadScenarioJob(const ScenarioNode& j,
                                       const std::map<std::string, int32_t, std::less<>>& priority_classes,
                                       std::vector<PriorityClass>& new_classes);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_SIM_SCENARIO_JOB_H_
