// Parked jobs (ClusterCache::ParkJobs): a backlog's waiting jobs that sessions refuse (Pending)
// or set aside (admitted, fitting nowhere) alike are left out of the simulator's snapshots, so
// that a session costs what it judges, not the backlog. Which jobs may be parked is the session's to say (CycleResult::Parkable); the cache
// keeps the classes and brings a job back when anything that decided its class changes.
#include <algorithm>
#include <string>
#include <vector>

#include "cache/cluster_cache.h"

namespace lahar {

void ClusterCache::ParkJobs(JobId representative, const std::vector<JobId>& members) {
  // The entries of the jobs changed since that snapshot (few, against thousands of members):
  // their class may be another one now.
  std::vector<const LaidBlock*> changed;
  changed.reserve(dirty_jobs_.size());
  for (const std::string& key : dirty_jobs_) {
    if (const LaidBlock* entry = FindLaidBlock(key)) changed.push_back(entry);
  }
  std::sort(changed.begin(), changed.end());
  auto entry_of = [&](JobId id) -> LaidBlock* {
    if (id < 0 || static_cast<size_t>(id) >= last_laid_entries_.size()) return nullptr;
    LaidBlock& entry = existing_blocks_[static_cast<size_t>(last_laid_entries_[static_cast<size_t>(id)])];
    return std::binary_search(changed.begin(), changed.end(), &entry) ? nullptr : &entry;
  };
  LaidBlock* rep = entry_of(representative);
  if (rep == nullptr || rep->Parked()) return;
  int32_t parked_class = rep->parked_class;
  for (JobId id : members) {
    LaidBlock* member = entry_of(id);
    if (member == nullptr || member == rep || member->parked_class >= 0) continue;
    if (parked_class < 0) {
      parked_class = parked_classes_++;
      rep->parked_class = parked_class;
      rep->representative = true;
    }
    member->parked_class = parked_class;
    ++parked_count_;
  }
}

void ClusterCache::UnparkAll() {
  if (parked_classes_ == 0) return;
  for (LaidBlock& entry : existing_blocks_) {
    entry.parked_class = -1;
    entry.representative = false;
  }
  parked_count_ = 0;
  parked_classes_ = 0;
}

void ClusterCache::UnparkChanged(LaidBlock& entry) const {
  if (entry.representative) {
    UnparkClass(entry.parked_class);
    return;
  }
  entry.parked_class = -1;
  --parked_count_;
}

void ClusterCache::UnparkClass(int32_t parked_class) const {
  for (LaidBlock& entry : existing_blocks_) {
    if (entry.parked_class != parked_class) continue;
    if (!entry.representative) --parked_count_;
    entry.parked_class = -1;
    entry.representative = false;
  }
}

}  // namespace lahar
