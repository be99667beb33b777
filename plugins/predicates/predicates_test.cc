#include "plugins/predicates/predicates.h"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string_view>

#include "api/strings.h"
#include "scheduler/builtins.h"
#include "scheduler/framework/session.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/session_fixture.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::TaskSpec;

constexpr std::string_view kConfig = R"(
actions: "allocate"
tiers:
- plugins:
  - name: predicates
)";

// A session on the builder's snapshot, with this file's configuration unless given another.
struct TestSession : testing::SessionFixture {
  explicit TestSession(const ClusterBuilder& b, std::string_view yaml = kConfig) : SessionFixture(b, yaml) {}
};

NodeSelectorRequirement Req(std::string key, std::string op, std::vector<std::string> values = {}) {
  return {std::move(key), std::move(op), std::move(values)};
}

// Gives pod `key` a required node affinity (the builder has no field for it).
void SetAffinity(ClusterBuilder& b, const std::string& key, std::vector<NodeSelectorTerm> terms) {
  Pod pod = *b.cache().FindPod(key);
  pod.required_node_affinity = std::move(terms);
  b.cache().UpsertPod(std::move(pod));
}

TEST_CASE("node selector requirements follow Kubernetes' operators") {
  const StringMap labels = {{"zone", "a"}, {"gpus", "8"}, {"name", "x"}};
  CHECK(MatchesRequirement(Req("zone", "In", {"a", "b"}), labels));
  CHECK_FALSE(MatchesRequirement(Req("zone", "In", {"b"}), labels));
  CHECK_FALSE(MatchesRequirement(Req("rack", "In", {"a"}), labels));  // missing label: no
  CHECK(MatchesRequirement(Req("zone", "NotIn", {"b"}), labels));
  CHECK_FALSE(MatchesRequirement(Req("zone", "NotIn", {"a"}), labels));
  CHECK(MatchesRequirement(Req("rack", "NotIn", {"a"}), labels));  // missing label: yes
  CHECK(MatchesRequirement(Req("zone", "Exists"), labels));
  CHECK_FALSE(MatchesRequirement(Req("rack", "Exists"), labels));
  CHECK(MatchesRequirement(Req("rack", "DoesNotExist"), labels));
  CHECK_FALSE(MatchesRequirement(Req("zone", "DoesNotExist"), labels));
  CHECK(MatchesRequirement(Req("gpus", "Gt", {"4"}), labels));   // 8 > 4
  CHECK_FALSE(MatchesRequirement(Req("gpus", "Gt", {"8"}), labels));
  CHECK(MatchesRequirement(Req("gpus", "Lt", {"16"}), labels));  // 8 < 16
  CHECK_FALSE(MatchesRequirement(Req("name", "Gt", {"1"}), labels));       // "x" is not an integer
  CHECK_FALSE(MatchesRequirement(Req("gpus", "Gt", {"1", "2"}), labels));  // needs exactly one value
  CHECK_FALSE(MatchesRequirement(Req("zone", "Equals", {"a"}), labels));   // unknown operator
}

TEST_CASE("required node affinity ORs its terms and ANDs each term's requirements") {
  Node node;
  node.meta.name = "n7";
  node.meta.labels = {{"zone", "a"}, {"tier", "gold"}};
  NodeSelectorTerm zone_a_silver{{Req("zone", "In", {"a"}), Req("tier", "In", {"silver"})}, {}};
  NodeSelectorTerm zone_a_gold{{Req("zone", "In", {"a"}), Req("tier", "In", {"gold"})}, {}};
  NodeSelectorTerm by_name{{}, {Req("metadata.name", "In", {"n7"})}};
  NodeSelectorTerm other_field{{}, {Req("metadata.uid", "In", {"n7"})}};
  CHECK(MatchesNodeAffinity({}, node));  // no affinity: every node
  CHECK_FALSE(MatchesNodeAffinity({zone_a_silver}, node));
  CHECK(MatchesNodeAffinity({zone_a_silver, zone_a_gold}, node));
  CHECK(MatchesNodeAffinity({by_name}, node));
  CHECK_FALSE(MatchesNodeAffinity({other_field}, node));        // only metadata.name is a field
  CHECK_FALSE(MatchesNodeAffinity({NodeSelectorTerm{}}, node));  // an empty term matches nothing
}

