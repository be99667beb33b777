// Resource names interned to small integer ids, and dense fixed-point resource vectors.
#ifndef LAHAR_API_RESOURCES_H_
#define LAHAR_API_RESOURCES_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "api/quantity.h"

namespace lahar {

using ResourceId = uint16_t;

// Well-known ids; every other name is interned on first sight. Ids are process-wide and
// never reused, so vectors from different snapshots agree on what index i means.
inline constexpr ResourceId kCpu = 0;
inline constexpr ResourceId kMemory = 1;
inline constexpr ResourceId kPods = 2;
inline constexpr ResourceId kEphemeralStorage = 3;
inline constexpr ResourceId kNvidiaGpu = 4;

ResourceId InternResource(std::string_view name);
// For names read from input: refuses an empty name and, once kMaxResourceNames distinct names
// exist, any new one, so hostile input cannot exhaust the id space.
inline constexpr size_t kMaxResourceNames = 1024;
absl::StatusOr<ResourceId> InternInputResource(std::string_view name);
std::string ResourceName(ResourceId id);
size_t ResourceCount();
QuantityUnit ResourceUnit(ResourceId id);  // kMilli for cpu, kUnit otherwise

// A vector of amounts in canonical units (millicores, bytes, counts) indexed by ResourceId.
// Missing trailing entries are zero, so vectors of different lengths compare naturally.
class Resources {
 public:
  Resources() = default;
  Resources(const Resources&) = default;
  Resources(Resources&&) = default;
  Resources& operator=(Resources&&) = default;
  // Copies amount by amount into the storage it has: InlinedVector's own assignment goes through
  // a generic path that cost a snapshot more than the sums it copies (a node's used, limits...).
  Resources& operator=(const Resources& other) {
    const size_t n = other.amounts_.size();
    if (amounts_.size() != n) amounts_.resize(n);
    int64_t* mine = amounts_.data();
    const int64_t* theirs = other.amounts_.data();
    for (size_t i = 0; i < n; ++i) mine[i] = theirs[i];
    return *this;
  }

  int64_t Get(ResourceId id) const { return id < amounts_.size() ? amounts_[id] : 0; }
  void Set(ResourceId id, int64_t amount);
  void Add(ResourceId id, int64_t amount) {
    if (id < amounts_.size()) {
      amounts_[id] += amount;  // inline: sums that pass over every job add amount by amount
      return;
    }
    Set(id, amount);  // past the end the amount was zero
  }

  // Inline, on raw storage: the hottest arithmetic of every session and snapshot.
  Resources& operator+=(const Resources& other) {
    const size_t n = other.amounts_.size();
    if (n > amounts_.size()) amounts_.resize(n, 0);
    int64_t* mine = amounts_.data();
    const int64_t* theirs = other.amounts_.data();
    for (size_t i = 0; i < n; ++i) mine[i] += theirs[i];
    return *this;
  }
  Resources& operator-=(const Resources& other) {
    const size_t n = other.amounts_.size();
    if (n > amounts_.size()) amounts_.resize(n, 0);
    int64_t* mine = amounts_.data();
    const int64_t* theirs = other.amounts_.data();
    for (size_t i = 0; i < n; ++i) mine[i] -= theirs[i];
    return *this;
  }
  // Every amount times `factor` (n equal jobs summed at once).
  Resources& operator*=(int64_t factor) {
    for (int64_t& amount : amounts_) amount *= factor;
    return *this;
  }
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend Resources operator-(Resources a, const Resources& b) { return a -= b; }
  bool operator==(const Resources& other) const;

  // True when every amount of *this is <= the same amount of `other`.
  // Inline: asked of every admitted job as sessions open (does it hold its min?).
  bool LessEqual(const Resources& other) const {
    const int64_t* mine = amounts_.data();
    const int64_t* theirs = other.amounts_.data();
    const size_t n = amounts_.size();
    const size_t m = other.amounts_.size();
    const size_t common = n < m ? n : m;
    for (size_t i = 0; i < common; ++i) {
      if (mine[i] > theirs[i]) return false;
    }
    for (size_t i = common; i < n; ++i) {
      if (mine[i] > 0) return false;  // a missing amount is 0
    }
    for (size_t i = common; i < m; ++i) {
      if (theirs[i] < 0) return false;
    }
    return true;
  }
  // Like LessEqual, but only dimensions that *this requests (non-zero) are compared.
  // Used for fit checks: a pod asking no GPU fits on a node without GPUs.
  bool FitsIn(const Resources& available) const;
  // The first dimension where *this exceeds `available`, or -1.
  int FirstShortage(const Resources& available) const;
  // Inline: asked of every node as allocate starts, and of every job's sums.
  bool IsZero() const {
    const int64_t* a = amounts_.data();
    for (size_t i = 0, n = amounts_.size(); i < n; ++i) {
      if (a[i] != 0) return false;
    }
    return true;
  }
  bool AnyNegative() const;
  // Element-wise max / min.
  Resources Max(const Resources& other) const;
  Resources Min(const Resources& other) const;
  // *this = Min(other), without the copy.
  void MinWith(const Resources& other);
  // Amounts below zero become zero.
  void ClampNegativeToZero();
  // Every amount zero, the size kept (so that adding to it again does not grow it).
  void SetZero() { std::fill(amounts_.begin(), amounts_.end(), 0); }

  size_t size() const { return amounts_.size(); }
  // The amounts by id (entries past the end are zero): for loops that read several vectors at
  // once, which indexing would check and look up entry by entry.
  const int64_t* data() const { return amounts_.data(); }
  // The same storage with its length, read past the end as zero: loops over many nodes that
  // combine several vectors amount by amount take each vector's storage once, not per amount.
  struct View {
    const int64_t* data;
    size_t size;
    int64_t operator[](size_t i) const { return i < size ? data[i] : 0; }
  };
  View view() const { return {amounts_.data(), amounts_.size()}; }
  // The amounts by id for writing, the vector first grown with zeros to at least `n` entries:
  // for sums over many vectors that would otherwise check the length amount by amount.
  int64_t* GrownData(size_t n) {
    if (n > amounts_.size()) amounts_.resize(n, 0);
    return amounts_.data();
  }
  // Non-zero entries in id order.
  std::vector<std::pair<ResourceId, int64_t>> NonZero() const;
  // "cpu: 4, memory: 16Gi, nvidia.com/gpu: 1" (human readable, for messages and logs).
  std::string DebugString() const;

 private:
  absl::InlinedVector<int64_t, 6> amounts_;
};

}  // namespace lahar

#endif  // LAHAR_API_RESOURCES_H_
