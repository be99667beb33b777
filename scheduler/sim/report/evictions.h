// Evictions in the report: marks on the queue share chart where a queue's pods were evicted,
// and the "Evictions" table. Both group evictions into time buckets, so ten thousand of them
// still make a short page. Internal to the report.
#ifndef LAHAR_SCHEDULER_SIM_REPORT_EVICTIONS_H_
#define LAHAR_SCHEDULER_SIM_REPORT_EVICTIONS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/sim/report/run.h"
#include "scheduler/sim/report/svg_chart.h"

namespace lahar::report_internal {

// A queue's allocated-share line on the queue share chart.
struct QueueLine {
  std::string_view queue;
  size_t series;  // index into Chart::series
};

// Marks the evictions of each line's queue on that line: one mark per kind of eviction
// (reclaim, preempt, elastic, other: each its own shape) and time bucket, in the line's colour,
// with the count and reason in its tooltip; and a legend entry per kind that occurred.
// Evictions of queues without a line are left to the table.
void MarkEvictions(const RunData& run, const std::vector<QueueLine>& lines, Chart* chart);

// The evictions of a run as HTML: counts per kind and a table of (time bucket, victim job,
// reason) groups, at most a few hundred rows; or a line saying there were none.
std::string EvictionSection(const RunData& run);

}  // namespace lahar::report_internal

#endif  // LAHAR_SCHEDULER_SIM_REPORT_EVICTIONS_H_
