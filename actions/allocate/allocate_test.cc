// Tests of the allocate action with the default tiers (section 4 of the spec, without the
// elastic plugin): priority, gang | drf, predicates, proportion, nodeorder. Each cluster is small
// enough to work out by hand; node ties go to the lower name, and nodeorder's least-requested
// scoring sends a pod to the emptiest node that fits.
#include "actions/allocate/allocate.h"

#include <catch2/catch.hpp>
#include <cstdio>

#include "api/strings.h"
#include "scheduler/framework/cycle.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/wait_memo.h"
#include "scheduler/builtins.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/default_tiers.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::RunSession;
using testing::SessionOutcome;
using testing::TaskSpec;

using BindMap = std::map<std::string, std::string>;

const std::string kConfig = testing::DefaultTiersConfig("allocate");

TEST_CASE("allocate: a gang binds all of its min or nothing; other jobs still bind") {
  ClusterBuilder b;
  b.Node("n1", "cpu=3").Node("n2", "cpu=3");
  // a: 3 pods of 2 cpu. The cluster has 6 cpu (so the queue's share allows all 3), but each
  // node holds only one such pod: room for 2.
  b.Job("a", {.min = 3, .tasks = {{"worker", 3, "cpu=2"}}});
  b.Job("b", {.min = 1, .tasks = {{"worker", 1, "cpu=2"}}});
  SessionOutcome out = RunSession(b, kConfig);
  // a is first (created first) but rolls back; b then takes n1 (equal scores -> lower name).
  CHECK(out.binds == BindMap{{"default/b-worker-0", "n1"}});
  REQUIRE(out.job_updates.count("default/a") == 1);
  CHECK(out.job_updates.at("default/a").reason() == "NotEnoughResources");
  // a-worker-0 -> n1, a-worker-1 -> n2, a-worker-2 finds 1 cpu on each: 3 - 2 = 1 unplaced.
  CHECK(out.job_updates.at("default/a").message() == "1/3 pods unschedulable: 2 nodes have too little cpu");
  CHECK(out.job_updates.at("default/b").phase == PodGroupPhase::kRunning);
}

TEST_CASE("allocate: places only the min, rank 0 first") {
  ClusterBuilder b;
  b.Node("n1", "cpu=16").Node("n2", "cpu=16");
  b.Job("elastic", {.min = 2, .tasks = {{"worker", 5, "cpu=1"}}});
  SessionOutcome out = RunSession(b, kConfig);
  // min 2 of 5: workers 0 and 1 (index order); worker-0 -> n1 (tie), worker-1 -> n2 (emptier).
  CHECK(out.bind_order == std::vector<std::string>{"default/elastic-worker-0", "default/elastic-worker-1"});
  CHECK(out.binds == BindMap{{"default/elastic-worker-0", "n1"}, {"default/elastic-worker-1", "n2"}});
}

TEST_CASE("allocate: the master (higher task priority) is placed before the workers") {
  ClusterBuilder b;
  b.Node("n1", "cpu=16");
  // Workers are listed first, so only the task priority puts the master ahead.
  b.Job("mpi", {.min = 2, .tasks = {{"worker", 4, "cpu=1"}, {"master", 1, "cpu=1", /*priority=*/10}}});
  SessionOutcome out = RunSession(b, kConfig);
  CHECK(out.bind_order == std::vector<std::string>{"default/mpi-master-0", "default/mpi-worker-0"});
}

TEST_CASE("allocate: per-role minimums pick the pods that complete every role") {
  ClusterBuilder b;
  b.Node("n1", "cpu=16");
  // Task order: ps-0, worker-0 (index 0), ps-1, worker-1 (index 1), ...
  // min 3 with ps >= 1 and worker >= 2: ps-0, worker-0, then ps-1 is skipped (ps has its 1 and
  // the last slot is owed to worker), worker-1.
  b.Job("tf", {.min = 3,
               .tasks = {{"ps", 2, "cpu=1"}, {"worker", 4, "cpu=1"}},
               .min_task_member = {{"ps", 1}, {"worker", 2}}});
  SessionOutcome out = RunSession(b, kConfig);
  CHECK(out.bind_order ==
        std::vector<std::string>{"default/tf-ps-0", "default/tf-worker-0", "default/tf-worker-1"});
}

