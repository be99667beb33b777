#include "plugins/binpack/binpack.h"

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
  std::string yaml = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: binpack\n";
  if (!arguments.empty()) yaml += "    arguments:\n" + std::string(arguments);
  return yaml;
}

BinpackWeights Weights(const std::map<std::string, std::string, std::less<>>& values) {
  auto weights = ParseBinpackWeights(Arguments("plugin binpack", values));
  REQUIRE(weights.ok());
  return *weights;
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

TEST_CASE("binpack scores how full the node becomes, weighted per resource") {
  const NodeInfo node = Node("cpu=8,memory=16Gi,nvidia.com/gpu=4", "cpu=6,memory=4Gi,nvidia.com/gpu=1");
  // Defaults: cpu (6 + 2) / 8 = 1, memory (4 + 4) / 16 = .5, weights 1:1 -> .75 × 100.
  CHECK(BinpackScore(Task("cpu=2,memory=4Gi"), node, Weights({})) == Approx(75));
  // cpu weight 3: (3 × 1 + 1 × .5) / 4 = .875, × binpack.weight 2 × 100.
  CHECK(BinpackScore(Task("cpu=2,memory=4Gi"), node, Weights({{"binpack.cpu", "3"}, {"binpack.weight", "2"}})) ==
        Approx(175));
  // GPU listed with weight 2: (1 × 1 + 1 × .5 + 2 × (1 + 1) / 4) / 4 = 2.5 / 4 = .625.
  const BinpackWeights gpu = Weights({{"binpack.resources", "nvidia.com/gpu"}, {"binpack.resources.nvidia.com/gpu", "2"}});
  CHECK(BinpackScore(Task("cpu=2,memory=4Gi,nvidia.com/gpu=1"), node, gpu) == Approx(62.5));
  // Resources the pod does not request take no part: memory only, 8/16.
  CHECK(BinpackScore(Task("memory=4Gi"), node, gpu) == Approx(50));
  // Unlisted resources are not scored: the GPU counts nothing with the defaults.
  CHECK(BinpackScore(Task("cpu=2,memory=4Gi,nvidia.com/gpu=1"), node, Weights({})) == Approx(75));
  // A pod that would overflow the node scores 0.
  CHECK(BinpackScore(Task("cpu=4"), node, Weights({})) == 0);
}

TEST_CASE("binpack sends the pod to the fullest node that fits") {
  ClusterBuilder b;
  b.Node("empty", "cpu=8,memory=16Gi").Node("half", "cpu=8,memory=16Gi").Node("full", "cpu=8,memory=16Gi");
  b.ForeignPod("p1", "half", "cpu=4,memory=8Gi");
  b.ForeignPod("p2", "full", "cpu=7,memory=14Gi");
  b.Job("job", {.tasks = {{"worker", 1, "cpu=2,memory=2Gi"}}});
  TestSession s(b, Config(""));
  CHECK(s.BestNode("default/job-worker-0") == "half");  // "full" has 1 cpu left
}

TEST_CASE("bad binpack arguments are errors naming the plugin and the key") {
  for (std::string_view args : {"      binpack.cpu: -1\n", "      binpack.weight: much\n",
                                "      binpack.resources: nvidia.com/gpu\n      binpack.resources.nvidia.com/gpu: x\n"}) {
    auto config = ParseSchedulerConfig(Config(args), BuiltinRegistry());
    REQUIRE_FALSE(config.ok());
    CHECK(config.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(config.status().message()), Catch::Contains("plugin binpack: argument binpack."));
  }
  auto unlisted = ParseSchedulerConfig(Config("      binpack.resources.example.com/foo: 2\n"), BuiltinRegistry());
  REQUIRE_FALSE(unlisted.ok());
  CHECK_THAT(std::string(unlisted.status().message()),
             Catch::Contains("binpack.resources.example.com/foo") && Catch::Contains("not listed in binpack.resources"));
  auto unknown = ParseSchedulerConfig(Config("      binpack.gpu: 2\n"), BuiltinRegistry());
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(std::string(unknown.status().message()), Catch::Contains("line 6: plugin binpack: unknown argument \"binpack.gpu\" (valid arguments: binpack.weight"));
}


TEST_CASE("end to end: binpack puts a gang's pods together where nodeorder would spread them") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi").Node("n2", "cpu=8,memory=16Gi");
  b.Job("job", {.min = 2, .tasks = {{"worker", 2, "cpu=2,memory=2Gi"}}});
  const std::string tiers = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: predicates\n";
  testing::SessionOutcome packed = testing::RunSession(b, tiers + "  - name: binpack\n");
  CHECK(packed.binds == std::map<std::string, std::string>{{"default/job-worker-0", "n1"}, {"default/job-worker-1", "n1"}});
  testing::SessionOutcome spread = testing::RunSession(b, tiers + "  - name: nodeorder\n");
  CHECK(spread.binds == std::map<std::string, std::string>{{"default/job-worker-0", "n1"}, {"default/job-worker-1", "n2"}});
}

}  // namespace
}  // namespace lahar
