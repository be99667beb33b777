// PodGroup annotation lahar.sh/throughput (spec 3.2): what a job achieves at each size, as
// "1=10,2=18,3=18.5" (running pods = samples or steps per second). Written by the training code
// or operator, read by the cache; the simulator writes it for its throughput-scaled jobs.
#ifndef LAHAR_API_THROUGHPUT_H_
#define LAHAR_API_THROUGHPUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace lahar {

inline constexpr char kThroughputAnnotation[] = "lahar.sh/throughput";

struct ThroughputPoint {
  int32_t size = 0;   // running pods
  double rate = 0;    // throughput measured at that size, >= 0
  bool operator==(const ThroughputPoint&) const = default;
};

// Parses the annotation's value: comma-separated `size=rate` pairs, blanks around either
// allowed, sizes positive integers, each at most once, rates finite and non-negative. An empty
// value is a job that will report but has not yet (no points). The points come back sorted by
// size. InvalidArgument names the offending pair.
absl::StatusOr<std::vector<ThroughputPoint>> ParseThroughput(std::string_view text);

// The annotation's value for `points` (sorted by size), in the shortest form that reads back
// the same numbers.
std::string FormatThroughput(const std::vector<ThroughputPoint>& points);

}  // namespace lahar

#endif  // LAHAR_API_THROUGHPUT_H_
