#include "scheduler/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <set>

#include "api/status_macros.h"
#include "api/strings.h"
#include "cache/cluster_cache.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/framework/cycle.h"
#include "scheduler/sim/summary.h"

namespace lahar {

double SimFigures::Utilization(std::string_view resource) const {
  for (const auto& [name, value] : utilization) {
    if (name == resource) return value;
  }
  return 0;
}

namespace {

constexpr Millis kInfinity = std::numeric_limits<Millis>::max();

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void WriteString(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// Resources in canonical units, keys sorted by name so the output is stable.
void WriteResources(JsonWriter& w, const Resources& r) {
  std::vector<std::pair<std::string, int64_t>> entries;
  for (const auto& [id, amount] : r.NonZero()) entries.emplace_back(ResourceName(id), amount);
  std::sort(entries.begin(), entries.end());
  w.StartObject();
  for (const auto& [name, amount] : entries) {
    WriteString(w, name);
    w.Int64(amount);
  }
  w.EndObject();
}

double Seconds(Millis ms) { return static_cast<double>(ms) / 1000.0; }

struct JobState {
  const SimJob* spec = nullptr;
  std::string key;
  std::string queue;
  bool submitted = false;
  bool started = false;
  bool completed = false;
  Millis submit = 0, start = -1, end = -1;
  int32_t min = 1;
  std::map<std::string, int32_t> replicas;  // task -> current replica count
  std::map<std::string, const Pod*> templates;  // task -> first pod of the task in the spec
  int32_t running = 0;   // pods bound and not released
  int32_t live_pods = 0;  // pods that exist (not completed)
  double progress = 0;    // ms of work at min size
  Millis progress_at = 0;
  Millis last_restart = -1;
  uint64_t completion_version = 0;
  int64_t evictions = 0;
  double running_integral = 0;  // pod-ms
  Millis running_since = 0;
  std::set<std::string> pods;   // keys of the job's existing pods
  // Scheduling gates taken off by ungate events: pods the job creates later come without them.
  std::set<std::string, std::less<>> removed_gates;
  bool all_gates_removed = false;
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

enum class TimelineKind { kSubmit, kScenarioEvent, kRelease, kJobComplete, kPodComplete };

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
        cache_(CacheOptions{{"lahar", "volcano"}, "default"}) {}

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

  void Submit(size_t job);
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
  // Recomputes the job's predicted completion after a change.
  void Reschedule(size_t job_index);
  void RunningChanged(size_t job_index, int delta);
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
  // What the run recorded, for summary.json (summary.h).
  RunRecord Record() const;

  const SimInput& input_;
  const SchedulerConfig& config_;
  const Registry& registry_;
  const SimOptions& options_;
  ClusterCache cache_;

  Millis now_ = 0;
  std::priority_queue<TimelineEntry, std::vector<TimelineEntry>, std::greater<>> timeline_;
  uint64_t next_seq_ = 0;
  std::vector<JobState> jobs_;
  std::map<std::string, size_t, std::less<>> job_index_;
  std::map<std::string, PodState, std::less<>> pods_;
  std::map<std::string, Resources, std::less<>> node_allocatable_;
  std::map<std::string, Millis, std::less<>> cooldown_ends_;  // job -> end of its cooldown
  int jobs_done_ = 0;
  bool changed_since_session_ = true;

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
  std::string events_;
};

JsonWriter& Simulation::BeginEvent(std::string_view type) {
  line_.Clear();
  writer_.Reset(line_);
  writer_.StartObject();
  writer_.Key("t");
  writer_.Double(Seconds(now_));
  writer_.Key("type");
  WriteString(writer_, type);
  return writer_;
}

void Simulation::EndEvent() {
  writer_.EndObject();
  events_.append(line_.GetString(), line_.GetSize());
  events_.push_back('\n');
}

void Simulation::PodEvent(std::string_view type, std::string_view pod, const JobState& job,
                          const PodState& state, std::string_view reason) {
  BeginEvent(type);
  writer_.Key("pod");
  WriteString(writer_, pod);
  writer_.Key("job");
  WriteString(writer_, job.key);
  writer_.Key("node");
  WriteString(writer_, state.node);
  if (!reason.empty()) {
    writer_.Key("reason");
    WriteString(writer_, reason);
  }
  writer_.Key("requests");
  WriteResources(writer_, state.requests);
  EndEvent();
}

void Simulation::AdvanceClock(Millis t) {
  if (t <= integrated_until_) {
    now_ = std::max(now_, t);
    return;
  }
  double dt = static_cast<double>(t - integrated_until_);
  size_t n = std::max(used_.size(), allocatable_.size());
  if (used_integral_.size() < n) {
    used_integral_.resize(n, 0);
    allocatable_integral_.resize(n, 0);
  }
  for (size_t i = 0; i < n; ++i) {
    auto id = static_cast<ResourceId>(i);
    used_integral_[i] += static_cast<double>(used_.Get(id)) * dt;
    allocatable_integral_[i] += static_cast<double>(allocatable_.Get(id)) * dt;
  }
  integrated_until_ = t;
  now_ = t;
}

void Simulation::SettleJob(JobState& job) {
  if (job.completed) return;
  Millis dt = now_ - job.progress_at;
  if (dt > 0 && job.spec->duration && job.running >= job.min && job.min > 0) {
    job.progress += job.spec->scaling.Rate(job.running, job.min) * static_cast<double>(dt);
  }
  job.progress_at = now_;
  if (job.started) job.running_integral += static_cast<double>(job.running) * static_cast<double>(now_ - job.running_since);
  job.running_since = now_;
}

void Simulation::Reschedule(size_t job_index) {
  JobState& job = jobs_[job_index];
  ++job.completion_version;
  if (job.completed || !job.spec->duration || job.running < job.min || job.min <= 0) return;
  double rate = job.spec->scaling.Rate(job.running, job.min);
  if (rate <= 0) return;
  double remaining = std::max(0.0, static_cast<double>(*job.spec->duration) - job.progress);
  Millis at = now_ + static_cast<Millis>(std::ceil(remaining / rate - 1e-9));
  Push(at, TimelineKind::kJobComplete, job_index, "", job.completion_version);
}

void Simulation::RunningChanged(size_t job_index, int delta) {
  JobState& job = jobs_[job_index];
  SettleJob(job);
  bool was_running = job.started && job.running >= job.min;
  job.running += delta;
  if (!job.started && job.running >= job.min && job.min > 0) {
    job.started = true;
    job.start = now_;
    job.running_since = now_;
    BeginEvent("job-start");
    writer_.Key("job");
    WriteString(writer_, job.key);
    EndEvent();
  } else if (was_running && job.spec->restart_cost > 0 && job.last_restart != now_) {
    // Changing the worker count reloads the last checkpoint: the work since is lost.
    job.progress = std::max(0.0, job.progress - static_cast<double>(job.spec->restart_cost));
    job.last_restart = now_;
  }
  Reschedule(job_index);
}

void Simulation::CreatePod(size_t job_index, const Pod& pod, Millis duration) {
  JobState& job = jobs_[job_index];
  std::string key = StrCat(pod.meta.namespace_, "/", pod.meta.name);
  PodState& state = pods_[key];
  int generation = state.generation + 1;
  state = PodState{};
  state.job = job_index;
  state.requests = pod.requests;
  state.duration = duration;
  state.generation = generation;
  job.pods.insert(key);
  Pod copy = pod;
  RemoveGates(job, copy);
  copy.meta.uid = StrCat(key, "#", generation);
  copy.node_name.clear();
  copy.phase = PodPhase::kPending;
  cache_.UpsertPod(std::move(copy));
  ++job.live_pods;
}

bool Simulation::RemoveGates(const JobState& job, Pod& pod) {
  const size_t before = pod.scheduling_gates.size();
  std::erase_if(pod.scheduling_gates,
                [&](const std::string& g) { return job.all_gates_removed || job.removed_gates.count(g) != 0; });
  return pod.scheduling_gates.size() != before;
}

Millis PodDuration(const Pod& pod) {
  auto it = pod.meta.annotations.find(kSimDurationAnnotation);
  if (it == pod.meta.annotations.end()) return -1;
  auto d = ParseDuration(it->second);
  return d.ok() ? *d : -1;
}

void Simulation::Submit(size_t job_index) {
  JobState& job = jobs_[job_index];
  const SimJob& spec = *job.spec;
  job.submitted = true;
  job.submit = now_;
  job.progress_at = now_;
  PodGroup group = spec.group;
  if (group.meta.uid.empty()) group.meta.uid = job.key;
  group.meta.creation_timestamp = now_ / 1000;
  if (!input_.from_snapshot) group.phase = PodGroupPhase::kPending;
  cache_.UpsertPodGroup(std::move(group));
  for (size_t i = 0; i < spec.pods.size(); ++i) {
    const Pod& pod = spec.pods[i];
    CreatePod(job_index, pod, PodDuration(pod));
    job.replicas[spec.pod_tasks[i]]++;
    job.templates.emplace(spec.pod_tasks[i], &pod);
  }
  BeginEvent("submit");
  writer_.Key("job");
  WriteString(writer_, job.key);
  writer_.Key("queue");
  WriteString(writer_, job.queue);
  writer_.Key("min");
  writer_.Int(job.min);
  writer_.Key("max");
  writer_.Int(job.live_pods);
  EndEvent();
  // Snapshot pods that were already running stay where they are.
  for (const std::string& name : spec.initially_bound) {
    std::string key = StrCat(spec.group.meta.namespace_, "/", name);
    for (const Pod& pod : spec.pods) {
      if (pod.meta.name == name) BindPod(key, pod.node_name);
    }
  }
}

void Simulation::AddNode(const Node& node) {
  cache_.UpsertNode(node);
  Resources alloc = node.allocatable;
  alloc.Set(kPods, 0);
  node_allocatable_[node.meta.name] = alloc;
  allocatable_ += alloc;
  BeginEvent("node");
  writer_.Key("node");
  WriteString(writer_, node.meta.name);
  writer_.Key("change");
  writer_.String("add");
  writer_.Key("allocatable");
  WriteResources(writer_, node.allocatable);
  EndEvent();
}

void Simulation::RemoveNode(const std::string& name) {
  auto it = node_allocatable_.find(name);
  if (it == node_allocatable_.end()) return;
  // Its pods are gone with it; their owners recreate them.
  std::vector<std::string> victims;
  for (const auto& [key, pod] : pods_) {
    if (pod.node == name) victims.push_back(key);
  }
  for (const std::string& key : victims) {
    if (pods_[key].releasing) {
      ReleasePod(key);
    } else {
      EvictPod(key, StrCat("node-removed ", name), /*by_scheduler=*/false);
      ReleasePod(key);
    }
  }
  allocatable_ -= it->second;
  node_allocatable_.erase(it);
  cache_.DeleteNode(name);
  BeginEvent("node");
  writer_.Key("node");
  WriteString(writer_, name);
  writer_.Key("change");
  writer_.String("remove");
  writer_.Key("allocatable");
  WriteResources(writer_, Resources());
  EndEvent();
}

void Simulation::BindPod(const std::string& pod_key, const std::string& node) {
  PodState& state = pods_.at(pod_key);
  const Pod* current = cache_.FindPod(pod_key);
  Pod pod = *current;
  pod.node_name = node;
  pod.phase = PodPhase::kRunning;
  pod.start_time_ms = now_;
  cache_.UpsertPod(std::move(pod));
  state.bound = true;
  state.node = node;
  used_ += state.requests;
  ++binds_;
  PodEvent("bind", pod_key, jobs_[state.job], state);
  if (state.duration >= 0) Push(now_ + state.duration, TimelineKind::kPodComplete, 0, pod_key, ++state.version);
  RunningChanged(state.job, +1);
}

void Simulation::EvictPod(const std::string& pod_key, std::string_view reason, bool by_scheduler) {
  PodState& state = pods_.at(pod_key);
  if (!state.bound || state.releasing) return;
  JobState& job = jobs_[state.job];
  PodEvent("evict", pod_key, job, state, reason);
  ++job.evictions;
  ++evictions_;
  state.releasing = true;
  ++state.version;  // cancels its pending completion
  (void)cache_.MarkReleasing(pod_key);
  RunningChanged(state.job, -1);
  if (by_scheduler) Push(now_ + job.spec->termination_grace, TimelineKind::kRelease, 0, pod_key);
}

void Simulation::ReleasePod(const std::string& pod_key) {
  auto it = pods_.find(pod_key);
  if (it == pods_.end() || !it->second.releasing) return;
  PodState& state = it->second;
  used_ -= state.requests;
  size_t job_index = state.job;
  const Pod pod = *cache_.FindPod(pod_key);
  cache_.DeletePod(pod.meta.namespace_, pod.meta.name);
  --jobs_[job_index].live_pods;
  if (jobs_[job_index].completed) {
    jobs_[job_index].pods.erase(pod_key);
    pods_.erase(it);
    return;
  }
  // The owner (a Job or training operator) recreates the pod, pending, under the same name.
  CreatePod(job_index, pod, state.duration);
}

void Simulation::DeletePod(const std::string& pod_key, bool emit_complete) {
  auto it = pods_.find(pod_key);
  if (it == pods_.end()) return;
  PodState& state = it->second;
  JobState& job = jobs_[state.job];
  if (state.releasing) return;  // finishes its release first
  if (state.bound) {
    if (emit_complete) PodEvent("pod-complete", pod_key, job, state);
    used_ -= state.requests;
  }
  size_t slash = pod_key.find('/');
  cache_.DeletePod(pod_key.substr(0, slash), pod_key.substr(slash + 1));
  --job.live_pods;
  job.pods.erase(pod_key);
  bool was_bound = state.bound;
  size_t job_index = state.job;
  pods_.erase(it);
  if (was_bound && !jobs_[job_index].completed) RunningChanged(job_index, -1);
}

void Simulation::CompleteJob(size_t job_index) {
  JobState& job = jobs_[job_index];
  SettleJob(job);
  job.completed = true;
  job.end = now_;
  ++jobs_done_;
  std::vector<std::string> keys(job.pods.begin(), job.pods.end());
  for (const std::string& key : keys) DeletePod(key, /*emit_complete=*/true);
  BeginEvent("job-complete");
  writer_.Key("job");
  WriteString(writer_, job.key);
  EndEvent();
  size_t slash = job.key.find('/');
  cache_.DeletePodGroup(job.key.substr(0, slash), job.key.substr(slash + 1));
}

void Simulation::CompletePod(const std::string& pod_key) {
  auto it = pods_.find(pod_key);
  if (it == pods_.end()) return;
  size_t job_index = it->second.job;
  DeletePod(pod_key, /*emit_complete=*/true);
  JobState& job = jobs_[job_index];
  if (!job.completed && job.live_pods == 0) {
    if (!job.started) {
      job.started = true;
      job.start = now_;
    }
    CompleteJob(job_index);
  }
}

void Simulation::ApplyScenarioEvent(const SimEvent& event) {
  switch (event.kind) {
    case SimEvent::Kind::kCordon:
    case SimEvent::Kind::kUncordon: {
      const Node* existing = cache_.FindNode(event.target);
      if (existing == nullptr) return;
      Node node = *existing;
      node.unschedulable = event.kind == SimEvent::Kind::kCordon;
      cache_.UpsertNode(node);
      BeginEvent("node");
      writer_.Key("node");
      WriteString(writer_, event.target);
      writer_.Key("change");
      writer_.String(event.kind == SimEvent::Kind::kCordon ? "cordon" : "uncordon");
      writer_.Key("allocatable");
      WriteResources(writer_, node.allocatable);
      EndEvent();
      return;
    }
    case SimEvent::Kind::kRemoveNode:
      RemoveNode(event.target);
      return;
    case SimEvent::Kind::kAddNode:
      for (const Node& node : event.nodes) {
        if (node_allocatable_.count(node.meta.name) == 0) AddNode(node);
      }
      return;
    case SimEvent::Kind::kScale: {
      auto it = job_index_.find(event.target);
      if (it == job_index_.end()) return;
      size_t job_index = it->second;
      JobState& job = jobs_[job_index];
      if (!job.submitted || job.completed) return;
      const PodGroup* existing = cache_.FindPodGroup(job.key);
      if (existing == nullptr) return;
      for (const auto& [task, count] : event.replicas) {
        auto tmpl = job.templates.find(task);
        if (tmpl == job.templates.end()) continue;
        int32_t current = job.replicas[task];
        for (int32_t i = current; i < count; ++i) {
          Pod pod = *tmpl->second;
          pod.meta.name = StrCat(job.spec->group.meta.name, "-", task, "-", i);
          pod.meta.labels["volcano.sh/task-index"] = StrCat(i);
          CreatePod(job_index, pod, PodDuration(pod));
        }
        for (int32_t i = current - 1; i >= count; --i) {
          std::string key = StrCat(job.spec->group.meta.namespace_, "/", job.spec->group.meta.name, "-", task, "-", i);
          DeletePod(key, /*emit_complete=*/false);
        }
        job.replicas[task] = count;
      }
      PodGroup group = *existing;
      if (event.min_available) {
        SettleJob(job);
        group.min_member = *event.min_available;
        job.min = *event.min_available;
        // minResources: requests of the first min pods in task order.
        group.min_resources = Resources();
        int32_t counted = 0;
        for (const Pod& pod : job.spec->pods) {
          if (counted++ < job.min) group.min_resources += pod.requests;
        }
      }
      cache_.UpsertPodGroup(std::move(group));
      Reschedule(job_index);
      return;
    }
    case SimEvent::Kind::kUngate: {
      auto it = job_index_.find(event.target);
      if (it == job_index_.end()) return;
      JobState& job = jobs_[it->second];
      if (event.gate.empty()) {
        job.all_gates_removed = true;
      } else {
        job.removed_gates.insert(event.gate);
      }
      // The pods are updated, as the owner's PATCH would update them on a cluster.
      int ungated = 0;
      for (const std::string& key : job.pods) {
        const Pod* current = cache_.FindPod(key);
        if (current == nullptr) continue;
        Pod pod = *current;
        if (!RemoveGates(job, pod)) continue;
        cache_.UpsertPod(std::move(pod));
        ++ungated;
      }
      BeginEvent("ungate");
      writer_.Key("job");
      WriteString(writer_, job.key);
      if (!event.gate.empty()) {
        writer_.Key("gate");
        WriteString(writer_, event.gate);
      }
      writer_.Key("pods");
      writer_.Int(ungated);
      EndEvent();
      return;
    }
  }
}

bool Simulation::IsStale(const TimelineEntry& e) const {
  if (e.kind == TimelineKind::kJobComplete) {
    const JobState& job = jobs_[e.index];
    return job.completion_version != e.version || job.completed;
  }
  if (e.kind == TimelineKind::kPodComplete) {
    auto it = pods_.find(e.pod);
    return it == pods_.end() || it->second.version != e.version || !it->second.bound || it->second.releasing;
  }
  return false;
}

absl::Status Simulation::Process(const TimelineEntry& e) {
  switch (e.kind) {
    case TimelineKind::kSubmit:
      Submit(e.index);
      break;
    case TimelineKind::kScenarioEvent:
      ApplyScenarioEvent(input_.events[e.index]);
      break;
    case TimelineKind::kRelease:
      ReleasePod(e.pod);
      break;
    case TimelineKind::kJobComplete:
      CompleteJob(e.index);
      break;
    case TimelineKind::kPodComplete:
      CompletePod(e.pod);
      break;
  }
  changed_since_session_ = true;
  return absl::OkStatus();
}

absl::Status Simulation::RunSession() {
  ASSIGN_OR_RETURN(CycleResult result, RunSchedulingCycle(cache_.Snapshot(now_), config_, registry_));
  ++sessions_;
  session_micros_.push_back(static_cast<double>(result.duration_micros));
  for (const auto& [action, micros] : result.action_micros) action_micros_[action].push_back(static_cast<double>(micros));
  bool changed = false;
  for (const auto& u : result.job_updates) {
    const PodGroup* group = cache_.FindPodGroup(u.job);
    if (group != nullptr && group->phase != u.phase) {
      (void)cache_.SetPodGroupPhase(u.job, u.phase);
      changed = true;
    }
    if (u.scaled) {
      cache_.RecordScale(u.job, now_);
      cooldown_ends_[u.job] = now_ + CooldownOf(u.job);
      changed = true;
    }
  }
  for (const auto& b : result.binds) BindPod(b.pod, b.node);
  for (const auto& e : result.evicts) EvictPod(e.pod, e.reason, /*by_scheduler=*/true);
  if (!result.binds.empty() || !result.evicts.empty()) {
    changed = true;
    BeginEvent("session");
    writer_.Key("binds");
    writer_.Int64(static_cast<int64_t>(result.binds.size()));
    writer_.Key("evicts");
    writer_.Int64(static_cast<int64_t>(result.evicts.size()));
    EndEvent();
  }
  // Queue shares (dominant share of the cluster), sampled when they move.
  for (const auto& q : result.queues) {
    auto dominant = [&](const Resources& r) {
      double share = 0;
      for (const auto& [id, amount] : r.NonZero()) {
        int64_t total = allocatable_.Get(id);
        if (total > 0 && id != kPods) share = std::max(share, static_cast<double>(amount) / static_cast<double>(total));
      }
      return share;
    };
    double allocated = dominant(q.allocated);
    double deserved = q.deserved ? std::min(1.0, dominant(*q.deserved)) : 0;
    auto& series = queue_shares_[q.queue];
    if (series.empty() || series.back().allocated != allocated || series.back().deserved != deserved) {
      series.push_back({Seconds(now_), allocated, deserved});
    }
  }
  changed_since_session_ = changed;
  return absl::OkStatus();
}

Millis Simulation::CooldownOf(const std::string& job_key) const {
  const PodGroup* group = cache_.FindPodGroup(job_key);
  if (group != nullptr) {
    auto it = group->meta.annotations.find(kElasticCooldownAnnotation);
    if (it != group->meta.annotations.end()) {
      auto d = ParseDuration(it->second);
      if (d.ok()) return *d;
    }
  }
  return elastic_cooldown_;
}

Millis Simulation::NextCooldownExpiry() {
  if (elastic_cooldown_ < 0) return kInfinity;
  Millis next = kInfinity;
  for (auto it = cooldown_ends_.begin(); it != cooldown_ends_.end();) {
    if (it->second <= now_) {
      it = cooldown_ends_.erase(it);  // expired: no wake-up needed any more
    } else {
      next = std::min(next, it->second);
      ++it;
    }
  }
  return next;
}

bool Simulation::AllDone() const { return jobs_done_ == static_cast<int>(jobs_.size()); }

absl::StatusOr<SimRun> Simulation::Run() {
  for (const Tier& tier : config_.tiers) {
    for (const PluginOption& plugin : tier.plugins) {
      if (plugin.name == "elastic") {
        ASSIGN_OR_RETURN(elastic_cooldown_, plugin.arguments.GetDuration("elastic.cooldown", 60'000));
      }
    }
  }
  for (const Queue& q : input_.queues) cache_.UpsertQueue(q);
  for (const PriorityClass& pc : input_.priority_classes) cache_.UpsertPriorityClass(pc);
  for (const PodDisruptionBudget& pdb : input_.disruption_budgets) cache_.UpsertPodDisruptionBudget(pdb);
  for (const Node& node : input_.nodes) AddNode(node);
  for (const Pod& pod : input_.foreign_pods) {
    cache_.UpsertPod(pod);
    used_ += pod.requests;
  }
  jobs_.resize(input_.jobs.size());
  for (size_t i = 0; i < input_.jobs.size(); ++i) {
    const SimJob& spec = input_.jobs[i];
    JobState& job = jobs_[i];
    job.spec = &spec;
    job.key = StrCat(spec.group.meta.namespace_, "/", spec.group.meta.name);
    job.queue = spec.group.queue;
    job.min = spec.group.min_member;
    job_index_[job.key] = i;
    Push(spec.submit, TimelineKind::kSubmit, i);
  }
  for (size_t i = 0; i < input_.events.size(); ++i) Push(input_.events[i].at, TimelineKind::kScenarioEvent, i);

  const Millis period = input_.schedule_period;
  const Millis until = options_.until;
  Millis next_session = 0;
  const auto started = std::chrono::steady_clock::now();
  auto last_report = started;
  uint64_t steps = 0;
  while (true) {
    // The clock is read every 256 steps only: a step is often a microsecond.
    if (options_.progress && (++steps & 255) == 0) {
      const auto wall = std::chrono::steady_clock::now();
      if (wall - last_report >= std::chrono::seconds(1)) {
        last_report = wall;
        options_.progress({now_, until, jobs_done_, static_cast<int>(jobs_.size()),
                           std::chrono::duration<double>(wall - started).count()});
      }
    }
    while (!timeline_.empty() && IsStale(timeline_.top())) timeline_.pop();
    Millis next_event = timeline_.empty() ? kInfinity : timeline_.top().time;
    if (next_event <= next_session) {
      if (until >= 0 && next_event > until) break;
      TimelineEntry entry = timeline_.top();
      timeline_.pop();
      AdvanceClock(entry.time);
      RETURN_IF_ERROR(Process(entry));
      continue;
    }
    if (!changed_since_session_) {
      // The last session changed nothing and nothing has happened since: the next session that
      // can decide differently is at the next event or cooldown expiry.
      Millis wake = std::min(next_event, NextCooldownExpiry());
      if (wake == kInfinity || (AllDone() && timeline_.empty())) break;
      if (wake > next_session) next_session = (wake + period - 1) / period * period;
      if (next_event <= next_session) continue;
    }
    if (until >= 0 && next_session > until) break;
    AdvanceClock(next_session);
    RETURN_IF_ERROR(RunSession());
    next_session += period;
    if (AllDone() && timeline_.empty()) break;
  }
  if (until >= 0 && until > now_) AdvanceClock(until);
  for (JobState& job : jobs_) SettleJob(job);

  SimRun run;
  run.label = options_.config_label;
  run.events_jsonl = std::move(events_);
  run.summary_json = BuildSummaryJson(Record(), run.figures);
  return run;
}

RunRecord Simulation::Record() const {
  RunRecord record;
  record.scenario = input_.name;
  record.config_label = options_.config_label;
  record.end = now_;
  record.jobs.reserve(jobs_.size());
  for (const JobState& job : jobs_) {
    JobRecord& r = record.jobs.emplace_back();
    r.key = job.key;
    r.queue = job.queue;
    r.submitted = job.submitted;
    r.started = job.started;
    r.completed = job.completed;
    r.submit = job.submit;
    r.start = job.start;
    r.end = job.end;
    r.min = job.min;
    for (const auto& [task, count] : job.replicas) r.max += count;
    r.evictions = job.evictions;
    r.running_integral = job.running_integral;
  }
  record.queue_shares = queue_shares_;
  record.used_integral = used_integral_;
  record.allocatable_integral = allocatable_integral_;
  record.sessions = sessions_;
  record.binds = binds_;
  record.evictions = evictions_;
  record.session_micros = session_micros_;
  record.action_micros = action_micros_;
  return record;
}

}  // namespace

absl::StatusOr<SimRun> RunSimulation(const SimInput& input, const SchedulerConfig& config,
                                     const Registry& registry, const SimOptions& options) {
  Simulation simulation(input, config, registry, options);
  return simulation.Run();
}

}  // namespace lahar
