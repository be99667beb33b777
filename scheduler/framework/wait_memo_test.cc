// Sessions that carry a WaitMemo skip an evicting action while nothing it reads has changed
// since it found no plan, and try again as soon as something has: a pod gone, a cooldown over.
// Skipped or tried, the decisions are the same.
#include "scheduler/framework/wait_memo.h"

#include <catch2/catch.hpp>

#include "test/testing/cluster_builder.h"
#include "test/testing/elastic_configs.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::RunSession;
using testing::SessionOutcome;
using testing::ElasticOnlyConfig;
using testing::kPreemptOnly;

// n's 4 GPUs held by elastic job m (min 1, 4 workers), scaled at 0 and so in its cooldown until
// 60s; s (min 2) starves. preempt-elastic-workers takes nothing from m before 60s.
ClusterBuilder Cluster() {
  ClusterBuilder b;
  b.Node("n", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
  b.Job("m", {.min = 1, .tasks = {{"worker", 4, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("m", "worker", 0, 3, "n");
  b.LastScaled("m", 0);
  b.Job("s", {.min = 2, .tasks = {{"worker", 2, "cpu=1,nvidia.com/gpu=1"}}});
  return b;
}

TEST_CASE("an evicting action is skipped while nothing it reads changed, and tried when a cooldown ends") {
  for (bool enabled : {true, false}) {
    CAPTURE(enabled);
    ClusterBuilder b = Cluster();
    WaitMemo memo(enabled);
    SessionOutcome first = RunSession(b, kPreemptOnly, 10'000, &memo);
    CHECK(first.evicts.empty());
    CHECK(memo.skipped() == 0);

    // Later, unchanged but for a job that has only arrived (Pending, not admitted): skipped.
    b.Job("later", {.min = 1, .tasks = {{"worker", 1, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kPending});
    SessionOutcome second = RunSession(b, kPreemptOnly, 20'000, &memo);
    CHECK(second.evicts.empty());
    CHECK(memo.skipped() == (enabled ? 1 : 0));

    // The cooldown is over at 60s: the same state is tried again, and m's workers go.
    SessionOutcome after_cooldown = RunSession(b, kPreemptOnly, 61'000, &memo);
    CHECK(after_cooldown.evicts.size() == 2);
    CHECK(memo.skipped() == (enabled ? 1 : 0));
  }
}

TEST_CASE("elastic-scale skips a run preempt-elastic-workers found fruitless in the same state, unless cooldown matters") {
  // m (min 1) runs 4 one-GPU pods on n; s needs two 4-GPU pods, which no eviction makes room for.
  auto cluster = [](Millis last_scaled) {
    ClusterBuilder b;
    b.Node("n", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
    b.Job("m", {.min = 1, .tasks = {{"worker", 4, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
    b.RunningRange("m", "worker", 0, 3, "n");
    b.LastScaled("m", last_scaled);
    b.Job("s", {.min = 2, .tasks = {{"worker", 2, "cpu=1,nvidia.com/gpu=4"}}});
    return b;
  };
  const std::string config = ElasticOnlyConfig("preempt-elastic-workers, elastic-scale");
  for (bool in_cooldown : {false, true}) {
    CAPTURE(in_cooldown);
    // Scaled at 0 with a 60s cooldown: inside it at 10s, outside at 100s.
    const Millis now = in_cooldown ? 10'000 : 100'000;
    WaitMemo memo;
    SessionOutcome out = RunSession(cluster(0), config, now, &memo);
    WaitMemo disabled(false);
    SessionOutcome tried_in_full = RunSession(cluster(0), config, now, &disabled);
    CHECK(out.evicts.empty());
    CHECK(out.binds == tried_in_full.binds);
    // Outside its cooldown, elastic-scale's plans take the same workers as preempt-elastic-workers'
    // did a moment before, in the same state: not tried again. Inside it, elastic-scale may take
    // m's workers and the other may not: both are tried.
    CHECK(memo.skipped() == (in_cooldown ? 0 : 1));
    CHECK(memo.tried() == (in_cooldown ? 2 : 1));
  }
}

TEST_CASE("a remembered run holds for its fingerprint, whichever action asks, until it expires") {
  WaitMemo memo;
  memo.Remember("reclaim", {.fingerprint = 7, .touched = true, .expires = 1000});
  CHECK(memo.Find("reclaim", 7, 999) != nullptr);
  CHECK(memo.Find("reclaim", 7, 1000) == nullptr);  // a deadline passed: try again
  CHECK(memo.Find("reclaim", 8, 0) == nullptr);
  CHECK(memo.Find("preempt", 7, 0) != nullptr);  // a run of the same class (in the fingerprint)
  CHECK(memo.Find("preempt", 8, 0) == nullptr);
  memo.Forget("reclaim");
  CHECK(memo.Find("reclaim", 7, 0) == nullptr);
  WaitMemo disabled(false);
  disabled.Remember("reclaim", {.fingerprint = 7, .expires = 1000});
  CHECK(disabled.Find("reclaim", 7, 0) == nullptr);
}

TEST_CASE("a change in what the plans read wakes the skipped action") {
  ClusterBuilder b = Cluster();
  WaitMemo memo;
  RunSession(b, kPreemptOnly, 10'000, &memo);
  RunSession(b, kPreemptOnly, 11'000, &memo);
  REQUIRE(memo.skipped() == 1);
  const int64_t tried = memo.tried();

  // One of m's pods is gone: the run is tried again (and finds that 1 GPU is not enough).
  b.cache().DeletePod("default", "m-worker-3");
  SessionOutcome out = RunSession(b, kPreemptOnly, 12'000, &memo);
  CHECK(out.evicts.empty());
  CHECK(memo.tried() == tried + 1);
  CHECK(memo.skipped() == 1);
}

}  // namespace
}  // namespace lahar
