#include "api/throughput.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/strings.h"

namespace lahar {

absl::StatusOr<std::vector<ThroughputPoint>> ParseThroughput(std::string_view text) {
  std::vector<ThroughputPoint> points;
  const absl::string_view value(text.data(), text.size());
  if (absl::StripAsciiWhitespace(value).empty()) return points;
  for (absl::string_view pair : absl::StrSplit(value, ',')) {
    const std::string shown(absl::StripAsciiWhitespace(pair));
    std::vector<absl::string_view> parts = absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (parts.size() != 2) {
      return absl::InvalidArgumentError(StrCat("\"", shown, "\" is not size=throughput"));
    }
    ThroughputPoint point;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(parts[0]), &point.size) || point.size <= 0) {
      return absl::InvalidArgumentError(StrCat("\"", shown, "\": the size is not a positive integer"));
    }
    const absl::string_view rate = absl::StripAsciiWhitespace(parts[1]);
    if (!absl::SimpleAtod(rate, &point.rate) || !std::isfinite(point.rate) || point.rate < 0 ||
        rate.find_first_of("xX") != absl::string_view::npos) {
      return absl::InvalidArgumentError(
          StrCat("\"", shown, "\": the throughput is not a finite non-negative number"));
    }
    for (const ThroughputPoint& seen : points) {
      if (seen.size == point.size) {
        return absl::InvalidArgumentError(StrCat("size ", point.size, " is reported twice"));
      }
    }
    points.push_back(point);
  }
  std::sort(points.begin(), points.end(),
            [](const ThroughputPoint& a, const ThroughputPoint& b) { return a.size < b.size; });
  return points;
}

std::string FormatThroughput(const std::vector<ThroughputPoint>& points) {
  std::string out;
  for (const ThroughputPoint& p : points) {
    if (!out.empty()) out += ',';
    char rate[32];
    // The shortest of %.Ng that reads back the same double.
    for (int digits = 6; digits <= 17; ++digits) {
      std::snprintf(rate, sizeof(rate), "%.*g", digits, p.rate);
      if (std::strtod(rate, nullptr) == p.rate) break;
    }
    out += StrCat(p.size, "=", rate);
  }
  return out;
}

}  // namespace lahar
