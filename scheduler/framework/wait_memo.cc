#include "scheduler/framework/wait_memo.h"

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

void WaitMemo::SessionEnded() {
  for (auto it = pending_min_.begin(); it != pending_min_.end();) {
    if (it->second.asked + 1 < sessions_) {
      pending_min_.erase(it++);
    } else {
      ++it;
    }
  }
  ++sessions_;
}

}  // namespace lahar
