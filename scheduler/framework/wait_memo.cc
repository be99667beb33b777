#include "scheduler/framework/wait_memo.h"

#include <algorithm>

namespace lahar {

const WaitMemo::FruitlessRun* WaitMemo::Find(std::string_view action, uint64_t fingerprint, Millis now) const {
  if (!enabled_) return nullptr;
  auto usable = [&](const FruitlessRun& run) { return run.fingerprint == fingerprint && now < run.expires; };
  auto own = runs_.find(action);
  if (own != runs_.end() && usable(own->second)) return &own->second;
  // Another action's run of the same class over the same state (the class is in the fingerprint).
  for (const auto& [name, run] : runs_) {
    if (usable(run)) return &run;
  }
  return nullptr;
}

WaitMemo::PendingJobMin& WaitMemo::PendingJobMinOf(uint64_t job_version) {
  PendingJobMin& entry = pending_min_[job_version];
  entry.asked = sessions_;
  return entry;
}

WaitMemo::JobWorkers& WaitMemo::JobWorkersOf(uint64_t key) {
  JobWorkers& entry = workers_[key];
  entry.asked = sessions_;
  return entry;
}

WaitMemo::TasksPart& WaitMemo::TasksPartOf(uint64_t key) {
  TasksPart& entry = tasks_parts_[key];
  entry.asked = sessions_;
  return entry;
}

std::vector<WaitMemo::NodeShortage>& WaitMemo::ShortagesOf(const Resources& request, bool future_idle,
                                                           uint64_t node_set_version, size_t nodes) {
  auto it = std::find_if(shortages_.begin(), shortages_.end(), [&](const Shortages& entry) {
    return entry.future_idle == future_idle && entry.request == request;
  });
  if (it == shortages_.end()) it = shortages_.insert(shortages_.end(), Shortages{request, future_idle});
  if (it->node_set_version != node_set_version || it->nodes.size() != nodes) {
    it->nodes.assign(nodes, NodeShortage());
    it->node_set_version = node_set_version;
  }
  it->asked = sessions_;
  return it->nodes;
}

void WaitMemo::SessionEnded() {
  const uint64_t stale_before = sessions_ - 1;  // neither this session nor the last asked
  absl::erase_if(pending_min_, [&](const auto& entry) { return entry.second.asked < stale_before; });
  if (sessions_ % kWorkersKeptSessions == 0) {
    const uint64_t workers_stale_before = sessions_ - std::min(sessions_, kWorkersKeptSessions);
    absl::erase_if(workers_, [&](const auto& entry) { return entry.second.asked < workers_stale_before; });
    absl::erase_if(tasks_parts_, [&](const auto& entry) { return entry.second.asked < workers_stale_before; });
    std::erase_if(shortages_, [&](const Shortages& entry) { return entry.asked < workers_stale_before; });
  }
  ++sessions_;
}

}  // namespace lahar
