// Tests of the preempt action under the default configuration (spec 3, 3.1).
#include "actions/preempt/preempt.h"

#include <catch2/catch.hpp>

#include "scheduler/framework/config.h"
#include "test/testing/cluster_builder.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::RunSession;
using testing::SessionOutcome;

// Two 8-GPU nodes full of two low-priority gangs (2 pods of 4 GPUs on each node).
ClusterBuilder FullOfLowPriority() {
  ClusterBuilder b;
  b.Node("n1", "cpu=32,nvidia.com/gpu=8").Node("n2", "cpu=32,nvidia.com/gpu=8");
  b.PriorityClass("low", 10).PriorityClass("high", 1000);
  b.Job("low-a", {.min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=4"}}, .priority_class = "low"});
  b.Job("low-b", {.min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=4"}}, .priority_class = "low"});
  b.Running("low-a-w-0", "n1").Running("low-a-w-1", "n2").Running("low-b-w-0", "n1").Running("low-b-w-1", "n2");
  return b;
}

TEST_CASE("preempt: a higher-priority gang takes exactly one whole lower-priority gang") {
  ClusterBuilder b = FullOfLowPriority();
  b.Job("urgent", {.min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=4"}}, .priority_class = "high"});
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  REQUIRE(out.evicts.size() == 2);
  // Both pods of one gang (started alike: the first by name), never half of each.
  CHECK(out.evicts.count("default/low-a-w-0") == 1);
  CHECK(out.evicts.count("default/low-a-w-1") == 1);
  for (const auto& [pod, reason] : out.evicts) CHECK(reason == "preempted-for default/urgent");
  CHECK(out.job_updates.at("default/low-a").phase == PodGroupPhase::kPending);  // back to waiting
}

TEST_CASE("preempt: equal priority never preempts") {
  ClusterBuilder b = FullOfLowPriority();
  b.Job("peer", {.min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=4"}}, .priority_class = "low"});
  CHECK(RunSession(b, DefaultSchedulerConfigYaml()).evicts.empty());
}

TEST_CASE("preempt: nothing is evicted when the gang would not fit even then") {
  ClusterBuilder b = FullOfLowPriority();
  b.Job("huge", {.min = 3, .tasks = {{"w", 3, "cpu=1,nvidia.com/gpu=8"}}, .priority_class = "high"});
  CHECK(RunSession(b, DefaultSchedulerConfigYaml()).evicts.empty());
}

TEST_CASE("preempt: nothing is evicted for a gang held back by its scheduling gates, until they go") {
  ClusterBuilder b = FullOfLowPriority();
  testing::TaskSpec worker{"w", 2, "cpu=1,nvidia.com/gpu=4"};
  worker.scheduling_gates = {"example.com/quota"};
  b.Job("urgent", {.min = 2, .tasks = {worker}, .priority_class = "high"});
  // Every action of the default configuration runs (elastic-scale's reservation, reclaim,
  // preempt-elastic-workers, preempt): none evicts for a gang that fits nowhere.
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  CHECK(out.evicts.empty());
  CHECK(out.binds.empty());
  CHECK(out.job_updates.at("default/urgent").reason() == "SchedulingGated");
  CHECK(out.job_updates.at("default/urgent").message() == "2 pods have scheduling gates: example.com/quota");
  // Still none once one pod is ungated: the other keeps the gang from fitting.
  b.SchedulingGates("urgent-w-0", {});
  CHECK(RunSession(b, DefaultSchedulerConfigYaml()).evicts.empty());
  b.SchedulingGates("urgent-w-1", {});
  CHECK(RunSession(b, DefaultSchedulerConfigYaml()).evicts.size() == 2);
}

TEST_CASE("preempt: volcano.sh/preemptable false and kube-system pods are never victims") {
  ClusterBuilder b;
  b.Node("n1", "cpu=32,nvidia.com/gpu=8");
  b.PriorityClass("low", 10).PriorityClass("high", 1000);
  b.Job("kept", {.min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}, .priority_class = "low", .preemptable = false});
  b.Job("system", {.min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}, .priority_class = "low", .ns = "kube-system"});
  b.Running("kept-w-0", "n1").Running("system-w-0", "n1", "kube-system");
  b.Job("urgent", {.min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}, .priority_class = "high"});
  CHECK(RunSession(b, DefaultSchedulerConfigYaml()).evicts.empty());
}

TEST_CASE("preempt: a pod whose eviction the apiserver refused is no victim until the time passes") {
  ClusterBuilder b = FullOfLowPriority();
  b.Job("urgent", {.min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=4"}}, .priority_class = "high"});
  b.cache().MarkEvictionRefused("default/low-a-w-0", /*until=*/60'000);
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml(), /*now=*/1'000);
  CHECK(out.evicts.count("default/low-a-w-0") == 0);
  CHECK(out.evicts.count("default/low-b-w-0") == 1);
  CHECK(out.evicts.count("default/low-b-w-1") == 1);
  CHECK(RunSession(b, DefaultSchedulerConfigYaml(), /*now=*/60'000).evicts.count("default/low-a-w-0") == 1);
}

TEST_CASE("preempt: elastic workers of a lower-priority job go before any whole gang") {
  ClusterBuilder b;
  b.Node("n1", "cpu=32,nvidia.com/gpu=8");
  b.PriorityClass("low", 10).PriorityClass("high", 1000);
  b.Job("rigid", {.min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}, .priority_class = "low"});
  b.Job("elastic", {.min = 1, .tasks = {{"w", 4, "cpu=1,nvidia.com/gpu=1"}}, .priority_class = "low"});
  b.Running("rigid-w-0", "n1").RunningRange("elastic", "w", 0, 3, "n1");
  b.Job("urgent", {.min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=3"}}, .priority_class = "high"});
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  // preempt-elastic-workers runs first and takes the three extras, highest index first.
  CHECK(out.evicts.count("default/rigid-w-0") == 0);
  CHECK(out.evicts.count("default/elastic-w-0") == 0);  // never below min
  CHECK(out.evicts.size() == 3);
}

}  // namespace
}  // namespace lahar
