#include "cache/cluster_cache.h"

// A job's block: what its objects (PodGroup, pods) make of it, rebuilt only when one of them
// changes (RebuildBlock), and what its pods add to their nodes' holdings and its queue's demand.

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <string_view>
#include <vector>

#include "api/state_hash.h"

namespace lahar {
namespace {

TaskStatus StatusOf(const Pod& pod, bool releasing) {
  if (pod.phase == PodPhase::kSucceeded) return TaskStatus::kSucceeded;
  if (pod.phase == PodPhase::kFailed) return TaskStatus::kFailed;
  if (pod.meta.deleting || releasing) return pod.node_name.empty() ? TaskStatus::kFailed : TaskStatus::kReleasing;
  if (pod.node_name.empty()) return TaskStatus::kPending;
  if (pod.phase == PodPhase::kRunning) return TaskStatus::kRunning;
  return TaskStatus::kBound;
}

}  // namespace

void ClusterCache::RebuildBlock(const std::string& key, JobBlock& block) const {
  static std::atomic<uint64_t> next_build{1};
  block = JobBlock();
  block.build = next_build.fetch_add(1, std::memory_order_relaxed);
  auto group_it = pod_groups_.find(key);
  auto pods_it = job_pods_.find(key);
  static const std::map<std::string_view, const PodEntry*> kNoPods;
  const auto& members = pods_it == job_pods_.end() ? kNoPods : pods_it->second;
  const PodGroupEntry* group = group_it == pod_groups_.end() ? nullptr : &group_it->second;
  const PodEntry* lone = nullptr;
  if (group == nullptr) {
    // Pods naming a PodGroup that has not arrived yet wait for it; a pod without a group
    // annotation is a job of its own.
    if (members.size() != 1 || members.begin()->second->job_key.back() != kLonePodSuffix[0]) return;
    lone = members.begin()->second;
  }
  block.exists = true;
  JobInfo& job = block.job;
  // The job's objects as they are now: their versions, and the scale time kept beside them.
  StateHash version;
  version.Add(group != nullptr ? group->version : uint64_t{0});
  for (const auto& [pod_key, entry] : members) version.Add(entry->version);
  if (group != nullptr) {
    const PodGroup& pg = group->group;
    block.queue = &pg.queue;
    block.priority_class = &pg.priority_class_name;
    job.namespace_ = pg.meta.namespace_;
    job.name = pg.meta.name;
    job.uid = pg.meta.uid;
    job.min_available = pg.min_member;
    job.min_task_member = pg.min_task_member;
    job.min_resources = pg.min_resources;
    job.network_topology = pg.network_topology;
    job.priority_class_name = pg.priority_class_name;
    job.phase = pg.phase;
    job.creation_timestamp = pg.meta.creation_timestamp;
    job.creation_order = group->creation_order;
    auto preemptable = pg.meta.annotations.find(kPreemptableAnnotation);
    job.preemptable = preemptable == pg.meta.annotations.end() || preemptable->second != "false";
    PodGroupAnnotations read = ReadPodGroupAnnotations(pg);  // warnings: reported by the feeder
    job.cooldown_override = read.cooldown_override;
    job.sla_waiting_time = read.sla_waiting_time;
    job.measured = read.measured;
    job.throughput = std::move(read.throughput);
  } else {
    const Pod& pod = *lone->pod;
    block.priority_class = &pod.priority_class_name;
    job.namespace_ = pod.meta.namespace_;
    job.name = pod.meta.name;
    job.uid = pod.meta.uid;
    job.has_pod_group = false;
    job.min_available = 1;
    job.min_resources = pod.requests;
    job.priority_class_name = pod.priority_class_name;
    job.phase = pod.node_name.empty() ? PodGroupPhase::kInqueue : PodGroupPhase::kRunning;
    job.creation_timestamp = pod.meta.creation_timestamp;
    job.creation_order = -1;
  }
  job.min_resources_number =
      min_resources_numbers_
          .try_emplace(job.min_resources.NonZero(), static_cast<int32_t>(min_resources_numbers_.size()))
          .first->second;
  auto scaled = last_scale_.find(job.key());
  if (scaled != last_scale_.end()) job.last_scale_time = scaled->second;
  job.version = version.Add(job.last_scale_time).value();
  block.tasks.reserve(members.size());
  for (const auto& [pod_key, entry] : members) {
    const Pod& pod = *entry->pod;
    TaskInfo task;
    task.pod = entry->pod;
    task.request = pod.requests;
    task.limit = pod.limits;
    task.role = entry->role;
    if (auto role = job.min_task_member.find(task.role); role != job.min_task_member.end()) {
      task.role_index = static_cast<int32_t>(std::distance(job.min_task_member.begin(), role));
    }
    task.task_priority = entry->task_priority;
    task.index = entry->index;
    task.best_effort = pod.requests.IsZero();
    task.gated = !pod.scheduling_gates.empty();
    auto preemptable = pod.meta.annotations.find(kPreemptableAnnotation);
    task.preemptable = preemptable == pod.meta.annotations.end() || preemptable->second != "false";
    task.constraint_class = entry->constraint_class;
    task.shape = entry->shape;
    task.status = StatusOf(pod, entry->releasing);
    if (task.status == TaskStatus::kFailed && !IsTerminal(pod.phase)) continue;  // deleted before binding
    block.node_names.push_back(HoldsNode(task.status) ? &pod.node_name : nullptr);
    block.tasks.push_back(std::move(task));
  }
  // Counted once per change of the job, not per snapshot.
  for (const TaskInfo& task : block.tasks) CountTask(task, +1, job);
  std::vector<int32_t> per_role(job.min_task_member.size(), 0);
  for (const TaskInfo& task : block.tasks) {
    if (task.role_index != kNoRoleMinimum) ++per_role[static_cast<size_t>(task.role_index)];
  }
  size_t role = 0;
  job.roles_have_min_tasks = true;
  for (const auto& [name, min] : job.min_task_member) job.roles_have_min_tasks &= per_role[role++] >= min;
}

void ClusterCache::NodeHeld::Count(const Resources& request, const Resources& limit, bool releasing_pod, int sign) {
  if (sign > 0) {
    used += request;
    used_limits += limit;
    if (releasing_pod) releasing += request;
  } else {
    used -= request;
    used_limits -= limit;
    if (releasing_pod) releasing -= request;
  }
  pods += sign;
  if (releasing_pod) releasing_pods += sign;
  ++version;
}

void ClusterCache::CountOnNode(const std::string& node_name, const Resources& request, const Resources& limit,
                               bool releasing, int sign) const {
  if (auto node = nodes_.find(node_name); node != nodes_.end()) {
    node->second.held.Count(request, limit, releasing, sign);
    return;
  }
  auto elsewhere = held_elsewhere_.try_emplace(node_name).first;
  elsewhere->second.Count(request, limit, releasing, sign);
  if (elsewhere->second.pods == 0) held_elsewhere_.erase(elsewhere);
}

void ClusterCache::CountDemand(JobBlock& block, int sign) const {
  if (sign < 0) {
    auto it = queue_sums_.find(block.demand_queue);
    it->second.demand -= block.demand;
    it->second.allocated -= block.job.allocated;
    if (it->second.demand.IsZero() && it->second.allocated.IsZero()) queue_sums_.erase(it);
    return;
  }
  // A PodGroup's queue, by name (a name no queue has adds to no queue's demand); a lone pod's,
  // the default queue.
  block.demand_queue = block.job.has_pod_group ? *block.queue : options_.default_queue;
  Resources grown;
  block.demand = JobDemand(block.job, block.tasks.size(), grown);
  QueueSums& sums = queue_sums_[block.demand_queue];
  sums.demand += block.demand;
  sums.allocated += block.job.allocated;  // a block changes only when rebuilt, after -1
}

void ClusterCache::CountHeld(const JobBlock& block, int sign) const {
  for (size_t i = 0; i < block.tasks.size(); ++i) {
    if (block.node_names[i] == nullptr) continue;
    const TaskInfo& task = block.tasks[i];
    CountOnNode(*block.node_names[i], task.request, task.limit, task.status == TaskStatus::kReleasing, sign);
  }
}

}  // namespace lahar
