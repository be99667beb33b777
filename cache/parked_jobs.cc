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
  // The jobs not laid out for a class yet, and the class of those that are.
  std::vector<LaidBlock*> alike;
  alike.reserve(members.size() + 1);
  int32_t parked_class = -1;
  auto take = [&](JobId id) {
    LaidBlock* entry = entry_of(id);
    if (entry == nullptr) return;
    const int32_t laid_for = entry->representative ? entry->parked_class : entry->first_of;
    if (laid_for >= 0) {
      if (parked_class < 0) parked_class = laid_for;
      return;
    }
    if (entry->parked_class < 0) alike.push_back(entry);
  };
  take(representative);
  for (JobId id : members) take(id);
  if (parked_class >= 0) {
    // Jobs that come after the representative join its class; one before it stays laid out.
    const OrderKey& after = representative_order_[static_cast<size_t>(parked_class)];
    std::erase_if(alike, [&](const LaidBlock* entry) { return OrderOf(*entry) < after; });
    std::sort(alike.begin(), alike.end(),
              [](const LaidBlock* a, const LaidBlock* b) { return OrderOf(*a) < OrderOf(*b); });
    ParkMembers(alike, parked_class);
    return;
  }
  if (alike.size() < 3) return;
  RenumberClassesIfMostAreGone();
  std::sort(alike.begin(), alike.end(),
            [](const LaidBlock* a, const LaidBlock* b) { return OrderOf(*a) < OrderOf(*b); });
  parked_class = parked_classes_++;
  alike[0]->first_of = parked_class;
  alike[1]->parked_class = parked_class;
  alike[1]->representative = true;
  representative_order_.push_back(OrderOf(*alike[1]));
  class_members_.emplace_back();
  alike.erase(alike.begin(), alike.begin() + 2);
  ParkMembers(alike, parked_class);
}

void ClusterCache::ParkMembers(const std::vector<LaidBlock*>& entries, int32_t parked_class) const {
  if (entries.empty()) return;
  std::vector<OrderKey>& members = class_members_[static_cast<size_t>(parked_class)];
  const auto members_before = static_cast<std::ptrdiff_t>(members.size());
  for (LaidBlock* entry : entries) {
    entry->parked_class = parked_class;
    park_slots_[static_cast<size_t>(entry - existing_blocks_.data())].parked_class = parked_class;
    members.push_back(OrderOf(*entry));
  }
  parked_count_ += static_cast<int64_t>(entries.size());
  std::inplace_merge(members.begin(), members.begin() + members_before, members.end());
}

void ClusterCache::UnparkClasses(const std::vector<int32_t>& parked_classes) {
  for (int32_t c : parked_classes) {
    if (c >= 0 && c < parked_classes_) UnparkClass(c);
  }
}

void ClusterCache::RenumberClassesIfMostAreGone() {
  constexpr int32_t kFewClasses = 64;  // below this, gone classes cost sessions nothing to speak of
  if (parked_classes_ < kFewClasses) return;
  std::vector<int32_t> renumbered(static_cast<size_t>(parked_classes_), -1);
  int32_t live = 0;
  for (int32_t c = 0; c < parked_classes_; ++c) {
    if (!representative_order_[static_cast<size_t>(c)].key.empty()) renumbered[static_cast<size_t>(c)] = live++;
  }
  if (live * 2 > parked_classes_) return;
  for (int32_t c = 0; c < parked_classes_; ++c) {
    const int32_t to = renumbered[static_cast<size_t>(c)];
    if (to < 0 || to == c) continue;
    representative_order_[static_cast<size_t>(to)] = representative_order_[static_cast<size_t>(c)];
    class_members_[static_cast<size_t>(to)] = std::move(class_members_[static_cast<size_t>(c)]);
  }
  representative_order_.resize(static_cast<size_t>(live));
  class_members_.resize(static_cast<size_t>(live));
  parked_classes_ = live;
  auto renumber = [&renumbered](int32_t& c) {
    if (c >= 0) c = renumbered[static_cast<size_t>(c)];
  };
  for (size_t e = 0; e < existing_blocks_.size(); ++e) {
    renumber(existing_blocks_[e].parked_class);
    renumber(existing_blocks_[e].first_of);
    renumber(park_slots_[e].parked_class);
  }
}

void ClusterCache::UnparkAll() {
  if (parked_classes_ == 0) return;
  for (LaidBlock& entry : existing_blocks_) {
    entry.parked_class = -1;
    entry.representative = false;
    entry.first_of = -1;
  }
  for (ClusterSnapshot::ParkedJob& slot : park_slots_) slot.parked_class = -1;
  parked_count_ = 0;
  parked_classes_ = 0;
  representative_order_.clear();
  class_members_.clear();
}

void ClusterCache::UnparkChanged(LaidBlock& entry) const {
  if (entry.first_of >= 0) {
    const int32_t parked_class = entry.first_of;
    entry.first_of = -1;
    PassFirstPlace(parked_class);
    return;
  }
  if (entry.representative) {
    UnparkClass(entry.parked_class);
    return;
  }
  UnparkMember(entry);
  entry.parked_class = -1;
}

void ClusterCache::UnparkMember(LaidBlock& entry) const {
  park_slots_[static_cast<size_t>(&entry - existing_blocks_.data())].parked_class = -1;
  --parked_count_;
  std::vector<OrderKey>& members = class_members_[static_cast<size_t>(entry.parked_class)];
  members.erase(std::lower_bound(members.begin(), members.end(), OrderOf(entry)));
}

void ClusterCache::UnparkClass(int32_t parked_class) const {
  for (size_t e = 0; e < existing_blocks_.size(); ++e) {
    LaidBlock& entry = existing_blocks_[e];
    if (entry.first_of == parked_class) entry.first_of = -1;
    if (entry.parked_class != parked_class) continue;
    if (!entry.representative) --parked_count_;
    entry.parked_class = -1;
    entry.representative = false;
    park_slots_[e].parked_class = -1;
  }
  class_members_[static_cast<size_t>(parked_class)].clear();
  representative_order_[static_cast<size_t>(parked_class)] = {};
}

void ClusterCache::PassFirstPlace(int32_t parked_class) const {
  const auto c = static_cast<size_t>(parked_class);
  LaidBlock* representative = FindLaidBlock(representative_order_[c].key);
  if (representative == nullptr || representative->parked_class != parked_class || !representative->representative) {
    return;  // the class is gone
  }
  const std::vector<OrderKey>& members = class_members_[c];
  LaidBlock* next = members.empty() ? nullptr : FindLaidBlock(members.front().key);
  representative->representative = false;
  representative->parked_class = -1;
  if (next == nullptr) {
    representative_order_[c] = {};
    return;
  }
  representative->first_of = parked_class;
  UnparkMember(*next);
  next->representative = true;
  representative_order_[c] = OrderOf(*next);
}

}  // namespace lahar
