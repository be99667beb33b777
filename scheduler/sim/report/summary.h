// summary.json read back into the figures the report prints. Internal to the report.
#ifndef LAHAR_SCHEDULER_SIM_REPORT_SUMMARY_H_
#define LAHAR_SCHEDULER_SIM_REPORT_SUMMARY_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/sim/report/series.h"

namespace lahar::report_internal {

// Every figure is optional: an absent or null field is "not applicable", not an error.
struct Distribution {
  std::optional<double> mean, p50, p95;
};

struct JobSummary {
  std::string job, queue;
  std::optional<double> submit, start, end, jct, wait, min, max, evictions, avg_running;
  std::optional<double> gpu_hours, goodput;
  std::vector<Point> throughput;  // throughput-scaled jobs (spec 3.2): over time
};

struct QueueSummary {
  std::string queue;
  std::optional<double> average_wait;
  std::vector<std::pair<std::string, double>> wait_by_kind;  // seconds its jobs waited, per reason kind
  std::vector<Point> allocated, deserved;
};

struct Summary {
  std::string scenario, config;
  std::optional<double> makespan, jobs, completed_jobs, evictions, sessions, session_p50,
      session_p99, goodput;
  Distribution jct, wait;
  std::vector<std::pair<std::string, double>> utilization;  // in file order
  // With a topology: whole free HyperNodes over time, per tier (its number as written).
  std::vector<std::pair<std::string, std::vector<Point>>> free_domains;
  std::vector<JobSummary> job_rows;
  std::vector<QueueSummary> queues;
};

// Errors start with "summary.json: " and name the field.
absl::StatusOr<Summary> ReadSummary(std::string_view text);

}  // namespace lahar::report_internal

#endif  // LAHAR_SCHEDULER_SIM_REPORT_SUMMARY_H_