TEST_CASE("tolerations match taints as Kubernetes matches them") {
  const Taint taint{"dedicated", "infra", "NoSchedule"};
  CHECK(Tolerates({"", "Exists", "", ""}, taint));                   // empty key + Exists: everything
  CHECK(Tolerates({"dedicated", "Exists", "", ""}, taint));          // Exists ignores the value
  CHECK(Tolerates({"dedicated", "Equal", "infra", ""}, taint));      // empty effect: every effect
  CHECK_FALSE(Tolerates({"dedicated", "Equal", "batch", ""}, taint));
  CHECK_FALSE(Tolerates({"dedicated", "Equal", "infra", "NoExecute"}, taint));
  CHECK_FALSE(Tolerates({"other", "Exists", "", ""}, taint));
  CHECK(Tolerates({"dedicated", "", "infra", "NoSchedule"}, taint));  // empty operator means Equal
}

TEST_CASE("cordoned and not-ready nodes take no pods") {
  ClusterBuilder b;
  b.Node("cordoned", "cpu=8,memory=16Gi").Node("down", "cpu=8,memory=16Gi").Node("up", "cpu=8,memory=16Gi");
  b.Cordon("cordoned");
  Node down = *b.cache().FindNode("down");
  down.ready = false;
  b.cache().UpsertNode(down);
  b.Job("job", {.tasks = {{"worker", 1, "cpu=1"}}});
  TestSession s(b);
  CHECK(s.Fit("default/job-worker-0", "cordoned").code == FitCode::kNodeUnschedulable);
  CHECK(s.Fit("default/job-worker-0", "down").code == FitCode::kNodeNotReady);
  CHECK(s.Fit("default/job-worker-0", "up").ok());
}

TEST_CASE("a pod goes only to nodes carrying every label of its nodeSelector") {
  ClusterBuilder b;
  b.Node("a100", "cpu=8,memory=16Gi", {{"gpu", "a100"}, {"zone", "x"}});
  b.Node("v100", "cpu=8,memory=16Gi", {{"gpu", "v100"}, {"zone", "x"}});
  b.Job("job", {.tasks = {{"worker", 1, "cpu=1", 0, "", {{"gpu", "a100"}, {"zone", "x"}}}}});
  TestSession s(b);
  CHECK(s.Fit("default/job-worker-0", "a100").ok());
  CHECK(s.Fit("default/job-worker-0", "v100").code == FitCode::kNodeSelectorMismatch);
}

TEST_CASE("a pod goes only to nodes its required node affinity allows") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi", {{"zone", "a"}}).Node("n2", "cpu=8,memory=16Gi", {{"zone", "b"}});
  b.Job("job", {.tasks = {{"worker", 2, "cpu=1"}}});
  SetAffinity(b, "default/job-worker-0", {{{Req("zone", "NotIn", {"a"})}, {}}});
  SetAffinity(b, "default/job-worker-1", {{{}, {Req("metadata.name", "In", {"n1"})}}});
  TestSession s(b);
  CHECK(s.Fit("default/job-worker-0", "n1").code == FitCode::kNodeAffinityMismatch);
  CHECK(s.Fit("default/job-worker-0", "n2").ok());
  // worker-1 has another constraint class: the cached answers of worker-0 are not reused for it.
  CHECK(s.Fit("default/job-worker-1", "n1").ok());
  CHECK(s.Fit("default/job-worker-1", "n2").code == FitCode::kNodeAffinityMismatch);
}

