#include "plugins/proportion/proportion.h"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "api/strings.h"
#include "scheduler/builtins.h"
#include "scheduler/framework/session.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/default_tiers.h"
#include "test/testing/session_fixture.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::Res;

constexpr std::string_view kConfig = R"(
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: proportion
)";

// A session on the builder's snapshot, with this file's configuration unless given another.
struct TestSession : testing::SessionFixture {
  explicit TestSession(const ClusterBuilder& b, std::string_view yaml = kConfig) : SessionFixture(b, yaml) {}
};

QueueDemand Demand(int32_t weight, std::string_view request, std::string_view capability = "",
                   std::string_view guarantee = "", std::string_view deserved = "") {
  return {weight, Res(capability), Res(guarantee), Res(request), Res(deserved)};
}

int64_t Gpus(const Resources& r) { return r.Get(kNvidiaGpu); }

// ---- ComputeDeservedShares ----

TEST_CASE("deserved shares split the cluster by weight") {
  auto d = ComputeDeservedShares(Res("nvidia.com/gpu=12"),
                                 {Demand(1, "nvidia.com/gpu=100"), Demand(2, "nvidia.com/gpu=100")});
  CHECK(Gpus(d[0]) == 4);  // 12 GPUs, weights 1:2 -> 4 and 8
  CHECK(Gpus(d[1]) == 8);
}

TEST_CASE("recent deserved shares answer as computed ones, whatever was asked before") {
  const Resources total = Res("nvidia.com/gpu=12");
  std::vector<std::vector<QueueDemand>> splits;
  for (int request = 1; request <= 12; ++request) {  // more splits than are kept
    splits.push_back({Demand(1, StrCat("nvidia.com/gpu=", request)), Demand(2, "nvidia.com/gpu=100")});
  }
  for (int round = 0; round < 2; ++round) {
    for (const std::vector<QueueDemand>& split : splits) {
      CHECK(RecentDeservedShares(total, split) == ComputeDeservedShares(total, split));
      CHECK(RecentDeservedShares(Res("nvidia.com/gpu=6"), split) == ComputeDeservedShares(Res("nvidia.com/gpu=6"), split));
    }
  }
  // Told apart by every input: the same demands under other weights split otherwise.
  std::vector<QueueDemand> reweighted = splits.front();
  reweighted[0].weight = 2;
  CHECK(Gpus(RecentDeservedShares(total, splits.front())[0]) == 1);
  CHECK(Gpus(RecentDeservedShares(total, reweighted)[0]) == 1);
  reweighted[0].request = Res("nvidia.com/gpu=100");
  CHECK(Gpus(RecentDeservedShares(total, reweighted)[0]) == 6);
}

TEST_CASE("a queue never deserves more than it requests; the rest flows to the others") {
  auto d = ComputeDeservedShares(Res("nvidia.com/gpu=12"),
                                 {Demand(1, "nvidia.com/gpu=2"), Demand(1, "nvidia.com/gpu=20")});
  // Round 1: 6 and 6; the first is capped at its request of 2, 4 remain.
  // Round 2: only the second is left and takes the 4: 6 + 4 = 10.
  CHECK(Gpus(d[0]) == 2);
  CHECK(Gpus(d[1]) == 10);
}

