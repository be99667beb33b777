// The scenario / snapshot loader of lahar-sim on arbitrary text: it must return a status,
// never crash, hang or leak. Inputs that load are also run through the configuration parser
// (an inline `scheduler:` block) and, when small, a short simulation.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scheduler/builtins.h"
#include "scheduler/framework/config.h"
#include "scheduler/sim/scenario.h"
#include "scheduler/sim/simulator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto input = lahar::LoadSimInput(text, "fuzz.yaml");
  if (!input.ok()) return 0;
  const lahar::Registry& registry = lahar::BuiltinRegistry();
  auto config = input->scheduler ? lahar::ParseSchedulerConfigNode(*input->scheduler, registry)
                                 : lahar::ParseSchedulerConfig(lahar::DefaultSchedulerConfigYaml(), registry);
  if (!config.ok()) return 0;
  size_t pods = 0;
  for (size_t i = 0; i < input->jobs.size() && pods <= 64; ++i) {
    auto job = input->MakeJob(i);
    if (!job.ok()) __builtin_trap();  // a job read when the input loaded reads again
    pods += job->pods.size();
  }
  if (pods > 64 || input->nodes.size() > 64) return 0;  // keep each run short
  lahar::SimOptions options;
  options.until = 3'600'000;  // one simulated hour
  (void)lahar::RunSimulation(*input, *config, registry, options);
  return 0;
}
