#include "plugins/drf/drf.h"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "scheduler/builtins.h"
#include "scheduler/framework/session.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/session_fixture.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::Res;

constexpr std::string_view kConfig = R"(
actions: "allocate"
tiers:
- plugins:
  - name: drf
)";

// A session on the builder's snapshot, with this file's configuration unless given another.
struct TestSession : testing::SessionFixture {
  explicit TestSession(const ClusterBuilder& b, std::string_view yaml = kConfig) : SessionFixture(b, yaml) {}
};

TEST_CASE("a job's dominant share is its largest fraction of any cluster resource") {
  const Resources total = Res("cpu=10,memory=100Gi,nvidia.com/gpu=8");
  CHECK(DominantShare(Res("cpu=2,memory=50Gi"), total) == Approx(0.5));                   // max(.2, .5)
  CHECK(DominantShare(Res("cpu=1,memory=1Gi,nvidia.com/gpu=6"), total) == Approx(0.75));  // 6/8 GPUs
  CHECK(DominantShare(Res("pods=100"), total) == 0);                                      // pods never count
  CHECK(DominantShare(Res("example.com/fpga=1"), total) == 1);  // the cluster has none: counts whole
  CHECK(DominantShare(Resources(), total) == 0);
}

TEST_CASE("the job holding the smaller dominant share goes first") {
  ClusterBuilder b;
  b.Node("n1", "cpu=10,memory=100Gi");
  b.Job("big", {.tasks = {{"worker", 3, "cpu=2,memory=1Gi"}}});
  b.Job("small", {.tasks = {{"worker", 3, "cpu=1,memory=1Gi"}}});
  b.Running("big-worker-0", "n1").Running("big-worker-1", "n1").Running("small-worker-0", "n1");
  TestSession s(b);
  // big: cpu 4/10 = .4; small: cpu 1/10 = .1. "big" is older, so creation order alone would put it first.
  CHECK(s->JobOrderLess(s.job("default/small"), s.job("default/big")));
  CHECK_FALSE(s->JobOrderLess(s.job("default/big"), s.job("default/small")));
}

TEST_CASE("drf shares follow the allocations and evictions of the session") {
  ClusterBuilder b;
  b.Node("n1", "cpu=10,memory=100Gi");
  b.Job("a", {.tasks = {{"worker", 2, "cpu=1"}}});
  b.Job("b", {.tasks = {{"worker", 2, "cpu=1"}}});
  TestSession s(b);
  CHECK(s->JobOrderLess(s.job("default/a"), s.job("default/b")));  // 0 = 0: creation order
  const TaskId a0 = s.task("default/a-worker-0").id;
  s->SetTaskStatus(a0, TaskStatus::kAllocated, 0);
  CHECK(s->JobOrderLess(s.job("default/b"), s.job("default/a")));  // a .1 > b 0
  s->SetTaskStatus(a0, TaskStatus::kPending, kNoId);
  CHECK(s->JobOrderLess(s.job("default/a"), s.job("default/b")));  // back to 0 = 0
  s->SetTaskStatus(s.task("default/b-worker-0").id, TaskStatus::kPipelined, 0);
  CHECK(s->JobOrderLess(s.job("default/a"), s.job("default/b")));  // pipelined holds a share too
}

TEST_CASE("drf counts on from what each job held at the opening once a task moves") {
  ClusterBuilder b;
  b.Node("n1", "cpu=10,memory=100Gi");
  b.Job("big", {.tasks = {{"worker", 3, "cpu=2,memory=1Gi"}}});
  b.Job("small", {.tasks = {{"worker", 3, "cpu=1,memory=1Gi"}}});
  b.Running("big-worker-0", "n1").Running("big-worker-1", "n1").Running("small-worker-0", "n1");
  TestSession s(b);
  // Another job's task moves first: "big" still holds its 4 of 10 cpu, "small" now 2.
  s->SetTaskStatus(s.task("default/small-worker-1").id, TaskStatus::kPipelined, 0);
  CHECK(s->JobOrderLess(s.job("default/small"), s.job("default/big")));  // .2 < .4
  s->SetTaskStatus(s.task("default/small-worker-2").id, TaskStatus::kPipelined, 0);
  s->SetTaskStatus(s.task("default/big-worker-1").id, TaskStatus::kReleasing, 0);
  CHECK(s->JobOrderLess(s.job("default/big"), s.job("default/small")));  // .2 < .3
}

TEST_CASE("drf lets a job preempt only while it stays below the victim's share") {
  ClusterBuilder b;
  b.Node("n1", "cpu=10,memory=100Gi");
  b.Job("hog", {.tasks = {{"worker", 6, "cpu=1"}}});
  b.Job("modest", {.tasks = {{"worker", 1, "cpu=1"}}});
  b.Job("preemptor", {.tasks = {{"worker", 4, "cpu=1"}}});
  for (int i = 0; i < 6; ++i) b.Running("hog-worker-" + std::to_string(i), "n1");
  b.Running("modest-worker-0", "n1");
  b.Running("preemptor-worker-0", "n1").Running("preemptor-worker-1", "n1").Running("preemptor-worker-2", "n1");
  TestSession s(b);
  std::vector<TaskId> candidates;
  for (std::string_view key : {"default/hog-worker-5", "default/hog-worker-4", "default/hog-worker-3",
                               "default/modest-worker-0"}) {
    candidates.push_back(s.task(key).id);
  }
  // Preemptor holds 3 cpu and asks 1: 4/10 = .4.
  // hog-5: hog 6 -> 5 = .5 >= .4, victim; hog-4: 5 -> 4 = .4 = .4, victim; hog-3: 4 -> 3 = .3 < .4, no.
  // modest: 1 -> 0 = 0 < .4, no.
  const std::vector<TaskId> expected = {s.task("default/hog-worker-4").id, s.task("default/hog-worker-5").id};
  CHECK(s->Preemptable(s.task("default/preemptor-worker-3"), candidates) == expected);
}


TEST_CASE("end to end: the job holding less gets the last free slot first") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4,memory=16Gi");
  // rich runs 2 of its min 3 and needs one more cpu; poor (created later) needs one too; 1 cpu is free.
  b.Job("rich", {.min = 3, .tasks = {{"worker", 3, "cpu=1"}}});
  b.Job("poor", {.min = 1, .tasks = {{"worker", 1, "cpu=1"}}});
  b.Running("rich-worker-0", "n1").Running("rich-worker-1", "n1");
  b.ForeignPod("other", "n1", "cpu=1");
  testing::SessionOutcome out = testing::RunSession(b, R"(
actions: "allocate"
tiers:
- plugins:
  - name: gang
- plugins:
  - name: drf
  - name: predicates
)");
  // Shares: rich 2/4 = .5, poor 0: poor goes first, though creation order would pick rich.
  CHECK(out.binds == std::map<std::string, std::string>{{"default/poor-worker-0", "n1"}});
}

}  // namespace
}  // namespace lahar
