#include "scheduler/sim/report/run.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "api/status_macros.h"
#include "api/strings.h"

namespace lahar::report_internal {
namespace {

// A job whose submit event is not in the file (a snapshot's running pods) still has its queue
// in summary.json, which the evictions need.
void FillMissingQueues(const Summary& summary, EventAnalysis* events) {
  absl::flat_hash_map<std::string, const std::string*> queue_of;
  for (const JobSummary& row : summary.job_rows) queue_of.try_emplace(row.job, &row.queue);
  for (JobTrack& job : events->jobs) {
    if (!job.queue.empty()) continue;
    if (auto it = queue_of.find(job.name); it != queue_of.end()) job.queue = *it->second;
  }
}

absl::Status ReadFiles(const ReportRun& run, RunData* out) {
  ASSIGN_OR_RETURN(out->summary, ReadSummary(run.summary_json));
  const double run_end = out->summary.makespan.value_or(0);
  if (run.events_as_written != nullptr) {
    ASSIGN_OR_RETURN(out->events, run.events_as_written->Finish(run_end));
  } else {
    ASSIGN_OR_RETURN(out->events, run.events_path.empty() ? ReadEvents(run.events_jsonl, run_end)
                                                          : ReadEventsFile(run.events_path, run_end));
  }
  FillMissingQueues(out->summary, &out->events);
  out->horizon = out->events.end;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RunData> ReadRun(const ReportRun& run, size_t index) {
  RunData out;
  out.label = run.label.empty() ? StrCat("run ", index + 1) : run.label;
  if (absl::Status status = ReadFiles(run, &out); !status.ok()) {
    return absl::Status(status.code(), StrCat(out.label, ": ", status.message()));
  }
  return out;
}

}  // namespace lahar::report_internal
