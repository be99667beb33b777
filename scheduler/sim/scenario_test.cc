#include "scheduler/sim/scenario.h"

#include <catch2/catch.hpp>

namespace lahar {
namespace {

TEST_CASE("a scenario's job becomes a PodGroup and one pod per replica") {
  auto input = LoadSimInput(R"(
name: t
nodes:
- namePrefix: gpu-
  count: 2
  allocatable: {cpu: "32", memory: 256Gi, nvidia.com/gpu: 8}
jobs:
- name: bert
  minAvailable: 2
  duration: 1h
  tasks:
  - name: master
    replicas: 1
    priority: 10
    resources: {cpu: "4"}
  - name: worker
    replicas: 3
    resources: {cpu: "8", nvidia.com/gpu: 1}
)", "t.yaml");
  REQUIRE(input.ok());
  REQUIRE(input->nodes.size() == 2);
  CHECK(input->nodes[1].meta.name == "gpu-1");
  REQUIRE(input->jobs.size() == 1);
  const SimJob& job = input->jobs[0];
  CHECK(job.pods.size() == 4);
  CHECK(job.pods[0].meta.name == "bert-master-0");
  CHECK(job.pods[3].meta.name == "bert-worker-2");
  // minResources = first 2 pods in task order: master (4 cpu) + worker (8 cpu, 1 gpu)
  CHECK(job.group.min_resources.Get(kCpu) == 12000);
  CHECK(job.group.min_resources.Get(kNvidiaGpu) == 1);
  CHECK(*job.duration == 3'600'000);
}

TEST_CASE("scenario errors name the line and the field") {
  auto input = LoadSimInput("nodes:\n- name: a\n  allocatable: {cpu: abc}\n", "bad.yaml");
  REQUIRE_FALSE(input.ok());
  std::string message(input.status().message());
  CHECK(message.find("bad.yaml") != std::string::npos);
  CHECK(message.find("line 3") != std::string::npos);
  CHECK(message.find("nodes[0].allocatable.cpu") != std::string::npos);
}

}  // namespace
}  // namespace lahar
