// Tests of the conformance plugin: critical pods are never victims (spec 3.1 rule 3).
#include "plugins/conformance/conformance.h"

#include <catch2/catch.hpp>

#include "scheduler/framework/config.h"
#include "scheduler/builtins.h"
#include "test/testing/cluster_builder.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::RunSession;

// One node full of a low-priority pod of priority class `pod_class`; a high-priority job waits.
ClusterBuilder FullOf(const std::string& pod_class) {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  b.PriorityClass("low", 10).PriorityClass("high", 1000);
  b.Job("victim", {.tasks = {{"w", 1, "cpu=4"}}, .priority_class = "low"});
  b.Running("victim-w-0", "n1");
  Pod pod = *b.cache().FindPod("default/victim-w-0");
  pod.priority_class_name = pod_class;
  b.cache().UpsertPod(pod);
  b.Job("urgent", {.tasks = {{"w", 1, "cpu=4"}}, .priority_class = "high"});
  return b;
}

TEST_CASE("conformance: pods of the critical priority classes are never victims") {
  for (const char* critical : {"system-cluster-critical", "system-node-critical"}) {
    INFO(critical);
    CHECK(RunSession(FullOf(critical), DefaultSchedulerConfigYaml()).evicts.empty());
  }
  // Any other class may be preempted.
  CHECK(RunSession(FullOf("low"), DefaultSchedulerConfigYaml()).evicts.count("default/victim-w-0") == 1);
}

TEST_CASE("conformance: takes no arguments") {
  auto plugin = BuiltinRegistry().NewPlugin("conformance", Arguments("plugin conformance", {{"x", "1"}}));
  REQUIRE_FALSE(plugin.ok());
  CHECK(plugin.status().message() == "plugin conformance: unknown argument \"x\" (it takes no arguments)");
}

}  // namespace
}  // namespace lahar