TEST_CASE("allocate: a job already running at its min gets nothing more") {
  ClusterBuilder b;
  b.Node("n1", "cpu=16");
  b.Job("running", {.min = 2, .tasks = {{"worker", 5, "cpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Running("running-worker-0", "n1").Running("running-worker-1", "n1");
  SessionOutcome out = RunSession(b, kConfig);
  CHECK(out.binds.empty());
}

TEST_CASE("allocate: a running job below its min is topped up to it") {
  ClusterBuilder b;
  b.Node("n1", "cpu=16");
  b.Job("starved", {.min = 3, .tasks = {{"worker", 5, "cpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Running("starved-worker-0", "n1");
  SessionOutcome out = RunSession(b, kConfig);
  // 1 running, min 3: workers 1 and 2.
  CHECK(out.bind_order == std::vector<std::string>{"default/starved-worker-1", "default/starved-worker-2"});
}

TEST_CASE("allocate: queues take turns in share order, weighted") {
  ClusterBuilder b;
  // 8 nodes of 1 cpu: each pod takes a whole node, the first empty one by name.
  for (int i = 1; i <= 8; ++i) b.Node(StrCat("n", i), "cpu=1");
  b.Queue("a", 1).Queue("b", 3);
  for (int i = 0; i < 8; ++i) {
    b.Job(StrCat("a", i), {.queue = "a", .tasks = {{"w", 1, "cpu=1"}}});
    b.Job(StrCat("b", i), {.queue = "b", .tasks = {{"w", 1, "cpu=1"}}});
  }
  SessionOutcome out = RunSession(b, kConfig);
  // Both queues ask for 8; deserved by weight 1:3 of 8 cpu: a = 2, b = 6.
  // Shares (allocated / deserved) before each pick, ties to the queue name:
  //   a 0 = b 0 -> a0; a .5 > b 0 -> b0; b 1/6 -> b1; b 2/6 -> b2; a .5 = b .5 -> a1;
  //   a is now overused (2 >= 2) -> b3, b4, b5; b is overused at 6.
  CHECK(out.bind_order == std::vector<std::string>{"default/a0-w-0", "default/b0-w-0", "default/b1-w-0",
                                                   "default/b2-w-0", "default/a1-w-0", "default/b3-w-0",
                                                   "default/b4-w-0", "default/b5-w-0"});
  CHECK(out.binds.at("default/a0-w-0") == "n1");
  CHECK(out.binds.at("default/b5-w-0") == "n8");
  REQUIRE(out.job_updates.count("default/a2") == 1);
  CHECK(out.job_updates.at("default/a2").message() == "queue a: deserved cpu 2, allocated 2, needs 1");
}

TEST_CASE("allocate: a queue's capability is never exceeded") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8").Node("n2", "cpu=8");
  b.Queue("capped", 1, "cpu=3");
  for (int i = 0; i < 5; ++i) b.Job(StrCat("s", i), {.queue = "capped", .tasks = {{"w", 1, "cpu=1"}}});
  SessionOutcome out = RunSession(b, kConfig);
  // 5 pods of 1 cpu, capability 3 cpu: s0, s1, s2 only.
  CHECK(out.binds.size() == 3);
  CHECK(out.binds.count("default/s0-w-0") == 1);
  CHECK(out.binds.count("default/s1-w-0") == 1);
  CHECK(out.binds.count("default/s2-w-0") == 1);
}

TEST_CASE("allocate: a gang that would cross its queue's capability waits, and says why") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8").Node("n2", "cpu=8");
  b.Queue("capped", 1, "cpu=3");
  // 2 pods of 2 cpu: the first fits the 3 cpu capability, the second would make it 4.
  b.Job("g", {.queue = "capped", .min = 2, .tasks = {{"w", 2, "cpu=2"}}});
  SessionOutcome out = RunSession(b, kConfig);
  CHECK(out.binds.empty());
  REQUIRE(out.job_updates.count("default/g") == 1);
  CHECK(out.job_updates.at("default/g").message() ==
        "queue capped: capability cpu 3, allocated 0, needs 4");
}

TEST_CASE("allocate: naming the queue that refused a job moves no other job's placement") {
  // 200 nodes: a search samples 100 of them, from where the last search stopped. Telling that
  // some node could have taken the refused pod must not be such a search.
  auto build = [](bool with_refused) {
    ClusterBuilder b;
    for (int i = 0; i < 200; ++i) b.Node(StrCat("node-", 100 + i), "cpu=8");
    b.Queue("capped", 1, "cpu=1").Queue("open", 1);
    if (with_refused) b.Job("a", {.queue = "capped", .tasks = {{"w", 1, "cpu=2"}}});
    b.Job("b", {.queue = "open", .tasks = {{"w", 1, "cpu=3"}}});
    return b;
  };
  SessionOutcome alone = RunSession(build(false), kConfig);
  SessionOutcome after_refusal = RunSession(build(true), kConfig);
  REQUIRE(alone.binds.count("default/b-w-0") == 1);
  CHECK(after_refusal.binds == alone.binds);
  REQUIRE(after_refusal.job_updates.count("default/a") == 1);
  CHECK(after_refusal.job_updates.at("default/a").message() ==
        "queue capped: capability cpu 1, allocated 0, needs 2");
}

TEST_CASE("allocate: node selectors and taints are respected") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4", {{"zone", "a"}});
  b.Node("n2", "cpu=4", {}, {{"dedicated", "infra", "NoSchedule"}});
  b.Node("n3", "cpu=4");
  // Only n1 has zone=a, though n3 (as empty) would score the same.
  b.Job("sel", {.tasks = {{"w", 1, "cpu=1", 0, "", {{"zone", "a"}}}}});
  // Needs 4 cpu: n1 has 3 left, n2 is tainted, so n3.
  b.Job("plain", {.tasks = {{"w", 1, "cpu=4"}}});
  // Tolerates the taint; n2 is the only node with 4 cpu left.
  b.Job("tol", {.tasks = {{"w", 1, "cpu=4", 0, "", {}, {{"dedicated", "Equal", "infra", "NoSchedule"}}}}});
  // Untolerated, 1 cpu: n1 has 3 cpu left, n3 none, n2 tainted.
  b.Job("late", {.tasks = {{"w", 1, "cpu=1"}}});
  SessionOutcome out = RunSession(b, kConfig);
  CHECK(out.binds == BindMap{{"default/sel-w-0", "n1"},
                             {"default/plain-w-0", "n3"},
                             {"default/tol-w-0", "n2"},
                             {"default/late-w-0", "n1"}});
}

TEST_CASE("allocate: the unschedulable explanation counts nodes by reason") {
  ClusterBuilder b;
  for (int i = 1; i <= 4; ++i) b.Node(StrCat("cpu", i), "cpu=32");
  b.Node("gpu1", "cpu=32,nvidia.com/gpu=5");
  b.Node("infra1", "cpu=32,nvidia.com/gpu=8", {}, {{"dedicated", "infra", "NoSchedule"}});
  b.Node("infra2", "cpu=32,nvidia.com/gpu=8", {}, {{"dedicated", "infra", "NoSchedule"}});
  b.Job("train", {.min = 8, .tasks = {{"worker", 8, "cpu=1,nvidia.com/gpu=1"}}});
  SessionOutcome out = RunSession(b, kConfig);
  CHECK(out.binds.empty());
  REQUIRE(out.job_updates.count("default/train") == 1);
  // gpu1 takes 5 of the 8; the other 3 see 4 cpu-only nodes and gpu1 (full) short of GPUs,
  // and 2 nodes with GPUs behind an untolerated taint.
  CHECK(out.job_updates.at("default/train").reason() == "NotEnoughResources");
  CHECK(out.job_updates.at("default/train").message() ==
        "3/8 pods unschedulable: 5 nodes have too little nvidia.com/gpu, 2 have taint dedicated=infra");
}

TEST_CASE("allocate: a gang with scheduling gates binds nothing, says which gates, and binds once they go") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8").Node("n2", "cpu=8");
  TaskSpec master{"master", 1, "cpu=1", /*priority=*/10};
  master.scheduling_gates = {"example.com/quota"};
  TaskSpec worker{"worker", 2, "cpu=1"};
  worker.scheduling_gates = {"example.com/quota", "example.com/data-ready"};
  b.Job("gated", {.min = 3, .tasks = {master, worker}});
  b.Job("plain", {.tasks = {{"w", 1, "cpu=1"}}});
  SessionOutcome out = RunSession(b, kConfig);
  // Room for everything, yet no pod of the gang binds; the plain job is not held up.
  CHECK(out.binds == BindMap{{"default/plain-w-0", "n1"}});
  testing::Apply(b, out);
  REQUIRE(out.job_updates.count("default/gated") == 1);
  CHECK(out.job_updates.at("default/gated").reason() == "SchedulingGated");
  // Gate names once each, sorted.
  CHECK(out.job_updates.at("default/gated").message() ==
        "3 pods have scheduling gates: example.com/data-ready, example.com/quota");

  // Two pods updated without their gates: the one left still holds the whole gang back.
  b.SchedulingGates("gated-master-0", {}).SchedulingGates("gated-worker-0", {});
  out = RunSession(b, kConfig);
  CHECK(out.binds.empty());
  CHECK(out.job_updates.at("default/gated").message() ==
        "1 pod has scheduling gates: example.com/data-ready, example.com/quota");

  b.SchedulingGates("gated-worker-1", {});
  out = RunSession(b, kConfig);
  CHECK(out.BoundCount("default/gated") == 3);
  CHECK(out.job_updates.at("default/gated").phase == PodGroupPhase::kRunning);
}

TEST_CASE("allocate: scheduling gates are the reason a job waits even where nodes are short too") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.ForeignPod("hog", "n1", "cpu=6");
  // g-master-0 (task priority 10) finds too little cpu free; the workers are gated: whatever
  // the nodes, the gang cannot start before the gates go, so they are the reason.
  TaskSpec worker{"worker", 2, "cpu=1"};
  worker.scheduling_gates = {"example.com/quota"};
  b.Job("g", {.min = 3, .tasks = {{"master", 1, "cpu=4", /*priority=*/10}, worker}});
  // A gated pod that no node has room for either: the gates, not the missing cpu.
  TaskSpec full{"w", 1, "cpu=4"};
  full.scheduling_gates = {"example.com/quota"};
  b.Job("full", {.tasks = {full}});
  SessionOutcome out = RunSession(b, kConfig);
  CHECK(out.binds.empty());
  CHECK(out.job_updates.at("default/g").reason() == "SchedulingGated");
  CHECK(out.job_updates.at("default/g").message() == "2 pods have scheduling gates: example.com/quota");
  CHECK(out.job_updates.at("default/full").reason() == "SchedulingGated");
  CHECK(out.job_updates.at("default/full").message() == "1 pod has scheduling gates: example.com/quota");

  b.SchedulingGates("full-w-0", {});
  out = RunSession(b, kConfig);
  CHECK(out.job_updates.at("default/full").message() == "1/1 pods unschedulable: 1 node has too little cpu");
}

TEST_CASE("allocate: pods of other schedulers count against their nodes") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=4");
  b.ForeignPod("kube-proxy", "n1", "cpu=3");
  b.Job("g", {.min = 2, .tasks = {{"w", 2, "cpu=2"}}});
  SessionOutcome out = RunSession(b, kConfig);
  // n1 has 4 - 3 = 1 cpu free: both pods go to n2 (4 cpu).
  CHECK(out.binds == BindMap{{"default/g-w-0", "n2"}, {"default/g-w-1", "n2"}});
}

TEST_CASE("allocate: a cordoned node gets nothing") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8").Node("n2", "cpu=2");
  b.Cordon("n1");
  b.Job("a", {.tasks = {{"w", 1, "cpu=2"}}});
  b.Job("b", {.tasks = {{"w", 1, "cpu=2"}}});
  SessionOutcome out = RunSession(b, kConfig);
  // n1 is emptier but cordoned; a takes n2 and b finds no room.
  CHECK(out.binds == BindMap{{"default/a-w-0", "n2"}});
}

TEST_CASE("allocate: jobs not yet admitted are left alone") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Job("pending", {.tasks = {{"w", 1, "cpu=1"}}, .phase = PodGroupPhase::kPending});
  SessionOutcome out = RunSession(b, kConfig);
  CHECK(out.binds.empty());
}

