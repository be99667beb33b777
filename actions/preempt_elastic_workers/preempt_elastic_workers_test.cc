// Tests of `preempt-elastic-workers` on clusters small enough to know the right answer.
#include "actions/preempt_elastic_workers/preempt_elastic_workers.h"

#include <catch2/catch.hpp>

#include "api/strings.h"
#include "scheduler/builtins.h"
#include "scheduler/framework/config.h"
#include "scheduler/framework/cycle.h"
#include "scheduler/framework/session.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/elastic_configs.h"

namespace lahar {
namespace {

using testing::Apply;
using testing::ClusterBuilder;
using testing::RunSession;
using testing::SessionOutcome;
using testing::kPreemptOnly;
using testing::kScaleAndPreempt;

using Evictions = std::map<std::string, std::string>;

// A starving (Inqueue, nothing placed) job of `min` pods of `requests`.
void Starving(ClusterBuilder& b, const std::string& name, int min, const std::string& requests = "cpu=1,nvidia.com/gpu=1",
              const std::string& queue = "default") {
  b.Job(name, {.queue = queue, .min = min, .tasks = {{"w", min, requests}}});
}

TEST_CASE("the master is never evicted: highest task priority") {
  // `m`: two ps pods of task priority 10 and two workers, min 1, all on n's 4 GPUs.
  auto cluster = [](int starving_min) {
    ClusterBuilder b;
    b.Node("n", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
    b.Job("m", {.min = 1, .tasks = {{"ps", 2, "cpu=1,nvidia.com/gpu=1", 10}, {"worker", 2, "cpu=1,nvidia.com/gpu=1"}},
                .phase = PodGroupPhase::kRunning});
    b.RunningRange("m", "ps", 0, 1, "n");
    b.RunningRange("m", "worker", 0, 1, "n");
    Starving(b, "s", starving_min);
    return b;
  };
  // Surplus 4 - 1 = 3, but only the 2 workers are victims: both ps pods are masters.
  SessionOutcome two = RunSession(cluster(2), kPreemptOnly);
  CHECK(two.evicts == Evictions{{"default/m-worker-1", "elastic-preempted-for default/s"},
                                {"default/m-worker-0", "elastic-preempted-for default/s"}});
  // 3 GPUs would need m-ps-1: the gang cannot fit, so nothing is evicted at all.
  SessionOutcome three = RunSession(cluster(3), kPreemptOnly);
  CHECK(three.evicts.empty());
  CHECK(three.job_updates.count("default/m") == 0);  // not marked scaled either
}

TEST_CASE("the master is never evicted: rank 0 when priorities are equal") {
  // `eq` (min 1): rank 1 has succeeded, ranks 0, 2, 3 run; 1 GPU idle. Ready = 3 + 1 = 4, so the
  // min allows 3 evictions, but rank 0 is the master: victims are ranks 3 and 2 only.
  auto cluster = [](int starving_min) {
    ClusterBuilder b;
    b.Node("n", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
    b.Job("eq", {.min = 1, .tasks = {{"w", 4, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
    b.Running("eq-w-0", "n").Running("eq-w-2", "n").Running("eq-w-3", "n");
    Pod done = *b.cache().FindPod("default/eq-w-1");
    done.node_name = "n";
    done.phase = PodPhase::kSucceeded;
    b.cache().UpsertPod(std::move(done));
    Starving(b, "s", starving_min);
    return b;
  };
  SessionOutcome three = RunSession(cluster(3), kPreemptOnly);  // 1 idle + ranks 3, 2
  CHECK(three.evicts == Evictions{{"default/eq-w-3", "elastic-preempted-for default/s"},
                                  {"default/eq-w-2", "elastic-preempted-for default/s"}});
  SessionOutcome four = RunSession(cluster(4), kPreemptOnly);  // would need rank 0: none
  CHECK(four.evicts.empty());
}

TEST_CASE("highest index first, on the node where the fewest evictions make room") {
  SECTION("the highest ranks free the node the task needs") {
    // `h` (min 1): ranks 0..3 on node-0, 4..7 on node-1. `s` needs one pod of 2 GPUs.
    ClusterBuilder b;
    b.Node("node-0", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
    b.Node("node-1", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
    b.Job("h", {.min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
    b.RunningRange("h", "w", 0, 3, "node-0");
    b.RunningRange("h", "w", 4, 7, "node-1");
    Starving(b, "s", 1, "cpu=1,nvidia.com/gpu=2");
    // node-1: ranks 7, 6 (2 evictions); node-0: rank 3 needs 7..3 first (5), then 2 (6).
    SessionOutcome out = RunSession(b, kPreemptOnly);
    CHECK(out.evicts == Evictions{{"default/h-w-7", "elastic-preempted-for default/s"},
                                  {"default/h-w-6", "elastic-preempted-for default/s"}});
  }
  SECTION("a lower rank is not taken out of order, even where it alone would do") {
    // node-0: ranks 0..2 and 1 idle GPU; node-1: ranks 3..6; rank 7 pending. Evicting rank 2
    // alone would fit the 2-GPU pod on node-0, but ranks 6..3 must go first (5 evictions);
    // node-1 needs ranks 6 and 5 (2 evictions).
    ClusterBuilder b;
    b.Node("node-0", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
    b.Node("node-1", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
    b.Job("h", {.min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
    b.RunningRange("h", "w", 0, 2, "node-0");
    b.RunningRange("h", "w", 3, 6, "node-1");
    Starving(b, "s", 1, "cpu=1,nvidia.com/gpu=2");
    SessionOutcome out = RunSession(b, kPreemptOnly);
    CHECK(out.evicts == Evictions{{"default/h-w-6", "elastic-preempted-for default/s"},
                                  {"default/h-w-5", "elastic-preempted-for default/s"}});
  }
}

TEST_CASE("most fulfilled first, but only victims on nodes that can fit the task") {
  // node-0 (4 cpu): `x` min 1, 4 of 4 running: fulfillment 3/3 = 1.
  // node-1 (32 cpu): `y` min 1, 4 of 8 running: 3/7.
  // `s` needs cpu 16 + 1 GPU: only node-1 can ever hold it.
  ClusterBuilder b;
  b.Node("node-0", "cpu=4,memory=64Gi,nvidia.com/gpu=4");
  b.Node("node-1", "cpu=32,memory=64Gi,nvidia.com/gpu=4");
  b.Job("x", {.min = 1, .tasks = {{"w", 4, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Job("y", {.min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("x", "w", 0, 3, "node-0");
  b.RunningRange("y", "w", 0, 3, "node-1");
  Starving(b, "s", 1, "cpu=16,nvidia.com/gpu=1");
  // Victim order: x-3 (x 1 -> 2/3), x-2 (2/3 > 3/7; x -> 1/3), y-3 (3/7 > 1/3), ... x's victims
  // come first but free only 3 cpu on node-0; y-3 alone fits s on node-1 (28 cpu, +1 GPU).
  SessionOutcome out = RunSession(b, kPreemptOnly);
  CHECK(out.evicts == Evictions{{"default/y-w-3", "elastic-preempted-for default/s"}});
  CHECK(out.job_updates.at("default/y").scaled);
  CHECK(out.job_updates.count("default/x") == 0);

  // With room for s on either node, the most fulfilled job gives first.
  ClusterBuilder c;
  c.Node("node-0", "cpu=32,memory=64Gi,nvidia.com/gpu=4");
  c.Node("node-1", "cpu=32,memory=64Gi,nvidia.com/gpu=4");
  c.Job("x", {.min = 1, .tasks = {{"w", 4, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  c.Job("y", {.min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  c.RunningRange("x", "w", 0, 3, "node-0");
  c.RunningRange("y", "w", 0, 3, "node-1");
  Starving(c, "s", 3);
  // Three 1-GPU pods, one eviction each: x-3 (1 -> 2/3), x-2 (2/3 > 3/7 -> 1/3), y-3 (3/7 > 1/3).
  SessionOutcome balanced = RunSession(c, kPreemptOnly);
  CHECK(balanced.evicts == Evictions{{"default/x-w-3", "elastic-preempted-for default/s"},
                                     {"default/x-w-2", "elastic-preempted-for default/s"},
                                     {"default/y-w-3", "elastic-preempted-for default/s"}});
}

TEST_CASE("no eviction that cannot help: a gang too big even after every victim") {
  ClusterBuilder c;
  c.Node("node-0", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
  c.Node("node-1", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
  c.Job("e", {.min = 2, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  c.RunningRange("e", "w", 0, 3, "node-0");
  c.RunningRange("e", "w", 4, 7, "node-1");
  Starving(c, "s", 7);  // 8 GPUs, e's min keeps 2: at most 6 could be freed
  SessionOutcome out = RunSession(c, kPreemptOnly);
  CHECK(out.evicts.empty());
  CHECK(out.raw.evicts.empty());
  Starving(c, "t", 6);  // exactly the 6 elastic workers: fits (t is created after s: job order)
  SessionOutcome fits = RunSession(c, kPreemptOnly);
  CHECK(fits.evicts.size() == 6);
  CHECK(fits.evicts.count("default/e-w-0") == 0);
  CHECK(fits.evicts.count("default/e-w-1") == 0);
  CHECK(fits.evicts.at("default/e-w-7") == "elastic-preempted-for default/t");
}

// A plugin that declares one queue (its argument `queue`) over its deserved share, standing in
// for proportion's Overused until a test can compute shares with it.
class OverusedPlugin : public Plugin {
 public:
  explicit OverusedPlugin(std::string queue) : queue_(std::move(queue)) {}
  std::string_view Name() const override { return "test-overused"; }
  void OnSessionOpen(Session& session) override {
    session.AddOverusedFn([this](const QueueInfo& q) { return q.name == queue_; });
  }

 private:
  std::string queue_;
};

const Registry& TestRegistry() {
  static const Registry* registry = [] {
    auto* r = new Registry();
    (void)RegisterBuiltinActions(*r);
    (void)RegisterBuiltinPlugins(*r);
    (void)r->RegisterPlugin("test-overused", [](const Arguments& args) -> absl::StatusOr<std::unique_ptr<Plugin>> {
      auto queue = args.GetString("queue", "");
      if (!queue.ok()) return queue.status();
      return std::make_unique<OverusedPlugin>(*queue);
    }, {{"queue", ArgumentKind::kString, ""}});
    return r;
  }();
  return *registry;
}

std::map<std::string, std::string> Evicts(const ClusterBuilder& b, std::string_view yaml) {
  auto config = ParseSchedulerConfig(yaml, TestRegistry());
  REQUIRE(config.ok());
  auto result = RunSchedulingCycle(b.Snapshot(0), *config, TestRegistry());
  REQUIRE(result.ok());
  std::map<std::string, std::string> out;
  for (const auto& e : result->evicts) out[e.pod] = e.reason;
  return out;
}

TEST_CASE("victims from queues over their deserved share first") {
  // `low` in queue qa at 1/7, `high` in queue qb at 3/3; one GPU needed.
  ClusterBuilder b;
  b.Queue("qa", 1).Queue("qb", 1);
  b.Node("node-0", "cpu=32,memory=128Gi,nvidia.com/gpu=2");
  b.Node("node-1", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
  b.Job("low", {.queue = "qa", .min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Job("high", {.queue = "qb", .min = 1, .tasks = {{"w", 4, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("low", "w", 0, 1, "node-0");
  b.RunningRange("high", "w", 0, 3, "node-1");
  Starving(b, "s", 1);
  // No queue over its share: the most fulfilled job (high, 1 > 1/7) gives.
  CHECK(Evicts(b, kPreemptOnly) == Evictions{{"default/high-w-3", "elastic-preempted-for default/s"}});
  // qa over its share: its job gives first, although it is the least fulfilled.
  CHECK(Evicts(b, R"(
actions: "preempt-elastic-workers"
tiers:
- plugins:
  - name: elastic
  - name: test-overused
    arguments:
      queue: qa
)") == Evictions{{"default/low-w-1", "elastic-preempted-for default/s"}});
}

TEST_CASE("cooldown: workers of a job scaled at t=0 are not evicted at 30s, are at 61s") {
  auto cluster = [](const std::string& cooldown) {
    ClusterBuilder b;
    b.Node("n", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
    b.Job("c", {.min = 1, .tasks = {{"w", 4, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning,
                .cooldown = cooldown});
    b.RunningRange("c", "w", 0, 3, "n");
    b.LastScaled("c", 0);
    Starving(b, "s", 1);
    return b;
  };
  CHECK(RunSession(cluster(""), kPreemptOnly, 30 * 1000).evicts.empty());  // 30s < 60s
  SessionOutcome at61 = RunSession(cluster(""), kPreemptOnly, 61 * 1000);
  CHECK(at61.evicts == Evictions{{"default/c-w-3", "elastic-preempted-for default/s"}});
  CHECK(at61.job_updates.at("default/c").scaled);  // its worker count changed: cooldown restarts
  // Per-job overrides: 10s lets it go at 30s; 2m keeps it at 61s.
  CHECK(RunSession(cluster("10s"), kPreemptOnly, 30 * 1000).evicts.size() == 1);
  CHECK(RunSession(cluster("2m"), kPreemptOnly, 61 * 1000).evicts.empty());
}

TEST_CASE("a running job below its min is starving too") {
  // `r` runs 2 of its min 3 (its min was raised, or a pod failed and came back pending).
  ClusterBuilder b;
  b.Node("n", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
  b.Job("e", {.min = 1, .tasks = {{"w", 3, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Job("r", {.min = 3, .tasks = {{"w", 3, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("e", "w", 0, 1, "n");
  b.RunningRange("r", "w", 0, 1, "n");
  SessionOutcome out = RunSession(b, kPreemptOnly);
  CHECK(out.evicts == Evictions{{"default/e-w-1", "elastic-preempted-for default/r"}});
}

TEST_CASE("after the evictions, the freed capacity stays with the starving job") {
  // Session 1 evicts big's ranks 3 and 2 for `new`; they are gone before session 2. `other`, a
  // scalable elastic job, must not get the freed GPUs in session 2: new's min is still waiting
  // (allocate is not configured here) and elastic-scale keeps its capacity.
  ClusterBuilder b;
  b.Node("node-0", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
  b.Node("node-1", "cpu=32,memory=128Gi,nvidia.com/gpu=2");
  b.Job("big", {.min = 1, .tasks = {{"w", 4, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Job("other", {.min = 1, .tasks = {{"w", 4, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("big", "w", 0, 3, "node-0");
  b.RunningRange("other", "w", 0, 1, "node-1");
  b.LastScaled("other", 0);  // other cannot grow in session 1, nor give workers
  Starving(b, "new", 2);
  SessionOutcome first = RunSession(b, kScaleAndPreempt, 0);
  CHECK(first.binds.empty());
  CHECK(first.evicts == Evictions{{"default/big-w-3", "elastic-preempted-for default/new"},
                                  {"default/big-w-2", "elastic-preempted-for default/new"}});
  Apply(b, first);
  SessionOutcome second = RunSession(b, kScaleAndPreempt, 61 * 1000);  // other is scalable again
  CHECK(second.binds.empty());   // node-0's 2 free GPUs are kept for new
  CHECK(second.evicts.empty());  // and new needs no more evictions
}

TEST_CASE("the same input gives the same evictions") {
  auto cluster = [] {
    ClusterBuilder b;
    for (int i = 0; i < 3; ++i) b.Node(StrCat("node-", i), "cpu=32,memory=128Gi,nvidia.com/gpu=4");
    b.Job("a", {.min = 1, .tasks = {{"w", 6, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
    b.Job("b", {.min = 2, .tasks = {{"w", 6, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
    b.RunningRange("a", "w", 0, 3, "node-0");
    b.RunningRange("a", "w", 4, 5, "node-1");
    b.RunningRange("b", "w", 0, 1, "node-1");
    b.RunningRange("b", "w", 2, 5, "node-2");
    Starving(b, "s", 2, "cpu=1,nvidia.com/gpu=2");
    return b;
  };
  SessionOutcome first = RunSession(cluster(), kScaleAndPreempt);
  SessionOutcome second = RunSession(cluster(), kScaleAndPreempt);
  REQUIRE_FALSE(first.evicts.empty());
  CHECK(first.evicts == second.evicts);
  CHECK(first.bind_order == second.bind_order);
  std::vector<std::string> order_first, order_second;
  for (const auto& e : first.raw.evicts) order_first.push_back(e.pod);
  for (const auto& e : second.raw.evicts) order_second.push_back(e.pod);
  CHECK(order_first == order_second);
}

// ---- The default configuration (spec section 4).

// Two nodes of 4 GPUs full of `big` (min 1, 8 running: 7 elastic workers) and `new`, a gang of
// 4 one-GPU pods, in `phase`.
ClusterBuilder FullOfElasticWorkers(PodGroupPhase phase) {
  ClusterBuilder b;
  b.Node("node-0", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
  b.Node("node-1", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
  b.Job("big", {.min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("big", "w", 0, 3, "node-0");
  b.RunningRange("big", "w", 4, 7, "node-1");
  b.Job("new", {.min = 4, .tasks = {{"w", 4, "cpu=1,nvidia.com/gpu=1"}}, .phase = phase});
  return b;
}

TEST_CASE("default configuration: a new gang starts by taking elastic workers back") {
  ClusterBuilder b = FullOfElasticWorkers(PodGroupPhase::kInqueue);
  // Session 1: allocate finds no room; preempt-elastic-workers evicts big's ranks 7..4, all on
  // node-1 (each of new's pods costs one eviction; ties go to the earlier victim).
  SessionOutcome first = RunSession(b, DefaultSchedulerConfigYaml(), 0);
  CHECK(first.binds.empty());
  CHECK(first.evicts == Evictions{{"default/big-w-7", "elastic-preempted-for default/new"},
                                  {"default/big-w-6", "elastic-preempted-for default/new"},
                                  {"default/big-w-5", "elastic-preempted-for default/new"},
                                  {"default/big-w-4", "elastic-preempted-for default/new"}});
  CHECK(first.job_updates.at("default/big").scaled);
  Apply(b, first);  // the evicted pods are gone (grace period 0) and recreated pending
  // Session 2: allocate places new on the freed GPUs; big is in its cooldown and does not grow
  // back, and nothing else is evicted.
  SessionOutcome second = RunSession(b, DefaultSchedulerConfigYaml(), 1000);
  CHECK(second.BoundCount("default/new") == 4);
  CHECK(second.binds.at("default/new-w-0") == "node-1");
  CHECK(second.BoundCount("default/big") == 0);
  CHECK(second.evicts.empty());
  Apply(b, second);
  // After big's cooldown there is still nothing to give or take: 8 of 8 GPUs run.
  SessionOutcome third = RunSession(b, DefaultSchedulerConfigYaml(), 61 * 1000);
  CHECK(third.binds.empty());
  CHECK(third.evicts.empty());
}

TEST_CASE("default configuration: a Pending gang is admitted into a cluster full of elastic workers") {
  // enqueue counts big's 7 elastic workers as reclaimable headroom (idle 0 + 7 >= 4) and the
  // elastic plugin permits; the same session then takes 4 workers back as above.
  ClusterBuilder b = FullOfElasticWorkers(PodGroupPhase::kPending);
  SessionOutcome first = RunSession(b, DefaultSchedulerConfigYaml(), 0);
  REQUIRE(first.job_updates.count("default/new") == 1);
  CHECK(first.job_updates.at("default/new").phase == PodGroupPhase::kInqueue);
  CHECK(first.evicts.size() == 4);
  CHECK(first.evicts.at("default/big-w-4") == "elastic-preempted-for default/new");
}

TEST_CASE("default configuration: victims from the queue above its deserved share first") {
  // qa and qb (weight 1) on 6 GPUs (the default queue asks nothing): qa asks 8, qb 2 + 1;
  // water-filling gives 2 each, then the default queue's 2 split 1 / 1: deserved 3 GPUs each.
  // `a` (qa) runs 4 of 8 (fulfillment 3/7), one GPU above its share; `b` (qb) runs 2 of 2 (1).
  // `s` (qb) needs 1 GPU, which qb may take (2 + 1 <= 3).
  ClusterBuilder b;
  b.Node("node-0", "cpu=32,memory=128Gi,nvidia.com/gpu=3");
  b.Node("node-1", "cpu=32,memory=128Gi,nvidia.com/gpu=3");
  b.Queue("qa", 1).Queue("qb", 1);
  b.Job("a", {.queue = "qa", .min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Job("b", {.queue = "qb", .min = 1, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("a", "w", 0, 2, "node-0");
  b.RunningRange("a", "w", 3, 3, "node-1");
  b.RunningRange("b", "w", 0, 1, "node-1");
  Starving(b, "s", 1, "cpu=1,nvidia.com/gpu=1", "qb");
  // By fulfillment alone b (1 > 3/7) would give b-w-1; qa holds 4 > 3 GPUs, so a gives.
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  CHECK(out.evicts == Evictions{{"default/a-w-3", "elastic-preempted-for default/s"}});
  CHECK(out.binds.empty());
}

TEST_CASE("default configuration: a queue at its capability takes back its own elastic workers") {
  // research may use 6 GPUs and `run` (min 2) holds all 6 on node-0; node-1's 2 GPUs are idle.
  // `new` (research, min 2) arrives Pending.
  ClusterBuilder b;
  b.Node("node-0", "cpu=32,memory=128Gi,nvidia.com/gpu=6");
  b.Node("node-1", "cpu=32,memory=128Gi,nvidia.com/gpu=2");
  b.Queue("research", 1, "nvidia.com/gpu=6");
  b.Job("run", {.queue = "research", .min = 2, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}},
                .phase = PodGroupPhase::kRunning});
  b.RunningRange("run", "w", 0, 5, "node-0");
  b.Job("new", {.queue = "research", .min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=1"}},
                .phase = PodGroupPhase::kPending});
  // Session 1. enqueue: proportion alone would refuse (6 held + 2 > 6), but run's 4 elastic
  // workers count as free: 2 of min + 2 <= 6, so elastic's permit admits new. allocate: the
  // queue cannot take new's pods (6 + 1 > 6). preempt-elastic-workers: each of new's pods first
  // makes room in the queue by taking one of run's workers, highest index first, although the
  // GPUs themselves are idle on node-1.
  SessionOutcome first = RunSession(b, DefaultSchedulerConfigYaml(), 0);
  REQUIRE(first.job_updates.count("default/new") == 1);
  CHECK(first.job_updates.at("default/new").phase == PodGroupPhase::kInqueue);
  CHECK(first.binds.empty());
  CHECK(first.evicts == Evictions{{"default/run-w-5", "elastic-preempted-for default/new"},
                                  {"default/run-w-4", "elastic-preempted-for default/new"}});
  Apply(b, first);
  // Session 2: research holds 4; new's 2 pods bind; run is in its cooldown and stays at 4.
  SessionOutcome second = RunSession(b, DefaultSchedulerConfigYaml(), 1000);
  CHECK(second.BoundCount("default/new") == 2);
  CHECK(second.BoundCount("default/run") == 0);
  CHECK(second.evicts.empty());
}


TEST_CASE("a queue that is not reclaimable keeps its workers from other queues' starving jobs") {
  // `elastic` (queue locked, not reclaimable) holds n's 8 GPUs with 7 workers above its min.
  // `huge` (locked, min `huge_min`) is planned first; `other` (queue open) needs 2.
  auto cluster = [](int huge_min) {
    ClusterBuilder b;
    b.Node("n", "cpu=32,memory=128Gi,nvidia.com/gpu=8");
    lahar::Queue locked;
    locked.meta.name = "locked";
    locked.reclaimable = false;
    lahar::Queue open;
    open.meta.name = "open";
    b.QueueObject(locked).QueueObject(open);
    b.Job("elastic", {.queue = "locked", .min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}},
                      .phase = PodGroupPhase::kRunning});
    b.RunningRange("elastic", "w", 0, 7, "n");
    Starving(b, "huge", huge_min, "cpu=1,nvidia.com/gpu=1", "locked");
    Starving(b, "other", 2, "cpu=1,nvidia.com/gpu=1", "open");
    return b;
  };
  // huge cannot start even with all 7 workers; other may not take them, although huge's plan,
  // tried first, looked at them.
  CHECK(RunSession(cluster(16), kPreemptOnly).evicts.empty());
  // huge needing 2 takes them from its own queue; other still gets none.
  CHECK(RunSession(cluster(2), kPreemptOnly).evicts ==
        Evictions{{"default/elastic-w-7", "elastic-preempted-for default/huge"},
                  {"default/elastic-w-6", "elastic-preempted-for default/huge"}});
}

TEST_CASE("goodput: the worker with the lowest gain goes first") {
  ClusterBuilder b;
  b.Node("n", "cpu=64,memory=256Gi,nvidia.com/gpu=4");
  const std::string worker = "cpu=1,nvidia.com/gpu=1";
  // By fulfillment `lin` (1/2) would give up a worker before `sat` (1/7); by gain `sat`'s 2nd
  // pod (0.3) pays less than `lin`'s (1.0).
  b.Job("lin", {.min = 1, .tasks = {{"w", 3, worker}}, .phase = PodGroupPhase::kRunning, .throughput = "1=10,2=20"});
  b.Job("sat", {.min = 1, .tasks = {{"w", 8, worker}}, .phase = PodGroupPhase::kRunning, .throughput = "1=10,2=13"});
  b.RunningRange("lin", "w", 0, 1, "n");
  b.RunningRange("sat", "w", 0, 1, "n");
  b.Job("new", {.min = 1, .tasks = {{"w", 1, worker}}});
  SessionOutcome out = RunSession(b, kPreemptOnly);
  CHECK(out.evicts == Evictions{{"default/sat-w-1", "elastic-preempted-for default/new"}});
}

TEST_CASE("goodput: a worker that gained less than minGain is taken back once, nobody waiting, and not re-added") {
  ClusterBuilder b;
  b.Node("n", "cpu=64,memory=256Gi,nvidia.com/gpu=8");
  const std::string worker = "cpu=1,nvidia.com/gpu=1";
  b.Job("sat", {.min = 1, .tasks = {{"w", 8, worker}}, .phase = PodGroupPhase::kRunning,
                .throughput = "1=10,2=18,3=18.5,4=18.6"});
  b.RunningRange("sat", "w", 0, 3, "n");
  SessionOutcome out = RunSession(b, kScaleAndPreempt);
  // Its 3rd pod gained 0.5/9 < 0.1: sizes 3 and 4 do not pay, the two highest ranks go.
  CHECK(out.evicts == Evictions{{"default/sat-w-3", "elastic-low-gain"}, {"default/sat-w-2", "elastic-low-gain"}});
  CHECK(out.binds.empty());
  Apply(b, out);
  for (Millis now : {61'000, 122'000}) {
    SessionOutcome later = RunSession(b, kScaleAndPreempt, now);
    CHECK(later.evicts.empty());
    CHECK(later.binds.empty());  // 6 idle GPUs, but not for a worker its reports showed not to pay
  }
}

TEST_CASE("goodput: a worker that did not pay is taken back only once the job's cooldown is over") {
  ClusterBuilder b;
  b.Node("n", "cpu=64,memory=256Gi,nvidia.com/gpu=8");
  b.Job("sat", {.min = 1, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning,
                .throughput = "1=10,2=18,3=18.5"});
  b.RunningRange("sat", "w", 0, 2, "n");
  b.LastScaled("sat", 0);  // grown to 3 at 0: cooldown 60s
  CHECK(RunSession(b, kPreemptOnly, 30'000).evicts.empty());
  CHECK(RunSession(b, kPreemptOnly, 61'000).evicts == Evictions{{"default/sat-w-2", "elastic-low-gain"}});
}
}  // namespace
}  // namespace lahar
