// lahar-sim's engine: runs the scheduler's real actions and plugins against a simulated
// cluster in simulated time and records what happened.
//
// Time advances from event to event (arrivals, completions, releases, scenario events) and
// sessions run every schedule period. A session that decides nothing, on a cluster that has not
// changed since, would decide nothing again until the next event or cooldown expiry, so those
// sessions are skipped: the schedule is the same as running every one of them.
#ifndef LAHAR_SCHEDULER_SIM_SIMULATOR_H_
#define LAHAR_SCHEDULER_SIM_SIMULATOR_H_

#include <functional>
#include <ostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/framework/config.h"
#include "scheduler/framework/explain.h"
#include "scheduler/framework/registry.h"
#include "scheduler/sim/scenario.h"

namespace lahar {

// Where a run is, for a progress line.
struct SimProgress {
  Millis now = 0;          // simulated time reached
  Millis until = -1;       // SimOptions::until
  int jobs_done = 0;
  int jobs = 0;
  double wall_seconds = 0;  // since the run began
};

struct SimOptions {
  Millis until = -1;  // stop at this simulated time; -1: when nothing more can happen
  // Sessions skip work that cannot turn out differently from the last time (WaitMemo). Off,
  // every session tries everything: the events are the same.
  bool skip_unchanged = true;
  // A session stopped for parked classes (ClusterCache::ParkJobs) runs again with only those
  // classes back at most this many times, then over every job. Any count gives the same events.
  int class_reruns = 3;
  std::string config_label = "default";
  // Called about once a second of wall time while the run goes on (never in tests' short runs);
  // what it shows never feeds back into the simulation.
  std::function<void(const SimProgress&)> progress;
  // `lahar-sim explain`: the job (namespace/name) to explain at the end of the run.
  std::string explain_job;
  // Called after every session with the cluster as the session left it and what it decided
  // (kubectl lahar reads a snapshot file through it); never feeds back into the simulation.
  std::function<void(const ClusterSnapshot&, const CycleResult&, Millis)> on_session;
  // Where events.jsonl goes as the run makes it (`lahar-sim run --out`), so a long run's events
  // never sit in memory whole; SimRun::events_jsonl is then empty. Without it, keep_events says
  // whether SimRun::events_jsonl holds them (false: they are dropped).
  std::ostream* events_out = nullptr;
  bool keep_events = true;
};

// Headline figures, also in summary.json.
struct SimFigures {
  int jobs = 0;
  int completed_jobs = 0;
  int started_jobs = 0;
  double makespan = 0;  // seconds
  double jct_mean = 0, jct_p50 = 0, jct_p95 = 0;
  double wait_mean = 0, wait_p50 = 0, wait_p95 = 0;
  std::vector<std::pair<std::string, double>> utilization;  // resource -> fraction, by name
  int64_t evictions = 0;
  int64_t sessions = 0;
  // Evicting-action runs skipped because nothing they read changed since they found no plan
  // (WaitMemo), and runs tried in full with a fingerprint.
  int64_t skipped_runs = 0, tried_runs = 0;
  // Sessions that judged parked jobs by their class (ClusterCache::ParkJobs), and those of them
  // that ran again with parked jobs back, as one would have been admitted or placed.
  int64_t parked_sessions = 0, rerun_sessions = 0;
  int64_t binds = 0;
  double session_p50_micros = 0, session_p99_micros = 0;
  double end_time = 0;  // seconds of simulated time covered
  // Work done in GPU time at each job's min size, per GPU-hour its pods held (restart losses
  // excluded): 1 for jobs that scale linearly and never restart. 0 without GPU jobs.
  double gpu_hours = 0, goodput = 0;
  // Submitted jobs that never reached their min, per kind of their last reason (spec 7;
  // "unexplained" for a job no session gave one), and the reason most of them share.
  int never_started = 0;
  std::map<std::string, int> never_started_by_kind;
  std::string most_common_reason;
  // The run ended because nothing could change any more while jobs still waited.
  bool stalled = false;
  // With a topology: the time-averaged number of whole free HyperNodes, per tier.
  std::vector<std::pair<int32_t, double>> free_domains;
  double Utilization(std::string_view resource) const;
};

struct SimRun {
  std::string label;
  std::optional<JobExplanation> explanation;  // of SimOptions::explain_job, when it exists
  std::string events_jsonl;
  std::string summary_json;
  SimFigures figures;
};

absl::StatusOr<SimRun> RunSimulation(const SimInput& input, const SchedulerConfig& config,
                                     const Registry& registry, const SimOptions& options);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_SIM_SIMULATOR_H_
