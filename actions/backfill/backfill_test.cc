// Tests of the backfill action, alone and after allocate, under the default tiers without the
// elastic plugin.
#include "actions/backfill/backfill.h"

#include <catch2/catch.hpp>

#include "scheduler/builtins.h"
#include "scheduler/framework/cycle.h"
#include "scheduler/framework/wait_memo.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/default_tiers.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::RunSession;
using testing::SessionOutcome;

using BindMap = std::map<std::string, std::string>;

const std::string kBackfillOnly = testing::DefaultTiersConfig("backfill");
const std::string kAllocateBackfill = testing::DefaultTiersConfig("allocate, backfill");

TEST_CASE("backfill: best-effort pods beyond the min go wherever a pod slot is free") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4,pods=3");
  // A driver with requests (allocate places it: the min) and three best-effort executors.
  b.Job("spark", {.min = 1, .tasks = {{"driver", 1, "cpu=1"}, {"executor", 3, ""}}});
  SessionOutcome out = RunSession(b, kAllocateBackfill);
  // 3 pod slots: the driver and executors 0 and 1; executor 2 finds no slot.
  CHECK(out.bind_order == std::vector<std::string>{"default/spark-driver-0", "default/spark-executor-0",
                                                   "default/spark-executor-1"});
  CHECK(out.binds.at("default/spark-executor-1") == "n1");
}

TEST_CASE("backfill: best-effort pods respect predicates") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4", {}, {{"dedicated", "infra", "NoSchedule"}});
  b.Node("n2", "cpu=4");
  b.Node("n3", "cpu=4");
  b.Cordon("n3");
  b.Job("be", {.min = 1, .tasks = {{"w", 2, ""}}});
  SessionOutcome out = RunSession(b, kBackfillOnly);
  // n1 is tainted and n3 cordoned: the min (w-0) and the extra (w-1) both land on n2.
  CHECK(out.binds == BindMap{{"default/be-w-0", "n2"}, {"default/be-w-1", "n2"}});
}

TEST_CASE("backfill: a single-pod job is placed when no job ahead of it waits") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  b.Job("small", {.tasks = {{"w", 1, "cpu=1"}}});
  b.Job("gang", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}});
  SessionOutcome out = RunSession(b, kBackfillOnly);
  // small comes first and binds; the gang (requests, min 2) is allocate's work, not backfill's.
  CHECK(out.binds == BindMap{{"default/small-w-0", "n1"}});
}

TEST_CASE("backfill: nothing jumps ahead of a waiting gang") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  b.Job("gang", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}});
  b.Job("small", {.tasks = {{"w", 1, "cpu=1"}}});
  b.Job("be", {.tasks = {{"w", 1, ""}}});
  SessionOutcome out = RunSession(b, kBackfillOnly);
  // The gang comes first and waits, so small (which takes resources) must wait behind it;
  // the best-effort job takes none and still goes.
  CHECK(out.binds == BindMap{{"default/be-w-0", "n1"}});
}

TEST_CASE("backfill: the first waiting gang in job order holds back what comes after it, whatever its name") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  // Job order is arrival order here: z-gang, small, late, a-gang. Names sort a-gang first.
  b.Job("z-gang", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}});
  b.Job("small", {.tasks = {{"w", 1, "cpu=1"}}});
  b.Job("late", {.tasks = {{"w", 1, "cpu=1"}}});
  b.Job("a-gang", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}});
  CHECK(RunSession(b, kBackfillOnly).binds.empty());

  ClusterBuilder c;
  c.Node("n1", "cpu=4");
  c.Job("small", {.tasks = {{"w", 1, "cpu=1"}}});
  c.Job("z-gang", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}});
  c.Job("late", {.tasks = {{"w", 1, "cpu=1"}}});
  c.Job("a-gang", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}});
  CHECK(RunSession(c, kBackfillOnly).binds == BindMap{{"default/small-w-0", "n1"}});
}

TEST_CASE("backfill: idle capacity a pipelined gang waits for stays free") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=2");
  b.Job("old", {.tasks = {{"w", 1, "cpu=4"}}, .phase = PodGroupPhase::kRunning});
  b.Running("old-w-0", "n1");
  REQUIRE(b.cache().MarkReleasing("default/old-w-0").ok());
  // g fits on n2 plus n1's releasing 4 cpu: allocate holds it (pipelined) and lets go at its
  // end; late could then take n2's idle 2 cpu, but g is ahead of it and waiting.
  b.Job("g", {.min = 2, .tasks = {{"w", 2, "cpu=2"}}});
  b.Job("late", {.tasks = {{"w", 1, "cpu=2"}}});
  SessionOutcome out = RunSession(b, kAllocateBackfill);
  CHECK(out.binds.empty());
}

