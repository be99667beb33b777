// Tests of the reclaim action and the queue tree under the default configuration (spec 2.1, 3.1).
#include "actions/reclaim/reclaim.h"

#include <catch2/catch.hpp>

#include "scheduler/framework/config.h"
#include "test/testing/cluster_builder.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::RunSession;
using testing::SessionOutcome;

lahar::Queue MakeQueue(const std::string& name, const std::string& parent = "", bool reclaimable = true) {
  lahar::Queue q;
  q.meta.name = name;
  q.parent = parent;
  q.reclaimable = reclaimable;
  return q;
}

// Queue a holds all 16 GPUs with four rigid 4-GPU jobs; b (deserving 8) wants 8.
ClusterBuilder Borrowed(bool reclaimable = true) {
  ClusterBuilder b;
  b.Node("n1", "cpu=32,nvidia.com/gpu=8").Node("n2", "cpu=32,nvidia.com/gpu=8");
  b.QueueObject(MakeQueue("a", "", reclaimable)).QueueObject(MakeQueue("b"));
  for (int i = 0; i < 4; ++i) {
    const std::string name = "a" + std::to_string(i);
    b.Job(name, {.queue = "a", .min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}});
    b.Running(name + "-w-0", i < 2 ? "n1" : "n2");
  }
  b.Job("b1", {.queue = "b", .min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=8"}}});
  return b;
}

TEST_CASE("reclaim: a rigid borrower gives back exactly what the reclaiming job needs") {
  SessionOutcome out = RunSession(Borrowed(), DefaultSchedulerConfigYaml());
  REQUIRE(out.evicts.size() == 2);  // one node's worth: two 4-GPU jobs on the same node
  for (const auto& [pod, reason] : out.evicts) CHECK(reason == "reclaimed-for default/b1");
  const bool same_node = (out.evicts.count("default/a0-w-0") && out.evicts.count("default/a1-w-0")) ||
                         (out.evicts.count("default/a2-w-0") && out.evicts.count("default/a3-w-0"));
  CHECK(same_node);
}

TEST_CASE("reclaim: a borrower above its share by exactly one pod gives that pod, and no more") {
  // b asks for 4 of 16 GPUs: a deserves 12 and holds 16, exactly one 4-GPU pod above its share.
  ClusterBuilder b = Borrowed();
  b.Job("b1", {.queue = "b", .min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}});
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  REQUIRE(out.evicts.size() == 1);
  CHECK(out.evicts.begin()->second == "reclaimed-for default/b1");
}

