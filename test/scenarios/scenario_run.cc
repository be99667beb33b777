#include "test/scenarios/scenario_run.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "rapidjson/document.h"
#include "scheduler/builtins.h"
#include "scheduler/framework/config.h"
#include "scheduler/sim/simulator.h"
#include "test/testing/cluster_builder.h"

namespace lahar::testing {

std::string ScenarioText(const std::string& file) {
  std::ifstream in(std::string(LAHAR_SCENARIO_DIR) + "/" + file);
  INFO("scenario " << file);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

ScenarioOutcome RunScenario(const std::string& file, Millis until) {
  return RunScenarioText(ScenarioText(file), DefaultSchedulerConfigYaml(), until);
}

ScenarioOutcome RunScenarioText(const std::string& scenario_text, std::string_view config_yaml, Millis until) {
  auto input = LoadSimInput(scenario_text, "scenario");
  if (!input.ok()) FAIL(std::string(input.status().message()));
  SimOptions options;
  options.until = until;
  auto run = RunSimulation(*input, MustParseConfig(config_yaml), BuiltinRegistry(), options);
  if (!run.ok()) FAIL(std::string(run.status().message()));
  ScenarioOutcome out;
  out.events = run->events_jsonl;
  out.summary = run->summary_json;
  std::map<std::string, int> running;
  auto count = [&](const std::string& job, double t, int delta) {
    running[job] += delta;
    out.running[job].emplace_back(t, running[job]);
  };
  std::istringstream lines(run->events_jsonl);
  std::string line;
  while (std::getline(lines, line)) {
    rapidjson::Document doc;
    doc.Parse(line.c_str());
    const std::string type = doc["type"].GetString();
    const double t = doc["t"].GetDouble();
    if (type == "evict" || type == "pod-complete") count(doc["job"].GetString(), t, -1);
    if (type == "bind") count(doc["job"].GetString(), t, +1);
    if (type == "job-complete") out.end.emplace(doc["job"].GetString(), t);
    if (type == "evict") {
      out.evictions.push_back({t, doc["pod"].GetString(), doc["job"].GetString(), doc["reason"].GetString()});
    } else if (type == "job-start") {
      out.start.emplace(doc["job"].GetString(), t);
    } else if (type == "bind") {
      out.binds[doc["job"].GetString()].push_back(t);
      out.node_of[doc["pod"].GetString()] = doc["node"].GetString();
    } else if (type == "waiting") {
      out.waiting[doc["job"].GetString()].push_back({t, doc["kind"].GetString(), doc["reason"].GetString()});
    } else if (type == "ungate") {
      out.ungates[doc["job"].GetString()].push_back(t);
    }
  }
  return out;
}

}  // namespace lahar::testing