TEST_CASE("backfill: a pod with scheduling gates is not placed, and its job says why") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  testing::TaskSpec gated{"w", 1, "cpu=1"};
  gated.scheduling_gates = {"example.com/quota"};
  b.Job("small", {.tasks = {gated}});
  testing::TaskSpec gated_be{"w", 1, ""};
  gated_be.scheduling_gates = {"example.com/quota", "example.com/b"};
  b.Job("be", {.tasks = {gated_be}});
  SessionOutcome out = RunSession(b, kBackfillOnly);
  CHECK(out.binds.empty());
  CHECK(out.job_updates.at("default/small").reason() == "SchedulingGated");
  CHECK(out.job_updates.at("default/small").message() == "1 pod has scheduling gates: example.com/quota");
  CHECK(out.job_updates.at("default/be").message() == "1 pod has scheduling gates: example.com/b, example.com/quota");

  b.SchedulingGates("small-w-0", {}).SchedulingGates("be-w-0", {});
  CHECK(RunSession(b, kBackfillOnly).binds == BindMap{{"default/small-w-0", "n1"}, {"default/be-w-0", "n1"}});
}

TEST_CASE("backfill: takes allocate's node-search arguments") {
  CHECK(NewBackfillAction(Arguments("action backfill", {{"minNodesToFind", "10"}})).ok());
  CHECK(!BuiltinRegistry().NewAction("backfill", Arguments("action backfill", {{"bogus", "1"}})).ok());
}

// Backfill tries the first single-pod job in job order and, when it fails, holds back the ones
// after it, which keep what allocate told them. The first of a class of parked jobs stays laid
// out ahead of its representative (ClusterCache::ParkJobs), so when backfill's try for that
// first job fails for another reason than allocate gave, the representative and the jobs parked
// behind it keep allocate's reason, as in a session over every job.
TEST_CASE("backfill: a try for the first of a class of parked jobs holds back its representative and members") {
  ClusterBuilder b;
  b.Node("n1", "cpu=10,nvidia.com/gpu=4");
  for (const char* name : {"a", "b", "c"}) b.Job(name, {.tasks = {{"w", 1, "cpu=8,nvidia.com/gpu=8"}}});
  const std::string config = testing::DefaultTiersConfig("allocate, backfill");
  WaitMemo memo;
  SessionOutcome first;
  REQUIRE(testing::RunParkingSession(b, config, memo, &first) == testing::ParkableClasses{{0, {1, 2}}});
  Apply(b, first);
  b.cache().ParkJobs(0, {1, 2});
  // x takes room on n1 in allocate: backfill's try for a then finds too little cpu as well as
  // too little gpu, which allocate did not see; b and c, after a, keep allocate's reason.
  b.Job("x", {.tasks = {{"w", 1, "cpu=4,nvidia.com/gpu=1"}}});
  auto run = [&](ClusterCache::Layout layout) {
    WaitMemo plain;
    auto result = RunSchedulingCycle(b.cache().Snapshot(1000, {}, layout), testing::MustParseConfig(config),
                                     BuiltinRegistry(), layout == ClusterCache::Layout::kLeaveOutParked ? &memo : &plain);
    REQUIRE(result.ok());
    return *std::move(result);
  };
  CycleResult every = run(ClusterCache::Layout::kEveryJob);
  std::map<std::string, std::string> told;
  for (const CycleResult::JobUpdate& u : every.job_updates) told[u.job] = u.message();
  REQUIRE(told.count("default/a") == 1);
  CHECK(told.count("default/b") == 0);  // as allocate told it the session before
  CHECK(told.count("default/c") == 0);
  const CycleResult parked = run(ClusterCache::Layout::kLeaveOutParked);
  CHECK_FALSE(parked.needs_parked_jobs());
  std::map<std::string, std::string> told_parked;
  for (const CycleResult::JobUpdate& u : parked.job_updates) told_parked[u.job] = u.message();
  CHECK(told_parked == told);
}

}  // namespace
}  // namespace lahar
