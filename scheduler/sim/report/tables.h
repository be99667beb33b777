// The report's tables of figures from summary.json. Each returns HTML. Internal to the report.
#ifndef LAHAR_SCHEDULER_SIM_REPORT_TABLES_H_
#define LAHAR_SCHEDULER_SIM_REPORT_TABLES_H_

#include <string>
#include <vector>

#include "scheduler/sim/report/run.h"

namespace lahar::report_internal {

// The cluster figures, a column per run; with several runs the best value of a row is marked.
std::string FiguresTable(const std::vector<RunData>& runs);
// Per queue: average wait and the final allocated and deserved shares; empty without queues.
std::string QueueTable(const RunData& run);
// Per job, the first few hundred by submit time.
std::string JobTable(const RunData& run);

}  // namespace lahar::report_internal

#endif  // LAHAR_SCHEDULER_SIM_REPORT_TABLES_H_
