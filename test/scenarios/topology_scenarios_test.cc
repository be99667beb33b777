// The network-topology scenarios of test/scenarios/topology (spec 3.3), run through lahar-sim's
// simulation with the default configuration plus the network-topology-aware plugin.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "api/strings.h"
#include "scheduler/framework/config.h"
#include "scheduler/sim/scenario.h"
#include "test/scenarios/scenario_run.h"

namespace lahar {
namespace {

using Outcome = testing::ScenarioOutcome;


constexpr Millis kHour = 3600 * 1000;

// The default configuration with network-topology-aware added to its last tier.
std::string TopologyConfig() { return StrCat(DefaultSchedulerConfigYaml(), "  - name: network-topology-aware\n"); }

Outcome Run(const std::string& file, Millis until) {
  return testing::RunScenarioText(testing::ScenarioText("topology/" + file), TopologyConfig(), until);
}

// The leaf (0..3) of node gpu-<i>.
int LeafOf(const std::string& node) { return (node.back() - '0') / 2; }

// The leaves the pods of `job` (pods <job>-w-<i>) were last bound in.
std::set<int> Leaves(const Outcome& o, const std::string& job) {
  std::set<int> leaves;
  for (const auto& [pod, node] : o.node_of) {
    if (pod.rfind("default/" + job + "-w-", 0) == 0) leaves.insert(LeafOf(node));
  }
  return leaves;
}

TEST_CASE("a hard job is placed whole in the leaf it fills best") {
  Outcome o = Run("hard_best_fit.yaml", kHour);
  REQUIRE(o.start.count("default/hard") == 1);
  CHECK(o.start["default/hard"] <= 11);
  CHECK(Leaves(o, "hard") == std::set<int>{2});
  CHECK(o.node_of["default/hard-w-0"] == "gpu-5");  // gpu-4 has 2 GPUs left, too few
  CHECK(o.node_of["default/hard-w-1"] == "gpu-5");
}

TEST_CASE("a hard job waits whole rather than spread, while a tier-2 job fits in one spine") {
  Outcome o = Run("hard_waits_spine_fits.yaml", kHour);
  CHECK(o.binds.count("default/leafy") == 0);
  REQUIRE(!o.waiting["default/leafy"].empty());
  const testing::ScenarioWaiting& why = o.waiting["default/leafy"].back();
  CHECK(why.kind == "topology");
  CHECK(why.reason == "needs 24 nvidia.com/gpu within one tier-1 hypernode; the largest is leaf-0 with 16");
  REQUIRE(o.start.count("default/spiny") == 1);
  const std::set<int> leaves = Leaves(o, "spiny");
  CHECK((*leaves.begin()) / 2 == (*leaves.rbegin()) / 2);  // one spine
}

TEST_CASE("a soft job runs in the lowest tier that holds it, and anywhere when none does") {
  Outcome o = Run("soft_compact.yaml", kHour);
  REQUIRE(o.start.count("default/soft") == 1);
  const std::set<int> leaves = Leaves(o, "soft");
  CHECK((*leaves.begin()) / 2 == (*leaves.rbegin()) / 2);
  REQUIRE(o.start.count("default/wide") == 1);  // 40 GPUs: spans both spines, still runs
  CHECK(Leaves(o, "wide").size() >= 3);
}

TEST_CASE("a soft job that no domain holds runs across the fewest domains") {
  Outcome o = Run("soft_fewest_racks.yaml", kHour);
  REQUIRE(o.start.count("default/wide") == 1);
  CHECK(Leaves(o, "wide").size() == 2);
  // Without the plugin its pods spread over the emptiest nodes, in every rack.
  Outcome plain = testing::RunScenario("topology/soft_fewest_racks.yaml", kHour);
  CHECK(Leaves(plain, "wide").size() == 3);
}

TEST_CASE("small jobs fill the fullest leaf, so whole-leaf jobs start at once") {
  Outcome o = Run("small_jobs_packed.yaml", kHour);
  for (int i = 0; i < 4; ++i) CHECK(Leaves(o, "small-" + std::to_string(i)) == std::set<int>{0});
  std::set<int> used;
  for (int i = 0; i < 3; ++i) {
    const std::string job = "big-" + std::to_string(i);
    REQUIRE(o.start.count("default/" + job) == 1);
    CHECK(o.start["default/" + job] <= 11);
    const std::set<int> leaves = Leaves(o, job);
    CHECK(leaves.size() == 1);
    used.insert(leaves.begin(), leaves.end());
  }
  CHECK(used == std::set<int>{1, 2, 3});
  // Without the plugin the small jobs spread over the emptiest nodes and one big job waits.
  Outcome plain = testing::RunScenario("topology/small_jobs_packed.yaml", kHour);
  int started_at_once = 0;
  for (int i = 0; i < 3; ++i) started_at_once += plain.start.count("default/big-" + std::to_string(i)) &&
                                                 plain.start["default/big-" + std::to_string(i)] <= 11;
  CHECK(started_at_once < 3);
}

TEST_CASE("preemption for a hard job takes every victim from the one leaf needing the fewest evictions") {
  Outcome o = Run("preempt_one_leaf.yaml", kHour);
  REQUIRE(!o.evictions.empty());
  std::set<std::string> victims;
  for (const auto& e : o.evictions) {
    victims.insert(e.job);
    CHECK(e.reason == "preempted-for default/urgent");
  }
  CHECK(victims == std::set<std::string>{"default/low-b0", "default/low-b1"});
  REQUIRE(o.start.count("default/urgent") == 1);
  CHECK(Leaves(o, "urgent") == std::set<int>{1});
}

TEST_CASE("nothing is evicted for a hard job that no single leaf would hold") {
  Outcome o = Run("preempt_no_single_leaf.yaml", kHour);
  CHECK(o.evictions.empty());
  CHECK(o.binds.count("default/urgent") == 0);
}

TEST_CASE("an elastic hard job grows only inside its own leaf") {
  Outcome o = Run("elastic_in_leaf.yaml", 2 * kHour);
  REQUIRE(o.start.count("default/elastic") == 1);
  CHECK(Leaves(o, "elastic") == std::set<int>{0});
  int most_before_fill_ends = 0;
  int most = 0;
  for (const auto& [t, running] : o.running["default/elastic"]) {
    if (t < 3600) most_before_fill_ends = std::max(most_before_fill_ends, running);
    most = std::max(most, running);
  }
  CHECK(most_before_fill_ends == 2);  // leaves 1-3 are empty, but not its own
  CHECK(most == 4);
}

TEST_CASE("tierRate slows a spread job exactly, and summary.json names the tier each job started in") {
  Outcome o = Run("tier_rate.yaml", 10 * kHour);
  REQUIRE(o.end.count("default/packed") == 1);
  REQUIRE(o.end.count("default/spread") == 1);
  REQUIRE(o.end.count("default/wide") == 1);
  CHECK(o.end["default/packed"] - o.start["default/packed"] == Approx(3600));  // one leaf: full speed
  CHECK(o.end["default/spread"] - o.start["default/spread"] == Approx(7200));  // one spine: x0.5
  CHECK(o.end["default/wide"] - o.start["default/wide"] == Approx(14400));     // both spines: x0.25
  auto tier_of = [&](const std::string& job) {
    const size_t at = o.summary.find("\"job\":\"default/" + job + "\"");
    REQUIRE(at != std::string::npos);
    const size_t next = o.summary.find("\"job\":", at + 1);
    const std::string record = o.summary.substr(at, next - at);
    const size_t tier = record.find("\"tier\":");
    return tier == std::string::npos ? -1 : std::stoi(record.substr(tier + 7));
  };
  CHECK(tier_of("packed") == 1);
  CHECK(tier_of("spread") == 2);
  CHECK(tier_of("wide") == -1);  // no HyperNode holds it whole
  // Whole free domains over time, for the report: both spines free at first, none while wide runs.
  CHECK(o.summary.find(R"("freeDomainSeries":{"1":[[0.0,4])") != std::string::npos);
}

TEST_CASE("a scenario whose topology does not hold together is refused by name") {
  const std::string base = testing::ScenarioText("topology/hard_best_fit.yaml");
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string text = base;
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  struct Case {
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {replace(R"("^gpu-[01]$")", R"("^gpu-[01$")"), "HyperNode leaf-0: member 0 (Node): regexMatch pattern"},
      {replace("selector: {exactMatch: {name: leaf-0}}", "selector: {exactMatch: {name: spine-1}}"),
       "HyperNode spine-0: tier 2 is not above the tier of its member spine-1 (2)"},
      {replace(R"(pattern: "^leaf-[23]$")", R"(pattern: "^leaf-[123]$")"), "HyperNode leaf-1: is a member of both spine-0 and spine-1"},
      {replace("selector: {exactMatch: {name: leaf-1}}", "selector: {exactMatch: {name: leaf-1}, regexMatch: {pattern: x}}"),
       "a selector names exactly one of exactMatch, regexMatch and labelMatch, this one 2"},
      {replace("highestTierAllowed: 1}", "highestTierAllowed: 1, highestTierName: leaf}"),
       "highestTierAllowed and highestTierName are both set"},
      {replace("highestTierAllowed: 1}", "highestTierName: rack}"), "\"rack\" is the tierName of no HyperNode"},
  };
  for (const Case& c : cases) {
    auto input = LoadSimInput(c.text, "bad.yaml");
    REQUIRE_FALSE(input.ok());
    INFO(input.status().message());
    CHECK(std::string(input.status().message()).find(c.error) != std::string::npos);
  }
}

}  // namespace
}  // namespace lahar