TEST_CASE("allocate: a gang that fits only on releasing resources is held, not bound") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=2");
  b.Job("old", {.tasks = {{"w", 1, "cpu=4"}}, .phase = PodGroupPhase::kRunning});
  b.Running("old-w-0", "n1");
  REQUIRE(b.cache().MarkReleasing("default/old-w-0").ok());
  // g: 2 pods of 2 cpu. g-w-0 -> n2 (idle), g-w-1 -> n1 (4 cpu being released): pipelined.
  b.Job("g", {.min = 2, .tasks = {{"w", 2, "cpu=2"}}});
  // late: created after g; n2 is held by g for the rest of the action, so it can only be
  // pipelined onto what is left of n1's releasing 4 cpu (4 - 2 = 2).
  b.Job("late", {.tasks = {{"w", 1, "cpu=2"}}});
  SessionOutcome out = RunSession(b, kConfig);
  CHECK(out.binds.empty());
  REQUIRE(out.job_updates.count("default/g") == 1);
  CHECK(out.job_updates.at("default/g").reason() == "Pipelined");
  CHECK(out.job_updates.at("default/g").message() == "1 pod of default/old is terminating for it");

  // Once the old pod is gone, g binds whole; late waits for the next free 2 cpu.
  b.cache().DeletePod("default", "old-w-0");
  out = RunSession(b, kConfig);
  CHECK(out.binds == BindMap{{"default/g-w-0", "n1"}, {"default/g-w-1", "n1"}, {"default/late-w-0", "n2"}});
}

