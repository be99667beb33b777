#include "api/resources.h"

#include <algorithm>
#include <functional>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "api/strings.h"

namespace lahar {
namespace {

struct Interner {
  std::mutex mu;
  std::vector<std::string> names;
  absl::flat_hash_map<std::string, ResourceId> ids;
  Interner() {
    for (std::string_view name :
         {"cpu", "memory", "pods", "ephemeral-storage", "nvidia.com/gpu"}) {
      ids.emplace(std::string(name), static_cast<ResourceId>(names.size()));
      names.emplace_back(name);
    }
  }
};

// Never destroyed: resource ids must stay valid during static destruction.
Interner& GetInterner() {
  static Interner* interner = new Interner();
  return *interner;
}

}  // namespace

ResourceId InternResource(std::string_view name) {
  Interner& interner = GetInterner();
  std::lock_guard<std::mutex> lock(interner.mu);
  auto it = interner.ids.find(ToAbsl(name));
  if (it != interner.ids.end()) return it->second;
  auto id = static_cast<ResourceId>(interner.names.size());
  interner.names.emplace_back(name);
  interner.ids.emplace(std::string(name), id);
  return id;
}

absl::StatusOr<ResourceId> InternInputResource(std::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("empty resource name");
  Interner& interner = GetInterner();
  {
    std::lock_guard<std::mutex> lock(interner.mu);
    auto it = interner.ids.find(ToAbsl(name));
    if (it != interner.ids.end()) return it->second;
    if (interner.names.size() >= kMaxResourceNames) {
      return absl::ResourceExhaustedError(
          StrCat("too many distinct resource names (", kMaxResourceNames, "); refusing \"", name, "\""));
    }
  }
  return InternResource(name);
}

std::string ResourceName(ResourceId id) {
  Interner& interner = GetInterner();
  std::lock_guard<std::mutex> lock(interner.mu);
  return id < interner.names.size() ? interner.names[id] : StrCat("resource#", id);
}

size_t ResourceCount() {
  Interner& interner = GetInterner();
  std::lock_guard<std::mutex> lock(interner.mu);
  return interner.names.size();
}

QuantityUnit ResourceUnit(ResourceId id) {
  return id == kCpu ? QuantityUnit::kMilli : QuantityUnit::kUnit;
}

void Resources::Set(ResourceId id, int64_t amount) {
  if (id >= amounts_.size()) {
    if (amount == 0) return;
    amounts_.resize(id + 1, 0);
  }
  amounts_[id] = amount;
}

namespace {

// Whether `holds(mine, theirs)` for every id, a missing entry being an amount of zero (which
// matters when the other side holds a negative amount).
template <typename Holds>
bool EveryAmount(const Resources& a, const Resources& b, Holds holds) {
  const int64_t* x = a.data();
  const int64_t* y = b.data();
  const size_t common = std::min(a.size(), b.size());
  for (size_t i = 0; i < common; ++i) {
    if (!holds(x[i], y[i])) return false;
  }
  for (size_t i = common; i < a.size(); ++i) {
    if (!holds(x[i], 0)) return false;
  }
  for (size_t i = common; i < b.size(); ++i) {
    if (!holds(0, y[i])) return false;
  }
  return true;
}

}  // namespace

bool Resources::operator==(const Resources& other) const { return EveryAmount(*this, other, std::equal_to<>()); }

bool Resources::FitsIn(const Resources& available) const { return FirstShortage(available) < 0; }

int Resources::FirstShortage(const Resources& available) const {
  const int64_t* want = amounts_.data();
  const int64_t* have = available.amounts_.data();
  const size_t n = amounts_.size();
  const size_t n_have = available.amounts_.size();
  for (size_t i = 0; i < n; ++i) {
    if (want[i] > 0 && want[i] > (i < n_have ? have[i] : 0)) return static_cast<int>(i);
  }
  return -1;
}

bool Resources::AnyNegative() const {
  return std::any_of(amounts_.begin(), amounts_.end(), [](int64_t v) { return v < 0; });
}

// Both walk the longer vector: a missing entry is an amount of zero, which matters when the
// other side holds a negative amount.
Resources Resources::Max(const Resources& other) const {
  Resources out = *this;
  if (other.amounts_.size() > out.amounts_.size()) out.amounts_.resize(other.amounts_.size(), 0);
  for (size_t i = 0; i < out.amounts_.size(); ++i) {
    out.amounts_[i] = std::max(out.amounts_[i], other.Get(static_cast<ResourceId>(i)));
  }
  return out;
}

Resources Resources::Min(const Resources& other) const {
  Resources out = *this;
  if (other.amounts_.size() > out.amounts_.size()) out.amounts_.resize(other.amounts_.size(), 0);
  for (size_t i = 0; i < out.amounts_.size(); ++i) {
    out.amounts_[i] = std::min(out.amounts_[i], other.Get(static_cast<ResourceId>(i)));
  }
  return out;
}

void Resources::MinWith(const Resources& other) {
  const size_t n_other = other.amounts_.size();
  if (n_other > amounts_.size()) amounts_.resize(n_other, 0);
  int64_t* mine = amounts_.data();
  const int64_t* theirs = other.amounts_.data();
  for (size_t i = 0, n = amounts_.size(); i < n; ++i) mine[i] = std::min(mine[i], i < n_other ? theirs[i] : 0);
}

void Resources::ClampNegativeToZero() {
  int64_t* a = amounts_.data();
  for (size_t i = 0, n = amounts_.size(); i < n; ++i) a[i] = std::max<int64_t>(a[i], 0);
}

std::vector<std::pair<ResourceId, int64_t>> Resources::NonZero() const {
  std::vector<std::pair<ResourceId, int64_t>> out;
  for (size_t i = 0; i < amounts_.size(); ++i) {
    if (amounts_[i] != 0) out.emplace_back(static_cast<ResourceId>(i), amounts_[i]);
  }
  return out;
}

std::string Resources::DebugString() const {
  std::string out;
  for (const auto& [id, amount] : NonZero()) {
    if (!out.empty()) out += ", ";
    StrAppend(&out, ResourceName(id), ": ", FormatQuantity(amount, ResourceUnit(id)));
  }
  return out.empty() ? "none" : out;
}

}  // namespace lahar
