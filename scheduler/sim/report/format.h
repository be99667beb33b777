// Text for the report page: HTML escaping and the number and time formats every table and chart
// prints. Internal to the report.
#ifndef LAHAR_SCHEDULER_SIM_REPORT_FORMAT_H_
#define LAHAR_SCHEDULER_SIM_REPORT_FORMAT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace lahar::report_internal {

// What a table cell shows for a value that does not apply (HTML).
inline constexpr const char* kNone = "&mdash;";

std::string Escape(std::string_view text);

// Cuts `text` to at most `max_bytes` without splitting a UTF-8 sequence, marking the cut.
std::string Truncate(std::string_view text, size_t max_bytes);

// The formatters below return HTML (already escaped), so any of them can fill a cell.
std::string FormatPercent(double fraction);  // 0.125 -> "12.5%"
// Integers with thousands separators, which keep large counts readable at a glance.
std::string FormatCount(double value);
std::string FormatMicros(double micros);
std::string FormatDecimal(double value);  // two decimals
std::string HumanDuration(double seconds);  // FormatHumanDuration, escaped

}  // namespace lahar::report_internal

#endif  // LAHAR_SCHEDULER_SIM_REPORT_FORMAT_H_
