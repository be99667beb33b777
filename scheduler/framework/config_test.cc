#include "scheduler/framework/config.h"

#include <catch2/catch.hpp>

#include "scheduler/builtins.h"

namespace lahar {
namespace {

TEST_CASE("the canonical form of a configuration parses back to the same configuration") {
  // An argument value with a quote, a backslash and a colon (found by the config fuzzer).
  auto config = ParseSchedulerConfig(R"(actions: "enqueue, allocate"
tiers:
- plugins:
  - name: gang
    enablePreemptable: false
- plugins:
  - name: binpack
    arguments:
      binpack.weight: 05
      binpack.resources: 'nvidia.com/gpu, a"b\c: d'
)", BuiltinRegistry());
  REQUIRE(config.ok());
  auto again = ParseSchedulerConfig(config->ToYaml(), BuiltinRegistry());
  REQUIRE(again.ok());
  CHECK(again->ToYaml() == config->ToYaml());
  CHECK(again->tiers[1].plugins[0].arguments.values().at("binpack.resources") == "nvidia.com/gpu, a\"b\\c: d");
  CHECK_FALSE(again->tiers[0].plugins[0].IsEnabled(ExtensionPoint::kPreemptable));
}

TEST_CASE("an argument key of control characters past YAML's 1024-character key limit once escaped parses again") {
  // Found by the config fuzzer: 300 plain characters that escape to 4 characters each.
  std::string key = "b";
  key.append(300, '\x1d');
  const std::string text = "actions: \"enqueue, backfill\"\ntiers:\n- plugins:\n  - name: priority\n    arguments:\n      " +
                           key + ": 05\n";
  auto config = ParseSchedulerConfig(text, BuiltinRegistry());
  REQUIRE(config.ok());
  auto again = ParseSchedulerConfig(config->ToYaml(), BuiltinRegistry());
  INFO(again.status().ToString());
  REQUIRE(again.ok());
  CHECK(again->tiers[0].plugins[0].arguments.values().at(key) == "05");
}

TEST_CASE("unknown actions and plugins are errors that list the valid names") {
  auto bad_action = ParseSchedulerConfig("actions: \"enqueue, alocate\"\ntiers: []\n", BuiltinRegistry());
  REQUIRE_FALSE(bad_action.ok());
  CHECK(std::string(bad_action.status().message()).find("unknown action \"alocate\"") != std::string::npos);
  auto bad_plugin = ParseSchedulerConfig("actions: allocate\ntiers:\n- plugins:\n  - name: gangg\n", BuiltinRegistry());
  REQUIRE_FALSE(bad_plugin.ok());
  CHECK(std::string(bad_plugin.status().message()).find("valid plugins: ") != std::string::npos);
}

}  // namespace
}  // namespace lahar

#include "test/testing/session_fixture.h"

namespace lahar {
namespace {

TEST_CASE("an enable flag set to false turns that hook of the plugin off") {
  testing::ClusterBuilder b;
  b.PriorityClass("high", 1000).Node("n", "cpu=4");
  b.Job("low", {.tasks = {{"w", 1, "cpu=1"}}});
  b.Job("urgent", {.tasks = {{"w", 1, "cpu=1"}}, .priority_class = "high"});
  constexpr char kOn[] = "actions: allocate\ntiers:\n- plugins:\n  - name: priority\n";
  constexpr char kOff[] = "actions: allocate\ntiers:\n- plugins:\n  - name: priority\n    enableJobOrder: false\n";
  testing::SessionFixture on(b, kOn);
  CHECK(on->JobOrderLess(on.job("default/urgent"), on.job("default/low")));
  // Without priority's job order the framework's tie-break decides: creation order, low first.
  testing::SessionFixture off(b, kOff);
  CHECK(off->JobOrderLess(off.job("default/low"), off.job("default/urgent")));
}

}  // namespace
}  // namespace lahar