TEST_CASE("reclaim: nothing is planned when every other queue is at its share") {
  // a holds its deserved 8 GPUs; b holds 4 and asks for 4 more, within its share, but the 4 free
  // GPUs are split over two nodes: a is at its share, so b1 waits and nothing is evicted.
  ClusterBuilder b;
  b.Node("n1", "cpu=32,nvidia.com/gpu=8").Node("n2", "cpu=32,nvidia.com/gpu=8");
  b.QueueObject(MakeQueue("a")).QueueObject(MakeQueue("b"));
  b.Job("a0", {.queue = "a", .min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=4"}}});
  b.Running("a0-w-0", "n1").Running("a0-w-1", "n2");
  b.Job("held", {.queue = "b", .min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=2"}}});
  b.Running("held-w-0", "n1").Running("held-w-1", "n2");
  b.Job("b1", {.queue = "b", .min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}});
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  CHECK(out.evicts.empty());
  CHECK(out.binds.empty());
}

TEST_CASE("reclaim: a queue with reclaimable false keeps what it borrowed") {
  CHECK(RunSession(Borrowed(/*reclaimable=*/false), DefaultSchedulerConfigYaml()).evicts.empty());
}

TEST_CASE("reclaim: never above the reclaiming queue's deserved share") {
  ClusterBuilder b = Borrowed();
  b.Job("b2", {.queue = "b", .min = 3, .tasks = {{"w", 3, "cpu=1,nvidia.com/gpu=4"}}});  // 12 > 8
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  for (const auto& [pod, reason] : out.evicts) CHECK(reason != "reclaimed-for default/b2");
}

TEST_CASE("queue tree: a job in a queue with children waits with a reason that says so") {
  ClusterBuilder b;
  b.Node("n1", "cpu=32,nvidia.com/gpu=8");
  b.QueueObject(MakeQueue("dept")).QueueObject(MakeQueue("team", "dept"));
  b.Job("misplaced", {.queue = "dept", .min = 1, .tasks = {{"w", 1, "cpu=1"}}, .phase = PodGroupPhase::kPending});
  b.Job("ok", {.queue = "team", .min = 1, .tasks = {{"w", 1, "cpu=1"}}, .phase = PodGroupPhase::kPending});
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  CHECK(out.binds.count("default/ok-w-0") == 1);
  CHECK(out.binds.count("default/misplaced-w-0") == 0);
  CHECK(out.job_updates.at("default/misplaced").message().find("leaf queues only") != std::string::npos);
}

TEST_CASE("queue tree: a cycle and a missing parent are reported; the rest is scheduled, nothing evicted") {
  ClusterBuilder b;
  b.Node("n1", "cpu=32,nvidia.com/gpu=8");
  b.QueueObject(MakeQueue("x", "y")).QueueObject(MakeQueue("y", "x")).QueueObject(MakeQueue("orphan", "nowhere"));
  b.QueueObject(MakeQueue("fine"));
  b.Job("in-cycle", {.queue = "x", .min = 1, .tasks = {{"w", 1, "cpu=1"}}, .phase = PodGroupPhase::kPending});
  b.Job("in-orphan", {.queue = "orphan", .min = 1, .tasks = {{"w", 1, "cpu=1"}}, .phase = PodGroupPhase::kPending});
  b.Job("good", {.queue = "fine", .min = 1, .tasks = {{"w", 1, "cpu=1"}}, .phase = PodGroupPhase::kPending});
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  CHECK(out.binds.count("default/good-w-0") == 1);
  CHECK(out.binds.size() == 1);
  CHECK(out.evicts.empty());
  CHECK(out.job_updates.at("default/in-cycle").message().find("cycle") != std::string::npos);
  CHECK(out.job_updates.at("default/in-orphan").message().find("parent queue nowhere does not exist") !=
        std::string::npos);
}

TEST_CASE("queue tree: a child's capability is capped at its parent's") {
  std::vector<QueueInfo> queues(2);
  queues[0].id = 0;
  queues[0].name = "dept";
  queues[0].capability = testing::Res("nvidia.com/gpu=8");
  queues[1].id = 1;
  queues[1].name = "team";
  queues[1].capability = testing::Res("nvidia.com/gpu=16");
  LinkQueueTree(queues, {"", "dept"});
  CHECK(queues[1].parent == 0);
  CHECK(queues[1].capability.Get(kNvidiaGpu) == 8);
  CHECK(queues[1].warning.find("capped") != std::string::npos);
  CHECK(queues[0].children == std::vector<QueueId>{1});
}

// Volcano's capacity plugin: deserved as written, borrowing up to capability.
constexpr char kCapacityConfig[] = R"(
actions: "enqueue, allocate, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: capacity
)";

lahar::Queue CapacityQueue(const std::string& name, std::string_view deserved, std::string_view capability = "",
                           std::string_view guarantee = "") {
  lahar::Queue q = MakeQueue(name);
  q.deserved = testing::Res(deserved);
  q.capability = testing::Res(capability);
  q.guarantee = testing::Res(guarantee);
  return q;
}

// Queue a (deserving 4 GPUs, guaranteed `guarantee`) holds all 16 with four 4-GPU jobs; b deserves 16 - 4.
ClusterBuilder BorrowedUnderCapacity(std::string_view b_deserved, std::string_view a_guarantee = "") {
  ClusterBuilder b;
  b.Node("n1", "cpu=32,nvidia.com/gpu=8").Node("n2", "cpu=32,nvidia.com/gpu=8");
  b.QueueObject(CapacityQueue("a", "nvidia.com/gpu=4", "", a_guarantee));
  b.QueueObject(CapacityQueue("b", b_deserved));
  for (int i = 0; i < 4; ++i) {
    const std::string name = "a" + std::to_string(i);
    b.Job(name, {.queue = "a", .min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}});
    b.Running(name + "-w-0", i < 2 ? "n1" : "n2");
  }
  return b;
}

TEST_CASE("capacity: a queue borrows beyond its deserved share as written, up to its capability") {
  ClusterBuilder b;
  b.Node("n1", "cpu=32,nvidia.com/gpu=16");
  b.QueueObject(CapacityQueue("a", "nvidia.com/gpu=4", "nvidia.com/gpu=12"));
  for (int i = 0; i < 4; ++i) {
    b.Job("j" + std::to_string(i), {.queue = "a", .min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}});
  }
  CHECK(RunSession(b, kCapacityConfig).binds.size() == 3);  // 12 of 16: the capability
}

