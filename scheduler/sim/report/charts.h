// The four charts of a run. `x_max` is shared by every run of a comparison, so the same
// instant sits at the same place in every column. Internal to the report.
#ifndef LAHAR_SCHEDULER_SIM_REPORT_CHARTS_H_
#define LAHAR_SCHEDULER_SIM_REPORT_CHARTS_H_

#include "scheduler/sim/report/run.h"
#include "scheduler/sim/report/svg_chart.h"

namespace lahar::report_internal {

Chart UtilizationChart(const RunData& run, double x_max);
Chart RunningPodsChart(const RunData& run, double x_max);
// Throughput-scaled jobs' throughput over time (spec 3.2), the number of workers beside it in
// the legend; only for runs that have such jobs (HasThroughput).
Chart ThroughputChart(const RunData& run, double x_max);
bool HasThroughput(const RunData& run);
// Whole free HyperNodes per tier over time (spec 6.3), for runs with a topology.
Chart FreeDomainsChart(const RunData& run, double x_max);
bool HasFreeDomains(const RunData& run);
// With a mark wherever a charted queue's pods were evicted.
Chart QueueShareChart(const RunData& run, double x_max);
// x is a duration here, not the time of day: `x_max` comes from DistributionMax.
Chart DistributionChart(const RunData& run, double x_max);

// The x range that holds every JCT and wait of `run`.
double DistributionMax(const RunData& run);

}  // namespace lahar::report_internal

#endif  // LAHAR_SCHEDULER_SIM_REPORT_CHARTS_H_
