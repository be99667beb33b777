#include "scheduler/sim/simulator.h"

#include <catch2/catch.hpp>

#include "scheduler/builtins.h"
#include "test/testing/cluster_builder.h"

namespace lahar {
namespace {

TEST_CASE("the same input gives byte-identical events") {
  auto input = LoadSimInput(R"(
nodes:
- namePrefix: n-
  count: 2
  allocatable: {cpu: "8", memory: 32Gi}
jobs:
- name: a
  minAvailable: 2
  duration: 10m
  tasks: [{name: w, replicas: 2, resources: {cpu: "4"}}]
- name: b
  submit: 1m
  duration: 5m
  tasks: [{name: w, replicas: 1, resources: {cpu: "8"}}]
)", "t.yaml");
  REQUIRE(input.ok());
  SchedulerConfig config = testing::MustParseConfig(DefaultSchedulerConfigYaml());
  auto first = RunSimulation(*input, config, BuiltinRegistry(), {});
  auto second = RunSimulation(*input, config, BuiltinRegistry(), {});
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first->events_jsonl == second->events_jsonl);
  CHECK(first->figures.jobs == 2);
}

}  // namespace
}  // namespace lahar
