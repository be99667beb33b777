// The simulation behind RunSimulation (simulator.h): internal to scheduler/sim. The event loop
// and sessions are in simulator.cc, what changes the simulated cluster (jobs, pods, nodes,
// scenario events) and the events.jsonl lines it writes in simulation_cluster.cc.
#ifndef LAHAR_SCHEDULER_SIM_SIMULATION_H_
#define LAHAR_SCHEDULER_SIM_SIMULATION_H_

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "api/json_writer.h"
#include "cache/cluster_cache.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/framework/wait_memo.h"
#include "scheduler/sim/cycle_runner.h"
#include "scheduler/sim/simulator.h"
#include "scheduler/sim/summary.h"

namespace lahar::sim_internal {

inline constexpr Millis kInfinity = std::numeric_limits<Millis>::max();

inline double Seconds(Millis ms) { return static_cast<double>(ms) / 1000.0; }

// What summary.json reports of a job (JobRecord: key, queue, times, min, evictions, running
// integral; `max` is filled in from `replicas` when the run is recorded), and the rest of its
// simulated state.
struct JobState : JobRecord {
  // Made when the job is submitted (SimInput::MakeJob); let go when it completes, so that a
  // trace's finished jobs keep their record, not their pods.
  std::unique_ptr<const SimJob> spec;
  int64_t min_gpus = 0;  // GPUs its first min pods ask (goodput's useful GPU time), set when it completes
  std::map<std::string, int32_t> replicas;  // task -> current replica count
  std::map<std::string, const Pod*> templates;  // task -> first pod of the task in the spec; none once it completes
  int32_t running = 0;   // pods bound and not released
  int32_t live_pods = 0;  // pods that exist (not completed)
  double progress = 0;    // ms of work at min size
  Millis progress_at = 0;
  Millis last_restart = -1;
  uint64_t completion_version = 0;
  Millis running_since = 0;
  std::set<std::string> pods;   // keys of the job's existing pods
  // Scheduling gates taken off by ungate events: pods the job creates later come without them.
  std::set<std::string, std::less<>> removed_gates;
  bool all_gates_removed = false;
  int64_t gpus_held = 0;  // GPUs of its pods bound or being released
  Millis gpus_since = 0;
  uint64_t size_version = 0;  // bumped when its running count changes (throughput reports)
  std::vector<ThroughputPoint> reported_points;
  // tierRate (spec 6.1): its speed while its running pods span the domains they do.
  double topology_factor = 1;
  bool waiting = false;     // a session gave it a reason (JobRecord::reason) since it last ran
  std::string key_json;     // its key as a JSON string, made for its first waiting event
  Millis waiting_since = 0;  // since when that reason holds
};

struct PodState {
  size_t job = 0;
  std::string node;
  Resources requests;
  bool bound = false;
  bool releasing = false;
  Millis duration = -1;  // snapshot pods: lifetime from bind; -1 forever
  uint64_t version = 0;
  int generation = 0;
};

enum class TimelineKind { kSubmit, kScenarioEvent, kRelease, kJobComplete, kPodComplete, kThroughputReport };

struct TimelineEntry {
  Millis time;
  uint64_t seq;
  TimelineKind kind;
  size_t index;       // job, scenario event
  std::string pod;    // pod key (release, pod completion)
  uint64_t version;
  bool operator>(const TimelineEntry& o) const {
    return time != o.time ? time > o.time : seq > o.seq;
  }
};

class Simulation {
 public:
  Simulation(const SimInput& input, const SchedulerConfig& config, const Registry& registry,
             const SimOptions& options)
      : input_(input), config_(config), registry_(registry), options_(options),
        cache_(CacheOptions{{"lahar", "volcano"}, "default"}), wait_memo_(options.skip_unchanged),
        cycles_(options.class_reruns) {
    // Sessions leave out the waiting jobs they refuse alike (ClusterCache::ParkJobs), unless a
    // caller reads each session's snapshot, which must then hold every job.
    wait_memo_.set_parks_jobs(!options_.on_session);
  }

  absl::StatusOr<SimRun> Run();

 private:
  void Push(Millis time, TimelineKind kind, size_t index, std::string pod = "", uint64_t version = 0) {
    timeline_.push({time, next_seq_++, kind, index, std::move(pod), version});
  }
  void AdvanceClock(Millis t);
  // A completion predicted before the job's speed (or the pod) changed is superseded.
  bool IsStale(const TimelineEntry& e) const;
  absl::Status Process(const TimelineEntry& e);
  absl::Status RunSession();

  absl::Status Submit(size_t job);
  static int64_t MinGpus(const JobState& job);  // of its spec
  void ApplyScenarioEvent(const SimEvent& event);
  void AddNode(const Node& node);
  void RemoveNode(const std::string& name);
  void BindPod(const std::string& pod_key, const std::string& node);
  void EvictPod(const std::string& pod_key, std::string_view reason, bool by_scheduler);
  void ReleasePod(const std::string& pod_key);
  void CompleteJob(size_t job);
  void CompletePod(const std::string& pod_key);
  void DeletePod(const std::string& pod_key, bool emit_complete);
  void CreatePod(size_t job, const Pod& pod, Millis duration);
  // Drops from `pod` the gates the job's ungate events removed; true when it had any of them.
  static bool RemoveGates(const JobState& job, Pod& pod);

