#include "plugins/priority/priority.h"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string_view>

#include "scheduler/builtins.h"
#include "scheduler/framework/session.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/default_tiers.h"
#include "test/testing/session_fixture.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::JobSpec;

constexpr std::string_view kConfig = R"(
actions: "allocate"
tiers:
- plugins:
  - name: priority
)";

using TestSession = testing::SessionFixture;

TEST_CASE("a job of a higher PriorityClass goes before an older job of a lower one") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi").PriorityClass("high", 1000).PriorityClass("low", 10);
  b.Job("old", {.tasks = {{"worker", 1, "cpu=1"}}, .priority_class = "low"});
  b.Job("urgent", {.tasks = {{"worker", 1, "cpu=1"}}, .priority_class = "high"});
  TestSession s(b, kConfig);
  // Without the plugin the framework would order by creation: "old" first.
  CHECK(s->JobOrderLess(s.job("default/urgent"), s.job("default/old")));
  CHECK_FALSE(s->JobOrderLess(s.job("default/old"), s.job("default/urgent")));
}

TEST_CASE("with enableJobOrder false, priority no longer orders jobs") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi").PriorityClass("high", 1000);
  b.Job("old", {.tasks = {{"worker", 1, "cpu=1"}}});
  b.Job("urgent", {.tasks = {{"worker", 1, "cpu=1"}}, .priority_class = "high"});
  TestSession s(b, R"(
actions: "allocate"
tiers:
- plugins:
  - name: priority
    enableJobOrder: false
)");
  CHECK(s->JobOrderLess(s.job("default/old"), s.job("default/urgent")));
}

TEST_CASE("only tasks of lower-priority jobs are preemption victims") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi").PriorityClass("high", 1000).PriorityClass("mid", 500).PriorityClass("low", 10);
  b.Job("preemptor", {.tasks = {{"worker", 1, "cpu=4"}}, .priority_class = "mid"});
  b.Job("lower", {.tasks = {{"worker", 1, "cpu=2"}}, .priority_class = "low"});
  b.Job("same", {.tasks = {{"worker", 1, "cpu=2"}}, .priority_class = "mid"});
  b.Job("higher", {.tasks = {{"worker", 1, "cpu=2"}}, .priority_class = "high"});
  b.Running("lower-worker-0", "n1").Running("same-worker-0", "n1").Running("higher-worker-0", "n1");
  TestSession s(b, kConfig);
  const TaskId lower = s.task("default/lower-worker-0").id;
  const TaskId same = s.task("default/same-worker-0").id;
  const TaskId higher = s.task("default/higher-worker-0").id;
  CHECK(s->Preemptable(s.task("default/preemptor-worker-0"), {lower, same, higher}) == std::vector<TaskId>{lower});
}

TEST_CASE("within one job, only tasks of lower task priority are preemption victims") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi");
  b.Job("train", {.min = 1,
                  .tasks = {{"master", 1, "cpu=1", /*priority=*/10},
                            {"worker", 2, "cpu=1", /*priority=*/5},
                            {"logger", 1, "cpu=1", /*priority=*/1}}});
  b.Running("train-worker-0", "n1").Running("train-logger-0", "n1");
  TestSession s(b, kConfig);
  const TaskId worker0 = s.task("default/train-worker-0").id;
  const TaskId logger = s.task("default/train-logger-0").id;
  // The pending worker (priority 5) may take the logger's place (1), not its peer's (5).
  CHECK(s->Preemptable(s.task("default/train-worker-1"), {worker0, logger}) == std::vector<TaskId>{logger});
}


TEST_CASE("end to end: the higher-priority job gets the last free node, though it came later") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4,memory=16Gi").PriorityClass("high", 1000);
  b.Job("early", {.tasks = {{"worker", 1, "cpu=4"}}});
  b.Job("urgent", {.tasks = {{"worker", 1, "cpu=4"}}, .priority_class = "high"});
  testing::SessionOutcome out = testing::RunSession(b, testing::DefaultTiersConfig("allocate"));
  CHECK(out.binds == std::map<std::string, std::string>{{"default/urgent-worker-0", "n1"}});
}

}  // namespace
}  // namespace lahar
