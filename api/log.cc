#include "api/log.h"

#include <cstdio>

namespace lahar {
namespace {
std::atomic<int> verbosity{0};
}  // namespace

void SetLogVerbosity(int level) { verbosity.store(level, std::memory_order_relaxed); }
int LogVerbosity() { return verbosity.load(std::memory_order_relaxed); }

LogLine::LogLine(LogSeverity severity, std::string_view component) {
  const char* tag = severity == LogSeverity::kError     ? "E"
                    : severity == LogSeverity::kWarning ? "W"
                                                        : "I";
  stream_ << tag << " [" << component << "] ";
}

LogLine::~LogLine() {
  stream_ << '\n';
  const std::string line = stream_.str();
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace lahar
