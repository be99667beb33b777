#include "api/cluster_info.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/str_join.h"
#include "api/strings.h"

namespace lahar {

std::string_view TaskStatusName(TaskStatus status) {
  static constexpr std::string_view kNames[] = {"Pending", "Allocated", "Pipelined",
                                                "Binding", "Bound",     "Running",
                                                "Releasing", "Succeeded", "Failed"};
  return kNames[static_cast<size_t>(status)];
}

void ClusterSnapshot::RecountJob(JobInfo& job) const {
  job.status_count.fill(0);
  job.allocated = Resources();
  job.request = Resources();
  for (TaskId t : job.tasks) CountTask(tasks[t], +1, job);
}

void ClusterSnapshot::RecomputeJobAggregates() {
  for (JobInfo& job : jobs) RecountJob(job);
}

QueueId ClusterSnapshot::FindQueue(std::string_view name) const {
  for (const QueueInfo& q : queues) {
    if (q.name == name) return q.id;
  }
  return kNoId;
}

bool ClusterSnapshot::IsAncestor(QueueId ancestor, QueueId queue) const {
  for (QueueId q = queue; q != kNoId; q = queues[q].parent) {
    if (q == ancestor) return true;
  }
  return false;
}

void LinkQueueTree(std::vector<QueueInfo>& queues, const std::vector<std::string>& parents) {
  std::map<std::string_view, QueueId, std::less<>> ids;
  for (const QueueInfo& q : queues) ids[q.name] = q.id;
  for (QueueInfo& q : queues) {
    q.parent = kNoId;
    q.children.clear();
    q.broken.clear();
    q.warning.clear();
  }
  for (QueueInfo& q : queues) {
    const std::string& parent = parents[q.id];
    if (parent.empty() || parent == "root") continue;
    auto it = ids.find(parent);
    if (it == ids.end()) {
      q.broken = StrCat("queue ", q.name, ": parent queue ", parent, " does not exist");
    } else if (it->second == q.id) {
      q.broken = StrCat("queue ", q.name, " is its own parent");
    } else {
      q.parent = it->second;
    }
  }
  // Cycles: walk up from each queue; meeting the start again means it lies on a cycle.
  const size_t n = queues.size();
  for (QueueInfo& q : queues) {
    QueueId at = q.parent;
    std::vector<std::string> path{q.name};
    for (size_t steps = 0; at != kNoId && steps <= n; ++steps) {
      path.push_back(queues[at].name);
      if (at == q.id) {
        q.broken = StrCat("queue ", q.name, " is part of a parent cycle: ", absl::StrJoin(path, " -> "));
        break;
      }
      at = queues[at].parent;
    }
  }
  // Below a broken queue everything is broken too (there is no sound root to share from).
  for (QueueInfo& q : queues) {
    if (!q.broken.empty()) continue;
    for (QueueId at = q.parent; at != kNoId; at = queues[at].parent) {
      if (!queues[at].broken.empty()) {
        q.broken = StrCat("queue ", q.name, ": ancestor queue ", queues[at].name, " is broken");
        break;
      }
    }
  }
  for (QueueInfo& q : queues) {
    if (!q.broken.empty()) {
      q.parent = kNoId;  // cut out of the tree: its jobs wait, the rest shares as if it were not there
      continue;
    }
    if (q.parent != kNoId) queues[q.parent].children.push_back(q.id);
  }
  // Depths and capabilities top-down: a child's capability is capped at its parent's.
  std::vector<QueueId> order;
  for (const QueueInfo& q : queues) {
    if (q.parent == kNoId) order.push_back(q.id);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    QueueInfo& q = queues[order[i]];
    for (QueueId c : q.children) {
      QueueInfo& child = queues[c];
      child.depth = q.depth + 1;
      for (const auto& [id, cap] : q.capability.NonZero()) {
        const int64_t own = child.capability.Get(id);
        if (own == 0 || own > cap) {
          if (own > cap) {
            StrAppend(&child.warning, child.warning.empty() ? "" : "; ", "queue ", child.name, ": capability ",
                      ResourceName(id), " ", own, " is above its parent ", q.name, "'s ", cap, "; capped to it");
          }
          child.capability.Set(id, cap);
        }
      }
      order.push_back(c);
    }
  }
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

void CheckQueueGuarantees(std::vector<QueueInfo>& queues, const Resources& total) {
  Resources guaranteed;
  for (const QueueInfo& q : queues) {
    if (q.parent == kNoId && q.broken.empty()) guaranteed += q.guarantee;
  }
  std::string over;
  for (const auto& [id, amount] : guaranteed.NonZero()) {
    if (id != kPods && amount > total.Get(id)) {
      StrAppend(&over, over.empty() ? "" : ", ", ResourceName(id), " ", amount, " > ", total.Get(id));
    }
  }
  if (over.empty()) return;
  for (QueueInfo& q : queues) {
    if (q.parent != kNoId || !q.broken.empty() || q.guarantee.IsZero()) continue;
    StrAppend(&q.warning, q.warning.empty() ? "" : "; ", "queue ", q.name,
              ": the guarantees of the top-level queues add up to more than the cluster has (", over,
              "); each is honoured only as far as the cluster holds it");
  }
}

}  // namespace lahar
