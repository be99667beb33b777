// summary.json (spec 6.3) and the headline figures, from what a simulated run recorded.
#ifndef LAHAR_SCHEDULER_SIM_SUMMARY_H_
#define LAHAR_SCHEDULER_SIM_SUMMARY_H_

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/duration.h"
#include "api/wait_reason.h"
#include "scheduler/sim/simulator.h"

namespace lahar {

struct JobRecord {
  std::string key;
  std::string queue;
  bool submitted = false, started = false, completed = false;
  Millis submit = 0, start = -1, end = -1;
  int32_t min = 1;
  int32_t max = 0;
  int64_t evictions = 0;
  double running_integral = 0;  // pod-ms
  // Goodput: the GPU time its pods held (bound until released), and its work done in GPU time
  // at min size (progress x the GPUs of its min): their ratio is the job's goodput.
  double gpu_ms = 0;
  double useful_gpu_ms = 0;
  // Throughput-scaled jobs (spec 3.2): throughput over time (seconds, rate; 0 below min) and
  // the lahar.sh/throughput annotation it reported.
  bool measured = false;
  std::vector<std::pair<double, double>> throughput_series;
  std::string reported;
  // Why it waits (spec 7): the reason the last session gave while it waited, and its waiting
  // time per kind (ms, from submission until it reached its min).
  std::shared_ptr<const WaitReason> reason;  // shared with other jobs told an equal one
  std::array<double, kWaitKindCount> wait_ms_by_kind{};
  // With a topology (spec 6.3): the tier of the smallest HyperNode holding all its pods when it
  // started, 0 on a single node; unset when no HyperNode held them all.
  std::optional<int32_t> tier;
};

struct ShareSample {
  double t, allocated, deserved;
};

struct RunRecord {
  std::string scenario;
  std::string config_label;
  Millis end = 0;  // simulated time the run covered
  std::vector<const JobRecord*> jobs;  // the simulation's own, valid while it lives
  std::map<std::string, std::vector<ShareSample>> queue_shares;  // queue -> over time
  std::vector<double> used_integral, allocatable_integral;        // per resource id
  int64_t sessions = 0, binds = 0, evictions = 0;
  int64_t skipped_runs = 0, tried_runs = 0;
  int64_t parked_sessions = 0, rerun_sessions = 0;
  std::vector<double> session_micros;                      // wall time per session
  std::map<std::string, std::vector<double>> action_micros;  // action -> wall time per session
  // The run ended because nothing could change any more while jobs still waited.
  bool stalled = false;
  // With a topology: per tier, whole free HyperNodes (no pod on any of their nodes) over time
  // (seconds, count at each change) and their time integral (count x ms).
  std::map<int32_t, std::vector<std::pair<double, int>>> free_domains;
  std::map<int32_t, double> free_domain_ms;
};

// Fills `figures` and returns summary.json's text.
std::string BuildSummaryJson(const RunRecord& record, SimFigures& figures);

// Nearest-rank percentile (0 for no values) and mean (0 for none).
double Percentile(std::vector<double> values, double p);
double Mean(const std::vector<double>& values);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_SIM_SUMMARY_H_
