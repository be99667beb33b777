// Tests of the pdb plugin: PodDisruptionBudgets protect victims of every evicting action.
#include "plugins/pdb/pdb.h"

#include <catch2/catch.hpp>

#include "scheduler/framework/config.h"
#include "scheduler/builtins.h"
#include "test/testing/cluster_builder.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::RunSession;
using testing::SessionOutcome;

// The default configuration with pdb beside conformance.
std::string WithPdb() {
  SchedulerConfig config = testing::MustParseConfig(DefaultSchedulerConfigYaml());
  PluginOption pdb;
  pdb.name = "pdb";
  config.tiers[0].plugins.push_back(std::move(pdb));
  return config.ToYaml();
}

// One 8-GPU node holding two low-priority gangs of 2 x 2 GPUs; `urgent` needs 4 GPUs.
ClusterBuilder TwoLowGangs() {
  ClusterBuilder b;
  b.Node("n1", "cpu=32,nvidia.com/gpu=8");
  b.PriorityClass("low", 10).PriorityClass("high", 1000);
  b.Job("a", {.min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=2"}}, .priority_class = "low"});
  b.Job("b", {.min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=2"}}, .priority_class = "low"});
  b.RunningRange("a", "w", 0, 1, "n1").RunningRange("b", "w", 0, 1, "n1");
  b.Job("urgent", {.min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}, .priority_class = "high"});
  return b;
}

TEST_CASE("pdb: a budget that keeps a gang whole sends preempt to the unprotected gang") {
  ClusterBuilder b = TwoLowGangs();
  b.DisruptionBudget("a-pdb", "a", "2");
  // Without the plugin, the first gang by name goes: the budget is what protects it.
  SessionOutcome blind = RunSession(b, DefaultSchedulerConfigYaml());
  CHECK(blind.evicts.count("default/a-w-0") == 1);

  SessionOutcome out = RunSession(b, WithPdb());
  REQUIRE(out.evicts.size() == 2);
  CHECK(out.evicts.count("default/b-w-0") == 1);
  CHECK(out.evicts.count("default/b-w-1") == 1);
}

TEST_CASE("pdb: nothing is evicted when every way to make room breaks a budget") {
  ClusterBuilder b = TwoLowGangs();
  b.DisruptionBudget("a-pdb", "a", "1");       // a may lose one pod, never its whole gang
  b.DisruptionBudget("b-pdb", "b", "", "0");   // maxUnavailable 0
  CHECK(RunSession(b, WithPdb()).evicts.empty());
}

TEST_CASE("pdb: a budget lets as many elastic workers go as it allows, and no plan needs more") {
  auto elastic_cluster = [] {
    ClusterBuilder b;
    b.Node("n1", "cpu=32,nvidia.com/gpu=8");
    b.Job("elastic", {.min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}}});
    b.RunningRange("elastic", "w", 0, 7, "n1");
    b.DisruptionBudget("elastic-pdb", "elastic", "", "25%");  // 2 of 8 may be disrupted
    return b;
  };
  ClusterBuilder two = elastic_cluster();
  two.Job("small", {.min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=2"}}});
  SessionOutcome out = RunSession(two, WithPdb());
  CHECK(out.evicts.size() == 2);
  CHECK(out.evicts.count("default/elastic-w-7") == 1);
  CHECK(out.evicts.count("default/elastic-w-6") == 1);

  ClusterBuilder three = elastic_cluster();
  three.Job("bigger", {.min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=3"}}});
  CHECK(RunSession(three, WithPdb()).evicts.empty());
  CHECK(RunSession(three, DefaultSchedulerConfigYaml()).evicts.size() == 3);
}

TEST_CASE("pdb: a status the disruption controller has not caught up with allows nothing") {
  ClusterBuilder b = TwoLowGangs();
  PodDisruptionBudget stale;
  stale.meta.name = "all";
  stale.meta.namespace_ = "default";
  stale.meta.generation = 2;
  stale.selector = LabelSelector{};  // every pod of the namespace
  stale.max_unavailable = IntOrPercent{4, false};
  stale.has_status = true;
  stale.observed_generation = 1;
  stale.disruptions_allowed = 4;
  b.cache().UpsertPodDisruptionBudget(stale);
  CHECK(RunSession(b, WithPdb()).evicts.empty());

  stale.observed_generation = 2;  // caught up: four disruptions allowed
  b.cache().UpsertPodDisruptionBudget(stale);
  CHECK(RunSession(b, WithPdb()).evicts.size() == 2);
}

TEST_CASE("pdb: a budget of another namespace or with a null selector protects nothing") {
  ClusterBuilder b = TwoLowGangs();
  b.DisruptionBudget("elsewhere", "a", "2", "", "other");
  PodDisruptionBudget null_selector;
  null_selector.meta.name = "none";
  null_selector.meta.namespace_ = "default";
  null_selector.min_available = IntOrPercent{100, true};
  b.cache().UpsertPodDisruptionBudget(null_selector);
  SessionOutcome out = RunSession(b, WithPdb());
  CHECK(out.evicts.count("default/a-w-0") == 1);
}

TEST_CASE("pdb: takes no arguments") {
  Arguments arguments("plugin pdb", {{"pdb.enabled", "true"}});
  CHECK_FALSE(BuiltinRegistry().NewPlugin("pdb", arguments).ok());
}

}  // namespace
}  // namespace lahar
