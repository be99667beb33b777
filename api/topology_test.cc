#include "api/topology.h"

#include <catch2/catch.hpp>
#include <memory>

#include "api/decode.h"

namespace lahar {
namespace {

// Nodes n0..n<count-1>, ids in order, with optional labels per node.
std::vector<NodeInfo> MakeNodes(int count, std::vector<StringMap> labels = {}) {
  std::vector<NodeInfo> nodes;
  for (int i = 0; i < count; ++i) {
    auto node = std::make_shared<Node>();
    node->meta.name = "n" + std::to_string(i);
    if (static_cast<size_t>(i) < labels.size()) node->meta.labels = labels[i];
    NodeInfo info;
    info.id = i;
    info.node = node;
    nodes.push_back(std::move(info));
  }
  return nodes;
}

// A HyperNode from YAML as a user writes it (the decoder is part of what is tested).
HyperNode Parse(const std::string& yaml) {
  auto objects = DecodeObjectStream("apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\n" + yaml);
  REQUIRE(objects.ok());
  REQUIRE(objects->size() == 1);
  return std::get<HyperNode>(objects->front());
}

Topology Build(const std::vector<HyperNode>& hns, const std::vector<NodeInfo>& nodes) {
  std::vector<const HyperNode*> ptrs;
  for (const HyperNode& h : hns) ptrs.push_back(&h);
  return BuildTopology(ptrs, nodes);
}

std::vector<HyperNode> TwoLeavesOneSpine() {
  return {Parse(R"(metadata: {name: leaf-a}
spec:
  tier: 1
  members:
  - type: Node
    selector: {regexMatch: {pattern: "^n[0-3]$"}}
)"),
          Parse(R"(metadata: {name: leaf-b}
spec:
  tier: 1
  members:
  - {type: Node, selector: {exactMatch: {name: n4}}}
  - {type: Node, selector: {labelMatch: {matchLabels: {rack: b}}}}
)"),
          Parse(R"(metadata: {name: spine}
spec:
  tier: 2
  tierName: spine
  members:
  - {type: HyperNode, selector: {regexMatch: {pattern: "^leaf-"}}}
)")};
}

TEST_CASE("HyperNodes resolve to a tree of domains with every node beneath each") {
  const auto nodes = MakeNodes(8, {{}, {}, {}, {}, {}, {{"rack", "b"}}, {{"rack", "b"}}, {}});
  const Topology t = Build(TwoLeavesOneSpine(), nodes);
  REQUIRE(t.problems.empty());
  REQUIRE(t.domains.size() == 3);
  const DomainId a = t.Find("leaf-a"), b = t.Find("leaf-b"), spine = t.Find("spine");
  CHECK(t.domains[a].nodes == std::vector<NodeId>{0, 1, 2, 3});
  CHECK(t.domains[b].nodes == std::vector<NodeId>{4, 5, 6});
  CHECK(t.domains[spine].nodes == std::vector<NodeId>{0, 1, 2, 3, 4, 5, 6});
  CHECK(t.domains[a].parent == spine);
  CHECK(t.leaf_of[7] == kNoId);  // in no HyperNode: outside every domain
  CHECK(t.leaf_of[5] == b);
  CHECK(t.tiers == std::vector<int32_t>{1, 2});
  CHECK(t.TierNamed("spine") == 2);
  CHECK(t.Enclosing({1, 2}) == a);
  CHECK(t.Enclosing({1, 5}) == spine);
  CHECK(t.Enclosing({1, 7}) == kNoId);
  CHECK(t.WidestWithin(a, 2) == spine);
  CHECK(t.WidestWithin(a, 1) == a);
  CHECK(t.WidestWithin(spine, 1) == kNoId);
}

TEST_CASE("a broken HyperNode is named with why, and so is each domain above it") {
  const auto nodes = MakeNodes(4);
  SECTION("a regex that does not compile") {
    auto hns = TwoLeavesOneSpine();
    hns[0].members[0].regex = "^n[0-3";
    const Topology t = Build(hns, nodes);
    REQUIRE(t.problems.size() == 2);
    CHECK(t.problems[0].find("HyperNode leaf-a: member 0 (Node): regexMatch pattern \"^n[0-3\" does not compile") == 0);
    CHECK(t.problems[1] == "HyperNode spine: its member leaf-a is broken");
    CHECK(t.domains[t.Find("leaf-b")].broken.empty());
  }
  SECTION("a selector naming two kinds") {
    auto hns = TwoLeavesOneSpine();
    hns[1].members[0].regex = "n4";
    const Topology t = Build(hns, nodes);
    CHECK(t.domains[t.Find("leaf-b")].broken ==
          "member 0 (Node): a selector names exactly one of exactMatch, regexMatch and labelMatch, this one 2");
  }
  SECTION("a member of two parents") {
    auto hns = TwoLeavesOneSpine();
    HyperNode other = hns[2];
    other.meta.name = "spine-2";
    hns.push_back(other);
    const Topology t = Build(hns, nodes);
    CHECK(t.domains[t.Find("leaf-a")].broken == "is a member of both spine and spine-2");
    CHECK(t.domains[t.Find("spine-2")].broken == "its member leaf-a is broken");
  }
  SECTION("a tier not above its member's") {
    auto hns = TwoLeavesOneSpine();
    hns[2].tier = 1;
    const Topology t = Build(hns, nodes);
    CHECK(t.domains[t.Find("spine")].broken == "tier 1 is not above the tier of its member leaf-a (1)");
  }
  SECTION("a cycle") {
    std::vector<HyperNode> hns = {Parse(R"(metadata: {name: x}
spec: {tier: 2, members: [{type: HyperNode, selector: {exactMatch: {name: y}}}]})"),
                                  Parse(R"(metadata: {name: y}
spec: {tier: 3, members: [{type: HyperNode, selector: {exactMatch: {name: x}}}]})")};
    const Topology t = Build(hns, nodes);
    CHECK(t.domains[t.Find("x")].broken == "is part of a cycle: x -> y -> x");
    CHECK(t.domains[t.Find("y")].broken == "is part of a cycle: x -> y -> x");
  }
  SECTION("labelMatch on HyperNode members, and a node claimed by two leaves") {
    std::vector<HyperNode> hns = {Parse(R"(metadata: {name: l1}
spec: {tier: 1, members: [{type: Node, selector: {regexMatch: {pattern: "n[01]"}}}]})"),
                                  Parse(R"(metadata: {name: l2}
spec: {tier: 1, members: [{type: Node, selector: {exactMatch: {name: n1}}}]})"),
                                  Parse(R"(metadata: {name: s}
spec: {tier: 2, members: [{type: HyperNode, selector: {labelMatch: {matchLabels: {a: b}}}}]})")};
    const Topology t = Build(hns, nodes);
    CHECK(t.domains[t.Find("l1")].broken == "node n1 is a member of both l1 and l2");
    CHECK(t.domains[t.Find("s")].broken == "member 0 (HyperNode): labelMatch selects nodes only");
  }
}

TEST_CASE("a bad HyperNode field is an error that names it") {
  auto bad = DecodeObjectStream(R"(apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: leaf}
spec: {tier: 1, members: [{type: Switch, selector: {exactMatch: {name: n0}}}]}
)");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("HyperNode leaf") != std::string::npos);
  CHECK(bad.status().message().find("spec.members[0].type: \"Switch\" is neither Node nor HyperNode") != std::string::npos);
  auto no_tier = DecodeObjectStream("kind: HyperNode\nmetadata: {name: leaf}\nspec: {members: []}\n");
  REQUIRE_FALSE(no_tier.ok());
  CHECK(no_tier.status().message().find("spec.tier: missing") != std::string::npos);
}

TEST_CASE("a PodGroup's networkTopology is read, and both highest tiers set is kept as invalid") {
  auto objects = DecodeObjectStream(R"(apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: a, namespace: ns}
spec: {minMember: 2, networkTopology: {mode: soft, highestTierAllowed: 2}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: b, namespace: ns}
spec: {minMember: 2, networkTopology: {highestTierAllowed: 2, highestTierName: spine}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: c, namespace: ns}
spec: {minMember: 2}
)");
  REQUIRE(objects.ok());
  const auto& a = std::get<PodGroup>((*objects)[0]);
  REQUIRE(a.network_topology);
  CHECK_FALSE(a.network_topology->hard);
  CHECK(a.network_topology->highest_tier_allowed == 2);
  const auto& b = std::get<PodGroup>((*objects)[1]);
  REQUIRE(b.network_topology);
  CHECK(b.network_topology->hard);
  CHECK(b.network_topology->invalid.find("highestTierAllowed and highestTierName are both set") != std::string::npos);
  CHECK_FALSE(std::get<PodGroup>((*objects)[2]).network_topology);
  auto bad_mode = DecodeObjectStream("kind: PodGroup\nmetadata: {name: d}\nspec: {networkTopology: {mode: strict}}\n");
  REQUIRE_FALSE(bad_mode.ok());
  CHECK(bad_mode.status().message().find("spec.networkTopology.mode: \"strict\" is neither hard nor soft") !=
        std::string::npos);
}

TEST_CASE("node labels build the same tree, highest tier key first") {
  const auto nodes = MakeNodes(5, {{{"spine", "s1"}, {"leaf", "l1"}},
                                   {{"spine", "s1"}, {"leaf", "l1"}},
                                   {{"spine", "s1"}, {"leaf", "l2"}},
                                   {{"spine", "s2"}, {"leaf", "l3"}},
                                   {}});
  const Topology t = BuildLabelTopology({"spine", "leaf"}, nodes);
  REQUIRE(t.problems.empty());
  const DomainId l1 = t.Find("leaf=l1"), s1 = t.Find("spine=s1");
  REQUIRE(l1 != kNoId);
  REQUIRE(s1 != kNoId);
  CHECK(t.domains[l1].tier == 1);
  CHECK(t.domains[s1].tier == 2);
  CHECK(t.domains[l1].nodes == std::vector<NodeId>{0, 1});
  CHECK(t.domains[s1].nodes == std::vector<NodeId>{0, 1, 2});
  CHECK(t.domains[l1].parent == s1);
  CHECK(t.leaf_of[4] == kNoId);
  CHECK(t.Enclosing({0, 2}) == s1);
}

}  // namespace
}  // namespace lahar
