// The summary table lahar-sim prints on stdout: one column per configuration.
#ifndef LAHAR_SCHEDULER_SIM_SUMMARY_TABLE_H_
#define LAHAR_SCHEDULER_SIM_SUMMARY_TABLE_H_

#include <string>
#include <vector>

#include "scheduler/sim/simulator.h"

namespace lahar {

std::string FormatSummaryTable(std::string_view scenario, const std::vector<SimRun>& runs);
// "2h03m", "45.2s", "3d04h": short human durations for tables.
std::string HumanSeconds(double seconds);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_SIM_SUMMARY_TABLE_H_
