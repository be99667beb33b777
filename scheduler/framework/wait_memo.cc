#include "scheduler/framework/wait_memo.h"

namespace lahar {

const WaitMemo::FruitlessRun* WaitMemo::Find(std::string_view action, uint64_t fingerprint, Millis now) const {
  if (!enabled_) return nullptr;
  auto it = runs_.find(action);
  if (it == runs_.end() || it->second.fingerprint != fingerprint || now >= it->second.expires) return nullptr;
  return &it->second;
}

}  // namespace lahar
