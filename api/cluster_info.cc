#include "api/cluster_info.h"

#include <algorithm>

namespace lahar {

std::string_view TaskStatusName(TaskStatus status) {
  static constexpr std::string_view kNames[] = {"Pending", "Allocated", "Pipelined",
                                                "Binding", "Bound",     "Running",
                                                "Releasing", "Succeeded", "Failed"};
  return kNames[static_cast<size_t>(status)];
}

int32_t JobInfo::PlacedCount() const {
  return Count(TaskStatus::kAllocated) + Count(TaskStatus::kBinding) + Count(TaskStatus::kBound) +
         Count(TaskStatus::kRunning);
}

int32_t JobInfo::ReadyCount() const { return PlacedCount() + Count(TaskStatus::kSucceeded); }

void ClusterSnapshot::RecomputeJobAggregates() {
  for (JobInfo& job : jobs) {
    job.status_count.fill(0);
    job.allocated = Resources();
    job.request = Resources();
    for (TaskId t : job.tasks) {
      const TaskInfo& task = tasks[t];
      ++job.status_count[static_cast<size_t>(task.status)];
      if (IsPlaced(task.status)) job.allocated += task.request;
      if (task.status != TaskStatus::kSucceeded && task.status != TaskStatus::kFailed) {
        job.request += task.request;
      }
    }
  }
}

QueueId ClusterSnapshot::FindQueue(std::string_view name) const {
  for (const QueueInfo& q : queues) {
    if (q.name == name) return q.id;
  }
  return kNoId;
}

JobId ClusterSnapshot::FindJob(std::string_view key) const {
  for (const JobInfo& j : jobs) {
    if (j.key() == key) return j.id;
  }
  return kNoId;
}

NodeId ClusterSnapshot::FindNode(std::string_view name) const {
  for (const NodeInfo& n : nodes) {
    if (n.name() == name) return n.id;
  }
  return kNoId;
}

}  // namespace lahar
