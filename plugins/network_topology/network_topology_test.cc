#include "plugins/network_topology/network_topology.h"

#include <catch2/catch.hpp>

#include "test/testing/cluster_builder.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::JobSpec;
using testing::RunSession;

// Topology from node labels (no HyperNode objects): spine s1 holds racks r1 (n1, n2) and r2
// (n3, n4); n5 is in no rack.
constexpr char kConfig[] = R"(
actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: network-topology-aware
    arguments:
      topology.labels: "example.com/spine, example.com/rack"
)";

ClusterBuilder Cluster() {
  ClusterBuilder b;
  for (int i = 1; i <= 4; ++i) {
    b.Node("n" + std::to_string(i), "cpu=16,memory=64Gi,nvidia.com/gpu=4",
           {{"example.com/spine", "s1"}, {"example.com/rack", i <= 2 ? "r1" : "r2"}});
  }
  b.Node("n5", "cpu=16,memory=64Gi,nvidia.com/gpu=8");
  return b;
}

NetworkTopology Hard(int tier) { return NetworkTopology{.hard = true, .highest_tier_allowed = tier}; }

TEST_CASE("topology.labels: a hard gang is placed inside one rack, never on the unracked node") {
  ClusterBuilder b = Cluster();
  b.Job("fill", {.tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=2"}}});
  b.Running("fill-w-0", "n1");
  b.Job("gang", {.min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=4"}}, .network_topology = Hard(1)});
  auto out = RunSession(b, kConfig);
  REQUIRE(out.BoundCount("default/gang") == 2);
  // r1 has 6 GPUs free (n1 2, n2 4): not two pods of 4; r2 has both nodes free.
  CHECK(out.binds.at("default/gang-w-0") != "n5");
  CHECK((out.binds.at("default/gang-w-0") == "n3" || out.binds.at("default/gang-w-0") == "n4"));
  CHECK((out.binds.at("default/gang-w-1") == "n3" || out.binds.at("default/gang-w-1") == "n4"));
}

TEST_CASE("a hard gang too big for any rack waits whole with a topology reason") {
  ClusterBuilder b = Cluster();
  b.Job("gang", {.min = 3, .tasks = {{"w", 3, "cpu=1,nvidia.com/gpu=4"}}, .network_topology = Hard(1)});
  auto out = RunSession(b, kConfig);
  CHECK(out.BoundCount("default/gang") == 0);
  const auto& update = out.job_updates.at("default/gang");
  REQUIRE(update.waiting);
  CHECK(update.waiting->kind == WaitKind::kTopology);
  CHECK(WaitReasonText(*update.waiting) ==
        "needs 12 nvidia.com/gpu within one tier-1 hypernode; the most free is example.com/rack=r1 with 8");
  // Allowed up to the spine (tier 2) it fits.
  ClusterBuilder wide = Cluster();
  wide.Job("gang", {.min = 3, .tasks = {{"w", 3, "cpu=1,nvidia.com/gpu=4"}}, .network_topology = Hard(2)});
  auto placed = RunSession(wide, kConfig);
  REQUIRE(placed.BoundCount("default/gang") == 3);
  for (const auto& [pod, node] : placed.binds) CHECK(node != "n5");
}

TEST_CASE("both highest tiers set: the job waits with the fault named, others are scheduled") {
  ClusterBuilder b = Cluster();
  NetworkTopology bad = Hard(1);
  bad.highest_tier_name = "example.com/rack";
  bad.invalid = "networkTopology: highestTierAllowed and highestTierName are both set (at most one may be)";
  b.Job("bad", {.tasks = {{"w", 1, "cpu=1"}}, .network_topology = bad});
  b.Job("good", {.tasks = {{"w", 1, "cpu=1"}}});
  auto out = RunSession(b, kConfig);
  CHECK(out.BoundCount("default/bad") == 0);
  CHECK(out.BoundCount("default/good") == 1);
  REQUIRE(out.job_updates.at("default/bad").waiting);
  CHECK(WaitReasonText(*out.job_updates.at("default/bad").waiting) == bad.invalid);
}

TEST_CASE("plugin arguments are checked by name") {
  auto bad = NewNetworkTopologyPlugin(Arguments("network-topology-aware", {{"hypernode.binpack.resources.nvidia.com/gpu", "2"}}));
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("is not listed in hypernode.binpack.resources") != std::string::npos);
  CHECK(NewNetworkTopologyPlugin(Arguments("network-topology-aware",
                                           {{"hypernode.binpack.resources", "nvidia.com/gpu"},
                                            {"hypernode.binpack.resources.nvidia.com/gpu", "2"}}))
            .ok());
}

}  // namespace
}  // namespace lahar
