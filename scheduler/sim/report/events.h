// events.jsonl read back into what the report draws: utilization per resource, running pods
// per job, and the evictions. Internal to the report.
#ifndef LAHAR_SCHEDULER_SIM_REPORT_EVENTS_H_
#define LAHAR_SCHEDULER_SIM_REPORT_EVENTS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/sim/report/series.h"

namespace lahar::report_internal {

struct ResourceTrack {
  std::string name;
  double allocatable = 0;
  double used = 0;
  double last_t = 0;
  // Integrals over time; their ratio is the capacity-weighted mean utilization, which stays
  // right when nodes join or leave (a plain mean of the fraction would not).
  double used_integral = 0;
  double allocatable_integral = 0;
  bool ever_allocatable = false;
  bool ever_requested = false;
  std::vector<Point> fraction;  // used / allocatable, a step series
};

struct JobTrack {
  std::string name;
  std::string queue;  // from its submit event; empty when the file has none
  int running = 0;
  int peak = 0;
  double last_t = 0;
  double pod_seconds = 0;
  std::vector<Point> running_series;
};

// One evict event.
struct Eviction {
  double t;
  int job;             // index into EventAnalysis::jobs
  std::string pod;
  std::string reason;  // as written, e.g. "reclaimed-for ns/job"; empty when there is none
};

struct EventAnalysis {
  int64_t events = 0;
  double last_t = 0;
  double end = 0;                        // where every series is closed
  std::vector<ResourceTrack> resources;  // indexed by resource id
  std::vector<JobTrack> jobs;            // indexed by job id, in order of first appearance
  std::vector<Eviction> evictions;       // in time order
};

// events.jsonl taken as lahar-sim writes it, in pieces of any size, so that the run's report
// is drawn without reading the file back (ReportRun::events_as_written). The lines are the
// simulator's own: those of types the report draws nothing from (waiting, session: most of a
// long run's) are taken by their time alone, without parsing the rest.
class EventsInPieces {
 public:
  EventsInPieces();
  ~EventsInPieces();
  absl::Status Write(std::string_view bytes);
  // Closes every series as ReadEvents does (a last line without a newline is read first).
  absl::StatusOr<EventAnalysis> Finish(double run_end);

 private:
  std::unique_ptr<class EventReader> reader_;
  std::string partial_;  // a line begun in an earlier piece
  int64_t line_number_ = 0;
};

// Reads a whole events.jsonl and closes every series at the later of its last event and
// `run_end` (the makespan from summary.json). Errors name the 1-based line
// ("events.jsonl line 3: ...").
absl::StatusOr<EventAnalysis> ReadEvents(std::string_view events_jsonl, double run_end);
// The same, from the file at `path`, one line at a time.
absl::StatusOr<EventAnalysis> ReadEventsFile(const std::string& path, double run_end);

}  // namespace lahar::report_internal

#endif  // LAHAR_SCHEDULER_SIM_REPORT_EVENTS_H_
