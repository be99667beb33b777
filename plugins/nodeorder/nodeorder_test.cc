#include "plugins/nodeorder/nodeorder.h"

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

using TestSession = testing::SessionFixture;

std::string Config(std::string_view arguments) {
  std::string yaml = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: nodeorder\n";
  if (!arguments.empty()) yaml += "    arguments:\n" + std::string(arguments);
  return yaml;
}

NodeInfo Node(std::string_view allocatable, std::string_view used) {
  NodeInfo node;
  node.allocatable = Res(allocatable);
  node.used = Res(used);
  return node;
}

TaskInfo Task(std::string_view request) {
  TaskInfo task;
  task.request = Res(request);
  return task;
}

TEST_CASE("least-allocated scores the room left on cpu and memory after the pod") {
  const NodeInfo node = Node("cpu=4,memory=8Gi", "cpu=1,memory=2Gi");
  // cpu: (4 - 2) / 4 = 50; memory: (8 - 6) / 8 = 25; mean 37.5.
  CHECK(LeastAllocatedScore(Task("cpu=1,memory=4Gi"), node) == Approx(37.5));
  CHECK(LeastAllocatedScore(Task(""), Node("cpu=4,memory=8Gi", "")) == Approx(100));
  CHECK(LeastAllocatedScore(Task("cpu=8"), node) == Approx(37.5));  // cpu over: 0; memory (8-2)/8 = 75
}

TEST_CASE("most-allocated scores how full cpu and memory become") {
  const NodeInfo node = Node("cpu=4,memory=8Gi", "cpu=1,memory=2Gi");
  // cpu: 2/4 = 50; memory: 6/8 = 75; mean 62.5.
  CHECK(MostAllocatedScore(Task("cpu=1,memory=4Gi"), node) == Approx(62.5));
}

TEST_CASE("balanced allocation scores how close the cpu and memory fractions are") {
  const NodeInfo node = Node("cpu=4,memory=8Gi,nvidia.com/gpu=4", "cpu=1,memory=2Gi");
  // fractions .5 and .75: deviation |.5 - .75| / 2 = .125 -> 87.5.
  CHECK(BalancedAllocationScore(Task("cpu=1,memory=4Gi"), node) == Approx(87.5));
  // With a GPU request, three fractions .5, .75, .25: mean .5, deviation sqrt((0 + .0625 + .0625) / 3)
  // = .2041 -> 79.59.
  CHECK(BalancedAllocationScore(Task("cpu=1,memory=4Gi,nvidia.com/gpu=1"), node) == Approx(79.588).epsilon(1e-4));
  CHECK(BalancedAllocationScore(Task("cpu=1,memory=2Gi"), Node("cpu=4,memory=8Gi", "")) == Approx(100));
}

TEST_CASE("by default nodeorder spreads pods to the least loaded node") {
  ClusterBuilder b;
  b.Node("busy", "cpu=8,memory=16Gi").Node("idle", "cpu=8,memory=16Gi");
  b.ForeignPod("other", "busy", "cpu=4,memory=8Gi");
  b.Job("job", {.tasks = {{"worker", 1, "cpu=1,memory=2Gi"}}});
  TestSession s(b, Config(""));
  // busy: least (37.5 + 37.5) / 2 = 37.5, balanced 100; idle: least 87.5, balanced 100.
  CHECK(s->NodeScore(s.task("default/job-worker-0"), s.node("busy")) == Approx(137.5));
  CHECK(s->NodeScore(s.task("default/job-worker-0"), s.node("idle")) == Approx(187.5));
  CHECK(s.BestNode("default/job-worker-0") == "idle");
}

TEST_CASE("nodeorder weights come from Volcano's argument names") {
  ClusterBuilder b;
  b.Node("busy", "cpu=8,memory=16Gi").Node("idle", "cpu=8,memory=16Gi");
  b.ForeignPod("other", "busy", "cpu=4,memory=8Gi");
  b.Job("job", {.tasks = {{"worker", 1, "cpu=1,memory=2Gi"}}});
  TestSession s(b, Config("      leastrequested.weight: 0\n"
                          "      balancedresource.weight: 0\n"
                          "      mostrequested.weight: 2\n"
                          "      nodeaffinity.weight: 5\n"));
  // busy: most (5/8 + 10/16) / 2 = 62.5, × 2 = 125; idle: 12.5 × 2 = 25.
  CHECK(s->NodeScore(s.task("default/job-worker-0"), s.node("busy")) == Approx(125));
  CHECK(s.BestNode("default/job-worker-0") == "busy");
}

TEST_CASE("bad nodeorder arguments are errors naming the plugin and the key") {
  auto negative = ParseSchedulerConfig(Config("      leastrequested.weight: -1\n"), BuiltinRegistry());
  REQUIRE_FALSE(negative.ok());
  CHECK(negative.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(negative.status().message()),
             Catch::Contains("plugin nodeorder") && Catch::Contains("leastrequested.weight"));
  auto not_a_number = ParseSchedulerConfig(Config("      balancedresource.weight: heavy\n"), BuiltinRegistry());
  REQUIRE_FALSE(not_a_number.ok());
  CHECK_THAT(std::string(not_a_number.status().message()), Catch::Contains("balancedresource.weight"));
  auto typo = ParseSchedulerConfig(Config("      leastrequest.weight: 1\n"), BuiltinRegistry());
  REQUIRE_FALSE(typo.ok());
  CHECK_THAT(std::string(typo.status().message()),
             Catch::Contains("unknown argument \"leastrequest.weight\"") && Catch::Contains("leastrequested.weight"));
}

}  // namespace
}  // namespace lahar
