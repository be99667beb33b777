// volcano-scheduler.conf parsing on arbitrary text: a status, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scheduler/builtins.h"
#include "scheduler/framework/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = lahar::ParseSchedulerConfig(text, lahar::BuiltinRegistry());
  if (config.ok()) {
    // What parsed must parse again from its canonical form.
    auto again = lahar::ParseSchedulerConfig(config->ToYaml(), lahar::BuiltinRegistry());
    if (!again.ok()) __builtin_trap();
  }
  return 0;
}
