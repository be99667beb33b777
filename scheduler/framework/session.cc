#include "scheduler/framework/session.h"

#include <algorithm>
#include <chrono>

#include "api/status_macros.h"

namespace lahar {

Session::Session(ClusterSnapshot cluster, const SchedulerConfig& config)
    : cluster_(std::move(cluster)), config_(config) {
  job_update_index_.assign(cluster_.jobs.size(), -1);
  reason_as_reported_.assign(cluster_.jobs.size(), false);
  node_version_.assign(cluster_.nodes.size(), 0);
  free_index_.Reset(cluster_.nodes.size());
  job_tasks_version_.assign(cluster_.jobs.size(), 0);
  job_scope_.assign(cluster_.jobs.size(), nullptr);
  live_.assign(cluster_.jobs.size(), false);
  touched_.assign(cluster_.jobs.size(), false);
  for (const JobInfo& job : cluster_.jobs) {
    if (job.phase == PodGroupPhase::kPending && job.HoldsNothing()) continue;
    live_[job.id] = true;
    live_jobs_.push_back(job.id);
    if (job.HasTasksBeyondMin()) live_elastic_jobs_.push_back(job.id);
  }
  // The admitted classes, counted only when there are some (most parked jobs are Pending).
  const std::vector<JobId>& representatives = cluster_.parked_representatives;
  std::vector<int32_t> admitted_class(representatives.size(), -1);  // index in parked_admitted_
  for (size_t c = 0; c < representatives.size(); ++c) {
    const JobId representative = representatives[c];
    if (representative == kNoId || cluster_.jobs[representative].phase != PodGroupPhase::kInqueue) continue;
    admitted_class[c] = static_cast<int32_t>(parked_admitted_.size());
    parked_admitted_.push_back({representative, 0, static_cast<int32_t>(c)});
  }
  if (parked_admitted_.empty()) return;
  if (cluster_.parked_counts.size() == representatives.size()) {  // counted by the snapshot
    for (ParkedAdmitted& admitted : parked_admitted_) admitted.members = cluster_.parked_counts[admitted.parked_class];
  } else {
    for (const ClusterSnapshot::ParkedJob& parked : cluster_.parked) {
      if (admitted_class[parked.parked_class] >= 0) ++parked_admitted_[admitted_class[parked.parked_class]].members;
    }
  }
  std::erase_if(parked_admitted_, [](const ParkedAdmitted& c) { return c.members == 0; });
}

void Session::NoteJobChanged(JobId job) {
  touched_[job] = true;
  if (live_[job]) return;
  live_[job] = true;
  live_jobs_.insert(std::lower_bound(live_jobs_.begin(), live_jobs_.end(), job), job);
  if (cluster_.jobs[job].HasTasksBeyondMin()) {
    live_elastic_jobs_.insert(std::lower_bound(live_elastic_jobs_.begin(), live_elastic_jobs_.end(), job), job);
  }
}

Session::~Session() = default;

absl::StatusOr<std::unique_ptr<Session>> Session::Open(ClusterSnapshot cluster,
                                                       const SchedulerConfig& config,
                                                       const Registry& registry) {
  std::unique_ptr<Session> session(new Session(std::move(cluster), config));
  for (size_t t = 0; t < config.tiers.size(); ++t) {
    for (const PluginOption& option : config.tiers[t].plugins) {
      ASSIGN_OR_RETURN(std::unique_ptr<Plugin> plugin, registry.NewPlugin(option.name, option.arguments));
      session->opening_plugin_ = &option;
      session->opening_tier_ = static_cast<int>(t);
      plugin->OnSessionOpen(*session);
      session->plugins_.push_back(std::move(plugin));
    }
  }
  session->opening_plugin_ = nullptr;
  for (const std::string& name : config.actions) {
    if (name == "allocate" || name == "backfill") {
      const Arguments& args = config.ActionArguments(name);
      NodeSearchOptions& o = session->search_options_;
      ASSIGN_OR_RETURN(int64_t min_nodes, args.GetInt("minNodesToFind", o.min_nodes_to_find, 1, 1 << 30));
      ASSIGN_OR_RETURN(int64_t min_pct, args.GetInt("minPercentageOfNodesToFind", o.min_percentage, 1, 100));
      ASSIGN_OR_RETURN(int64_t pct, args.GetInt("percentageOfNodesToFind", o.percentage, 0, 100));
      o = {static_cast<int>(min_nodes), static_cast<int>(min_pct), static_cast<int>(pct)};
      break;
    }
  }
  return session;
}

absl::Status Session::RunActions(const Registry& registry) {
  for (const std::string& name : config_.actions) {
    ASSIGN_OR_RETURN(std::unique_ptr<Action> action, registry.NewAction(name, config_.ActionArguments(name)));
    auto started = std::chrono::steady_clock::now();
    action->Execute(*this);
    action_micros_.emplace_back(
        name, std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count());
    if (needs_parked_jobs()) break;  // what it decides is dropped: the session runs again
  }
  return absl::OkStatus();
}

std::vector<int32_t> Session::ParkedClassesNeeded() const {
  std::vector<int32_t> classes = parked_classes_needed_;
  std::sort(classes.begin(), classes.end());
  classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
  return classes;
}

void Session::Close() {
  if (closed_) return;
  for (auto& plugin : plugins_) plugin->OnSessionClose(*this);
  // A job that has its gang is Running; the phase is what users and `enqueue` see next time.
  for (JobId id : live_jobs_) {  // sets only live jobs' phases: the list holds
    JobInfo& job = cluster_.jobs[id];
    if (job.phase == PodGroupPhase::kCompleted) continue;
    if (job.ReadyCount() >= job.min_available && job.PlacedCount() > 0 &&
        job.phase != PodGroupPhase::kRunning) {
      SetJobPhase(job.id, PodGroupPhase::kRunning);
    }
  }
  // A pair holds when both end waiting in one phase (Pending, or Inqueue holding nothing) and
  // told equal reasons.
  auto holds = [this](JobId member, JobId representative) {
    const JobInfo& m = cluster_.jobs[member];
    const JobInfo& r = cluster_.jobs[representative];
    if (m.phase != r.phase || (m.phase != PodGroupPhase::kPending && m.phase != PodGroupPhase::kInqueue) ||
        !m.HoldsNothing() || !r.HoldsNothing()) {
      return false;
    }
    const WaitReason* a = ToldWaitReason(member);
    const WaitReason* b = ToldWaitReason(representative);
    return a != nullptr && b != nullptr && (a == b || *a == *b);
  };
  std::erase_if(parkable_, [&](const std::pair<JobId, JobId>& p) { return !holds(p.first, p.second); });
  SettleUpdates();
  closed_ = true;
}

void Session::RunBeforeNextTaskChange() {
  std::vector<std::function<void()>> before = std::move(before_next_task_change_);
  before_next_task_change_.clear();
  for (const auto& fn : before) fn();
}

template <bool kNodes>
void Session::ChangeTaskStatus(TaskId task_id, TaskStatus status, NodeId node_id) {
  if (!before_next_task_change_.empty()) [[unlikely]] RunBeforeNextTaskChange();
  TaskInfo& task = cluster_.tasks[task_id];
  JobInfo& job = cluster_.jobs[task.job];
  const TaskStatus old = task.status;
  const NodeId old_node = task.node;
  if constexpr (kNodes) NoteJobChanged(job.id);
  ++task_state_changes_;
  // Only placing a pending task or binding an allocated one leaves every node at most as free
  // as before; anything else may make nodes feasible again for cached searches.
  const bool only_consumes = (old == TaskStatus::kPending && (status == TaskStatus::kAllocated ||
                                                              status == TaskStatus::kPipelined)) ||
                             (old == TaskStatus::kAllocated && status == TaskStatus::kBinding);
  if (!only_consumes) ++free_epoch_;
  state_version_ = ++version_counter_;
  job_tasks_version_[task.job] = ++version_counter_;
  if (kNodes && old_node != kNoId) NodeChanged(old_node);
  if (kNodes && node_id != kNoId) NodeChanged(node_id);
  auto takes = [](TaskStatus s) { return IsPlaced(s) || s == TaskStatus::kPipelined; };
  const bool took = takes(old);
  // A task that stays on its node (evicted, or an eviction undone) keeps its place in the
  // node's list: a discarded plan leaves the node exactly as it found it.
  const bool keeps_slot = HoldsNode(old) && HoldsNode(status) && old_node == node_id;

  // Remove the old contribution.
  if (kNodes && old_node != kNoId) {
    NodeInfo& node = cluster_.nodes[old_node];
    if (HoldsNode(old)) {
      node.used -= task.request;
      node.used_limits -= task.limit;
      --node.pod_count;
      if (!keeps_slot) {
        auto it = std::find(node.tasks.begin(), node.tasks.end(), task_id);
        if (it != node.tasks.end()) node.tasks.erase(it);
      }
    }
    if (old == TaskStatus::kReleasing) {
      node.releasing -= task.request;
      --node.releasing_pods;
    }
    if (old == TaskStatus::kPipelined) {
      node.pipelined -= task.request;
      --node.pipelined_pods;
    }
  }
  CountTask(task, -1, job);

  task.status = status;
  task.node = (status == TaskStatus::kPending || status == TaskStatus::kSucceeded ||
               status == TaskStatus::kFailed)
                  ? kNoId
                  : node_id;

  // Add the new one.
  if (kNodes && task.node != kNoId) {
    NodeInfo& node = cluster_.nodes[task.node];
    if (HoldsNode(status)) {
      node.used += task.request;
      node.used_limits += task.limit;
      ++node.pod_count;
      if (!keeps_slot) node.tasks.push_back(task_id);
    }
    if (status == TaskStatus::kReleasing) {
      node.releasing += task.request;
      ++node.releasing_pods;
    }
    if (status == TaskStatus::kPipelined) {
      node.pipelined += task.request;
      ++node.pipelined_pods;
    }
  }
  CountTask(task, +1, job);

  const bool takes_now = takes(status);
  if (took != takes_now) {
    for (const EventHandler& handler : event_handlers_) {
      const auto& fn = takes_now ? handler.on_allocate : handler.on_deallocate;
      if (fn) fn(task);
    }
  }
}

void Session::SetTaskStatus(TaskId task, TaskStatus status, NodeId node) { ChangeTaskStatus<true>(task, status, node); }
template void Session::ChangeTaskStatus<false>(TaskId task, TaskStatus status, NodeId node);

void Session::HoldResources(NodeId node, const Resources& amount) {
  cluster_.nodes[node].used += amount;
  NodeChanged(node);
  state_version_ = ++version_counter_;  // the nodes' amounts are part of the state
}

void Session::ReleaseHeldResources(NodeId node, const Resources& amount) {
  cluster_.nodes[node].used -= amount;
  NodeChanged(node);
  state_version_ = ++version_counter_;
  ++free_epoch_;  // the node is freer: cached searches may have missed it
}

JobStatusUpdate& Session::UpdateFor(JobId job) {
  int32_t& index = job_update_index_[job];
  if (index < 0) {
    index = static_cast<int32_t>(job_updates_.size());
    // Made before any phase change of the job (SetJobPhase asks first): the phase it opened with.
    job_updates_.push_back({job, cluster_.jobs[job].phase, std::nullopt, false});
    if (reason_as_reported_[job]) job_updates_.back().waiting = *cluster_.jobs[job].reported_wait;
    opened_phase_.push_back(cluster_.jobs[job].phase);
  }
  return job_updates_[index];
}

void Session::SettleUpdates() {
  size_t kept = 0;
  for (size_t i = 0; i < job_updates_.size(); ++i) {
    JobStatusUpdate& u = job_updates_[i];
    const std::shared_ptr<const WaitReason>& reported = cluster_.jobs[u.job].reported_wait;
    const bool unchanged = u.phase == opened_phase_[i] && !u.scaled && u.waiting.has_value() &&
                           reported != nullptr && *reported == *u.waiting;
    if (unchanged) continue;
    if (kept != i) job_updates_[kept] = std::move(u);
    ++kept;
  }
  job_updates_.resize(kept);
  opened_phase_.clear();
  std::sort(job_updates_.begin(), job_updates_.end(),
            [](const JobStatusUpdate& a, const JobStatusUpdate& b) { return a.job < b.job; });
  std::fill(job_update_index_.begin(), job_update_index_.end(), -1);
  reason_as_reported_.assign(reason_as_reported_.size(), false);
  for (size_t i = 0; i < job_updates_.size(); ++i) job_update_index_[job_updates_[i].job] = static_cast<int32_t>(i);
}

void Session::SetJobPhase(JobId job, PodGroupPhase phase) {
  NoteJobChanged(job);
  ++job_changes_;
  state_version_ = ++version_counter_;
  UpdateFor(job).phase = phase;
  cluster_.jobs[job].phase = phase;
}

void Session::RestoreVersions(uint64_t state, const std::vector<std::pair<JobId, uint64_t>>& jobs) {
  state_version_ = state;
  for (const auto& [job, version] : jobs) job_tasks_version_[job] = version;
}

bool Session::AsReported(JobId job, const WaitReason& reason) {
  if (job_update_index_[job] >= 0) return false;
  const std::shared_ptr<const WaitReason>& reported = cluster_.jobs[job].reported_wait;
  const bool same = reported != nullptr && *reported == reason;
  reason_as_reported_[job] = same;
  return same;
}

bool Session::SetWaitReason(JobId job, WaitReason&& reason) {
  if (AsReported(job, reason)) return true;
  UpdateFor(job).waiting = std::move(reason);
  return false;
}

bool Session::SetWaitReason(JobId job, const WaitReason& reason) {
  if (AsReported(job, reason)) return true;
  UpdateFor(job).waiting = reason;
  return false;
}

void Session::SetSharedWaitReason(JobId job, SharedWaitReason& shared) {
  const WaitReason* reported = cluster_.jobs[job].reported_wait.get();
  if (reported == nullptr || reported != shared.equal_reported) {
    if (SetWaitReason(job, shared.reason)) shared.equal_reported = reported;
  } else if (job_update_index_[job] >= 0) {
    UpdateFor(job).waiting = shared.reason;
  } else {
    reason_as_reported_[job] = true;  // AsReported, without the comparison
  }
}

void Session::ReportQueueDeserved(QueueId queue, Resources deserved) {
  queue_deserved_[queue] = std::move(deserved);
}

void Session::MarkScaled(JobId job) {
  ++job_changes_;
  state_version_ = ++version_counter_;
  UpdateFor(job).scaled = true;
  cluster_.jobs[job].last_scale_time = cluster_.now;
  NoteJobChanged(job);  // touched (it holds workers, so is live already): TakeCluster marks it
}

ClusterSnapshot Session::TakeCluster() && {
  // Every change to a job goes through SetTaskStatus, SetJobPhase or MarkScaled, which mark it
  // touched: the other jobs are as the snapshot laid them out, those holding nodes included.
  cluster_.job_as_laid_out.resize(cluster_.jobs.size(), 0);
  for (JobId id : live_jobs_) {
    if (touched_[id]) cluster_.job_as_laid_out[id] = 0;
  }
  // Likewise the nodes: one whose version moved was changed (and maybe restored).
  for (size_t id = 0; id < cluster_.nodes.size(); ++id) {
    if (node_version_[id] != 0) cluster_.nodes[id].held_version = 0;
  }
  return std::move(cluster_);
}

bool Session::WasScaled(JobId job) const {
  int32_t index = job_update_index_[job];
  return index >= 0 && job_updates_[index].scaled;
}

}  // namespace lahar
