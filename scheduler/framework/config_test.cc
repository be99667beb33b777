#include "scheduler/framework/config.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "api/strings.h"

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
  std::string name = "b";
  name.append(300, '\x1d');
  const std::string key = "binpack.resources." + name;
  const std::string text = std::string("actions: \"enqueue, backfill\"\ntiers:\n- plugins:\n  - name: binpack\n    arguments:\n      ") +
                           "binpack.resources: \"" + name + "\"\n      " + key + ": 05\n";
  auto config = ParseSchedulerConfig(text, BuiltinRegistry());
  INFO(config.status().ToString());
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

namespace lahar {
namespace {

std::string ReadFixture(const std::string& path) {
  std::ifstream in(std::string(LAHAR_FIXTURE_DIR) + "/" + path);
  INFO("fixture " << LAHAR_FIXTURE_DIR << "/" << path << " (../shared/fixtures beside the project)");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The error message of parsing `yaml`, "" when it parses.
std::string ErrorOf(std::string_view yaml) {
  auto config = ParseSchedulerConfig(yaml, BuiltinRegistry());
  return config.ok() ? "" : std::string(config.status().message());
}

TEST_CASE("Volcano's Helm default configuration loads unchanged, with its flags") {
  auto config = ParseSchedulerConfig(ReadFixture("volcano/volcano-scheduler.conf"), BuiltinRegistry());
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(config->actions == std::vector<std::string>{"enqueue", "allocate", "backfill"});
  REQUIRE(config->tiers.size() == 2);
  const PluginOption& gang = config->tiers[0].plugins[1];
  CHECK(gang.name == "gang");
  CHECK_FALSE(gang.IsEnabled(ExtensionPoint::kPreemptable));
  CHECK(gang.IsEnabled(ExtensionPoint::kJobReady));
  CHECK(config->tiers[1].plugins[0].name == "overcommit");
  CHECK(config->warnings.empty());
}

TEST_CASE("Volcano's plugins and actions that Lahar lacks are named as unsupported") {
  for (const char* plugin : {"tdm", "numa-aware", "deviceshare", "task-topology", "extender", "usage"}) {
    const std::string error = ErrorOf(StrCat("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: ", plugin, "\n"));
    CHECK_THAT(error, Catch::StartsWith("scheduler configuration, line 5: plugin \"" + std::string(plugin) +
                                        "\" is a Volcano plugin that Lahar does not support"));
  }
  CHECK_THAT(ErrorOf("actions: \"enqueue, allocate, shuffle\"\ntiers:\n- plugins:\n  - name: gang\n"),
             Catch::Contains("action \"shuffle\" is a Volcano action that Lahar does not support"));
  // A misspelling is not called a Volcano plugin.
  CHECK_THAT(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: gnag\n"), Catch::Contains("unknown plugin \"gnag\""));
}

TEST_CASE("arguments are declared: a misspelled key or a value of the wrong kind is an error naming key and line") {
  const std::string misspelled = ErrorOf(R"(actions: "enqueue, allocate"
tiers:
- plugins:
  - name: elastic
    arguments:
      elastic.cooldwn: 30s
)");
  CHECK(misspelled == "scheduler configuration, line 6: plugin elastic: unknown argument \"elastic.cooldwn\" "
                      "(valid arguments: elastic.cooldown, elastic.cpuByLimits, elastic.minGain, elastic.goodput)");
  CHECK(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: elastic\n    arguments:\n      elastic.cpuByLimits: 2\n") ==
        "scheduler configuration, line 6: plugin elastic: argument elastic.cpuByLimits: \"2\" is not true or false");
  CHECK(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: binpack\n    arguments:\n      binpack.weight: heavy\n") ==
        "scheduler configuration, line 6: plugin binpack: argument binpack.weight: \"heavy\" is not an integer");
  CHECK(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: overcommit\n    arguments:\n      overcommit-factor: [1]\n") ==
        "scheduler configuration, line 6: plugin overcommit: argument overcommit-factor: expected a number");
  // Plugins without arguments take none.
  CHECK_THAT(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    arguments:\n      gang.strict: true\n"),
             Catch::Contains("line 6: plugin gang: unknown argument \"gang.strict\" (it takes no arguments)"));
  CHECK_THAT(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: gang\nconfigurations:\n- name: allocate\n"
                     "  arguments:\n    minNodesToFnd: 3\n"),
             Catch::Contains("line 8: action allocate: unknown argument \"minNodesToFnd\""));
}

TEST_CASE("Volcano's keys for behaviour Lahar lacks load with a warning naming them") {
  auto config = ParseSchedulerConfig(R"(actions: "enqueue, allocate, preempt"
tiers:
- plugins:
  - name: predicates
    arguments:
      predicate.PodAffinityEnable: true
      predicate.TaintTolerationEnable: true
      volumebinding.shape: [{utilization: 0, score: 0}]
  - name: nodeorder
    arguments:
      imagelocality.weight: 2
      leastrequested.weight: 3
configurations:
- name: preempt
  arguments:
    minCandidateNodesPercentage: 20
)", BuiltinRegistry());
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  std::string all;
  for (const std::string& warning : config->warnings) all += warning + "\n";
  CHECK(config->warnings.size() == 4);
  CHECK_THAT(all, Catch::Contains("plugin nodeorder: argument imagelocality.weight is accepted") &&
                      Catch::Contains("predicate.PodAffinityEnable") && Catch::Contains("volumebinding.shape") &&
                      Catch::Contains("action preempt: argument minCandidateNodesPercentage"));
  // Honoured keys give no warning; the canonical form keeps every key and parses again.
  CHECK_THAT(all, !Catch::Contains("leastrequested") && !Catch::Contains("TaintToleration"));
  auto again = ParseSchedulerConfig(config->ToYaml(), BuiltinRegistry());
  INFO(config->ToYaml());
  REQUIRE(again.ok());
  CHECK(again->ToYaml() == config->ToYaml());
}

TEST_CASE("a configuration's structure is checked: each action once, no empty tier, flags as Volcano spells them") {
  CHECK(ErrorOf("actions: \"enqueue, allocate, allocate\"\ntiers:\n- plugins:\n  - name: gang\n") ==
        "scheduler configuration, line 1: action \"allocate\" appears twice");
  CHECK(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n- plugins: []\n") ==
        "scheduler configuration, line 5: a tier without plugins");
  CHECK(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: gang\n") ==
        "scheduler configuration, line 5: plugin \"gang\" appears twice");
  CHECK_THAT(ErrorOf("actions: [unclosed\n"), Catch::Contains("line"));
  // A flag for Volcano behaviour Lahar does not have: true is an error, false asks nothing.
  CHECK(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: drf\n    enableHierarchy: true\n") ==
        "scheduler configuration, line 5: plugin drf: enableHierarchy: true asks for Volcano behaviour that Lahar "
        "does not have; remove it");
  CHECK(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: drf\n    enableHierarchy: false\n").empty());
  // capacity always divides along the queue tree: Volcano's hierarchical mode.
  CHECK(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: capacity\n    enableHierarchy: true\n").empty());
  CHECK_THAT(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enablePreemptible: false\n"),
             Catch::Contains("unknown key \"enablePreemptible\""));
}

}  // namespace
}  // namespace lahar

namespace lahar {
namespace {

TEST_CASE("configurations as Volcano's user guides write them load, with the warnings they earn") {
  struct Case {
    const char* what;
    const char* yaml;
    size_t warnings;
  };
  const Case cases[] = {
      {"sla", R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: sla
    arguments:
      sla-waiting-time: 1h2m3s
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
)", 0},
      {"capacity, hierarchical", R"(actions: "enqueue, allocate, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: capacity
    enableHierarchy: true
    arguments:
      ancestorReclaimLevel: 1
  - name: nodeorder
)", 1},
      {"binpack with extended resources", R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
    arguments:
      predicate.DynamicResourceAllocationEnable: true
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.cpu: 5
      binpack.memory: 1
      binpack.resources: nvidia.com/gpu, example.com/foo
      binpack.resources.nvidia.com/gpu: 2
      binpack.resources.example.com/foo: 3
)", 1},
      {"flags in YAML 1.1 words, preempt's configuration", R"(actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: no
    enableJobStarving: yes
- plugins:
  - name: proportion
configurations:
- name: preempt
  arguments:
    enableTopologyAwarePreemption: false
    predicateErrorCacheEnable: true
)", 2},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    auto config = ParseSchedulerConfig(c.yaml, BuiltinRegistry());
    INFO(config.status().ToString());
    REQUIRE(config.ok());
    CHECK(config->warnings.size() == c.warnings);
  }
  // Volcano's configuration of network-topology-aware (its weight and hypernode binpack keys) loads.
  auto topology = ParseSchedulerConfig(
      "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n  - name: network-topology-aware\n"
      "    arguments:\n      weight: 10\n      hypernode.binpack.cpu: 5\n      hypernode.binpack.normal-pod.enable: true\n",
      BuiltinRegistry());
  REQUIRE(topology.ok());
  CHECK(topology->warnings.size() == 1);  // weight: accepted, named
  CHECK_THAT(ErrorOf("actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n  - name: numa-aware\n"),
             Catch::Contains("plugin \"numa-aware\" is a Volcano plugin that Lahar does not support"));
}

}  // namespace
}  // namespace lahar
