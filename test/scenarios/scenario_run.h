// Runs a scenario of test/scenarios through lahar-sim's simulation and collects what the tests
// assert on: evictions, job starts, and the events.jsonl text itself.
#ifndef LAHAR_TEST_SCENARIOS_SCENARIO_RUN_H_
#define LAHAR_TEST_SCENARIOS_SCENARIO_RUN_H_

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "rapidjson/document.h"
#include "scheduler/builtins.h"
#include "scheduler/framework/config.h"
#include "scheduler/sim/simulator.h"
#include "test/testing/cluster_builder.h"

namespace lahar::testing {

struct ScenarioOutcome {
  std::vector<std::map<std::string, std::string>> evictions;  // pod, job, reason
  std::map<std::string, double> start;                        // job -> first job-start
  std::string events;
};

// The text of test/scenarios/<path>.
inline std::string ScenarioText(const std::string& path) {
  std::ifstream in(std::string(LAHAR_SCENARIO_DIR) + "/" + path);
  INFO("scenario " << path);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Simulates `scenario_text` under `config_yaml` until `until`.
inline ScenarioOutcome RunScenario(const std::string& scenario_text, std::string_view config_yaml, Millis until) {
  auto input = LoadSimInput(scenario_text, "scenario");
  if (!input.ok()) FAIL(std::string(input.status().message()));
  SimOptions options;
  options.until = until;
  auto run = RunSimulation(*input, MustParseConfig(config_yaml), BuiltinRegistry(), options);
  if (!run.ok()) FAIL(std::string(run.status().message()));
  ScenarioOutcome out;
  out.events = run->events_jsonl;
  std::istringstream lines(run->events_jsonl);
  std::string line;
  while (std::getline(lines, line)) {
    rapidjson::Document doc;
    doc.Parse(line.c_str());
    const std::string type = doc["type"].GetString();
    if (type == "evict") {
      out.evictions.push_back({{"pod", doc["pod"].GetString()},
                               {"job", doc["job"].GetString()},
                               {"reason", doc["reason"].GetString()}});
    } else if (type == "job-start" && out.start.count(doc["job"].GetString()) == 0) {
      out.start[doc["job"].GetString()] = doc["t"].GetDouble();
    }
  }
  return out;
}

}  // namespace lahar::testing

#endif  // LAHAR_TEST_SCENARIOS_SCENARIO_RUN_H_
