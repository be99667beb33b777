// A 64-bit hash built step by step (splitmix64 finalizer per step), for fingerprints of
// scheduling state: equal inputs in equal order give equal values; different ones collide with
// probability about 2^-64.
#ifndef LAHAR_API_STATE_HASH_H_
#define LAHAR_API_STATE_HASH_H_

#include <cstdint>
#include <string_view>

#include "api/resources.h"

namespace lahar {

inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class StateHash {
 public:
  StateHash& Add(uint64_t value) {
    value_ = Mix64(value_ ^ value);
    return *this;
  }
  StateHash& Add(int64_t value) { return Add(static_cast<uint64_t>(value)); }
  StateHash& Add(int32_t value) { return Add(static_cast<uint64_t>(static_cast<int64_t>(value))); }
  StateHash& Add(bool value) { return Add(static_cast<uint64_t>(value ? 1 : 0)); }
  StateHash& Add(std::string_view text) {
    Add(static_cast<uint64_t>(text.size()));
    uint64_t word = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      word = (word << 8) | static_cast<unsigned char>(text[i]);
      if (i % 8 == 7) {
        Add(word);
        word = 0;
      }
    }
    return Add(word);
  }
  // The non-zero amounts only, so trailing zeros do not change the hash (they do not change
  // Resources::operator== either).
  StateHash& Add(const Resources& resources) {
    for (size_t i = 0; i < resources.size(); ++i) {
      const int64_t amount = resources.Get(static_cast<ResourceId>(i));
      if (amount != 0) Add((static_cast<uint64_t>(i) << 56) ^ static_cast<uint64_t>(amount));
    }
    return Add(uint64_t{0x5eed});  // ends the list
  }
  uint64_t value() const { return value_; }

 private:
  uint64_t value_ = 0;
};

}  // namespace lahar

#endif  // LAHAR_API_STATE_HASH_H_
