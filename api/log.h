// The one logger of Lahar: levelled, component-tagged lines on stderr.
// Level 0 = errors and warnings only (the default), 1 = info, 2+ = per-decision detail.
#ifndef LAHAR_API_LOG_H_
#define LAHAR_API_LOG_H_

#include <atomic>
#include <sstream>
#include <string_view>

namespace lahar {

enum class LogSeverity { kInfo, kWarning, kError };

// Verbosity is a plain atomic int: trivially destructible, safe to read from any thread.
void SetLogVerbosity(int level);
int LogVerbosity();

class LogLine {
 public:
  LogLine(LogSeverity severity, std::string_view component);
  ~LogLine();
  template <typename T>
  LogLine& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

}  // namespace lahar

// LAHAR_LOG(1, "allocate") << "placed " << task;  -- emitted when verbosity >= 1.
#define LAHAR_LOG(level, component) \
  if (::lahar::LogVerbosity() >= (level)) ::lahar::LogLine(::lahar::LogSeverity::kInfo, component)
#define LAHAR_WARN(component) ::lahar::LogLine(::lahar::LogSeverity::kWarning, component)
#define LAHAR_ERROR(component) ::lahar::LogLine(::lahar::LogSeverity::kError, component)

#endif  // LAHAR_API_LOG_H_
