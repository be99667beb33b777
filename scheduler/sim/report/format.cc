#include "scheduler/sim/report/format.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/strings.h"
#include "scheduler/sim/report/report.h"

namespace lahar {
namespace report_internal {

std::string Escape(std::string_view text) { return HtmlEscape(text); }

std::string Truncate(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t end = max_bytes - 1;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return StrCat(text.substr(0, end), "\u2026");
}

std::string FormatPercent(double fraction) { return StrFormat("%.1f%%", fraction * 100); }

std::string FormatCount(double value) {
  std::string digits = StrFormat("%.0f", std::fabs(value));
  std::string out = value < 0 && std::llround(value) != 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string FormatMicros(double micros) {
  if (micros >= 10000) return StrFormat("%.1f ms", micros / 1000);
  return StrFormat("%.0f &micro;s", micros);
}

std::string FormatDecimal(double value) { return StrFormat("%.2f", value); }

std::string HumanDuration(double seconds) { return Escape(FormatHumanDuration(seconds)); }

}  // namespace report_internal

std::string FormatHumanDuration(double seconds) {
  if (std::isnan(seconds)) return "-";
  if (seconds < 0) return StrCat("-", FormatHumanDuration(-seconds));
  if (seconds == 0) return "0s";
  if (seconds < 9.95) return StrFormat("%.1fs", seconds);
  if (seconds < 59.5) return StrFormat("%.0fs", seconds);
  // Past ~30 years only the magnitude matters, and llround would overflow further out.
  if (seconds >= 1e9) return StrFormat("%.3gd", seconds / 86400);
  // Round once at the precision printed, so 3599.7s reads "1h 00m", never "59m 60s".
  if (const int64_t total = std::llround(seconds); total < 3600) {
    return StrFormat("%lldm %02llds", static_cast<long long>(total / 60),
                     static_cast<long long>(total % 60));
  }
  if (const int64_t minutes = std::llround(seconds / 60); minutes < 24 * 60) {
    return StrFormat("%lldh %02lldm", static_cast<long long>(minutes / 60),
                     static_cast<long long>(minutes % 60));
  }
  const int64_t hours = std::llround(seconds / 3600);
  return StrFormat("%lldd %02lldh", static_cast<long long>(hours / 24),
                   static_cast<long long>(hours % 24));
}

}  // namespace lahar
