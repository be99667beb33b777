#include <algorithm>
#include <string>

#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/sim/simulation.h"

namespace lahar::sim_internal {
namespace {

Millis PodDuration(const Pod& pod) {
  auto it = pod.meta.annotations.find(kSimDurationAnnotation);
  if (it == pod.meta.annotations.end()) return -1;
  auto d = ParseDuration(it->second);
  return d.ok() ? *d : -1;
}

}  // namespace

JsonWriter& Simulation::BeginEvent(std::string_view type) {
  line_.Clear();
  writer_.Reset(line_);
  writer_.StartObject();
  writer_.Key("t");
  writer_.Double(Seconds(now_));
  StringField(writer_, "type", type);
  return writer_;
}

void Simulation::EndEvent() {
  writer_.EndObject();
  AppendEventLine({std::string_view(line_.GetString(), line_.GetSize())});
}

void Simulation::AppendEventLine(std::initializer_list<std::string_view> pieces) {
  if (!EventsKept()) return;
  for (std::string_view piece : pieces) events_.append(piece);
  events_.push_back('\n');
  if (events_.size() >= (1 << 20)) FlushEvents();
}

void Simulation::FlushEvents() {
  if (options_.events_out == nullptr) return;
  options_.events_out->write(events_.data(), static_cast<std::streamsize>(events_.size()));
  events_.clear();
}

void Simulation::PodEvent(std::string_view type, std::string_view pod, const JobState& job,
                          const PodState& state, std::string_view reason) {
  BeginEvent(type);
  StringField(writer_, "pod", pod);
  StringField(writer_, "job", job.key);
  StringField(writer_, "node", state.node);
  if (!reason.empty()) {
    StringField(writer_, "reason", reason);
  }
  ResourcesField(writer_, "requests", state.requests);
  EndEvent();
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


absl::Status Simulation::Submit(size_t job_index) {
  JobState& job = jobs_[job_index];
  ASSIGN_OR_RETURN(SimJob made, input_.MakeJob(job_index));
  job.spec = std::make_unique<const SimJob>(std::move(made));
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
  StringField(writer_, "job", job.key);
  StringField(writer_, "queue", job.queue);
  IntField(writer_, "min", job.min);
  IntField(writer_, "max", job.live_pods);
  EndEvent();
  // Snapshot pods that were already running stay where they are.
  for (const std::string& name : spec.initially_bound) {
    std::string key = StrCat(spec.group.meta.namespace_, "/", name);
    for (const Pod& pod : spec.pods) {
      if (pod.meta.name == name) BindPod(key, pod.node_name);
    }
  }
  return absl::OkStatus();
}

void Simulation::AddNode(const Node& node) {
  cache_.UpsertNode(node);
  Resources alloc = node.allocatable;
  alloc.Set(kPods, 0);
  node_allocatable_[node.meta.name] = alloc;
  allocatable_ += alloc;
  BeginEvent("node");
  StringField(writer_, "node", node.meta.name);
  writer_.Key("change");
  writer_.String("add");
  ResourcesField(writer_, "allocatable", node.allocatable);
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
  StringField(writer_, "node", name);
  writer_.Key("change");
  writer_.String("remove");
  ResourcesField(writer_, "allocatable", Resources());
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
  ++occupancy_version_;
  used_ += state.requests;
  HoldGpus(jobs_[state.job], state.requests.Get(kNvidiaGpu));
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
  ++occupancy_version_;
  HoldGpus(jobs_[state.job], -state.requests.Get(kNvidiaGpu));
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
    ++occupancy_version_;
    used_ -= state.requests;
    HoldGpus(job, -state.requests.Get(kNvidiaGpu));
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
  if (job.spec->scaling.kind == Scaling::Kind::kThroughput) RecordThroughput(job);
  BeginEvent("job-complete");
  StringField(writer_, "job", job.key);
  EndEvent();
  size_t slash = job.key.find('/');
  cache_.DeletePodGroup(job.key.substr(0, slash), job.key.substr(slash + 1));
  // Nothing asks for its pods again: the record keeps what the summary reports.
  job.min_gpus = MinGpus(job);
  job.templates.clear();
  job.spec.reset();
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
      StringField(writer_, "node", event.target);
      writer_.Key("change");
      writer_.String(event.kind == SimEvent::Kind::kCordon ? "cordon" : "uncordon");
      ResourcesField(writer_, "allocatable", node.allocatable);
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
      StringField(writer_, "job", job.key);
      if (!event.gate.empty()) {
        StringField(writer_, "gate", event.gate);
      }
      IntField(writer_, "pods", ungated);
      EndEvent();
      return;
    }
  }
}

}  // namespace lahar::sim_internal
