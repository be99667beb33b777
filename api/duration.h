// Go / Kubernetes durations ("90s", "10m", "1h30m", "250ms"); a bare number is seconds.
#ifndef LAHAR_API_DURATION_H_
#define LAHAR_API_DURATION_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace lahar {

// Simulated and scheduling time is kept as integer milliseconds: exact and cheap to compare.
using Millis = int64_t;
inline constexpr Millis kNeverMillis = INT64_MIN / 4;  // "long ago": safely subtractable

// Parses a non-negative duration to milliseconds (sub-millisecond parts round up).
absl::StatusOr<Millis> ParseDuration(std::string_view text);
// Formats as Go does for whole units: "1h30m", "90s" -> "1m30s", "250ms".
std::string FormatDuration(Millis millis);

}  // namespace lahar

#endif  // LAHAR_API_DURATION_H_
