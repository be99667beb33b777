#include "plugins/network_topology/network_topology.h"

#include <catch2/catch.hpp>
#include <optional>
#include <set>
#include <string>

#include "test/testing/cluster_builder.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::JobSpec;
using testing::RunSession;

// Topology from node labels (no HyperNode objects): spine s1 holds racks r1 (n1, n2) and r2
// (n3, n4); n5 is in no rack.
// The second tier every configuration here ends with.
constexpr char kTopologyTier[] = R"(- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: network-topology-aware
    arguments:
      topology.labels: "example.com/spine, example.com/rack"
)";
const std::string kConfig = std::string(R"(
actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
)") + kTopologyTier;

ClusterBuilder Cluster() {
  ClusterBuilder b;
  for (int i = 1; i <= 4; ++i) {
    b.Node("n" + std::to_string(i), "cpu=16,memory=64Gi,nvidia.com/gpu=4",
           {{"example.com/spine", "s1"}, {"example.com/rack", i <= 2 ? "r1" : "r2"}});
  }
  b.Node("n5", "cpu=16,memory=64Gi,nvidia.com/gpu=8");
  return b;
}

// `actions` over priority, gang and elastic, then the topology tier.
std::string ElasticConfig(const std::string& actions) {
  return "actions: \"" + actions + "\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: elastic\n" +
         kTopologyTier;
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

TEST_CASE("preempt-elastic-workers takes a hard gang's victims from the one rack where they make room") {
  // Elastic job e (min 1) runs a worker on every racked node; its highest-index workers are
  // in different racks (w3 on n4 in r2, w2 on n1 in r1). Taking the two highest would free one
  // node in each rack; only r2 can be emptied (w0 is e's min and stays in r1).
  ClusterBuilder b = Cluster();
  b.ForeignPod("other", "n5", "cpu=1,nvidia.com/gpu=8");
  b.Job("e", {.min = 1, .tasks = {{"w", 4, "cpu=1,nvidia.com/gpu=4"}}});
  b.Running("e-w-0", "n2").Running("e-w-1", "n3").Running("e-w-2", "n1").Running("e-w-3", "n4");
  b.Job("gang", {.min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=4"}}, .network_topology = Hard(1)});
  auto out = RunSession(b, ElasticConfig("enqueue, allocate, preempt-elastic-workers"));
  std::set<std::string> evicted;
  for (const auto& [pod, reason] : out.evicts) {
    evicted.insert(pod);
    CHECK(reason == "elastic-preempted-for default/gang");
  }
  CHECK(evicted == std::set<std::string>{"default/e-w-1", "default/e-w-3"});
}

TEST_CASE("elastic-scale keeps capacity for a hard gang inside one rack, and gives the rest to workers") {
  // The gang fits only in r2 (n3 idle, e's second worker on n4 once its cooldown ends); r1 would
  // need e's min. So n3 and n4 are kept for it, and f's next worker takes n1, the idle node of r1.
  // Kept without the domain, the gang's two pods would hold n1 and n3 and f could not grow.
  ClusterBuilder b = Cluster();
  b.Job("e", {.min = 1, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=4"}}});
  b.Running("e-w-0", "n2").Running("e-w-1", "n4");
  b.LastScaled("e", 0);  // in its cooldown: preempt-elastic-workers may not take e-w-1 yet
  b.Job("f", {.min = 1, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=4"}}});
  b.Running("f-w-0", "n5");
  b.ForeignPod("other", "n5", "cpu=1,nvidia.com/gpu=4");
  b.Job("gang", {.min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=4"}}, .network_topology = Hard(1)});
  auto out = RunSession(b, ElasticConfig("enqueue, allocate, preempt-elastic-workers, elastic-scale"), /*now=*/1000);
  CHECK(out.evicts.empty());
  CHECK(out.binds.count("default/gang-w-0") == 0);
  REQUIRE(out.binds.count("default/f-w-1") == 1);
  CHECK(out.binds.at("default/f-w-1") == "n1");
}

TEST_CASE("jobs without a constraint fill the fullest rack, unless normal-pod packing is off") {
  // r2 has a pod on n3: it is the fuller rack, while least-requested node order prefers n1.
  auto first_node = [](const std::string& config) {
    ClusterBuilder b = Cluster();
    b.ForeignPod("other", "n3", "cpu=1,nvidia.com/gpu=2");
    b.Job("small", {.tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=2"}}});
    return RunSession(b, config).binds.at("default/small-w-0");
  };
  const std::string packed = first_node(kConfig);
  CHECK((packed == "n3" || packed == "n4"));
  std::string off = kConfig;
  off += "      hypernode.binpack.normal-pod.enable: false\n";
  const std::string spread = first_node(off);
  CHECK(spread != "n3");
  CHECK(spread != "n4");
}

TEST_CASE("a recreated pod of a running hard gang goes back into the rack its gang runs in") {
  ClusterBuilder b = Cluster();
  b.Job("gang", {.min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=4"}}, .network_topology = Hard(1)});
  b.Running("gang-w-0", "n3");  // gang-w-1 was evicted and recreated: pending
  auto out = RunSession(b, kConfig);
  REQUIRE(out.binds.count("default/gang-w-1") == 1);
  CHECK(out.binds.at("default/gang-w-1") == "n4");  // n1, n2 and n5 are emptier, but not in r2
}

TEST_CASE("a recreated pod of a soft or unconstrained gang goes back to its rack first") {
  for (const std::optional<NetworkTopology>& constraint :
       {std::optional<NetworkTopology>(NetworkTopology{.hard = false}), std::optional<NetworkTopology>()}) {
    ClusterBuilder b = Cluster();
    b.Job("gang", {.min = 2, .tasks = {{"w", 2, "cpu=1,nvidia.com/gpu=4"}}, .network_topology = constraint});
    b.Running("gang-w-0", "n3");
    auto out = RunSession(b, kConfig);
    REQUIRE(out.binds.count("default/gang-w-1") == 1);
    CHECK(out.binds.at("default/gang-w-1") == "n4");  // n1, n2 and n5 are as empty, but outside r2
  }
}

TEST_CASE("hypernode.binpack weights decide a job's dominant resource, and so its best-fit rack") {
  // r1 has less GPU free (6 of 8), r2 less cpu (20 of 32). The job asks 1 of 24 GPUs and 2 of
  // 80 cpu: GPU dominates by share, so r1 fits it best; weighing cpu 3x makes cpu dominate: r2.
  auto rack_of = [](const std::string& config) {
    ClusterBuilder b = Cluster();
    b.ForeignPod("gpu-user", "n1", "cpu=1,nvidia.com/gpu=2");
    b.ForeignPod("cpu-user", "n3", "cpu=12");
    b.Job("job", {.tasks = {{"w", 1, "cpu=2,nvidia.com/gpu=1"}}, .network_topology = Hard(1)});
    auto out = RunSession(b, config);
    REQUIRE(out.binds.count("default/job-w-0") == 1);
    const std::string node = out.binds.at("default/job-w-0");
    return node == "n1" || node == "n2" ? std::string("r1") : std::string("r2");
  };
  CHECK(rack_of(kConfig) == "r1");
  CHECK(rack_of(kConfig + "      hypernode.binpack.cpu: 3\n") == "r2");
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
