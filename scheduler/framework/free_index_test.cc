#include "scheduler/framework/free_index.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "scheduler/framework/statement.h"
#include "scheduler/framework/wait_memo.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/session_fixture.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::Res;

// The first node in [from, to) with `amount` of future idle GPUs, node by node.
size_t NextByScan(const std::vector<NodeInfo>& nodes, int64_t amount, size_t from, size_t to) {
  for (size_t n = from; n < to; ++n) {
    if (nodes[n].FutureIdle().Get(kNvidiaGpu) >= amount) return n;
  }
  return to;
}

// Every range and amount, against the scan.
void CheckAgainstScan(FreeIndex& index, const std::vector<NodeInfo>& nodes) {
  for (int64_t amount = 0; amount <= 9; ++amount) {
    for (size_t from = 0; from <= nodes.size(); ++from) {
      for (size_t to = from; to <= nodes.size(); ++to) {
        INFO("amount " << amount << ", nodes [" << from << ", " << to << ")");
        REQUIRE(index.NextWithRoom(nodes, kNvidiaGpu, amount, from, to) == NextByScan(nodes, amount, from, to));
      }
    }
  }
}

TEST_CASE("the free index finds the first node with room in a range, as a scan does, after nodes change") {
  std::vector<NodeInfo> nodes(7);  // not a power of two: the tree has empty leaves
  for (size_t n = 0; n < nodes.size(); ++n) {
    nodes[n].id = static_cast<NodeId>(n);
    nodes[n].allocatable = Res("nvidia.com/gpu=8");
    nodes[n].used = Res("nvidia.com/gpu=" + std::to_string((n * 5) % 9 == 0 ? 8 : (n * 5) % 9));
  }
  FreeIndex index;
  index.Reset(nodes.size());
  CheckAgainstScan(index, nodes);
  // Releasing pods count as room to come; pipelined ones as room taken.
  nodes[2].releasing = Res("nvidia.com/gpu=6");
  index.Touch(2);
  nodes[5].pipelined = Res("nvidia.com/gpu=3");
  index.Touch(5);
  nodes[6].used = Res("nvidia.com/gpu=0");
  index.Touch(6);
  index.Touch(6);  // touched twice: refreshed once
  CheckAgainstScan(index, nodes);
  nodes[6].used = Res("nvidia.com/gpu=8");
  index.Touch(6);
  CheckAgainstScan(index, nodes);
}

TEST_CASE("the free index finds the first node with room in every indexed resource of a request") {
  std::vector<NodeInfo> nodes(11);
  for (size_t n = 0; n < nodes.size(); ++n) {
    nodes[n].id = static_cast<NodeId>(n);
    nodes[n].allocatable = Res("cpu=8,nvidia.com/gpu=8");
    // Some nodes short of GPUs, others of cpu, a few of both.
    nodes[n].used = Res("cpu=" + std::to_string((n * 3) % 9 > 8 ? 8 : (n * 3) % 9) + ",nvidia.com/gpu=" +
                        std::to_string((n * 5) % 9 > 8 ? 8 : (n * 5) % 9));
  }
  auto scan = [&](const Resources& request, bool cpu_too, size_t from, size_t to) {
    for (size_t n = from; n < to; ++n) {
      const Resources idle = nodes[n].FutureIdle();
      if (idle.Get(kNvidiaGpu) >= request.Get(kNvidiaGpu) && (!cpu_too || idle.Get(kCpu) >= request.Get(kCpu))) return n;
    }
    return to;
  };
  FreeIndex index;
  index.Reset(nodes.size());
  for (int64_t gpus = 1; gpus <= 8; ++gpus) {
    for (int64_t cpus = 1; cpus <= 8; ++cpus) {
      const Resources request = Res("cpu=" + std::to_string(cpus) + ",nvidia.com/gpu=" + std::to_string(gpus));
      for (size_t from = 0; from <= nodes.size(); ++from) {
        INFO(gpus << " GPUs, " << cpus << " cpus, from " << from);
        // Only GPUs are indexed: cpu is not looked at.
        REQUIRE(index.NextWithRoomForAll(nodes, request, kNvidiaGpu, from, nodes.size()) ==
                scan(request, false, from, nodes.size()));
      }
    }
  }
  (void)index.NextWithRoom(nodes, kCpu, 1, 0, nodes.size());  // builds the cpu tree
  nodes[4].used = Res("cpu=0,nvidia.com/gpu=0");  // freed: found again once refreshed
  index.Touch(4);
  for (int64_t gpus = 1; gpus <= 8; ++gpus) {
    for (int64_t cpus = 1; cpus <= 8; ++cpus) {
      const Resources request = Res("cpu=" + std::to_string(cpus) + ",nvidia.com/gpu=" + std::to_string(gpus));
      for (size_t from = 0; from <= nodes.size(); ++from) {
        for (size_t to = from; to <= nodes.size(); ++to) {
          INFO(gpus << " GPUs, " << cpus << " cpus, nodes [" << from << ", " << to << ")");
          REQUIRE(index.NextWithRoomForAll(nodes, request, kCpu, from, to) == scan(request, true, from, to));
        }
      }
    }
  }
}

