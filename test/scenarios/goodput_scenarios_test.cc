// The goodput scenarios of test/scenarios/goodput (spec 3.2; 6.1 throughput scaling), run
// through lahar-sim's simulation: spare GPUs go where the jobs' reported throughput says they
// pay, a worker that did not pay is taken back once and not re-added, and jobs that report
// nothing grow as before.
#include <catch2/catch.hpp>

#include <string>

#include "rapidjson/document.h"
#include "scheduler/framework/config.h"
#include "test/scenarios/scenario_run.h"

namespace lahar {
namespace {

using testing::RunScenario;
using testing::RunScenarioText;
using testing::ScenarioOutcome;
using testing::ScenarioText;

constexpr Millis kDay = 24 * 3600 * 1000;

// The default configuration with the elastic plugin ordering by fulfillment alone.
std::string WithoutGoodput() {
  std::string config(DefaultSchedulerConfigYaml());
  const std::string key = "elastic.cooldown: 60s";
  config.replace(config.find(key), key.size(), key + "\n      elastic.goodput: false");
  return config;
}

// The most pods the job ran at once from `from` until before `to`.
int Peak(const ScenarioOutcome& o, const std::string& job, double from = 0, double to = 1e18) {
  int peak = 0;
  for (const auto& [t, running] : o.running.at(job)) {
    if (t >= from && t < to) peak = std::max(peak, running);
  }
  return peak;
}

// Seconds the job ran more than `pods` pods.
double TimeAbove(const ScenarioOutcome& o, const std::string& job, int pods) {
  double total = 0;
  const auto& steps = o.running.at(job);
  for (size_t i = 0; i + 1 < steps.size(); ++i) {
    if (steps[i].second > pods) total += steps[i + 1].first - steps[i].first;
  }
  return total;
}

double ClusterGoodput(const ScenarioOutcome& o) {
  rapidjson::Document summary;
  summary.Parse(o.summary.c_str());
  return summary["cluster"]["goodput"].GetDouble();
}

TEST_CASE("goodput: the linear job gets the spare GPUs and finishes at least 25% sooner than by fulfillment") {
  const std::string file = "goodput/saturating_and_linear.yaml";
  ScenarioOutcome by_gain = RunScenario(file, kDay);
  ScenarioOutcome by_fulfillment = RunScenarioText(ScenarioText(file), WithoutGoodput(), kDay);
  REQUIRE(by_gain.end.count("default/linear") == 1);
  REQUIRE(by_fulfillment.end.count("default/linear") == 1);
  CHECK(by_gain.end["default/linear"] <= 0.75 * by_fulfillment.end["default/linear"]);
  // By fulfillment the two share the GPUs 4 and 4 (and the saturating job takes all 8 once
  // alone); by gain it tries a third worker, reports that it paid 0.05 of a worker, gives it
  // back, and stays at its knee, alone or not.
  CHECK(Peak(by_fulfillment, "default/saturating", 0, by_fulfillment.end["default/linear"]) == 4);
  CHECK(Peak(by_gain, "default/saturating") == 3);
  REQUIRE(by_gain.evictions.size() == 1);
  CHECK(by_gain.evictions[0].job == "default/saturating");
  CHECK(by_gain.evictions[0].reason == "elastic-low-gain");
  CHECK(Peak(by_gain, "default/saturating", by_gain.evictions[0].t) == 2);
  CHECK(Peak(by_gain, "default/linear") == 6);
  // Measured jobs grow one worker at a time, each size measured before the next is tried.
  const auto& binds = by_gain.binds["default/linear"];
  for (size_t i = 1; i < binds.size(); ++i) CHECK(binds[i] > binds[i - 1]);
  CHECK(ClusterGoodput(by_gain) > ClusterGoodput(by_fulfillment));
  CHECK(by_gain.events == RunScenario(file, kDay).events);
}

TEST_CASE("goodput: a flat job holds one worker past its knee only until it reports, then never again") {
  ScenarioOutcome o = RunScenario("goodput/flat.yaml", kDay);
  CHECK(Peak(o, "default/flat") == 2);
  CHECK(TimeAbove(o, "default/flat", 1) <= 300);
  REQUIRE(o.evictions.size() == 1);
  CHECK(o.evictions[0].reason == "elastic-low-gain");
  CHECK(Peak(o, "default/flat", o.evictions[0].t) == 1);
  // The job that reports nothing takes its four workers at once, as before.
  CHECK(o.binds["default/unmeasured"] == std::vector<double>{0, 0, 0, 0});
  REQUIRE(o.end.count("default/flat") == 1);
}

}  // namespace
}  // namespace lahar
