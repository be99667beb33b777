// Inputs of lahar-sim: a scenario file (spec 6.1) or a snapshot of a live cluster (spec 6.2),
// both turned into the same SimInput of Kubernetes objects plus the simulator's job model.
#ifndef LAHAR_SCHEDULER_SIM_SCENARIO_H_
#define LAHAR_SCHEDULER_SIM_SCENARIO_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "api/duration.h"
#include "api/objects.h"
#include "api/throughput.h"
#include "yaml-cpp/yaml.h"

namespace lahar {

// How a job's speed grows with its running pod count, relative to running at min.
struct Scaling {
  enum class Kind { kLinear, kAmdahl, kThroughput } kind = Kind::kLinear;
  double serial_fraction = 0;  // Amdahl's s: speedup(n) = 1 / (s + (1 - s) / n)
  // kThroughput: the job's throughput by running pods, sorted by size; piecewise linear between
  // points, from the origin to the first, flat past the last. The job reports what it achieves
  // (spec 3.2).
  std::vector<ThroughputPoint> throughput;
  // Work done per millisecond when `running` pods run, in "milliseconds at min size".
  double Rate(int running, int min) const;
  // kThroughput: the throughput with `running` pods.
  double Throughput(int running) const;
};

struct SimJob {
  PodGroup group;            // PodGroup <ns>/<name> as Volcano's job controller would create it
  std::vector<Pod> pods;     // one per replica, in task order
  std::vector<std::string> pod_tasks;  // the task (role) of each pod
  Millis submit = 0;
  std::optional<Millis> duration;  // run time at min size; unset: per-pod durations or forever
  Scaling scaling;
  Millis restart_cost = 0;
  Millis termination_grace = 0;
  // tierRate (spec 6.1): rate factor by the tier of the smallest HyperNode holding all its
  // running pods, for tiers of 2 and above; empty: topology does not slow it.
  std::map<int32_t, double> tier_rate;
  // Snapshot pods already bound when the simulation starts.
  std::vector<std::string> initially_bound;  // pod names
};

// A job of the input as the simulation needs it before the job arrives: when it is submitted,
// and what summary.json says of a job that never was. Its PodGroup and pods are made when it is
// submitted (SimInput::MakeJob).
struct SimJobEntry {
  std::string key;  // namespace/name
  std::string queue;
  Millis submit = 0;
  int32_t min = 0;
  bool measured = false;            // throughput-scaled (spec 3.2)
  bool network_topology = false;    // has a networkTopology constraint
};

// Makes input jobs on demand (see SimInput::jobs).
class SimJobSource {
 public:
  virtual ~SimJobSource() = default;
  virtual absl::StatusOr<SimJob> Make(size_t index) const = 0;
};

struct SimEvent {
  Millis at = 0;
  enum class Kind { kScale, kCordon, kUncordon, kRemoveNode, kAddNode, kUngate } kind;
  std::string target;  // job name (ns/name) or node name
  std::string gate;    // ungate: the one gate removed; empty: all of them
  std::optional<int32_t> min_available;
  std::vector<std::pair<std::string, int32_t>> replicas;  // task -> new replica count
  std::vector<Node> nodes;                                // addNode
  int line = 0;
};

struct SimInput {
  std::string name;
  bool from_snapshot = false;
  Millis schedule_period = 1000;
  std::optional<YAML::Node> scheduler;  // inline configuration, parsed by the caller
  std::vector<Node> nodes;
  std::vector<Queue> queues;
  std::vector<PriorityClass> priority_classes;
  std::vector<PodDisruptionBudget> disruption_budgets;  // snapshot files only
  std::vector<HyperNode> hypernodes;  // the network topology (spec 3.3)
  // Sorted by submit time, then as written. A scenario's jobs are read and checked when the file
  // loads, and read again one at a time when the simulation submits them: until then a job costs
  // its entry, not its PodGroup and pods (the 82,000 jobs of the Philly trace took 180 MB so).
  std::vector<SimJobEntry> jobs;
  std::shared_ptr<const SimJobSource> job_source;
  // The job jobs[i] stands for.
  absl::StatusOr<SimJob> MakeJob(size_t i) const { return job_source->Make(i); }
  std::vector<Pod> foreign_pods;  // snapshot pods of other schedulers
  std::vector<SimEvent> events;   // sorted by time (stable)
};

// The entry of a job made whole (SimJobEntry), and a source handing out copies of such jobs
// (a snapshot's, which are made when it loads).
SimJobEntry EntryOf(std::string key, const SimJob& job);
std::shared_ptr<const SimJobSource> MadeJobsSource(std::vector<SimJob> jobs);

// Reads a scenario or snapshot from text; `source` names the file in error messages.
// Scheduler names whose pods a snapshot's simulation schedules: lahar and volcano.
absl::StatusOr<SimInput> LoadSimInput(std::string_view text, std::string_view source);
absl::StatusOr<SimInput> LoadSimInputFile(const std::string& path);

// Reads a whole file; NotFound / PermissionDenied name the path.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_SIM_SCENARIO_H_
