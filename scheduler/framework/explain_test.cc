// What `lahar-sim explain`, /debug/explain and `kubectl lahar why` say would let a job start
// (spec 7): read off the cluster the session saw, from the reason the session gave.
#include "scheduler/framework/explain.h"

#include <catch2/catch.hpp>

#include "scheduler/builtins.h"
#include "test/testing/cluster_builder.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::RunSession;
using testing::SessionOutcome;

// Queues a and b of equal weight; b's two jobs hold all 8 GPUs. a asks 2, so it deserves 2 and
// b 6: b holds 2 beyond its share. Reclaim is not configured, so a's job waits: the nodes are full.
ClusterBuilder Borrowed() {
  ClusterBuilder b;
  b.Node("n1", "cpu=16,memory=64Gi,nvidia.com/gpu=4").Node("n2", "cpu=16,memory=64Gi,nvidia.com/gpu=4");
  b.Queue("a", 1).Queue("b", 1);
  b.Job("b1", {.queue = "b", .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}});
  b.Job("b2", {.queue = "b", .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}});
  b.Running("b1-w-0", "n1").Running("b2-w-0", "n2");
  b.Job("a1", {.queue = "a", .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=2"}}});
  return b;
}

constexpr char kAllocateOnly[] = R"(
actions: "enqueue, allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
)";

const JobInfo& Job(const ClusterSnapshot& snapshot, const std::string& key) {
  for (const JobInfo& job : snapshot.jobs) {
    if (job.key() == key) return job;
  }
  FAIL("no job " << key);
  return snapshot.jobs.front();
}

TEST_CASE("a job no node can hold: a node freeing a pod's worth, and the queues holding beyond their share") {
  ClusterBuilder b = Borrowed();
  SessionOutcome out = RunSession(b, kAllocateOnly);
  const CycleResult::JobUpdate& update = out.job_updates.at("default/a1");
  REQUIRE(update.waiting != nullptr);
  REQUIRE(update.waiting->kind == WaitKind::kNoFit);
  const ClusterSnapshot snapshot = b.Snapshot();
  const JobExplanation e = ExplainJob(snapshot, out.raw.queues, Job(snapshot, "default/a1"), *update.waiting);
  CHECK(e.waiting);
  CHECK(e.kind == "no-fit");
  CHECK(e.reason == "1/1 pods unschedulable: 2 nodes have too little nvidia.com/gpu");
  CHECK(e.remedies == std::vector<std::string>{
                          "a node that takes its pods frees 2 nvidia.com/gpu for one (the freest node has 0 nvidia.com/gpu)",
                          "2 jobs of queue b hold 2 nvidia.com/gpu beyond their deserved share and are reclaimable"});
  // The words travel as JSON and back unchanged (the daemon to kubectl lahar).
  absl::StatusOr<JobExplanation> read = ParseExplanationJson(ExplanationJson(e));
  REQUIRE(read.ok());
  CHECK(FormatExplanation(*read) == FormatExplanation(e));
}

TEST_CASE("a job that does not wait has nothing to be let start by") {
  ClusterBuilder b = Borrowed();
  const ClusterSnapshot snapshot = b.Snapshot();
  const JobExplanation e = ExplainJob(snapshot, {}, Job(snapshot, "default/b1"), std::nullopt);
  CHECK_FALSE(e.waiting);
  CHECK(e.remedies.empty());
  CHECK(FormatExplanation(e) == "job default/b1 (queue b): Inqueue, 1 of its min 1 pods placed, 0 pending\nnot waiting\n");
  CHECK_FALSE(ParseExplanationJson("[]").ok());
  CHECK_FALSE(ParseExplanationJson(R"({"job":"x","min":"three"})").ok());
}

}  // namespace
}  // namespace lahar
