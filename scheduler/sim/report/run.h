// One simulated configuration read back from its events.jsonl and summary.json: what every
// chart and table of the report is drawn from. Internal to the report.
#ifndef LAHAR_SCHEDULER_SIM_REPORT_RUN_H_
#define LAHAR_SCHEDULER_SIM_REPORT_RUN_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "scheduler/sim/report/events.h"
#include "scheduler/sim/report/report.h"
#include "scheduler/sim/report/summary.h"

namespace lahar::report_internal {

struct RunData {
  std::string label;
  Summary summary;
  EventAnalysis events;
  double horizon = 0;  // end of the time axis: the last event or the makespan, whichever later
};

// `index` (0-based) names a run without a label: "run 1". Errors start with the label
// ("elastic.conf: events.jsonl line 3: ...").
absl::StatusOr<RunData> ReadRun(const ReportRun& run, size_t index);

}  // namespace lahar::report_internal

#endif  // LAHAR_SCHEDULER_SIM_REPORT_RUN_H_
