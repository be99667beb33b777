// Tests of `elastic-scale` on clusters small enough to know the right answer.
#include "actions/elastic_scale/elastic_scale.h"

#include <set>

#include <catch2/catch.hpp>

#include "api/strings.h"
#include "scheduler/framework/config.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/elastic_configs.h"

namespace lahar {
namespace {

using testing::Apply;
using testing::ClusterBuilder;
using testing::RunSession;
using testing::SessionOutcome;
using testing::kScaleOnly;
using testing::kScaleAndPreempt;

// /work/shared/scenarios/fulfillment.yaml with the mins already placed (allocate's part):
// 4 nodes x 4 GPUs = 16; ctr-a min 2 / max 8, ctr-b 1 / 5, ctr-c 3 / 9, one GPU per pod.
ClusterBuilder FulfillmentCluster() {
  ClusterBuilder b;
  for (int i = 0; i < 4; ++i) b.Node(StrCat("node-", i), "cpu=32,memory=256Gi,nvidia.com/gpu=4");
  const std::string trainer = "cpu=2,memory=8Gi,nvidia.com/gpu=1";
  b.Job("ctr-a", {.min = 2, .tasks = {{"trainer", 8, trainer}}, .phase = PodGroupPhase::kRunning});
  b.Job("ctr-b", {.min = 1, .tasks = {{"trainer", 5, trainer}}, .phase = PodGroupPhase::kRunning});
  b.Job("ctr-c", {.min = 3, .tasks = {{"trainer", 9, trainer}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("ctr-a", "trainer", 0, 1, "node-0");
  b.RunningRange("ctr-b", "trainer", 0, 0, "node-0");
  b.RunningRange("ctr-c", "trainer", 0, 0, "node-0");
  b.RunningRange("ctr-c", "trainer", 1, 2, "node-1");
  return b;  // mins: 2 + 1 + 3 = 6 GPUs; 10 GPUs left: 2 on node-1, 4 on node-2, 4 on node-3
}

TEST_CASE("fulfillment: spare GPUs go one pod at a time to the least fulfilled job") {
  SessionOutcome out = RunSession(FulfillmentCluster(), kScaleOnly);
  // Scores (placed - min) / (max - min): a x/6, b x/4, c x/6. Equal scores (same pods) go by
  // job order (creation: a, b, c).
  //  pod  a    b    c     chosen
  //   1   0    0    0     a -> 1/6
  //   2  1/6   0    0     b -> 1/4
  //   3  1/6  1/4   0     c -> 1/6
  //   4  1/6  1/4  1/6    a -> 2/6
  //   5  2/6  1/4  1/6    c -> 2/6
  //   6  2/6  1/4  2/6    b -> 2/4
  //   7  2/6  2/4  2/6    a -> 3/6
  //   8  3/6  2/4  2/6    c -> 3/6
  //   9  3/6  2/4  3/6    a -> 4/6
  //  10  4/6  2/4  3/6    b -> 3/4    (no GPU left)
  // Final a 4/6, b 3/4, c 3/6: the lowest score is as high as 10 pods allow (1/2; giving any job
  // another pod takes one from a job whose score minus its last pod is <= 1/2), and the sorted
  // scores (1/2, 2/3, 3/4) are leximin-best: the alternative a 4/6, b 2/4, c 4/6 sorts to
  // (1/2, 1/2, 2/3). Nodes: lowest name with room (no scoring plugin): node-1 has 2, then node-2,
  // node-3.
  CHECK(out.bind_order == std::vector<std::string>{
                              "default/ctr-a-trainer-2", "default/ctr-b-trainer-1", "default/ctr-c-trainer-3",
                              "default/ctr-a-trainer-3", "default/ctr-c-trainer-4", "default/ctr-b-trainer-2",
                              "default/ctr-a-trainer-4", "default/ctr-c-trainer-5", "default/ctr-a-trainer-5",
                              "default/ctr-b-trainer-3"});
  CHECK(out.BoundCount("default/ctr-a") == 4);  // 6 of 8 running
  CHECK(out.BoundCount("default/ctr-b") == 3);  // 4 of 5
  CHECK(out.BoundCount("default/ctr-c") == 3);  // 6 of 9
  CHECK(out.binds.at("default/ctr-a-trainer-2") == "node-1");
  CHECK(out.binds.at("default/ctr-b-trainer-1") == "node-1");
  CHECK(out.binds.at("default/ctr-c-trainer-3") == "node-2");
  CHECK(out.binds.at("default/ctr-b-trainer-3") == "node-3");
  for (const char* job : {"default/ctr-a", "default/ctr-b", "default/ctr-c"}) {
    REQUIRE(out.job_updates.count(job) == 1);
    CHECK(out.job_updates.at(job).scaled);  // one scale change per job this session
  }
}

TEST_CASE("fulfillment: the same input gives the same schedule") {
  SessionOutcome first = RunSession(FulfillmentCluster(), kScaleOnly);
  SessionOutcome second = RunSession(FulfillmentCluster(), kScaleOnly);
  REQUIRE(first.bind_order.size() == 10);
  CHECK(first.bind_order == second.bind_order);
  CHECK(first.binds == second.binds);
}

TEST_CASE("ties in fulfillment: more GPUs per pod first") {
  ClusterBuilder b;
  b.Node("n", "cpu=64,memory=256Gi,nvidia.com/gpu=3");
  // Both at 0 fulfillment. `wide` was created second but asks 2 GPUs per pod.
  b.Job("narrow", {.min = 1, .tasks = {{"w", 3, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Job("wide", {.min = 1, .tasks = {{"w", 3, "cpu=1,nvidia.com/gpu=2"}}, .phase = PodGroupPhase::kRunning});
  b.Running("narrow-w-0", "n");
  SessionOutcome out = RunSession(b, kScaleOnly);
  // `wide` has no pod placed: its min is missing, so it is starving, not a candidate, and its
  // 2-GPU min pod keeps 2 of the 2 idle GPUs: nothing is given to `narrow` either.
  CHECK(out.binds.empty());

  ClusterBuilder c;
  c.Node("n", "cpu=64,memory=256Gi,nvidia.com/gpu=5");
  c.Job("narrow", {.min = 1, .tasks = {{"w", 3, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  c.Job("wide", {.min = 1, .tasks = {{"w", 3, "cpu=1,nvidia.com/gpu=2"}}, .phase = PodGroupPhase::kRunning});
  c.Running("narrow-w-0", "n").Running("wide-w-0", "n");  // 3 GPUs used, 2 idle
  SessionOutcome tie = RunSession(c, kScaleOnly);
  // Both 0/2: wide (2 GPUs per pod) first and takes the 2 idle GPUs; narrow then finds none.
  CHECK(tie.bind_order == std::vector<std::string>{"default/wide-w-1"});
}

TEST_CASE("elastic workers never take capacity a starving job's min needs") {
  // node-0: `big` (min 1) runs ranks 0..3, three of them elastic workers; node-1: 4 idle GPUs.
  auto cluster = [](int new_min) {
    ClusterBuilder b;
    b.Node("node-0", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
    b.Node("node-1", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
    b.Job("big", {.min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
    b.RunningRange("big", "w", 0, 3, "node-0");
    b.Job("new", {.min = new_min, .tasks = {{"w", new_min, "cpu=1,nvidia.com/gpu=1"}}});  // Inqueue, pending
    return b;
  };
  SECTION("a starving min that fits in idle keeps it") {
    // `new` (4 GPUs) fits node-1; allocate did not place it (it is not in this configuration),
    // so elastic-scale must leave node-1 alone rather than give `big` 4 more workers.
    SessionOutcome out = RunSession(cluster(4), kScaleOnly);
    CHECK(out.binds.empty());
  }
  SECTION("a starving min that needs idle plus evictions keeps the idle part too") {
    // `new` needs 6: node-1's 4 idle GPUs plus 2 of big's elastic workers (ranks 3 and 2).
    SessionOutcome out = RunSession(cluster(6), kScaleAndPreempt);
    CHECK(out.binds.empty());
    CHECK(out.evicts == std::map<std::string, std::string>{
                            {"default/big-w-3", "elastic-preempted-for default/new"},
                            {"default/big-w-2", "elastic-preempted-for default/new"}});
  }
  SECTION("a starving min that cannot fit even with every elastic worker does not block") {
    // `new` needs 9 > 4 idle + 3 elastic: nothing is kept for it; big grows onto node-1.
    SessionOutcome out = RunSession(cluster(9), kScaleAndPreempt);
    CHECK(out.BoundCount("default/big") == 4);  // ranks 4..7 on node-1
    CHECK(out.binds.at("default/big-w-7") == "node-1");
    CHECK(out.evicts.empty());
  }
}

TEST_CASE("cooldown: a job scaled at t=0 is not scaled again until 60s have passed") {
  ClusterBuilder b;
  b.Node("n", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
  b.Job("j", {.min = 1, .tasks = {{"w", 4, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Running("j-w-0", "n");
  b.LastScaled("j", 0);
  CHECK(RunSession(b, kScaleOnly, 30 * 1000).binds.empty());  // 30s - 0 < 60s
  SessionOutcome at61 = RunSession(b, kScaleOnly, 61 * 1000);
  CHECK(at61.BoundCount("default/j") == 3);  // 61s >= 60s: ranks 1..3 in one session
  CHECK(at61.job_updates.at("default/j").scaled);
}

TEST_CASE("cooldown: the per-job annotation overrides elastic.cooldown") {
  ClusterBuilder b;
  b.Node("n", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
  b.Job("quick", {.min = 1, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning,
                  .cooldown = "10s"});
  b.Job("slow", {.min = 1, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning,
                 .cooldown = "2m"});
  b.Running("quick-w-0", "n").Running("slow-w-0", "n");
  b.LastScaled("quick", 0).LastScaled("slow", 0);
  SessionOutcome out = RunSession(b, kScaleOnly, 61 * 1000);
  CHECK(out.binds.count("default/quick-w-1") == 1);  // 61s >= 10s
  CHECK(out.binds.count("default/slow-w-1") == 0);   // 61s < 2m
}

TEST_CASE("cooldown across sessions: a scale-up restarts it") {
  ClusterBuilder b;
  b.Node("node-0", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
  b.Job("j", {.min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Running("j-w-0", "node-0");
  SessionOutcome first = RunSession(b, kScaleOnly, 0);
  CHECK(first.BoundCount("default/j") == 3);  // never scaled before: ranks 1..3 fill node-0
  Apply(b, first);                            // records the scale at t=0
  b.Node("node-1", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
  CHECK(RunSession(b, kScaleOnly, 30 * 1000).binds.empty());   // 30s after the scale
  CHECK(RunSession(b, kScaleOnly, 61 * 1000).BoundCount("default/j") == 4);  // ranks 4..7 on node-1
}

TEST_CASE("cpuByLimits: CPU-only extras stay within limits, the GPU job's do not care") {
  // n-cpu: 8 cpu; `c` pods request 1 cpu but may use 4 (limits). n-gpu: same for a GPU job.
  ClusterBuilder b;
  b.Node("n-cpu", "cpu=8,memory=64Gi");
  b.Node("n-gpu", "cpu=8,memory=64Gi,nvidia.com/gpu=8");
  b.Job("c", {.min = 1, .tasks = {{"w", 8, "cpu=1,memory=1Gi", 0, "cpu=4,memory=1Gi"}}, .phase = PodGroupPhase::kRunning});
  b.Job("g", {.min = 1, .tasks = {{"w", 8, "cpu=1,memory=1Gi,nvidia.com/gpu=1", 0, "cpu=4,memory=1Gi,nvidia.com/gpu=1"}},
              .phase = PodGroupPhase::kRunning});
  b.Running("c-w-0", "n-cpu").Running("g-w-0", "n-gpu");
  SessionOutcome out = RunSession(b, kScaleOnly);
  // Both start at 0/7; g first (1 GPU per pod). c-w-1 on n-cpu: limits 4 + 4 = 8 <= 8. c-w-2:
  // n-cpu 8 + 4 > 8, n-gpu already holds g-w-0..2 with limits 3 x 4 = 12 > 8: c stops at one
  // extra, where requests alone would allow 7 more. g asks a GPU: by requests, 7 extras.
  CHECK(out.BoundCount("default/c") == 1);
  CHECK(out.binds.at("default/c-w-1") == "n-cpu");
  CHECK(out.BoundCount("default/g") == 7);  // 8 GPUs, 8 x 1 cpu requested on n-gpu

  SessionOutcome by_requests = RunSession(b, R"(
actions: "elastic-scale"
tiers:
- plugins:
  - name: elastic
    arguments:
      elastic.cpuByLimits: false
)");
  CHECK(by_requests.BoundCount("default/c") == 7);  // 1 + 7 = 8 cpu requested on n-cpu
  CHECK(by_requests.BoundCount("default/g") == 7);
}

// ---- The default configuration (spec section 4): enqueue, allocate, elastic-scale,
// preempt-elastic-workers, backfill over priority, gang, elastic, drf, predicates, proportion,
// nodeorder.

TEST_CASE("default configuration: mins first, then the spare GPUs balanced by fulfillment") {
  ClusterBuilder b;
  for (int i = 0; i < 4; ++i) b.Node(StrCat("node-", i), "cpu=32,memory=256Gi,nvidia.com/gpu=4");
  const std::string trainer = "cpu=2,memory=8Gi,nvidia.com/gpu=1";
  b.Job("ctr-a", {.min = 2, .tasks = {{"trainer", 8, trainer}}});  // Inqueue, nothing placed
  b.Job("ctr-b", {.min = 1, .tasks = {{"trainer", 5, trainer}}});
  b.Job("ctr-c", {.min = 3, .tasks = {{"trainer", 9, trainer}}});
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  REQUIRE(out.bind_order.size() == 16);  // every GPU: 6 by allocate, 10 by elastic-scale
  // allocate binds the mins (2 + 1 + 3) before any elastic worker.
  std::set<std::string> first_six(out.bind_order.begin(), out.bind_order.begin() + 6);
  CHECK(first_six == std::set<std::string>{"default/ctr-a-trainer-0", "default/ctr-a-trainer-1",
                                           "default/ctr-b-trainer-0", "default/ctr-c-trainer-0",
                                           "default/ctr-c-trainer-1", "default/ctr-c-trainer-2"});
  // Equal fulfillment now falls to drf's job order (smaller GPU share first) instead of creation
  // order, which changes the order of the 10 extras but not the outcome: scores a 4/6, b 3/4,
  // c 3/6 (the last tie at 1/2 between a with 5 pods and c with 6 goes to a).
  CHECK(out.BoundCount("default/ctr-a") == 6);
  CHECK(out.BoundCount("default/ctr-b") == 4);
  CHECK(out.BoundCount("default/ctr-c") == 6);
  SessionOutcome again = RunSession(b, DefaultSchedulerConfigYaml());
  CHECK(again.bind_order == out.bind_order);
  CHECK(again.binds == out.binds);
}

TEST_CASE("default configuration: elastic workers never exceed the queue's capability") {
  // research may use 6 of the cluster's 8 GPUs; nothing else asks for them.
  ClusterBuilder b;
  b.Node("node-0", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
  b.Node("node-1", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
  b.Queue("research", 1, "nvidia.com/gpu=6");
  b.Job("r", {.queue = "research", .min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}},
              .phase = PodGroupPhase::kRunning});
  b.Running("r-w-0", "node-0");
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  CHECK(out.BoundCount("default/r") == 5);  // 1 + 5 = 6 = capability; 2 GPUs stay idle
  CHECK(out.binds.count("default/r-w-5") == 1);
  CHECK(out.binds.count("default/r-w-6") == 0);
}

TEST_CASE("default configuration: a queue's elastic workers stay within its deserved share") {
  // Two queues of weight 1 on 6 GPUs, each asking 8 (the default queue asks nothing): 2 each,
  // then the default queue's 2 split 1 / 1: deserved 3 GPUs each.
  ClusterBuilder b;
  b.Node("node-0", "cpu=32,memory=128Gi,nvidia.com/gpu=3");
  b.Node("node-1", "cpu=32,memory=128Gi,nvidia.com/gpu=3");
  b.Queue("qa", 1).Queue("qb", 1);
  b.Job("a", {.queue = "qa", .min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Job("b", {.queue = "qb", .min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Running("a-w-0", "node-0").Running("b-w-0", "node-1");
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  CHECK(out.BoundCount("default/a") == 2);  // 1 + 2 = 3 = deserved
  CHECK(out.BoundCount("default/b") == 2);
}

TEST_CASE("default configuration: CPU-only mins by requests, their extras by limits") {
  // `c` asks 1 cpu per pod with a limit of 4, min 4, on one 8-cpu node.
  auto cluster = [] {
    ClusterBuilder b;
    b.Node("n", "cpu=8,memory=64Gi");
    b.Job("c", {.min = 4, .tasks = {{"w", 8, "cpu=1,memory=1Gi", 0, "cpu=4,memory=1Gi"}}});
    return b;
  };
  SessionOutcome out = RunSession(cluster(), DefaultSchedulerConfigYaml());
  // allocate places the min by requests (4 cpu of 8) although the limits add up to 16; no
  // elastic worker then fits: limits 16 + 4 > 8.
  CHECK(out.BoundCount("default/c") == 4);
  CHECK(out.binds.count("default/c-w-3") == 1);
  CHECK(out.binds.count("default/c-w-4") == 0);
}


// Goodput (spec 3.2): two jobs of one-GPU workers on 8 GPUs, both running 2 pods. `lin`
// reports linear throughput, `sat` saturates past 2 pods (its 3rd pod gained 0.5/9 < 0.1).
ClusterBuilder GoodputCluster(const std::string& sat_reports) {
  ClusterBuilder b;
  b.Node("n", "cpu=64,memory=256Gi,nvidia.com/gpu=8");
  const std::string worker = "cpu=1,nvidia.com/gpu=1";
  b.Job("lin", {.min = 1, .tasks = {{"w", 8, worker}}, .phase = PodGroupPhase::kRunning, .throughput = "1=10,2=20"});
  b.Job("sat", {.min = 1, .tasks = {{"w", 8, worker}}, .phase = PodGroupPhase::kRunning, .throughput = sat_reports});
  b.RunningRange("lin", "w", 0, 1, "n");
  b.RunningRange("sat", "w", 0, 1, "n");
  return b;
}

TEST_CASE("goodput: the linear job gets the spare GPUs, the saturated one stays at its knee") {
  ClusterBuilder b = GoodputCluster("1=10,2=18,3=18.5");
  // Each session grows `lin` by one pod (one past its largest report), then `lin` reports the
  // new size; `sat` never grows past 2, the size its reports show to pay.
  Millis now = 0;
  for (int size = 3; size <= 6; ++size) {
    SessionOutcome out = RunSession(b, kScaleOnly, now);
    CHECK(out.bind_order == std::vector<std::string>{StrCat("default/lin-w-", size - 1)});
    Apply(b, out);
    std::string reports;
    for (int n = 1; n <= size; ++n) reports += StrCat(reports.empty() ? "" : ",", n, "=", 10 * n);
    b.Throughput("lin", reports);
    now += 61'000;
  }
  // lin 6, sat 2: every GPU busy. With fulfillment order the two would have shared the 4 spare
  // GPUs 2 and 2.
  CHECK(RunSession(b, kScaleOnly, now).binds.empty());
}

TEST_CASE("goodput: a measured job grows only one size past its largest report") {
  ClusterBuilder b = GoodputCluster("1=10,2=18");  // sat's 2nd pod gained 0.8: it may try a 3rd
  SessionOutcome out = RunSession(b, kScaleOnly);
  // Both may grow to 3; the fitted curve expects less of sat's 3rd pod than of lin's.
  CHECK(out.bind_order == std::vector<std::string>{"default/lin-w-2", "default/sat-w-2"});

  ClusterBuilder silent = GoodputCluster("");  // measured, nothing reported yet: it waits
  CHECK(RunSession(silent, kScaleOnly).bind_order == std::vector<std::string>{"default/lin-w-2"});
}

TEST_CASE("goodput: a job without reports is expected to gain 1 and keeps the fulfillment order") {
  ClusterBuilder b;
  b.Node("n", "cpu=64,memory=256Gi,nvidia.com/gpu=6");
  const std::string worker = "cpu=1,nvidia.com/gpu=1";
  // `half` reports that its 2nd pod added half a pod's throughput (gain 0.5): an unmeasured job,
  // expected to gain 1.0, goes first although it is more fulfilled.
  b.Job("half", {.min = 1, .tasks = {{"w", 8, worker}}, .phase = PodGroupPhase::kRunning, .throughput = "1=10,2=15"});
  b.Job("plain", {.min = 1, .tasks = {{"w", 3, worker}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("half", "w", 0, 1, "n");
  b.RunningRange("plain", "w", 0, 1, "n");
  SessionOutcome out = RunSession(b, kScaleOnly);
  CHECK(out.bind_order == std::vector<std::string>{"default/plain-w-2", "default/half-w-2"});

  SECTION("elastic.minGain above a job's expected gain stops it") {
    SessionOutcome strict = RunSession(b, R"(
actions: "elastic-scale"
tiers:
- plugins:
  - name: elastic
    arguments: {elastic.minGain: 0.6}
)");
    CHECK(strict.bind_order == std::vector<std::string>{"default/plain-w-2"});
  }
  SECTION("elastic.goodput: false orders by fulfillment alone") {
    SessionOutcome off = RunSession(b, R"(
actions: "elastic-scale"
tiers:
- plugins:
  - name: elastic
    arguments: {elastic.goodput: false}
)");
    // half 1/7 is less fulfilled than plain 1/2: it takes both, growing past its reports.
    CHECK(off.bind_order == std::vector<std::string>{"default/half-w-2", "default/half-w-3"});
  }
}

TEST_CASE("goodput: equal gains compare per unit of dominant resource, not by the fulfillment tie-breaks") {
  ClusterBuilder b;
  b.Node("n", "cpu=64,memory=256Gi,nvidia.com/gpu=8");
  // Both linear (gain 1.0 per worker) and equally fulfilled (1/3). A `wide` worker takes 2 GPUs
  // for that gain, a `narrow` one 1: per GPU, narrow's worker pays twice as much.
  b.Job("narrow", {.min = 1, .tasks = {{"w", 4, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning,
                   .throughput = "1=10,2=20"});
  b.Job("wide", {.min = 1, .tasks = {{"w", 4, "cpu=1,nvidia.com/gpu=2"}}, .phase = PodGroupPhase::kRunning,
                 .throughput = "1=10,2=20"});
  b.RunningRange("narrow", "w", 0, 1, "n");
  b.RunningRange("wide", "w", 0, 1, "n");  // 6 GPUs used, 2 idle
  // narrow grows to 3 (one past its largest report); wide's 2-GPU pod no longer fits.
  CHECK(RunSession(b, kScaleOnly).bind_order == std::vector<std::string>{"default/narrow-w-2"});
  // By fulfillment alone the tie goes to more GPUs per pod.
  CHECK(RunSession(b, R"(
actions: "elastic-scale"
tiers:
- plugins:
  - name: elastic
    arguments: {elastic.goodput: false}
)").bind_order == std::vector<std::string>{"default/wide-w-2"});
}

}  // namespace
}  // namespace lahar
