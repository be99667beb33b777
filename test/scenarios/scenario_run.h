// Runs a lahar-sim scenario of test/scenarios through the simulation with the default
// configuration and reads its events.jsonl back, for tests that assert who was bound or evicted
// and when.
#ifndef LAHAR_TEST_SCENARIOS_SCENARIO_RUN_H_
#define LAHAR_TEST_SCENARIOS_SCENARIO_RUN_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/duration.h"

namespace lahar::testing {

struct ScenarioEviction {
  double t = 0;
  std::string pod, job, reason;
};

struct ScenarioWaiting {
  double t = 0;
  std::string kind, reason;
};

struct ScenarioOutcome {
  std::vector<ScenarioEviction> evictions;            // in time order
  std::map<std::string, double> start;                // job -> its first job-start
  std::map<std::string, std::vector<double>> binds;   // job -> the times of its binds
  std::map<std::string, std::string> node_of;         // pod -> the node of its last bind
  std::map<std::string, std::vector<double>> ungates; // job -> the times of its ungate events
  std::map<std::string, double> end;                  // job -> its job-complete
  // job -> (time, running pods after it) at each bind, evict and pod completion
  std::map<std::string, std::vector<std::pair<double, int>>> running;
  std::map<std::string, std::vector<ScenarioWaiting>> waiting;  // job -> its `waiting` events
  std::string events;                                 // events.jsonl as written
  std::string summary;                                // summary.json as written
};

// `file` is relative to test/scenarios ("quotas/queue_tree.yaml"); the run stops at `until`.
// Fails the test on a file or simulation error.
ScenarioOutcome RunScenario(const std::string& file, Millis until);
// The same for a scenario's text under a configuration of the test's.
ScenarioOutcome RunScenarioText(const std::string& scenario_text, std::string_view config_yaml, Millis until);
// The text of test/scenarios/<file>.
std::string ScenarioText(const std::string& file);

}  // namespace lahar::testing

#endif  // LAHAR_TEST_SCENARIOS_SCENARIO_RUN_H_