TEST_CASE("capacity: reclaim takes back down to the lender's written deserved share") {
  ClusterBuilder b = BorrowedUnderCapacity("nvidia.com/gpu=8");
  b.Job("b2", {.queue = "b", .min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=8"}}});
  SessionOutcome out = RunSession(b, kCapacityConfig);
  CHECK(out.evicts.size() == 2);
  for (const auto& [pod, reason] : out.evicts) CHECK(reason == "reclaimed-for default/b2");
}

TEST_CASE("reclaim: refused when the waiting min exceeds the reclaiming queue's own deserved, even with a lender") {
  // a could give 12 and stay at its deserved 4; b deserves 8 and wants 12.
  ClusterBuilder b = BorrowedUnderCapacity("nvidia.com/gpu=8");
  b.Job("b1", {.queue = "b", .min = 3, .tasks = {{"w", 3, "cpu=1,nvidia.com/gpu=4"}}});
  CHECK(RunSession(b, kCapacityConfig).evicts.empty());
}

TEST_CASE("guarantees beyond the cluster: a warning on the queues, nothing evicted because of it") {
  ClusterBuilder b;
  b.Node("n1", "cpu=32,nvidia.com/gpu=8");
  b.Queue("a", 1, "", "nvidia.com/gpu=8").Queue("b", 1, "", "nvidia.com/gpu=8");
  b.Job("a-job", {.queue = "a", .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=8"}}});
  b.Running("a-job-w-0", "n1");
  b.Job("b-job", {.queue = "b", .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}});
  b.Job("b-small", {.queue = "b", .tasks = {{"w", 1, "cpu=1"}}});
  const ClusterSnapshot snapshot = b.Snapshot();
  const QueueInfo& a = snapshot.queues[snapshot.FindQueue("a")];
  CHECK(a.warning ==
        "queue a: the guarantees of the top-level queues add up to more than the cluster has (nvidia.com/gpu 16 > 8); "
        "each is honoured only as far as the cluster holds it");
  CHECK(snapshot.queues[snapshot.FindQueue("default")].warning.empty());  // no guarantee of its own
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  CHECK(out.evicts.empty());                            // a's guarantee is all it holds
  CHECK(out.binds.count("default/b-small-w-0") == 1);  // the rest is scheduled
}

TEST_CASE("reclaim: a queue's guarantee is never taken, even above what it deserves") {
  // a deserves 4 but is guaranteed 8: of its 16, 8 can go back (12 would leave it at its
  // deserved share, below its guarantee); b (deserving 16) wants 12.
  ClusterBuilder all = BorrowedUnderCapacity("nvidia.com/gpu=16", "nvidia.com/gpu=8");
  all.Job("b1", {.queue = "b", .min = 3, .tasks = {{"w", 3, "cpu=1,nvidia.com/gpu=4"}}});
  CHECK(RunSession(all, kCapacityConfig).evicts.empty());
  ClusterBuilder half = BorrowedUnderCapacity("nvidia.com/gpu=16", "nvidia.com/gpu=8");
  half.Job("b2", {.queue = "b", .min = 1, .tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=8"}}});
  CHECK(RunSession(half, kCapacityConfig).evicts.size() == 2);
}

TEST_CASE("queue priority orders queues whose shares are equal") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  lahar::Queue alpha = CapacityQueue("alpha", "");
  lahar::Queue zeta = CapacityQueue("zeta", "");
  zeta.priority = 10;  // after alpha by name, first by priority
  b.QueueObject(alpha).QueueObject(zeta);
  b.Job("ja", {.queue = "alpha", .min = 1, .tasks = {{"w", 1, "cpu=4"}}});
  b.Job("jz", {.queue = "zeta", .min = 1, .tasks = {{"w", 1, "cpu=4"}}});
  SessionOutcome out = RunSession(b, kCapacityConfig);
  CHECK(out.binds.count("default/jz-w-0") == 1);
  CHECK(out.binds.count("default/ja-w-0") == 0);
}

TEST_CASE("best-effort: a pod with no requests on a full cluster is bound by backfill") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4,nvidia.com/gpu=8");
  b.Job("full", {.min = 1, .tasks = {{"w", 1, "cpu=4,nvidia.com/gpu=8"}}});
  b.Running("full-w-0", "n1");
  b.Job("be", {.min = 1, .tasks = {{"w", 1, ""}}});
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  CHECK(out.binds.count("default/be-w-0") == 1);
  CHECK(out.evicts.empty());
}

}  // namespace
}  // namespace lahar
