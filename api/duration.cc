#include "api/duration.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "api/strings.h"
#include "absl/time/time.h"

namespace lahar {

absl::StatusOr<Millis> ParseDuration(std::string_view text) {
  auto invalid = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("invalid duration \"", text, "\": ", why));
  };
  if (text.empty()) return invalid("empty");
  double seconds;
  if (absl::SimpleAtod(ToAbsl(text), &seconds) && text.find_first_of("eEnNiI") == std::string_view::npos) {
    if (seconds < 0) return invalid("negative");
    if (!std::isfinite(seconds) || seconds > 1e12) return invalid("too large");
    return static_cast<Millis>(std::ceil(seconds * 1000.0 - 1e-9));
  }
  absl::Duration d;
  if (text == "inf" || text == "-inf" || !absl::ParseDuration(std::string(text), &d)) {
    return invalid("want a number of seconds or a Go duration such as 90s, 10m, 1h30m");
  }
  if (d < absl::ZeroDuration()) return invalid("negative");
  if (d > absl::Hours(24 * 365 * 1000)) return invalid("too large");
  return absl::ToInt64Milliseconds(absl::Ceil(d, absl::Milliseconds(1)));
}

std::string FormatDuration(Millis millis) {
  if (millis == 0) return "0s";
  std::string out;
  if (millis < 0) {
    out = "-";
    millis = -millis;
  }
  int64_t hours = millis / 3'600'000;
  int64_t minutes = millis / 60'000 % 60;
  int64_t ms = millis % 60'000;
  if (hours > 0) StrAppend(&out, hours, "h");
  if (minutes > 0) StrAppend(&out, minutes, "m");
  if (ms > 0) {
    if (ms % 1000 == 0) {
      StrAppend(&out, ms / 1000, "s");
    } else if (hours == 0 && minutes == 0 && ms < 1000) {
      StrAppend(&out, ms, "ms");
    } else {
      StrAppend(&out, StrFormat("%.3f", ms / 1000.0), "s");
    }
  }
  return out;
}

}  // namespace lahar