TEST_CASE("allocate: the same input gives the same decisions") {
  auto build = [] {
    ClusterBuilder b;
    for (int i = 0; i < 12; ++i) b.Node(StrCat("node-", i), i % 3 == 0 ? "cpu=8,nvidia.com/gpu=4" : "cpu=8");
    b.Queue("research", 2).Queue("prod", 1, "cpu=20");
    for (int i = 0; i < 10; ++i) {
      b.Job(StrCat("r", i), {.queue = "research", .min = 2, .tasks = {{"w", 3, "cpu=2"}}});
      b.Job(StrCat("p", i), {.queue = "prod", .min = 1, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=1"}}});
    }
    return b;
  };
  SessionOutcome first = RunSession(build(), kConfig);
  SessionOutcome second = RunSession(build(), kConfig);
  CHECK(!first.bind_order.empty());
  CHECK(first.bind_order == second.bind_order);
  CHECK(first.binds == second.binds);
  REQUIRE(first.raw.job_updates.size() == second.raw.job_updates.size());
  for (size_t i = 0; i < first.raw.job_updates.size(); ++i) {
    CHECK(first.raw.job_updates[i].job == second.raw.job_updates[i].job);
    CHECK(first.raw.job_updates[i].message() == second.raw.job_updates[i].message());
  }
}

// Jobs whose whole min fits no node when allocate starts are set aside with the sessions' memory
// on (and told their reason at the end), and take their turn with it off: the decisions and
// every job's reason must be the same either way.
void CheckSameWithAndWithoutMemory(const ClusterBuilder& b) {
  WaitMemo on(true);
  WaitMemo off(false);
  SessionOutcome with = RunSession(b, kConfig, 0, &on);
  SessionOutcome without = RunSession(b, kConfig, 0, &off);
  CHECK(with.binds == without.binds);
  CHECK(with.bind_order == without.bind_order);
  REQUIRE(with.job_updates.size() == without.job_updates.size());
  for (const auto& [job, update] : without.job_updates) {
    INFO(job);
    REQUIRE(with.job_updates.count(job) == 1);
    CHECK(with.job_updates.at(job).message() == update.message());
    CHECK(with.job_updates.at(job).phase == update.phase);
  }
}

TEST_CASE("allocate: jobs that fit nowhere get the same reason whether set aside or tried") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4,memory=8Gi").Node("n2", "cpu=4,memory=8Gi");
  // big-*: 8 cpu, more than any node has; small fits and is placed between them in job order.
  b.Job("big-0", {.tasks = {{"w", 2, "cpu=8"}}});
  b.Job("big-1", {.min = 2, .tasks = {{"w", 2, "cpu=8"}}});
  b.Job("small", {.tasks = {{"w", 1, "cpu=3"}}});
  b.Job("big-2", {.tasks = {{"w", 1, "cpu=8,memory=1Gi"}}});
  // wide: too much memory for any node; tried after small has left n1 with 1 cpu.
  b.Job("wide", {.tasks = {{"w", 1, "cpu=2,memory=16Gi"}}});
  CheckSameWithAndWithoutMemory(b);
  SessionOutcome out = RunSession(b, kConfig);
  CHECK(out.binds == BindMap{{"default/small-w-0", "n1"}});
  CHECK(out.job_updates.at("default/big-1").message() == "2/2 pods unschedulable: 2 nodes have too little cpu");
  CHECK(out.job_updates.at("default/big-2").message() == "1/1 pods unschedulable: 2 nodes have too little cpu");
  // Explained as the nodes were when allocate started, before small took n1's cpu.
  CHECK(out.job_updates.at("default/wide").message() == "1/1 pods unschedulable: 2 nodes have too little memory");
}

TEST_CASE("allocate: alike jobs a queue refuses share the reason; a job of other shapes is tried on its own") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=4");
  b.Queue("capped", 1, "cpu=3");
  // p-*: a pod of 4 cpu, more than the capability (a node has it); q, after them: a pod of 1 cpu,
  // which fits it. Told p's refusal, q would not run.
  for (const char* name : {"p-0", "p-1", "p-2"}) b.Job(name, {.queue = "capped", .tasks = {{"w", 1, "cpu=4"}}});
  b.Job("q", {.queue = "capped", .tasks = {{"w", 1, "cpu=1"}}});
  CheckSameWithAndWithoutMemory(b);
  WaitMemo memo;
  SessionOutcome out = RunSession(b, kConfig, 0, &memo);
  CHECK(out.binds == BindMap{{"default/q-w-0", "n1"}});
  for (const char* job : {"default/p-0", "default/p-1", "default/p-2"}) {
    INFO(job);
    REQUIRE(out.job_updates.count(job) == 1);
    CHECK(out.job_updates.at(job).message() == "queue capped: capability cpu 3, allocated 0, needs 4");
  }
}

