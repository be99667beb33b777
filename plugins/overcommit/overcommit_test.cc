#include "plugins/overcommit/overcommit.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "api/strings.h"
#include "scheduler/builtins.h"
#include "scheduler/framework/cycle.h"
#include "test/testing/cluster_builder.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::RunSession;
using testing::SessionOutcome;

constexpr PodGroupPhase kPending = PodGroupPhase::kPending;

std::string Config(std::string_view options) {
  return StrCat("actions: enqueue\ntiers:\n- plugins:\n  - name: gang\n  - name: overcommit\n", options);
}

int Admitted(const SessionOutcome& out) {
  int admitted = 0;
  for (const auto& [job, update] : out.job_updates) admitted += update.phase == PodGroupPhase::kInqueue;
  return admitted;
}

ClusterBuilder TenGpusSixJobs() {
  ClusterBuilder b;
  b.Node("n0", "cpu=8,nvidia.com/gpu=4").Node("n1", "cpu=8,nvidia.com/gpu=4").Node("n2", "cpu=8,nvidia.com/gpu=2");
  // Six pending jobs of three GPUs each: more than the ten GPUs hold.
  for (int i = 0; i < 6; ++i) {
    b.Job(StrCat("j", i), {.tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=3"}}, .phase = kPending});
  }
  return b;
}

TEST_CASE("overcommit admits minResources up to allocatable times the factor and no further") {
  ClusterBuilder b = TenGpusSixJobs();
  SessionOutcome by_default = RunSession(b, Config(""));  // 1.2: 12 GPUs, four jobs
  CHECK(Admitted(by_default) == 4);
  CHECK(by_default.job_updates.at("default/j4").message() ==
        "overcommit: admitted minResources nvidia.com/gpu 15 of 10 x 1.2");
  CHECK(Admitted(RunSession(b, Config("    arguments:\n      overcommit-factor: 1.5\n"))) == 5);
  CHECK(Admitted(RunSession(b, Config("    arguments:\n      overcommit-factor: 0.9\n"))) == 3);
  // Without overcommit, enqueue's own check admits what is free now: three.
  CHECK(Admitted(RunSession(b, "actions: enqueue\ntiers:\n- plugins:\n  - name: gang\n")) == 3);
}

TEST_CASE("overcommit counts each admitted job left out as its class's representative lacks") {
  ClusterBuilder b;
  b.Node("n0", "cpu=8,nvidia.com/gpu=10");
  b.Job("rep", {.tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=2"}}});  // admitted, holding nothing
  b.Job("small", {.tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}, .phase = kPending});
  auto small_phase = [&](int left_out) {
    ClusterSnapshot snapshot = b.Snapshot();
    std::vector<std::string> keys;  // the snapshot names them by view, as it does the cache's
    for (int i = 0; i < left_out; ++i) keys.push_back(StrCat("default/alike-", i));
    if (left_out > 0) {
      // Jobs alike rep left out of the snapshot as its class (ClusterCache::ParkJobs).
      for (const std::string& key : keys) snapshot.parked.push_back({key, 0});
      snapshot.parked_representatives = {snapshot.FindJob("default/rep")};
      snapshot.parked_last.resize(1);
    }
    absl::StatusOr<CycleResult> result = RunSchedulingCycle(std::move(snapshot), testing::MustParseConfig(Config("")),
                                                            BuiltinRegistry(), nullptr, nullptr);
    REQUIRE(result.ok());
    for (const CycleResult::JobUpdate& u : result->job_updates) {
      if (u.job == "default/small") return u.phase;
    }
    return PodGroupPhase::kUnknown;
  };
  // 2 + 4 of 10 x 1.2 GPUs; with four alike left out, 2 + 4 x 2 + 4 = 14 of 12.
  CHECK(small_phase(0) == PodGroupPhase::kInqueue);
  CHECK(small_phase(1) == PodGroupPhase::kInqueue);
  CHECK(small_phase(4) == kPending);
}

TEST_CASE("overcommit counts what is in use and what admitted jobs still lack") {
  ClusterBuilder b;
  b.Node("n0", "cpu=8,nvidia.com/gpu=8").Node("n1", "cpu=8,nvidia.com/gpu=2");
  b.Job("running", {.min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=4"}}});
  b.RunningRange("running", "w", 0, 1, "n0");
  b.Job("admitted", {.tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=4"}}});
  // 8 in use + 4 admitted = 12 of 10 x 1.2: nothing more, though n1 has 2 GPUs free.
  b.Job("small", {.tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=2"}}, .phase = kPending});
  SessionOutcome out = RunSession(b, Config(""));
  CHECK(out.job_updates.at("default/small").phase == kPending);
  // Without overcommit, enqueue's own check admits what is free now.
  SessionOutcome plain = RunSession(b, "actions: enqueue\ntiers:\n- plugins:\n  - name: gang\n");
  CHECK(plain.job_updates.at("default/small").phase == PodGroupPhase::kInqueue);
}

TEST_CASE("enableJobEnqueued: false turns exactly overcommit's admission check off") {
  ClusterBuilder b = TenGpusSixJobs();
  // Its factor of 3 would admit all six; without it enqueue's own check admits three.
  CHECK(Admitted(RunSession(b, Config("    arguments:\n      overcommit-factor: 3\n"))) == 6);
  CHECK(Admitted(RunSession(b, Config("    enableJobEnqueued: false\n    arguments:\n      overcommit-factor: 3\n"))) == 3);
}

TEST_CASE("overcommit-factor must be a positive number") {
  CHECK_FALSE(NewOvercommitPlugin(Arguments("plugin overcommit", {{"overcommit-factor", "0"}})).ok());
  CHECK_FALSE(NewOvercommitPlugin(Arguments("plugin overcommit", {{"overcommit-factor", "lots"}})).ok());
  CHECK(NewOvercommitPlugin(Arguments("plugin overcommit", {{"overcommit-factor", "2"}})).ok());
}

}  // namespace
}  // namespace lahar