  // Brings a job's progress and running integral up to now_, before its running count changes.
  void SettleJob(JobState& job);
  // Work per millisecond at its running count and placement (scaling x tierRate factor).
  double JobRate(const JobState& job) const;
  // The tier of the smallest HyperNode holding every running pod of the job (0: one node), or
  // nullopt when none holds them all or there is no topology.
  std::optional<int32_t> RunningTier(const JobState& job);
  // Recomputes the job's predicted completion after a change.
  void Reschedule(size_t job_index);
  void RunningChanged(size_t job_index, int delta);
  // GPU time held by the job's pods, for goodput: brought up to now_, then changed by `delta`.
  void HoldGpus(JobState& job, int64_t delta);
  // A throughput-scaled job adds the point for its current size to its annotation (spec 6.1).
  void ReportThroughput(size_t job_index);
  void RecordThroughput(JobState& job);
  // A session gave the job `reason`: a `waiting` event when it is new or changed (spec 7).
  void NoteWaiting(JobState& job, std::shared_ptr<const WaitReason> reason);
  // Adds the time since the job's reason last changed to its kind; the job stops waiting when
  // `stop` (it reached its min, or the run ended).
  void SettleWait(JobState& job, bool stop);
  Millis CooldownOf(const std::string& job_key) const;
  Millis NextCooldownExpiry();
  bool AllDone() const;

  // Event output.
  JsonWriter& BeginEvent(std::string_view type);
  void EndEvent();
  // bind / evict / pod-complete: the pod, its job and node, the reason (evict only) and its
  // requests in canonical units.
  void PodEvent(std::string_view type, std::string_view pod, const JobState& job, const PodState& state,
                std::string_view reason = {});
  // What the run recorded, for summary.json (summary.h); the run is over, so it is moved out.
  RunRecord TakeRecord();

  const SimInput& input_;
  const SchedulerConfig& config_;
  const Registry& registry_;
  const SimOptions& options_;
  ClusterCache cache_;
  WaitMemo wait_memo_;  // carried from session to session
  CycleRunner cycles_;  // the sessions' cycles, their spent snapshots and SimFigures' counts
  // The cache's topology (null without HyperNodes), with topology_node_ids_ refreshed whenever
  // the cache rebuilt it.
  const Topology* CurrentTopology();
  // The cache's topology and its node ids by name, as CurrentTopology last saw them.
  std::shared_ptr<const Topology> topology_;
  std::map<std::string, NodeId, std::less<>> topology_node_ids_;
  // Whole free HyperNodes per tier, as last counted, and since when (RunRecord::free_domains).
  std::map<int32_t, int> free_domains_now_;
  Millis free_domains_since_ = 0;
  std::map<int32_t, std::vector<std::pair<double, int>>> free_domains_;
  std::map<int32_t, double> free_domain_ms_;
  // Adds the counts up to now_ to the integral, then counts anew (at every session) when a pod
  // was bound or let go, or the topology rebuilt, since the last count.
  void CountFreeDomains();
  uint64_t occupancy_version_ = 0;  // bumped when a pod is bound or leaves a node, or the topology is rebuilt
  uint64_t counted_occupancy_ = UINT64_MAX;

  Millis now_ = 0;
  std::priority_queue<TimelineEntry, std::vector<TimelineEntry>, std::greater<>> timeline_;
  uint64_t next_seq_ = 0;
  std::vector<JobState> jobs_;
  absl::flat_hash_map<std::string, size_t> job_index_;  // looked up, never walked
  std::map<std::string, PodState, std::less<>> pods_;
  std::map<std::string, Resources, std::less<>> node_allocatable_;
  std::map<std::string, Millis, std::less<>> cooldown_ends_;  // job -> end of its cooldown
  int jobs_done_ = 0;
  bool changed_since_session_ = true;
  bool stalled_ = false;  // see RunRecord::stalled
  std::vector<CycleResult::QueueState> last_queues_;  // the last session's, kept for explain_job only
  // explain_job's explanation at the end of the run, or nullopt when there is no such job.
  std::optional<JobExplanation> ExplainJobAtEnd();

  // Figures.
  Resources used_, allocatable_;
  std::vector<double> used_integral_, allocatable_integral_;
  Millis integrated_until_ = 0;
  int64_t sessions_ = 0, binds_ = 0, evictions_ = 0;
  std::vector<double> session_micros_;
  std::map<std::string, std::vector<double>> action_micros_;  // action -> per session
  std::map<std::string, std::vector<ShareSample>> queue_shares_;
  Millis elastic_cooldown_ = -1;  // -1: no elastic plugin configured

  rapidjson::StringBuffer line_;
  JsonWriter writer_{line_};
  std::string events_;  // not yet written to options_.events_out
  // Waiting events are most of a trace's events (millions): their lines are put together from
  // pieces made once each, the start at the current time, the job's key (JobState::key_json)
  // and the fields of the last reason told, which many jobs in turn share.
  struct WaitingLine {
    Millis at = -1;
    std::string head;  // {"t":…,"type":"waiting","job":
    std::shared_ptr<const WaitReason> reason;
    std::string tail;  // ,"kind":…,"reason":…}
  };
  WaitingLine waiting_line_;
  // Whether events are written or kept at all (else a line need not be put together).
  bool EventsKept() const { return options_.events_out != nullptr || options_.keep_events; }
  // Appends a line to the events (EndEvent's, or one put together from pieces).
  void AppendEventLine(std::initializer_list<std::string_view> pieces);
  // Writes events_ to options_.events_out, when there is one.
  void FlushEvents();
};

}  // namespace lahar::sim_internal

#endif  // LAHAR_SCHEDULER_SIM_SIMULATION_H_
