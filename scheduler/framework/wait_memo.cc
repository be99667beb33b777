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

void WaitMemo::SessionEnded() {
  const uint64_t stale_before = sessions_ - 1;  // neither this session nor the last asked
  absl::erase_if(pending_min_, [&](const auto& entry) { return entry.second.asked < stale_before; });
  if (sessions_ % kWorkersKeptSessions == 0) {
    const uint64_t workers_stale_before = sessions_ - std::min(sessions_, kWorkersKeptSessions);
    absl::erase_if(workers_, [&](const auto& entry) { return entry.second.asked < workers_stale_before; });
    absl::erase_if(tasks_parts_, [&](const auto& entry) { return entry.second.asked < workers_stale_before; });
  }
  ++sessions_;
}

}  // namespace lahar