TEST_CASE("a search over a full cluster finds the node an eviction frees, and none once it is undone") {
  ClusterBuilder b;
  for (const char* node : {"n1", "n2", "n3", "n4"}) b.Node(node, "cpu=32,nvidia.com/gpu=8");
  for (const char* node : {"n1", "n2", "n3", "n4"}) {
    b.Job(std::string("run-") + node, {.tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=8"}}, .phase = PodGroupPhase::kRunning});
    b.Running(std::string("run-") + node + "-w-0", node);
  }
  b.Job("wait", {.tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=8"}}});
  testing::SessionFixture s(b, "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n");
  Session& session = s.session();
  const TaskInfo& waiting = s.task("default/wait-w-0");
  // Two searches over four full nodes: past as many nodes without room as the cluster has, the
  // session searches by its index from then on.
  CHECK(session.FindBestNode(waiting, Placement::kIdle) == kNoId);
  CHECK(session.FindBestNode(waiting, Placement::kFutureIdle) == kNoId);
  CHECK_FALSE(session.SomeNodeFits(waiting, Placement::kFutureIdle));
  Statement statement(session);
  statement.Evict(s.task("default/run-n3-w-0").id, "test");
  CHECK(session.FindBestNode(waiting, Placement::kFutureIdle) == s.node("n3").id);
  CHECK(session.SomeNodeFits(waiting, Placement::kFutureIdle));
  CHECK(session.FindBestNode(waiting, Placement::kIdle) == kNoId);  // not free until the pod is gone
  statement.Discard();
  CHECK(session.FindBestNode(waiting, Placement::kFutureIdle) == kNoId);
  // Resources released outside the session's tasks (a pod of another scheduler gone).
  session.ReleaseHeldResources(s.node("n4").id, Res("cpu=1,nvidia.com/gpu=8"));
  CHECK(session.FindBestNode(waiting, Placement::kIdle) == s.node("n4").id);
}

// The node each search of job "wide"'s `tasks` tasks picks in turn, in one session of `b`, with
// the task then allocated there so that the cluster fills as it goes; without the index
// (skipping off) every node is examined.
std::vector<NodeId> SampledPicks(const ClusterBuilder& b, int tasks, bool index) {
  testing::SessionFixture s(b, "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n");
  WaitMemo no_skipping(/*enabled=*/false);
  if (!index) s->set_wait_memo(&no_skipping);
  std::vector<NodeId> nodes;
  for (int i = 0; i < tasks; ++i) {
    const TaskInfo& task = s.task("default/wide-w-" + std::to_string(i));
    s->ForgetCachedSearches();  // each a search of its own, not the last one's cached nodes
    const NodeId node = s->FindBestNode(task, Placement::kIdle);
    nodes.push_back(node);
    CHECK(s->SomeNodeFits(task, Placement::kIdle) == (node != kNoId));
    if (node == kNoId) continue;
    Statement statement(s.session());
    statement.Allocate(task.id, node);
    statement.Commit();
  }
  return nodes;
}

TEST_CASE("sampled searches over a partly full cluster pick the same nodes with and without the index") {
  // 300 nodes, five of every seven full: searches sample part of the cluster, start where the
  // last one stopped, and pass runs of full nodes the index lets them skip.
  ClusterBuilder b;
  for (int i = 0; i < 300; ++i) {
    const std::string node = "n" + std::to_string(1000 + i);
    b.Node(node, "cpu=32,nvidia.com/gpu=8");
    if (i % 7 < 5) b.ForeignPod("full-" + node, node, "cpu=1,nvidia.com/gpu=8");
  }
  b.Job("wide", {.tasks = {{"w", 60, "cpu=1,nvidia.com/gpu=3"}}});
  const std::vector<NodeId> scanned = SampledPicks(b, 60, /*index=*/false);
  CHECK(SampledPicks(b, 60, /*index=*/true) == scanned);
  CHECK(std::count(scanned.begin(), scanned.end(), kNoId) == 0);  // 86 free nodes take two each
}

TEST_CASE("sampled searches over nodes short of different resources pick the same nodes with and without the index") {
  // Runs of nodes short of GPUs and of cpu in turn: a skip by one resource lands on a node short
  // of the other, and the index skips by both.
  ClusterBuilder b;
  for (int i = 0; i < 300; ++i) {
    const std::string node = "n" + std::to_string(1000 + i);
    b.Node(node, "cpu=32,nvidia.com/gpu=8");
    if (i % 9 < 3) b.ForeignPod("gpus-" + node, node, "cpu=1,nvidia.com/gpu=8");
    if (i % 9 >= 3 && i % 9 < 7) b.ForeignPod("cpu-" + node, node, "cpu=31,nvidia.com/gpu=0");
  }
  b.Job("wide", {.tasks = {{"w", 80, "cpu=4,nvidia.com/gpu=2"}}});
  const std::vector<NodeId> scanned = SampledPicks(b, 80, /*index=*/false);
  CHECK(SampledPicks(b, 80, /*index=*/true) == scanned);
  // 67 free nodes take four each (their GPUs): every one of the 80 finds one.
  CHECK(std::count(scanned.begin(), scanned.end(), kNoId) == 0);
}

}  // namespace
}  // namespace lahar
