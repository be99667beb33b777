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
#include "api/topology.h"
#include "cache/cluster_cache.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/framework/cycle.h"
#include "scheduler/sim/simulation.h"
#include "scheduler/sim/summary.h"

namespace lahar {

double SimFigures::Utilization(std::string_view resource) const {
  for (const auto& [name, value] : utilization) {
    if (name == resource) return value;
  }
  return 0;
}

namespace sim_internal {

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
  if (dt > 0 && job.running >= job.min && job.min > 0 && job.spec->duration) {  // running: submitted
    job.progress += JobRate(job) * static_cast<double>(dt);
  }
  job.progress_at = now_;
  if (job.started) job.running_integral += static_cast<double>(job.running) * static_cast<double>(now_ - job.running_since);
  job.running_since = now_;
}

double Simulation::JobRate(const JobState& job) const {
  return job.spec->scaling.Rate(job.running, job.min) * job.topology_factor;
}

const Topology* Simulation::CurrentTopology() {
  if (input_.hypernodes.empty()) return nullptr;
  std::shared_ptr<const Topology> topology = cache_.CurrentTopology();
  if (topology != topology_) {
    // Rebuilt: the node set may have changed, and node ids with it.
    topology_ = std::move(topology);
    ++occupancy_version_;  // the domains to count are new
    topology_node_ids_.clear();
    for (const Node* node : cache_.Nodes()) {
      topology_node_ids_.emplace(node->meta.name, static_cast<NodeId>(topology_node_ids_.size()));
    }
  }
  return topology_.get();
}

std::optional<int32_t> Simulation::RunningTier(const JobState& job) {
  const Topology* topology = CurrentTopology();
  if (topology == nullptr) return std::nullopt;
  std::vector<NodeId> nodes;
  for (const std::string& key : job.pods) {
    const PodState& pod = pods_.at(key);
    if (!pod.bound || pod.releasing) continue;
    auto id = topology_node_ids_.find(pod.node);
    if (id == topology_node_ids_.end()) return std::nullopt;
    nodes.push_back(id->second);
  }
  if (nodes.empty()) return std::nullopt;
  std::sort(nodes.begin(), nodes.end());
  if (nodes.front() == nodes.back()) return 0;
  const DomainId domain = topology->Enclosing(nodes);
  if (domain == kNoId) return std::nullopt;
  return topology->domains[domain].tier;
}

void Simulation::Reschedule(size_t job_index) {
  JobState& job = jobs_[job_index];
  ++job.completion_version;
  if (job.completed || job.running < job.min || job.min <= 0 || !job.spec->duration) return;
  double rate = JobRate(job);
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
  if (job.waiting && job.running >= job.min) SettleWait(job, /*stop=*/true);
  const std::optional<int32_t> tier = RunningTier(job);
  if (!job.spec->tier_rate.empty()) {
    // The factor of the highest listed tier at or below the one its pods span (none: all tiers).
    job.topology_factor = 1;
    const int32_t spanned = tier ? *tier : std::numeric_limits<int32_t>::max();
    for (const auto& [at, factor] : job.spec->tier_rate) {
      if (at <= spanned) job.topology_factor = factor;
    }
  }
  if (!job.started && job.running >= job.min && job.min > 0) {
    job.started = true;
    job.tier = tier;
    job.start = now_;
    job.running_since = now_;
    BeginEvent("job-start");
    StringField(writer_, "job", job.key);
    EndEvent();
  } else if (was_running && job.spec->restart_cost > 0 && job.last_restart != now_) {
    // Changing the worker count reloads the last checkpoint: the work since is lost.
    job.progress = std::max(0.0, job.progress - static_cast<double>(job.spec->restart_cost));
    job.last_restart = now_;
  }
  Reschedule(job_index);
  if (job.spec->scaling.kind == Scaling::Kind::kThroughput) {
    RecordThroughput(job);
    ++job.size_version;
    // Once it has run at this size for a minute past its restart cost, it reports the size.
    if (job.started && job.running >= job.min) {
      Push(now_ + job.spec->restart_cost + 60'000, TimelineKind::kThroughputReport, job_index, "", job.size_version);
    }
  }
}

void Simulation::RecordThroughput(JobState& job) {
  const double rate = job.running >= job.min && !job.completed ? job.spec->scaling.Throughput(job.running) : 0;
  auto& series = job.throughput_series;
  const double t = Seconds(now_);
  if (!series.empty() && series.back().first == t) series.pop_back();
  if (series.empty() || series.back().second != rate) series.emplace_back(t, rate);
}

void Simulation::HoldGpus(JobState& job, int64_t delta) {
  job.gpu_ms += static_cast<double>(job.gpus_held) * static_cast<double>(now_ - job.gpus_since);
  job.gpus_since = now_;
  job.gpus_held += delta;
}

void Simulation::ReportThroughput(size_t job_index) {
  JobState& job = jobs_[job_index];
  if (job.completed || job.running < job.min || job.running <= 0) return;
  auto& points = job.reported_points;
  auto at = std::lower_bound(points.begin(), points.end(), job.running,
                             [](const ThroughputPoint& p, int32_t size) { return p.size < size; });
  if (at != points.end() && at->size == job.running) return;
  points.insert(at, ThroughputPoint{job.running, job.spec->scaling.Throughput(job.running)});
  const PodGroup* existing = cache_.FindPodGroup(job.key);
  if (existing == nullptr) return;
  PodGroup group = *existing;
  group.meta.annotations[kThroughputAnnotation] = FormatThroughput(points);
  cache_.UpsertPodGroup(std::move(group));
}

bool Simulation::IsStale(const TimelineEntry& e) const {
  if (e.kind == TimelineKind::kJobComplete) {
    const JobState& job = jobs_[e.index];
    return job.completion_version != e.version || job.completed;
  }
  if (e.kind == TimelineKind::kThroughputReport) return jobs_[e.index].size_version != e.version;
  if (e.kind == TimelineKind::kPodComplete) {
    auto it = pods_.find(e.pod);
    return it == pods_.end() || it->second.version != e.version || !it->second.bound || it->second.releasing;
  }
  return false;
}

absl::Status Simulation::Process(const TimelineEntry& e) {
  switch (e.kind) {
    case TimelineKind::kSubmit:
      RETURN_IF_ERROR(Submit(e.index));
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
    case TimelineKind::kThroughputReport:
      ReportThroughput(e.index);
      break;
  }
  changed_since_session_ = true;
  return absl::OkStatus();
}

void Simulation::CountFreeDomains() {
  for (const auto& [tier, count] : free_domains_now_) {
    free_domain_ms_[tier] += static_cast<double>(count) * static_cast<double>(now_ - free_domains_since_);
  }
  free_domains_since_ = now_;
  const Topology* topology = CurrentTopology();
  if (topology == nullptr) return;
  if (occupancy_version_ == counted_occupancy_) return;  // nothing moved since the last count
  counted_occupancy_ = occupancy_version_;
  std::vector<bool> busy(topology_node_ids_.size(), false);
  auto mark = [&](std::string_view node) {
    if (auto it = topology_node_ids_.find(node); it != topology_node_ids_.end()) busy[it->second] = true;
  };
  for (const auto& [key, pod] : pods_) {
    if (pod.bound) mark(pod.node);
  }
  for (const Pod& pod : input_.foreign_pods) mark(pod.node_name);
  std::map<int32_t, int> counts;
  for (const TopologyDomain& domain : topology->domains) {
    const bool free = !domain.nodes.empty() && std::none_of(domain.nodes.begin(), domain.nodes.end(),
                                                            [&](NodeId n) { return busy[n]; });
    counts[domain.tier] += free ? 1 : 0;
  }
  for (const auto& [tier, count] : counts) {
    auto& series = free_domains_[tier];
    if (series.empty() || series.back().second != count) series.emplace_back(Seconds(now_), count);
  }
  free_domains_now_ = std::move(counts);
}

absl::Status Simulation::RunSession() {
  CountFreeDomains();
  ASSIGN_OR_RETURN(CycleResult result, cycles_.Run(cache_, now_, config_, registry_, &wait_memo_));
  ++sessions_;
  if (options_.on_session) options_.on_session(cycles_.last_every_job(), result, now_);
  session_micros_.push_back(static_cast<double>(result.duration_micros));
  for (const auto& [action, micros] : result.action_micros) action_micros_[action].push_back(static_cast<double>(micros));
  bool changed = false;
  for (const auto& u : result.job_updates) {
    if (u.waiting) {
      auto index = job_index_.find(u.job);
      std::shared_ptr<const WaitReason> reason = cache_.InternReason(*u.waiting);
      if (index != job_index_.end()) NoteWaiting(jobs_[index->second], reason);
      cache_.NoteWaitReported(u.job, *reason);
    }
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
    IntField(writer_, "binds", static_cast<int64_t>(result.binds.size()));
    IntField(writer_, "evicts", static_cast<int64_t>(result.evicts.size()));
    EndEvent();
  }
  // Queue shares (dominant share of the cluster), sampled when they move.
  for (const auto& q : result.queues) {
    auto dominant = [&](const Resources& r) {
      double share = 0;
      const Resources::View amounts = r.view();  // read in place: a session has a sample per queue
      for (size_t i = 0; i < amounts.size; ++i) {
        const auto id = static_cast<ResourceId>(i);
        const int64_t amount = amounts.data[i];
        const int64_t total = allocatable_.Get(id);
        if (amount != 0 && total > 0 && id != kPods) {
          share = std::max(share, static_cast<double>(amount) / static_cast<double>(total));
        }
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
  if (!options_.explain_job.empty()) last_queues_ = std::move(result.queues);
  for (const CycleResult::Parkable& p : result.parkable) cache_.ParkJobs(p.representative, p.members);
  return absl::OkStatus();
}

std::optional<JobExplanation> Simulation::ExplainJobAtEnd() {
  auto index = job_index_.find(options_.explain_job);
  if (index == job_index_.end()) return std::nullopt;
  const JobState& state = jobs_[index->second];
  const ClusterSnapshot snapshot = cache_.Snapshot(now_);
  for (const JobInfo& job : snapshot.jobs) {
    if (job.key() == state.key) {
      return ExplainJob(snapshot, last_queues_, job,
                        state.waiting && state.reason ? std::optional<WaitReason>(*state.reason) : std::nullopt);
    }
  }
  // Not in the cluster: not submitted yet, or done and gone.
  JobExplanation e{.job = state.key, .queue = state.queue, .min = state.min};
  e.phase = !state.submitted ? "not submitted yet" : state.completed ? "Completed" : "gone";
  return e;
}

void Simulation::NoteWaiting(JobState& job, std::shared_ptr<const WaitReason> reason) {
  // Interned (ClusterCache::InternReason): most reasons told again are the very object.
  if (job.waiting && (job.reason == reason || *job.reason == *reason)) return;
  if (job.waiting) {
    SettleWait(job, /*stop=*/false);
  } else {
    // The first reason covers the wait since submission; a later one the wait since it stopped.
    job.waiting = true;
    job.waiting_since = job.started ? now_ : job.submit;
  }
  job.reason = std::move(reason);
  if (!EventsKept()) return;
  const WaitReason& told = *job.reason;
  // As BeginEvent("waiting"), the job and kind and reason fields and EndEvent would write it.
  WaitingLine& line = waiting_line_;
  if (line.at != now_) {
    BeginEvent("waiting");
    line.head.assign(line_.GetString(), line_.GetSize());
    line.head.append(",\"job\":");
    line.at = now_;
  }
  if (line.reason == nullptr || (line.reason != job.reason && *line.reason != told)) {
    line.tail = StrCat(",\"kind\":", JsonString(WaitKindName(told.kind)), ",\"reason\":",
                       JsonString(WaitReasonText(told)), "}");
    line.reason = job.reason;
  }
  if (job.key_json.empty()) job.key_json = JsonString(job.key);
  AppendEventLine({line.head, job.key_json, line.tail});
}

void Simulation::SettleWait(JobState& job, bool stop) {
  job.wait_ms_by_kind[static_cast<int>(job.reason->kind)] += static_cast<double>(now_ - job.waiting_since);
  job.waiting_since = now_;
  if (stop) job.waiting = false;
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
  for (const HyperNode& hypernode : input_.hypernodes) cache_.UpsertHyperNode(hypernode);
  for (const Node& node : input_.nodes) AddNode(node);
  for (const Pod& pod : input_.foreign_pods) {
    cache_.UpsertPod(pod);
    used_ += pod.requests;
  }
  jobs_.resize(input_.jobs.size());
  for (size_t i = 0; i < input_.jobs.size(); ++i) {
    const SimJobEntry& entry = input_.jobs[i];
    JobState& job = jobs_[i];
    job.key = entry.key;
    job.queue = entry.queue;
    job.min = entry.min;
    job.measured = entry.measured;
    job_index_[job.key] = i;
    Push(entry.submit, TimelineKind::kSubmit, i);
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
      if (wake == kInfinity || (AllDone() && timeline_.empty())) {
        stalled_ = !AllDone();
        break;
      }
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
  for (JobState& job : jobs_) {
    SettleJob(job);
    if (job.waiting) SettleWait(job, /*stop=*/false);  // its time counted; it still waits
  }

  SimRun run;
  run.label = options_.config_label;
  if (!options_.explain_job.empty()) run.explanation = ExplainJobAtEnd();
  FlushEvents();
  if (options_.events_out != nullptr && !options_.events_out->flush()) {
    return absl::DataLossError("writing events.jsonl failed");
  }
  run.events_jsonl = std::move(events_);
  run.summary_json = BuildSummaryJson(TakeRecord(), run.figures);
  return run;
}

int64_t Simulation::MinGpus(const JobState& job) {
  int64_t gpus = 0;
  for (size_t i = 0; i < job.spec->pods.size() && static_cast<int32_t>(i) < job.min; ++i) {
    gpus += job.spec->pods[i].requests.Get(kNvidiaGpu);
  }
  return gpus;
}

RunRecord Simulation::TakeRecord() {
  RunRecord record;
  record.scenario = input_.name;
  record.config_label = options_.config_label;
  record.end = now_;
  // Once, when the run ends: the jobs' records are completed in place and listed, not copied
  // (a trace's 80,000 jobs would need another 40 MB).
  record.jobs.reserve(jobs_.size());
  for (JobState& job : jobs_) {
    JobRecord& r = job;
    record.jobs.push_back(&r);
    r.max = 0;
    for (const auto& [task, count] : job.replicas) r.max += count;
    r.gpu_ms += static_cast<double>(job.gpus_held) * static_cast<double>(now_ - job.gpus_since);
    if (job.completed) {
      r.useful_gpu_ms = job.progress * static_cast<double>(job.min_gpus);
    } else if (job.spec != nullptr) {  // submitted
      double progress = job.progress;
      if (job.spec->duration && job.running >= job.min && job.min > 0) {
        progress += JobRate(job) * static_cast<double>(now_ - job.progress_at);
      }
      r.useful_gpu_ms = progress * static_cast<double>(MinGpus(job));
    }
    r.reported = FormatThroughput(job.reported_points);
  }
  CountFreeDomains();
  record.free_domains = std::move(free_domains_);
  record.free_domain_ms = std::move(free_domain_ms_);
  record.queue_shares = std::move(queue_shares_);
  record.used_integral = std::move(used_integral_);
  record.allocatable_integral = std::move(allocatable_integral_);
  record.sessions = sessions_;
  record.skipped_runs = wait_memo_.skipped();
  record.tried_runs = wait_memo_.tried();
  record.parked_sessions = cycles_.parked_sessions();
  record.rerun_sessions = cycles_.rerun_sessions();
  record.binds = binds_;
  record.evictions = evictions_;
  record.stalled = stalled_;
  record.session_micros = std::move(session_micros_);
  record.action_micros = std::move(action_micros_);
  return record;
}

}  // namespace sim_internal

absl::StatusOr<SimRun> RunSimulation(const SimInput& input, const SchedulerConfig& config,
                                     const Registry& registry, const SimOptions& options) {
  sim_internal::Simulation simulation(input, config, registry, options);
  return simulation.Run();
}

}  // namespace lahar