TEST_CASE("NoSchedule and NoExecute taints keep out pods that do not tolerate them") {
  ClusterBuilder b;
  b.Node("infra", "cpu=8,memory=16Gi", {}, {{"dedicated", "infra", "NoSchedule"}});
  b.Node("draining", "cpu=8,memory=16Gi", {}, {{"drain", "", "NoExecute"}});
  b.Node("soft", "cpu=8,memory=16Gi", {}, {{"spot", "true", "PreferNoSchedule"}});
  b.Job("plain", {.tasks = {{"worker", 1, "cpu=1"}}});
  b.Job("infra-agent", {.tasks = {{"agent", 1, "cpu=1", 0, "", {}, {{"dedicated", "Equal", "infra", "NoSchedule"}}}}});
  TestSession s(b);
  FitResult infra = s.Fit("default/plain-worker-0", "infra");
  CHECK(infra.code == FitCode::kUntoleratedTaint);
  CHECK(infra.detail == "dedicated=infra");
  FitResult draining = s.Fit("default/plain-worker-0", "draining");
  CHECK(draining.code == FitCode::kUntoleratedTaint);
  CHECK(draining.detail == "drain");
  CHECK(infra.detail == "dedicated=infra");  // a detail stays valid for the session after others are made
  CHECK(s.Fit("default/plain-worker-0", "soft").ok());  // PreferNoSchedule only prefers
  CHECK(s.Fit("default/infra-agent-agent-0", "infra").ok());
  CHECK(s.Fit("default/infra-agent-agent-0", "draining").code == FitCode::kUntoleratedTaint);
}

TEST_CASE("Volcano's predicate.NodeAffinityEnable and predicate.TaintTolerationEnable switch exactly those checks off") {
  ClusterBuilder b;
  b.Node("infra", "cpu=8,memory=16Gi", {{"gpu", "v100"}}, {{"dedicated", "infra", "NoSchedule"}});
  b.Job("job", {.tasks = {{"worker", 1, "cpu=1", 0, "", {{"gpu", "a100"}}}}});
  auto config = [](std::string_view arguments) {
    return StrCat("actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n    arguments:\n", arguments);
  };
  TestSession no_affinity(b, config("      predicate.NodeAffinityEnable: false\n"));
  CHECK(no_affinity.Fit("default/job-worker-0", "infra").code == FitCode::kUntoleratedTaint);
  TestSession no_taints(b, config("      predicate.TaintTolerationEnable: false\n"));
  CHECK(no_taints.Fit("default/job-worker-0", "infra").code == FitCode::kNodeSelectorMismatch);
  TestSession neither(b, config("      predicate.NodeAffinityEnable: false\n      predicate.TaintTolerationEnable: false\n"));
  CHECK(neither.Fit("default/job-worker-0", "infra").ok());
}

TEST_CASE("FindBestNode never places a pod where it does not fit, and says why") {
  ClusterBuilder b;
  b.Node("a-small", "cpu=1,memory=16Gi", {{"pool", "train"}});
  b.Node("b-tainted", "cpu=8,memory=16Gi", {{"pool", "train"}}, {{"dedicated", "infra", "NoSchedule"}});
  b.Node("c-wrong-pool", "cpu=8,memory=16Gi", {{"pool", "serve"}});
  b.Node("d-cordoned", "cpu=8,memory=16Gi", {{"pool", "train"}});
  b.Node("e-full", "cpu=8,memory=16Gi", {{"pool", "train"}});
  b.Node("f-fits", "cpu=8,memory=16Gi", {{"pool", "train"}});
  b.Cordon("d-cordoned");
  b.ForeignPod("hog", "e-full", "cpu=7");
  b.Job("job", {.tasks = {{"worker", 1, "cpu=2", 0, "", {{"pool", "train"}}}}});
  b.Job("huge", {.tasks = {{"worker", 1, "cpu=9"}}});
  TestSession s(b);
  CHECK(s.BestNode("default/job-worker-0") == "f-fits");
  CHECK(s.BestNode("default/huge-worker-0") == "none");

  FitErrors errors;
  CHECK(s->FindBestNode(s.task("default/job-worker-0"), Placement::kIdle, false, &errors) ==
        s.node("f-fits").id);
  using Counts = std::vector<std::pair<std::string, int32_t>>;
  CHECK(errors.Counts() == Counts{{"too little cpu", 2},
                                  {"labels that do not match the node selector", 1},
                                  {"taint dedicated=infra", 1},
                                  {"unschedulable (cordoned)", 1}});
}