TEST_CASE("allocate: jobs set aside that reported the same reason make no update; one that reported another does") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4,memory=8Gi").Node("n2", "cpu=4,memory=8Gi");
  for (const char* name : {"big-0", "big-1", "big-2"}) b.Job(name, {.tasks = {{"w", 1, "cpu=8"}}});
  b.Job("pair", {.min = 2, .tasks = {{"w", 2, "cpu=8"}}});
  WaitMemo memo;
  SessionOutcome first = RunSession(b, kConfig, 0, &memo);
  const std::string one = "1/1 pods unschedulable: 2 nodes have too little cpu";
  for (const char* job : {"default/big-0", "default/big-1", "default/big-2"}) {
    CHECK(first.job_updates.at(job).message() == one);
  }
  CHECK(first.job_updates.at("default/pair").message() == "2/2 pods unschedulable: 2 nodes have too little cpu");
  testing::Apply(b, first);
  CHECK(RunSession(b, kConfig, 1000, &memo).job_updates.empty());
  // big-1's owner took another reason since: only big-1 is told again, and pair keeps its own.
  b.cache().NoteWaitReported("default/big-1", WaitReason{.kind = WaitKind::kQueueClosed, .subject = "default"});
  SessionOutcome third = RunSession(b, kConfig, 2000, &memo);
  REQUIRE(third.job_updates.size() == 1);
  CHECK(third.job_updates.at("default/big-1").message() == one);
}

