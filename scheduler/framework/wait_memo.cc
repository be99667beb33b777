#include "scheduler/framework/wait_memo.h"

namespace lahar {

const WaitMemo::FruitlessRun* WaitMemo::Find(std::string_view action, uint64_t fingerprint, Millis now) const {
  if (!enabled_) return nullptr;
  auto it = runs_.find(action);
  if (it == runs_.end() || it->second.fingerprint != fingerprint || now >= it->second.expires) return nullptr;
  return &it->second;
}

void WaitMemo::Remember(std::string_view action, const FruitlessRun& run) {
  if (!enabled_) return;
  auto it = runs_.find(action);
  if (it == runs_.end()) it = runs_.emplace(std::string(action), run).first;
  it->second = run;
}

void WaitMemo::Forget(std::string_view action) {
  auto it = runs_.find(action);
  if (it != runs_.end()) runs_.erase(it);
}

}  // namespace lahar
