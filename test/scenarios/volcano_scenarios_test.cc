// The Volcano compatibility scenarios of test/scenarios/volcano (spec 3, 4): Volcano's plugins
// behave as in Volcano inside whole simulated runs, each checked against a control run that
// differs only in what the plugin decides.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "api/strings.h"
#include "scheduler/framework/config.h"
#include "test/scenarios/scenario_run.h"

namespace lahar {
namespace {

constexpr Millis kHours = 3600 * 1000;

std::string HelmConfig() {
  std::ifstream in(std::string(LAHAR_FIXTURE_DIR) + "/volcano/volcano-scheduler.conf");
  INFO("Volcano's Helm configuration, from ../shared/fixtures");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `text` with every `from` replaced by `to`.
std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

TEST_CASE("overcommit under Volcano's Helm configuration admits up to the factor and no further") {
  const std::string scenario = testing::ScenarioText("volcano/overcommit.yaml");
  const std::string helm = HelmConfig();
  testing::ScenarioOutcome volcano = testing::RunScenarioText(scenario, helm, 3 * kHours);
  // big runs; medium is admitted (12 of 10 x 1.2) and waits; small (14) is not admitted though
  // two GPUs are free: both start when big ends, after an hour.
  REQUIRE(volcano.start.count("default/big") == 1);
  CHECK(volcano.start["default/big"] < 5);
  REQUIRE(volcano.start.count("default/small") == 1);
  CHECK(volcano.start["default/small"] >= 3600);
  REQUIRE(volcano.start.count("default/medium") == 1);
  CHECK(volcano.start["default/medium"] >= 3600);

  // A factor of 1.4 (14) admits small too, which starts at once on the two free GPUs.
  const std::string wider = Replaced(helm, "  - name: overcommit\n", "  - name: overcommit\n    arguments:\n      overcommit-factor: 1.4\n");
  REQUIRE(wider != helm);
  testing::ScenarioOutcome loose = testing::RunScenarioText(scenario, wider, 3 * kHours);
  REQUIRE(loose.start.count("default/small") == 1);
  CHECK(loose.start["default/small"] < 60);

  // Without overcommit, enqueue admits what is free now: small at once, medium after big.
  const std::string without = Replaced(helm, "  - name: overcommit\n", "");
  testing::ScenarioOutcome plain = testing::RunScenarioText(scenario, without, 3 * kHours);
  REQUIRE(plain.start.count("default/small") == 1);
  REQUIRE(plain.start.count("default/medium") == 1);
  CHECK(plain.start["default/small"] < 60);
  CHECK(plain.start["default/medium"] >= 3600);
}

TEST_CASE("conformance protects kube-system and system-cluster-critical pods from every evicting action") {
  const std::string scenario = testing::ScenarioText("volcano/conformance.yaml");
  testing::ScenarioOutcome protected_run = testing::RunScenarioText(scenario, DefaultSchedulerConfigYaml(), 2 * kHours);
  REQUIRE(protected_run.start.count("kube-system/sys") == 1);
  REQUIRE(protected_run.start.count("default/crit") == 1);
  CHECK(protected_run.evictions.empty());
  CHECK(protected_run.start.count("default/urgent") == 0);
  CHECK(protected_run.start.count("default/b1") == 0);

  // The control: the same jobs, neither in kube-system nor of a critical class, are victims:
  // the elastic worker first (urgent), then the gang for b1.
  const std::string ordinary =
      Replaced(Replaced(scenario, "namespace: kube-system", "namespace: default"), "system-cluster-critical", "low");
  testing::ScenarioOutcome control = testing::RunScenarioText(ordinary, DefaultSchedulerConfigYaml(), 2 * kHours);
  CHECK_FALSE(control.evictions.empty());
  CHECK(control.start.count("default/urgent") == 1);
  CHECK(control.start.count("default/b1") == 1);

  // Without conformance in the configuration, its protection is gone.
  const std::string no_conformance = Replaced(std::string(DefaultSchedulerConfigYaml()), "  - name: conformance\n", "");
  testing::ScenarioOutcome unprotected = testing::RunScenarioText(scenario, no_conformance, 2 * kHours);
  CHECK_FALSE(unprotected.evictions.empty());
}

}  // namespace
}  // namespace lahar