TEST_CASE("allocate: a reason told again in a later session counts each node as it is then") {
  // Both GPUs held, so w's pod fits nowhere for the GPU; then n2's cpu is taken as well, which
  // n2 then lacks first. The sessions' memory keeps each node's answer only while it is unchanged.
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=32Gi,nvidia.com/gpu=1").Node("n2", "cpu=8,memory=32Gi,nvidia.com/gpu=1");
  b.Job("holder-1", {.tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("holder-1", "w", 0, 0, "n1");
  b.Job("holder-2", {.tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("holder-2", "w", 0, 0, "n2");
  b.Job("w", {.tasks = {{"w", 1, "cpu=2,nvidia.com/gpu=1"}}});
  WaitMemo memo;
  SessionOutcome first = RunSession(b, kConfig, 0, &memo);
  CHECK(first.job_updates.at("default/w").message() == "1/1 pods unschedulable: 2 nodes have too little nvidia.com/gpu");
  testing::Apply(b, first);
  b.Job("cpu-holder", {.tasks = {{"w", 1, "cpu=7"}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("cpu-holder", "w", 0, 0, "n2");
  WaitMemo off(false);
  for (WaitMemo* carried : {&memo, &off}) {
    INFO((carried == &memo ? "with" : "without") << " the sessions' memory");
    SessionOutcome later = RunSession(b, kConfig, 1000, carried);
    REQUIRE(later.job_updates.count("default/w") == 1);
    CHECK(later.job_updates.at("default/w").message() ==
          "1/1 pods unschedulable: 1 node has too little cpu, 1 has too little nvidia.com/gpu");
  }
}

TEST_CASE("allocate: a job that fits nowhere in a queue that turns overused is told the queue's limit") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=4");
  b.Queue("a", 1).Queue("b", 1);
  // a asks far more than b, so each deserves 4 cpu. a's first job fits nowhere; then `fills`
  // takes a's whole share; `late`, which fits nowhere either, comes after: a is overused by then.
  b.Job("early", {.queue = "a", .tasks = {{"w", 1, "cpu=8"}}});
  b.Job("fills", {.queue = "a", .tasks = {{"w", 1, "cpu=4"}}});
  b.Job("late", {.queue = "a", .tasks = {{"w", 1, "cpu=8"}}});
  b.Job("other", {.queue = "b", .tasks = {{"w", 1, "cpu=4"}}});
  CheckSameWithAndWithoutMemory(b);
  SessionOutcome out = RunSession(b, kConfig);
  CHECK(out.binds.size() == 2);
  CHECK(out.job_updates.at("default/early").message() == "1/1 pods unschedulable: 2 nodes have too little cpu");
  CHECK(out.job_updates.at("default/late").message() == "queue a: deserved cpu 4, allocated 4, needs 8");
}

TEST_CASE("allocate: node-search arguments are validated") {
  CHECK(NewAllocateAction(Arguments("action allocate", {{"percentageOfNodesToFind", "50"}})).ok());
  auto unknown = BuiltinRegistry().NewAction("allocate", Arguments("action allocate", {{"minNodes", "5"}}));
  REQUIRE(!unknown.ok());
  CHECK(std::string(unknown.status().message()) ==
        "action allocate: unknown argument \"minNodes\" (valid arguments: minNodesToFind, "
        "minPercentageOfNodesToFind, percentageOfNodesToFind, predicateErrorCacheEnable)");
  CHECK(!NewAllocateAction(Arguments("action allocate", {{"minNodesToFind", "0"}})).ok());
  CHECK(!NewAllocateAction(Arguments("action allocate", {{"percentageOfNodesToFind", "x"}})).ok());
}

// The benchmark of the brief: 5,000 gangs of 10 pods on 5,000 nodes in one session.
// Run with: allocate_test "[.benchmark]"
TEST_CASE("allocate: benchmark, 5000 gangs x 10 pods on 5000 nodes", "[.benchmark]") {
  ClusterBuilder b;
  for (int i = 0; i < 5000; ++i) b.Node(StrCat("node-", 10000 + i), "cpu=32,memory=128Gi");
  for (int i = 0; i < 5000; ++i) {
    b.Job(StrCat("job-", 10000 + i), {.min = 10, .tasks = {{"w", 10, "cpu=1,memory=2Gi"}}});
  }
  SessionOutcome out = RunSession(b, kConfig);
  CHECK(out.binds.size() == 50000);
  const double seconds = static_cast<double>(out.raw.duration_micros) / 1e6;
  std::printf("allocate benchmark: %zu pods in %.3f s = %.0f pods/s\n", out.binds.size(), seconds,
              static_cast<double>(out.binds.size()) / seconds);
}

// A saturated cluster: 2,000 nodes hold 400 of 5,000 gangs; the other 4,600 must fail fast.
TEST_CASE("allocate: benchmark, 5000 gangs x 10 pods, 400 fit", "[.benchmark]") {
  ClusterBuilder b;
  for (int i = 0; i < 2000; ++i) b.Node(StrCat("node-", 10000 + i), "cpu=4,memory=16Gi");
  for (int i = 0; i < 5000; ++i) {
    b.Job(StrCat("job-", 10000 + i), {.min = 10, .tasks = {{"w", 10, "cpu=2,memory=2Gi"}}});
  }
  SessionOutcome out = RunSession(b, kConfig);
  // 2 pods per node: 4,000 pods, 400 gangs.
  CHECK(out.binds.size() == 4000);
  CHECK(out.job_updates.at("default/job-14999").message() ==
        "10/10 pods unschedulable: 2000 nodes have too little cpu");
  std::printf("allocate saturated benchmark: %zu pods, %zu job updates in %.3f s\n", out.binds.size(),
              out.raw.job_updates.size(), static_cast<double>(out.raw.duration_micros) / 1e6);
}

// A session over the builder's cache laid out as `layout`: with `memo` when it leaves parked
// jobs out, else (the session over every job, for comparison) with a memo that parks nothing.
CycleResult RunLaidOut(ClusterBuilder& b, const std::string& config, WaitMemo& memo, Millis now,
                       ClusterCache::Layout layout) {
  WaitMemo plain;
  auto result = RunSchedulingCycle(b.cache().Snapshot(now, {}, layout), testing::MustParseConfig(config),
                                   BuiltinRegistry(), layout == ClusterCache::Layout::kLeaveOutParked ? &memo : &plain);
  REQUIRE(result.ok());
  return *std::move(result);
}

// What a session told, job by job ("key Phase: message"), then what it bound.
std::vector<std::string> Outcome(const CycleResult& result) {
  std::vector<std::string> told;
  for (const CycleResult::JobUpdate& u : result.job_updates) {
    told.push_back(StrCat(u.job, " ", PodGroupPhaseName(u.phase), ": ", u.message()));
  }
  for (const CycleResult::Bind& bind : result.binds) told.push_back(StrCat(bind.pod, " on ", bind.node));
  return told;
}

// Admitted jobs set aside alike (they fit nowhere) may be parked behind the first of them. A
// session that leaves them out counts them wherever plugins sum admitted jobs, tells them what
// their representative is told, and stops where the representative would be placed.
TEST_CASE("allocate: admitted jobs that fit nowhere may be parked; a session without them decides as one with them") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  b.Queue("capped", 1, "cpu=30");
  for (const char* name : {"a", "b", "c"}) b.Job(name, {.queue = "capped", .tasks = {{"w", 1, "cpu=8"}}});
  const std::string config = testing::DefaultTiersConfig("enqueue, allocate");
  // Job ids follow keys: a is judged first; b and c are told what a is told.
  WaitMemo memo;
  SessionOutcome first;
  CHECK(testing::RunParkingSession(b, config, memo, &first) == testing::ParkableClasses{{0, {1, 2}}});
  Apply(b, first);
  b.cache().ParkJobs(0, {1, 2});  // by the ids of the snapshot laid out last

  auto run = [&](Millis now, ClusterCache::Layout layout) { return RunLaidOut(b, config, memo, now, layout); };
  auto messages = [](const CycleResult& result) {
    std::vector<std::string> told;
    for (const CycleResult::JobUpdate& u : result.job_updates) {
      told.push_back(StrCat(u.job, " ", PodGroupPhaseName(u.phase), ": ", u.message()));
    }
    return told;
  };
  // A job arrives in the queue; the cluster's free cpu refuses it, in both sessions alike.
  b.Job("d", {.queue = "capped", .tasks = {{"w", 1, "cpu=8"}}, .phase = PodGroupPhase::kPending});
  CycleResult refused = run(1000, ClusterCache::Layout::kLeaveOutParked);
  CHECK_FALSE(refused.needs_parked_jobs());
  REQUIRE(refused.job_updates.size() == 1);
  CHECK(refused.job_updates[0].job == "default/d");
  CHECK(refused.job_updates[0].phase == PodGroupPhase::kPending);
  CHECK(messages(refused) == messages(run(1000, ClusterCache::Layout::kEveryJob)));
  for (const CycleResult::JobUpdate& u : refused.job_updates) b.cache().NoteWaitReported(u.job, *u.waiting);
  // Another node, too small still: a is told another reason, and so are b and c, in key order.
  // d is now refused by its queue, whose admitted jobs count the parked ones (3 x 8 cpu).
  b.Node("n2", "cpu=6");
  CycleResult moved = run(2000, ClusterCache::Layout::kLeaveOutParked);
  CHECK_FALSE(moved.needs_parked_jobs());
  std::vector<std::string> jobs;
  for (const CycleResult::JobUpdate& u : moved.job_updates) {
    jobs.push_back(u.job);
    CHECK(u.phase == (u.job == "default/d" ? PodGroupPhase::kPending : PodGroupPhase::kInqueue));
  }
  CHECK(jobs == std::vector<std::string>{"default/a", "default/b", "default/c", "default/d"});
  CHECK(messages(moved) == messages(run(2000, ClusterCache::Layout::kEveryJob)));
  CHECK(moved.job_updates.back().message() == "queue capped: capability cpu 10, allocated 24, needs 8");
  for (const CycleResult::JobUpdate& u : moved.job_updates) b.cache().NoteWaitReported(u.job, *u.waiting);
  // A node a fits: a, the class's first, laid out ahead of its representative, is placed; b
  // then fails on the nodes, and nothing places after it: c is refused as b is, in that state.
  b.Node("n3", "cpu=8");
  CycleResult placed = run(3000, ClusterCache::Layout::kLeaveOutParked);
  CHECK_FALSE(placed.needs_parked_jobs());
  REQUIRE(placed.binds.size() == 1);
  CHECK(placed.binds[0].pod == "default/a-w-0");
  CHECK(Outcome(placed) == Outcome(run(3000, ClusterCache::Layout::kEveryJob)));
}


// Alike jobs set aside in several queues: each queue's are a class of their own, behind the
// first of them in job order.
TEST_CASE("allocate: admitted jobs that fit nowhere are parked per queue, behind the first of each") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  b.Queue("q1", 1).Queue("q2", 1);
  for (const char* name : {"a", "b"}) b.Job(name, {.queue = "q1", .tasks = {{"w", 1, "cpu=8"}}});
  for (const char* name : {"c", "d", "e"}) b.Job(name, {.queue = "q2", .tasks = {{"w", 1, "cpu=8"}}});
  WaitMemo memo;
  CHECK(testing::RunParkingSession(b, testing::DefaultTiersConfig("enqueue, allocate"), memo) ==
        testing::ParkableClasses{{0, {1}}, {2, {3, 4}}});
}

// Admitted jobs their queue refuses at their turns, alike (a node would take them), may be
// parked behind the first of them. A session without them goes on while that first one's
// refusal stands for every later turn, and stops when the queue's usage moved after its turn.
TEST_CASE("allocate: admitted jobs their queue refuses alike may be parked; a session without them decides as one with them") {
  ClusterBuilder b;
  // Memory keeps the capped queue below its deserved share: it is never overused.
  b.Node("n1", "cpu=16,memory=64Gi");
  b.Queue("capped", 1, "cpu=5");
  // x2 comes between a and b in job order, and waits for its scheduling gate.
  b.Job("a", {.queue = "capped", .tasks = {{"w", 1, "cpu=2,memory=1Gi"}}});
  b.Job("x2", {.queue = "capped", .tasks = {{"w", 1, "cpu=1,memory=1Gi", 0, "", {}, {}, {"wait"}}}});
  for (const char* name : {"b", "c"}) b.Job(name, {.queue = "capped", .tasks = {{"w", 1, "cpu=2,memory=1Gi"}}});
  b.Job("held", {.queue = "capped", .tasks = {{"w", 1, "cpu=4,memory=1Gi"}}, .phase = PodGroupPhase::kRunning});
  b.Running("held-w-0", "n1");
  const std::string config = testing::DefaultTiersConfig("enqueue, allocate");
  WaitMemo memo;
  SessionOutcome first;
  CHECK(testing::RunParkingSession(b, config, memo, &first) == testing::ParkableClasses{{0, {1, 2}}});
  CHECK(first.job_updates.at("default/b").message() == "queue capped: capability cpu 5, allocated 4, needs 2");
  Apply(b, first);
  b.cache().ParkJobs(0, {1, 2});

  auto run = [&](Millis now, ClusterCache::Layout layout) { return RunLaidOut(b, config, memo, now, layout); };
  // Another queue's job places; the capped queue refuses as before, and the parked jobs with it.
  b.Job("x1", {.tasks = {{"w", 1, "cpu=2,memory=1Gi"}}});
  CycleResult placed = run(1000, ClusterCache::Layout::kLeaveOutParked);
  CHECK_FALSE(placed.needs_parked_jobs());
  REQUIRE(placed.binds.size() == 1);
  CHECK(Outcome(placed) == Outcome(run(1000, ClusterCache::Layout::kEveryJob)));
  // x2's gate goes: it places after a's turn and before b's and c's, which are refused for
  // another usage than a was. b stands for the class (a, its first, is laid out ahead of it),
  // and c's turn comes after b's in the same state: the session tells c what b is told.
  b.SchedulingGates("x2-w-0", {});
  const CycleResult parked = run(2000, ClusterCache::Layout::kLeaveOutParked);
  CHECK_FALSE(parked.needs_parked_jobs());
  const CycleResult whole = run(2000, ClusterCache::Layout::kEveryJob);
  CHECK(Outcome(parked) == Outcome(whole));
  auto told = [&whole](std::string_view job) -> std::string {
    for (const CycleResult::JobUpdate& u : whole.job_updates) {
      if (u.job == job) return u.message();
    }
    return "(as reported)";
  };
  CHECK(std::any_of(whole.binds.begin(), whole.binds.end(),
                    [](const CycleResult::Bind& bind) { return bind.pod == "default/x2-w-0"; }));
  CHECK(told("default/a") == "(as reported)");
  CHECK(told("default/c") == "queue capped: capability cpu 5, allocated 5, needs 2");
}

// A job of the capped queue after every job of a parked class in job order places: the class's
// jobs had their turns before, refused as their representative was then, so the session goes
// on without them although the representative would be told another usage at the end.
TEST_CASE("allocate: a class of parked jobs that the turns passed before a placement in its queue keeps its reason") {
  ClusterBuilder b;
  b.Node("n1", "cpu=16,memory=64Gi");
  b.Queue("capped", 1, "cpu=6");
  b.Job("held", {.queue = "capped", .tasks = {{"w", 1, "cpu=3,memory=1Gi"}}, .phase = PodGroupPhase::kRunning});
  b.Running("held-w-0", "n1");
  for (const char* name : {"a", "b", "c", "d"}) {
    b.Job(name, {.queue = "capped", .tasks = {{"w", 1, "cpu=4,memory=1Gi"}}});
  }
  const std::string config = testing::DefaultTiersConfig("enqueue, allocate");
  WaitMemo memo;
  SessionOutcome first;
  REQUIRE(testing::RunParkingSession(b, config, memo, &first) == testing::ParkableClasses{{0, {1, 2, 3}}});
  CHECK(first.job_updates.at("default/d").message() == "queue capped: capability cpu 6, allocated 3, needs 4");
  Apply(b, first);
  b.cache().ParkJobs(0, {1, 2, 3});  // a stays laid out, b stands for c and d
  // x comes after d and fits the capability: placed, it moves the queue's usage to 5.
  b.Job("x", {.queue = "capped", .tasks = {{"w", 1, "cpu=2,memory=1Gi"}}});
  const CycleResult whole = RunLaidOut(b, config, memo, 1000, ClusterCache::Layout::kEveryJob);
  REQUIRE(whole.binds.size() == 1);
  CHECK(whole.binds[0].pod == "default/x-w-0");
  const CycleResult parked = RunLaidOut(b, config, memo, 1000, ClusterCache::Layout::kLeaveOutParked);
  CHECK_FALSE(parked.needs_parked_jobs());
  CHECK(Outcome(parked) == Outcome(whole));
}

// A job between the class's jobs in job order places first: the later ones are told another
// usage, so the session stops although a job after them all is taken.
TEST_CASE("allocate: a placement between a parked class's jobs stops the session that leaves them out") {
  ClusterBuilder b;
  b.Node("n1", "cpu=16,memory=64Gi");
  b.Queue("capped", 1, "cpu=7");
  b.Job("held", {.queue = "capped", .tasks = {{"w", 1, "cpu=3,memory=1Gi"}}, .phase = PodGroupPhase::kRunning});
  b.Running("held-w-0", "n1");
  // Arrival order a, b, c, y, d: y asks too much until it asks less.
  for (const char* name : {"a", "b", "c", "y", "d"}) {
    b.Job(name, {.queue = "capped", .tasks = {{"w", 1, std::string(name) == "y" ? "cpu=8,memory=1Gi" : "cpu=5,memory=1Gi"}}});
  }
  const std::string config = testing::DefaultTiersConfig("enqueue, allocate");
  WaitMemo memo;
  SessionOutcome first;
  REQUIRE(testing::RunParkingSession(b, config, memo, &first) == testing::ParkableClasses{{0, {1, 2, 3}}});
  Apply(b, first);
  b.cache().ParkJobs(0, {1, 2, 3});  // a, b, c, d by key: a stays laid out, b stands for c and d
  b.Job("y", {.queue = "capped", .tasks = {{"w", 1, "cpu=2,memory=1Gi"}}});
  b.Job("x", {.queue = "capped", .tasks = {{"w", 1, "cpu=1,memory=1Gi"}}});
  const CycleResult whole = RunLaidOut(b, config, memo, 1000, ClusterCache::Layout::kEveryJob);
  std::map<std::string, std::string> told;
  for (const CycleResult::JobUpdate& u : whole.job_updates) told[u.job] = u.message();
  CHECK(told.count("default/c") == 0);  // as reported
  CHECK(told["default/d"] == "queue capped: capability cpu 7, allocated 5, needs 5");
  const CycleResult stopped = RunLaidOut(b, config, memo, 1000, ClusterCache::Layout::kLeaveOutParked);
  CHECK(stopped.needs_parked_jobs());
  CHECK(stopped.parked_classes_needed == std::vector<int32_t>{0});  // a, b, c and d's
}

// The class's first job places and takes the room its representative would have had: the
// representative fails on the nodes at its turn, and nothing places after it, so its members,
// whose turns come after, are refused as it is in that same state.
TEST_CASE("allocate: a class whose representative fails on nodes in the state its members' turns come in keeps its reason") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=64Gi");
  b.Job("held", {.tasks = {{"w", 1, "cpu=4,memory=1Gi"}}, .phase = PodGroupPhase::kRunning});
  b.Running("held-w-0", "n1");
  for (const char* name : {"a", "b", "c", "d"}) b.Job(name, {.tasks = {{"w", 1, "cpu=6,memory=1Gi"}}});
  const std::string config = testing::DefaultTiersConfig("enqueue, allocate");
  WaitMemo memo;
  SessionOutcome first;
  REQUIRE(testing::RunParkingSession(b, config, memo, &first) == testing::ParkableClasses{{0, {1, 2, 3}}});
  Apply(b, first);
  b.cache().ParkJobs(0, {1, 2, 3});  // a stays laid out, b stands for c and d
  b.cache().DeletePod("default", "held-w-0");
  b.cache().DeletePodGroup("default", "held");
  const CycleResult whole = RunLaidOut(b, config, memo, 1000, ClusterCache::Layout::kEveryJob);
  REQUIRE(whole.binds.size() == 1);
  CHECK(whole.binds[0].pod == "default/a-w-0");
  const CycleResult parked = RunLaidOut(b, config, memo, 1000, ClusterCache::Layout::kLeaveOutParked);
  CHECK_FALSE(parked.needs_parked_jobs());
  CHECK(Outcome(parked) == Outcome(whole));
}

}  // namespace
}  // namespace lahar
