// A job's place in an order the session's hooks decide, as a key of the job alone. A hook that
// compares two jobs by values of each may also give those values (JobKeyFn): where every hook of
// an order does, jobs ranked many times over are compared by keys made once per change of the
// job, not by calling every hook for every comparison (RankVictims' elastic order).
#ifndef LAHAR_SCHEDULER_FRAMEWORK_ORDER_KEY_H_
#define LAHAR_SCHEDULER_FRAMEWORK_ORDER_KEY_H_

#include <cstdint>
#include <functional>

#include "api/cluster_info.h"

namespace lahar {

class OrderKey {
 public:
  // Each part compares as the hook it stands for does: the lower first unless `higher_first`,
  // by the tests the hooks make (`a == b`, then `a < b` or `a > b`), so that even NaN compares
  // as it does there.
  void AddNumber(double value, bool higher_first = false) {
    Part part = NewPart(Kind::kNumber, higher_first);
    part.number = value;
    Add(part);
  }
  void AddInteger(int64_t value, bool higher_first = false) {
    Part part = NewPart(Kind::kInteger, higher_first);
    part.integer = value;
    Add(part);
  }
  // numerator / denominator, by cross products as CompareFulfillment compares them.
  void AddRatio(int64_t numerator, int64_t denominator, bool higher_first = false) {
    Part part = NewPart(Kind::kRatio, higher_first);
    part.integer = numerator;
    part.denominator = denominator;
    Add(part);
  }
  // Parts added from now on stand for hooks asked with the two jobs swapped (an order that
  // asks `hook(r, l)` where another asks `hook(l, r)`).
  void Swap() { swapped_ = !swapped_; }
  void Clear() {
    size_ = 0;
    swapped_ = false;
    complete_ = true;
  }
  // False when more parts were added than a key holds (kMaxParts): then it compares nothing.
  bool complete() const { return complete_; }

  // <0 when `a`'s job comes first, 0 when tied. Keys of one order have the same parts in turn.
  friend int Compare(const OrderKey& a, const OrderKey& b) {
    const Part* left = a.parts_;
    const Part* right = b.parts_;
    for (const Part* end = left + a.size_; left != end; ++left, ++right) {
      const int c = left->swapped ? ComparePart(*right, *left) : ComparePart(*left, *right);
      if (c != 0) return c;
    }
    return 0;
  }

 private:
  enum class Kind : uint8_t { kNumber, kInteger, kRatio };
  struct Part {
    Kind kind = Kind::kInteger;
    bool higher_first = false;
    bool swapped = false;
    union {
      double number;
      int64_t integer = 0;  // the integer, or the ratio's numerator
    };
    int64_t denominator = 0;
  };
  static Part NewPart(Kind kind, bool higher_first) {
    Part part;
    part.kind = kind;
    part.higher_first = higher_first;
    return part;
  }
  template <typename T>
  static int CompareValues(T l, T r, bool higher_first) {
    if (l == r) return 0;
    return higher_first ? (l > r ? -1 : 1) : (l < r ? -1 : 1);
  }
  static int ComparePart(const Part& l, const Part& r) {
    switch (l.kind) {
      case Kind::kNumber:
        return CompareValues(l.number, r.number, l.higher_first);
      case Kind::kInteger:
        return CompareValues(l.integer, r.integer, l.higher_first);
      case Kind::kRatio:
        return CompareValues(l.integer * r.denominator, r.integer * l.denominator, l.higher_first);
    }
    return 0;
  }
  void Add(Part part) {
    if (size_ == kMaxParts) {
      complete_ = false;
      return;
    }
    part.swapped = swapped_;
    parts_[size_++] = part;
  }

  static constexpr uint8_t kMaxParts = 16;  // the built-in plugins' orders make a dozen
  Part parts_[kMaxParts];
  uint8_t size_ = 0;
  bool swapped_ = false;
  bool complete_ = true;
};

// Adds the job's parts of a hook's order: comparing two jobs' keys must give what the hook's
// comparison of them gives. The parts read the job alone (and what no task change moves), so
// that a key stays right until the job's own tasks change.
using JobKeyFn = std::function<void(const JobInfo&, OrderKey&)>;

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_ORDER_KEY_H_