TEST_CASE("a pod with scheduling gates fits no node, and an explanation says so before any shortage") {
  ClusterBuilder b;
  b.Node("a-cordoned", "cpu=8,memory=16Gi").Node("b-full", "cpu=8,memory=16Gi").Node("c-free", "cpu=8,memory=16Gi");
  b.Cordon("a-cordoned");
  b.ForeignPod("hog", "b-full", "cpu=8");
  TaskSpec gated{"worker", 1, "cpu=2"};
  gated.scheduling_gates = {"example.com/quota"};
  b.Job("gated", {.tasks = {gated}});
  b.Job("plain", {.tasks = {{"worker", 1, "cpu=2"}}});
  TestSession s(b);
  CHECK(s.Fit("default/gated-worker-0", "c-free").code == FitCode::kSchedulingGated);
  CHECK(s.Fit("default/gated-worker-0", "a-cordoned").code == FitCode::kSchedulingGated);  // gates first
  // Same selector, tolerations and requests, no gates: another constraint class, so the cached
  // verdicts of the gated pod are not reused for it.
  CHECK(s.task("default/gated-worker-0").constraint_class != s.task("default/plain-worker-0").constraint_class);
  CHECK(s.Fit("default/plain-worker-0", "c-free").ok());
  CHECK(s.BestNode("default/gated-worker-0") == "none");
  CHECK(s.BestNode("default/plain-worker-0") == "c-free");

  // b-full is also too full for it; the gates are still what the explanation records there.
  FitErrors errors;
  CHECK(s->FindBestNode(s.task("default/gated-worker-0"), Placement::kIdle, false, &errors) == kNoId);
  CHECK(errors.gated());

  FitErrors plain;
  s->FindBestNode(s.task("default/plain-worker-0"), Placement::kIdle, false, &plain);
  CHECK_FALSE(plain.gated());
}

TEST_CASE("end to end: pods land only on nodes whose labels and taints they accept") {
  ClusterBuilder b;
  b.Node("a-infra", "cpu=8,memory=16Gi", {}, {{"dedicated", "infra", "NoSchedule"}});
  b.Node("b-gpu", "cpu=8,memory=16Gi", {{"accelerator", "a100"}});
  b.Node("c-plain", "cpu=8,memory=16Gi");
  b.Job("agent", {.tasks = {{"agent", 1, "cpu=1", 0, "", {}, {{"dedicated", "Equal", "infra", "NoSchedule"}}}}});
  b.Job("trainer", {.tasks = {{"worker", 1, "cpu=1", 0, "", {{"accelerator", "a100"}}}}});
  b.Job("web", {.tasks = {{"server", 1, "cpu=1"}}});
  b.Job("lost", {.tasks = {{"worker", 1, "cpu=1", 0, "", {{"accelerator", "h100"}}}}});
  testing::SessionOutcome out = testing::RunSession(b, R"(
actions: "allocate"
tiers:
- plugins:
  - name: gang
- plugins:
  - name: predicates
)");
  // Without a scoring plugin, ties go to the lower name: the agent may use a-infra, the web
  // server may not and takes b-gpu.
  CHECK(out.binds == std::map<std::string, std::string>{{"default/agent-agent-0", "a-infra"},
                                                        {"default/trainer-worker-0", "b-gpu"},
                                                        {"default/web-server-0", "b-gpu"}});
  CHECK(out.job_updates.at("default/lost").message() ==
        "1/1 pods unschedulable: 3 nodes have labels that do not match the node selector");
}

}  // namespace
}  // namespace lahar