TEST_CASE("a queue's capability caps its deserved share in the dimensions it names") {
  auto d = ComputeDeservedShares(Res("cpu=24,nvidia.com/gpu=12"),
                                 {Demand(1, "cpu=100,nvidia.com/gpu=100", "nvidia.com/gpu=3"),
                                  Demand(1, "cpu=100,nvidia.com/gpu=100")});
  // GPUs: round 1 gives 6 and 6, the first capped at 3 (3 remain); round 2 offers 1.5 each, the
  // first stays at 3 (done), the second has 7.5; round 3 gives the second the last 1.5: 9.
  CHECK(Gpus(d[0]) == 3);
  CHECK(Gpus(d[1]) == 9);
  // cpu is not capped: 24 split 1:1.
  CHECK(d[0].Get(kCpu) == 12'000);
  CHECK(d[1].Get(kCpu) == 12'000);
}

TEST_CASE("a guarantee is reserved for its queue before weights apply") {
  auto d = ComputeDeservedShares(Res("nvidia.com/gpu=12"),
                                 {Demand(1, "nvidia.com/gpu=12", "", "nvidia.com/gpu=8"),
                                  Demand(1, "nvidia.com/gpu=12")});
  // Weights alone would give 6 and 6; the first is floored at its guarantee of 8, and the second
  // is capped at 12 - 8 = 4, what the other queue's guarantee leaves.
  CHECK(Gpus(d[0]) == 8);
  CHECK(Gpus(d[1]) == 4);
}

TEST_CASE("a guarantee holds even for a queue without demand") {
  auto d = ComputeDeservedShares(Res("nvidia.com/gpu=12"),
                                 {Demand(1, "", "", "nvidia.com/gpu=2"), Demand(1, "nvidia.com/gpu=20")});
  CHECK(Gpus(d[0]) == 2);
  CHECK(Gpus(d[1]) == 10);  // 12 - 2 guaranteed to the first
}

TEST_CASE("an explicit deserved in the Queue spec is taken as is, capped by capability") {
  auto d = ComputeDeservedShares(Res("nvidia.com/gpu=12"),
                                 {Demand(1, "nvidia.com/gpu=1", "", "", "nvidia.com/gpu=5"),
                                  Demand(1, "nvidia.com/gpu=20"),
                                  Demand(1, "nvidia.com/gpu=20", "nvidia.com/gpu=2", "", "nvidia.com/gpu=4")});
  CHECK(Gpus(d[0]) == 5);  // even above its request of 1
  CHECK(Gpus(d[2]) == 2);  // 4 capped by capability 2
  CHECK(Gpus(d[1]) == 5);  // 12 - 5 - 2
}

TEST_CASE("a deserved that names some resources is written for those and shared by weight for the rest") {
  // Queue 0 names cpu only: 20 of 48 cpu are its; the 12 GPUs are split 1:1 with queue 1 as if
  // it had named nothing (spec 2.1: a resource its deserved does not name is not limited by it).
  auto d = ComputeDeservedShares(Res("cpu=48,nvidia.com/gpu=12"),
                                 {Demand(1, "cpu=40,nvidia.com/gpu=20", "", "", "cpu=20"),
                                  Demand(1, "cpu=100,nvidia.com/gpu=20")});
  CHECK(d[0].Get(kCpu) == 20'000);
  CHECK(d[1].Get(kCpu) == 28'000);  // what remains of the cpu
  CHECK(Gpus(d[0]) == 6);
  CHECK(Gpus(d[1]) == 6);
}

TEST_CASE("units left over by rounding go to the largest remainders, so none is lost") {
  auto d = ComputeDeservedShares(Res("nvidia.com/gpu=10"),
                                 {Demand(1, "nvidia.com/gpu=10"), Demand(2, "nvidia.com/gpu=10")});
  // 10 × 1/3 = 3.33 -> 3, 10 × 2/3 = 6.67 -> 6; the 1 left goes to the larger remainder (.67).
  CHECK(Gpus(d[0]) == 3);
  CHECK(Gpus(d[1]) == 7);
  auto even = ComputeDeservedShares(Res("nvidia.com/gpu=1"),
                                    {Demand(1, "nvidia.com/gpu=1"), Demand(1, "nvidia.com/gpu=1")});
  CHECK(Gpus(even[0]) == 1);  // a tie goes to the first queue
  CHECK(Gpus(even[1]) == 0);
}

TEST_CASE("a queue deserves nothing of a resource it does not request") {
  auto d = ComputeDeservedShares(Res("cpu=10,nvidia.com/gpu=8"),
                                 {Demand(1, "cpu=4"), Demand(1, "cpu=20,nvidia.com/gpu=20")});
  CHECK(d[0] == Res("cpu=4"));
  CHECK(d[1] == Res("cpu=6,nvidia.com/gpu=8"));
}

// ---- The plugin in a session ----

// 8 GPUs; queues a and b of equal weight, each with a job of 6 one-GPU workers: each deserves 4.
ClusterBuilder TwoTeams(int a_running, int b_running) {
  ClusterBuilder b;
  b.Node("n1", "cpu=64,memory=256Gi,nvidia.com/gpu=8");
  b.Queue("a", 1).Queue("b", 1);
  b.Job("ja", {.queue = "a", .min = 1, .tasks = {{"worker", 6, "nvidia.com/gpu=1"}}});
  b.Job("jb", {.queue = "b", .min = 1, .tasks = {{"worker", 6, "nvidia.com/gpu=1"}}});
  for (int i = 0; i < a_running; ++i) b.Running("ja-worker-" + std::to_string(i), "n1");
  for (int i = 0; i < b_running; ++i) b.Running("jb-worker-" + std::to_string(i), "n1");
  return b;
}

TEST_CASE("proportion reports each queue's deserved share to the session") {
  ClusterBuilder b = TwoTeams(0, 0);
  TestSession s(b);
  CHECK(s.deserved("a") == Res("nvidia.com/gpu=4"));  // requests 6 and 6 of 8 GPUs, 1:1
  CHECK(s.deserved("b") == Res("nvidia.com/gpu=4"));
  CHECK(s.deserved("default").IsZero());  // no jobs, no guarantee
}

TEST_CASE("the queue using less of its deserved share goes first") {
  ClusterBuilder b = TwoTeams(3, 1);
  TestSession s(b);
  // a: 3/4, b: 1/4. Without proportion, queues go by name: a first.
  CHECK(s->QueueOrderLess(s.queue("b"), s.queue("a")));
  CHECK_FALSE(s->QueueOrderLess(s.queue("a"), s.queue("b")));
}

TEST_CASE("a queue is overused once it holds its deserved share") {
  ClusterBuilder b = TwoTeams(4, 3);
  TestSession s(b);
  CHECK(s->Overused(s.queue("a")));        // 4 of 4
  CHECK_FALSE(s->Overused(s.queue("b")));  // 3 of 4
  CHECK(s->Overused(s.queue("default")));  // deserves nothing (Volcano's rule)
  s->SetTaskStatus(s.task("default/jb-worker-3").id, TaskStatus::kAllocated, 0);
  CHECK(s->Overused(s.queue("b")));  // the allocation counted: 4 of 4
}

TEST_CASE("a task is allocatable only while its queue stays within its deserved share") {
  ClusterBuilder b = TwoTeams(4, 3);
  TestSession s(b);
  CHECK_FALSE(s->Allocatable(s.queue("a"), s.task("default/ja-worker-4")));  // 4 + 1 > 4
  CHECK(s->Allocatable(s.queue("b"), s.task("default/jb-worker-3")));        // 3 + 1 <= 4
  s->SetTaskStatus(s.task("default/jb-worker-3").id, TaskStatus::kPipelined, 0);
  CHECK_FALSE(s->Allocatable(s.queue("b"), s.task("default/jb-worker-4")));  // pipelined counts: 5 > 4
  s->SetTaskStatus(s.task("default/jb-worker-3").id, TaskStatus::kPending, kNoId);
  CHECK(s->Allocatable(s.queue("b"), s.task("default/jb-worker-4")));  // and is given back
}

TEST_CASE("the queue using more than its share goes last once allocations change it") {
  ClusterBuilder b = TwoTeams(2, 2);
  TestSession s(b);
  CHECK(s->QueueOrderLess(s.queue("a"), s.queue("b")));  // 2/4 = 2/4: by name
  s->SetTaskStatus(s.task("default/ja-worker-2").id, TaskStatus::kAllocated, 0);
  CHECK(s->QueueOrderLess(s.queue("b"), s.queue("a")));  // a 3/4 > b 2/4
}

// A queue "team" with a GPU capability, one job running 2 GPUs, and Pending jobs asking for more.
ClusterBuilder CappedTeam(std::string_view capability) {
  ClusterBuilder b;
  b.Node("n1", "cpu=64,memory=256Gi,nvidia.com/gpu=8");
  b.Queue("team", 1, capability);
  b.Job("running", {.queue = "team", .min = 2, .tasks = {{"worker", 2, "nvidia.com/gpu=1"}}});
  b.Running("running-worker-0", "n1").Running("running-worker-1", "n1");
  b.Job("two", {.queue = "team", .min = 2, .tasks = {{"worker", 2, "nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kPending});
  b.Job("three", {.queue = "team", .min = 3, .tasks = {{"worker", 3, "nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kPending});
  return b;
}

TEST_CASE("a job is enqueued only when its minResources fit under its queue's capability") {
  ClusterBuilder b = CappedTeam("nvidia.com/gpu=4");
  TestSession s(b);
  CHECK(s->JobEnqueueable(s.job("default/two")));          // 2 + 2 held <= 4
  CHECK_FALSE(s->JobEnqueueable(s.job("default/three")));  // 3 + 2 held > 4
}

TEST_CASE("with preempt configured, what lower priorities held when the session opened counts as room") {
  // A queue capped at 4 GPUs holds 2 of a low-priority job; a high-priority job asks for 4.
  auto cluster = [] {
    ClusterBuilder b;
    b.Node("n1", "cpu=64,memory=256Gi,nvidia.com/gpu=8");
    b.Queue("team", 1, "nvidia.com/gpu=4");
    b.PriorityClass("low", 1).PriorityClass("high", 100);
    b.Job("low", {.queue = "team", .min = 1, .tasks = {{"worker", 3, "nvidia.com/gpu=1"}}, .priority_class = "low"});
    b.Running("low-worker-0", "n1").Running("low-worker-1", "n1");
    b.Job("urgent", {.queue = "team", .min = 4, .tasks = {{"worker", 4, "nvidia.com/gpu=1"}}, .priority_class = "high",
                     .phase = PodGroupPhase::kPending});
    return b;
  };
  constexpr std::string_view kWithPreempt = R"(
actions: "enqueue, allocate, preempt"
tiers:
- plugins:
  - name: proportion
)";
  {
    ClusterBuilder b = cluster();
    TestSession s(b, kWithPreempt);
    CHECK(s->JobEnqueueable(s.job("default/urgent")));  // 4 + 2 held - 2 below <= 4
  }
  // The low job places a third pod before the vote: the queue holds 3, and the room below is
  // still the 2 it held at the opening (made before that pod moved, though first read after).
  ClusterBuilder b = cluster();
  TestSession s(b, kWithPreempt);
  s->SetTaskStatus(s.task("default/low-worker-2").id, TaskStatus::kAllocated, 0);
  CHECK_FALSE(s->JobEnqueueable(s.job("default/urgent")));  // 4 + 3 held - 2 below > 4
}

TEST_CASE("jobs admitted but not yet running count against the capability") {
  ClusterBuilder b = CappedTeam("nvidia.com/gpu=6");
  b.Job("admitted", {.queue = "team", .min = 2, .tasks = {{"worker", 2, "nvidia.com/gpu=1"}}});  // Inqueue
  TestSession s(b);
  CHECK(s->JobEnqueueable(s.job("default/two")));          // 2 + 2 held + 2 admitted <= 6
  CHECK_FALSE(s->JobEnqueueable(s.job("default/three")));  // 3 + 2 + 2 > 6
}

TEST_CASE("a job the enqueue action admitted after its vote counts for the next vote") {
  ClusterBuilder b = CappedTeam("nvidia.com/gpu=6");
  b.Job("one", {.queue = "team", .min = 1, .tasks = {{"worker", 1, "nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kPending});
  TestSession s(b);
  const JobInfo& two = s.job("default/two");
  REQUIRE(s->JobEnqueueable(two));  // 2 + 2 held <= 6
  s->SetJobPhase(two.id, PodGroupPhase::kInqueue);
  CHECK_FALSE(s->JobEnqueueable(s.job("default/three")));  // 3 + 2 held + 2 admitted > 6
  CHECK(s->JobEnqueueable(s.job("default/one")));           // 1 + 2 + 2 <= 6
}

TEST_CASE("an admitted job's promise follows its pods as they are placed and undone") {
  ClusterBuilder b = CappedTeam("nvidia.com/gpu=5");
  b.Job("admitted", {.queue = "team", .min = 2, .tasks = {{"worker", 2, "nvidia.com/gpu=1"}}});  // Inqueue
  b.Job("one", {.queue = "team", .min = 1, .tasks = {{"worker", 1, "nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kPending});
  TestSession s(b);
  const JobInfo& one = s.job("default/one");
  CHECK(s->JobEnqueueable(one));  // 1 + 2 held + 2 promised <= 5
  const TaskId first = s.task("default/admitted-worker-0").id;
  s->SetTaskStatus(first, TaskStatus::kAllocated, 0);
  CHECK(s->JobEnqueueable(one));  // 1 + 3 held + 1 promised: the placed pod is not counted twice
  s->SetTaskStatus(s.task("default/admitted-worker-1").id, TaskStatus::kAllocated, 0);
  CHECK(s->JobEnqueueable(one));                         // 1 + 4 + 0
  CHECK_FALSE(s->JobEnqueueable(s.job("default/two")));  // 2 + 4 > 5
  s->SetTaskStatus(first, TaskStatus::kPending, kNoId);
  CHECK(s->JobEnqueueable(one));  // 1 + 3 + 1
  CHECK_FALSE(s->JobEnqueueable(s.job("default/two")));  // 2 + 3 + 1 > 5
  s->SetTaskStatus(first, TaskStatus::kPipelined, 0);
  CHECK(s->JobEnqueueable(one));  // 1 + 4 + 0: a pipelined pod holds its request, as a placed one does
  CHECK_FALSE(s->JobEnqueueable(s.job("default/two")));  // 2 + 4 > 5
}

TEST_CASE("other queues' guarantees are kept out of a queue's reach at enqueue") {
  ClusterBuilder b;
  b.Node("n1", "cpu=64,memory=256Gi,nvidia.com/gpu=8");
  b.Queue("team", 1).Queue("reserved", 1, "", "nvidia.com/gpu=5");
  b.Job("three", {.queue = "team", .min = 3, .tasks = {{"worker", 3, "nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kPending});
  b.Job("four", {.queue = "team", .min = 4, .tasks = {{"worker", 4, "nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kPending});
  TestSession s(b);
  CHECK(s->JobEnqueueable(s.job("default/three")));        // 3 <= 8 - 5
  CHECK_FALSE(s->JobEnqueueable(s.job("default/four")));   // 4 > 8 - 5
}

TEST_CASE("a closed queue admits no job") {
  ClusterBuilder b;
  b.Node("n1", "cpu=64,memory=256Gi,nvidia.com/gpu=8");
  Queue closed;
  closed.meta.name = "closed";
  closed.open = false;
  b.cache().UpsertQueue(closed);
  b.Job("job", {.queue = "closed", .min = 1, .tasks = {{"worker", 1, "nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kPending});
  TestSession s(b);
  CHECK_FALSE(s->JobEnqueueable(s.job("default/job")));
}



// The default tiers of the spec (section 4) without the elastic plugin, for end-to-end cases
// through the allocate action.
const std::string kDefaultTiers = testing::DefaultTiersConfig("enqueue, allocate");

TEST_CASE("rounds work on exact amounts, so small counts still split by weight") {
  auto d = ComputeDeservedShares(Res("nvidia.com/gpu=8"), {Demand(1, ""), Demand(3, "nvidia.com/gpu=8"),
                                                           Demand(1, "nvidia.com/gpu=8")});
  // Round 1 over weights 1+3+1: 1.6 to the first (which requests nothing: 0), 4.8 and 1.6;
  // round 2 splits the 1.6 left 3:1: 4.8 + 1.2 = 6 and 1.6 + .4 = 2.
  CHECK(Gpus(d[0]) == 0);
  CHECK(Gpus(d[1]) == 6);
  CHECK(Gpus(d[2]) == 2);
}

TEST_CASE("end to end: queues get GPUs in proportion to their weights") {
  ClusterBuilder b;
  b.Node("n1", "cpu=64,memory=256Gi,nvidia.com/gpu=8");
  b.Queue("small", 1).Queue("large", 3);
  for (int i = 0; i < 8; ++i) {
    b.Job("s" + std::to_string(i), {.queue = "small", .tasks = {{"worker", 1, "nvidia.com/gpu=1"}}});
    b.Job("l" + std::to_string(i), {.queue = "large", .tasks = {{"worker", 1, "nvidia.com/gpu=1"}}});
  }
  testing::SessionOutcome out = testing::RunSession(b, kDefaultTiers);
  // Both ask for 8 of 8 GPUs; weights 1:3 -> 2 and 6.
  int small = 0;
  int large = 0;
  for (const auto& bind : out.raw.binds) (bind.job[8] == 's' ? small : large) += 1;  // "default/s3"
  CHECK(small == 2);
  CHECK(large == 6);
}

TEST_CASE("end to end: enqueue admits jobs only up to the queue's capability") {
  ClusterBuilder b;
  b.Node("n1", "cpu=64,memory=256Gi,nvidia.com/gpu=8");
  b.Queue("team", 1, "nvidia.com/gpu=2");
  for (std::string name : {"a", "b", "c"}) {
    b.Job(name, {.queue = "team", .tasks = {{"worker", 1, "nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kPending});
  }
  testing::SessionOutcome out = testing::RunSession(b, kDefaultTiers);
  // a and b fit under 2 GPUs; c would make 3 (the cluster has room, the queue does not).
  CHECK(out.BoundCount("default/a") == 1);
  CHECK(out.BoundCount("default/b") == 1);
  CHECK(out.BoundCount("default/c") == 0);
  CHECK(out.job_updates.at("default/c").phase == PodGroupPhase::kPending);
  CHECK(out.job_updates.at("default/c").reason() == "NotEnoughResources");
}

}  // namespace
}  // namespace lahar

namespace lahar {
namespace {

TEST_CASE("two equal queues split 8 GPUs 4 and 4, whatever their order") {
  Resources total = testing::Res("cpu=64,nvidia.com/gpu=8");
  QueueDemand a, b;
  a.request = testing::Res("cpu=10,nvidia.com/gpu=10");
  b.request = testing::Res("cpu=10,nvidia.com/gpu=10");
  std::vector<Resources> out = ComputeDeservedShares(total, {a, b});
  // weights 1:1 over 8 GPUs: 4 each; cpu: both ask 10 of 64, both get their request.
  CHECK(out[0].Get(kNvidiaGpu) == 4);
  CHECK(out[1].Get(kNvidiaGpu) == 4);
  CHECK(out[0].Get(kCpu) == 10000);
  CHECK(out[1].Get(kCpu) == 10000);
  // b asks only 3: a gets the rest, 5.
  b.request = testing::Res("cpu=10,nvidia.com/gpu=3");
  out = ComputeDeservedShares(total, {a, b});
  CHECK(out[0].Get(kNvidiaGpu) == 5);
  CHECK(out[1].Get(kNvidiaGpu) == 3);
}

}  // namespace
}  // namespace lahar
