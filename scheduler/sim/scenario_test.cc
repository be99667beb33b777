#include "scheduler/sim/scenario.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "api/encode.h"

namespace lahar {
namespace {

// The input's job i, made as the simulation makes it when the job is submitted.
SimJob JobAt(const SimInput& input, size_t i) {
  absl::StatusOr<SimJob> job = input.MakeJob(i);
  INFO(job.status().ToString());
  REQUIRE(job.ok());
  return *std::move(job);
}

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
  const SimJob job = JobAt(*input, 0);
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

TEST_CASE("scenario queues carry the tree, priority and state; jobs carry preemptable") {
  auto input = LoadSimInput(R"(
nodes: [{name: n, allocatable: {cpu: "8"}}]
queues:
- {name: dept, priority: 3}
- {name: team, parent: dept, state: Closing}
jobs:
- {name: kept, queue: team, preemptable: false, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: "1"}}]}
)",
                            "tree.yaml");
  INFO(input.status().ToString());
  REQUIRE(input.ok());
  REQUIRE(input->queues.size() == 2);
  CHECK(input->queues[0].priority == 3);
  CHECK(input->queues[1].parent == "dept");
  CHECK_FALSE(input->queues[1].open);  // Closing admits nothing new
  CHECK(JobAt(*input, 0).group.meta.annotations.at(kPreemptableAnnotation) == "false");
}

TEST_CASE("a queue cycle or a missing parent in a scenario is an error naming the queue") {
  auto cycle = LoadSimInput("queues:\n- {name: a, parent: b}\n- {name: b, parent: a}\n", "cycle.yaml");
  REQUIRE_FALSE(cycle.ok());
  CHECK(std::string(cycle.status().message()).find("parent cycle") != std::string::npos);
  auto orphan = LoadSimInput("queues:\n- {name: a, parent: nowhere}\n", "orphan.yaml");
  REQUIRE_FALSE(orphan.ok());
  CHECK(std::string(orphan.status().message()).find("parent queue nowhere does not exist") != std::string::npos);
  auto state = LoadSimInput("queues:\n- {name: a, state: Paused}\n", "state.yaml");
  REQUIRE_FALSE(state.ok());
  CHECK(std::string(state.status().message()).find("unknown queue state") != std::string::npos);
}

TEST_CASE("a snapshot written by EncodeObjectList loads as a snapshot") {
  std::vector<Node> nodes(2);
  for (int i = 0; i < 2; ++i) {
    nodes[i].meta.name = "gpu-" + std::to_string(i);
    nodes[i].meta.labels[kHostnameLabel] = nodes[i].meta.name;
    nodes[i].allocatable.Set(kCpu, 31'500);
    nodes[i].allocatable.Set(kMemory, int64_t{256} << 30);
    nodes[i].allocatable.Set(kNvidiaGpu, 8);
    nodes[i].capacity = nodes[i].allocatable;
  }
  PodGroup group;
  group.meta.name = "train";
  group.meta.namespace_ = "ml";
  group.min_member = 2;
  group.min_task_member = {{"worker", 2}};
  group.phase = PodGroupPhase::kRunning;
  std::vector<Pod> pods(3);
  for (int i = 0; i < 3; ++i) {
    Pod& pod = pods[i];
    pod.meta.name = "train-worker-" + std::to_string(i);
    pod.meta.namespace_ = "ml";
    pod.meta.annotations[kGroupNameAnnotation] = "train";
    pod.meta.annotations[kTaskSpecKey] = "worker";
    pod.scheduler_name = "lahar";
    pod.requests.Set(kCpu, 1500);
    pod.requests.Set(kNvidiaGpu, 1);
    pod.limits = pod.requests;
  }
  pods[0].node_name = "gpu-1";
  pods[0].phase = PodPhase::kRunning;
  pods[2].scheduling_gates = {"example.com/quota"};
  std::string text = EncodeObjectList({&nodes[0], &nodes[1]}, {&pods[0], &pods[1], &pods[2]},
                                      {&group}, {}, {});

  char path[] = "/tmp/lahar-encoded-snapshot-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  {
    std::ofstream out(path, std::ios::binary);
    out << text;
    REQUIRE(out.good());
  }
  auto input = LoadSimInputFile(path);
  std::remove(path);
  INFO(input.status().ToString());
  REQUIRE(input.ok());
  CHECK(input->from_snapshot);
  REQUIRE(input->nodes.size() == 2);
  CHECK(input->nodes[1].meta.name == "gpu-1");
  CHECK(input->nodes[1].allocatable.Get(kCpu) == 31'500);
  CHECK(input->foreign_pods.empty());
  REQUIRE(input->jobs.size() == 1);
  const SimJob job = JobAt(*input, 0);
  CHECK(job.group.meta.name == "train");
  CHECK(job.group.min_member == 2);
  REQUIRE(job.pods.size() == 3);
  CHECK(job.pods[2].requests.Get(kNvidiaGpu) == 1);
  CHECK(job.pod_tasks == std::vector<std::string>{"worker", "worker", "worker"});
  CHECK(job.initially_bound == std::vector<std::string>{"train-worker-0"});
  // Gates are read and stay (a snapshot has no events to remove them).
  CHECK(job.pods[2].scheduling_gates == std::vector<std::string>{"example.com/quota"});
  CHECK(job.pods[1].scheduling_gates.empty());
}

constexpr char kGated[] = R"(
nodes: [{name: n, allocatable: {cpu: "8"}}]
jobs:
- name: g
  namespace: ml
  duration: 1h
  tasks:
  - {name: m, replicas: 1, resources: {cpu: "1"}, schedulingGates: [example.com/quota]}
  - {name: w, replicas: 2, resources: {cpu: "1"}, schedulingGates: [example.com/quota, example.com/data]}
  - {name: free, replicas: 1, resources: {cpu: "1"}}
events:
)";

TEST_CASE("a scenario task's schedulingGates go on each of its pods; ungate events name the job and gate") {
  auto input = LoadSimInput(std::string(kGated) + R"(- at: 5m
  ungate: {job: g, namespace: ml, gate: example.com/data}
- at: 10m
  ungate: {job: ml/g}
)",
                            "gates.yaml");
  INFO(input.status().ToString());
  REQUIRE(input.ok());
  const SimJob job = JobAt(*input, 0);
  const std::vector<Pod>& pods = job.pods;
  REQUIRE(pods.size() == 4);
  CHECK(pods[0].scheduling_gates == std::vector<std::string>{"example.com/quota"});
  CHECK(pods[2].scheduling_gates == std::vector<std::string>{"example.com/quota", "example.com/data"});
  CHECK(pods[3].scheduling_gates.empty());
  REQUIRE(input->events.size() == 2);
  CHECK(input->events[0].kind == SimEvent::Kind::kUngate);
  CHECK(input->events[0].target == "ml/g");
  CHECK(input->events[0].gate == "example.com/data");
  CHECK(input->events[0].at == 300'000);
  CHECK(input->events[1].target == "ml/g");
  CHECK(input->events[1].gate.empty());  // every gate
}

TEST_CASE("bad gates and ungate events are errors naming the line") {
  struct Case {
    std::string text;
    const char* want;
  };
  const Case kCases[] = {
      {std::string(kGated) + "- at: 5m\n  ungate: {job: nope, namespace: ml}\n", "line 12: events[0]: ungate of unknown job \"ml/nope\""},
      {std::string(kGated) + "- at: 5m\n  ungate: {job: g}\n", "ungate of unknown job \"g\""},  // default namespace
      {std::string(kGated) + "- at: 5m\n  ungate: {job: ml/g, gate: example.com/other}\n",
       "line 13: events[0].ungate.gate: job ml/g has no scheduling gate \"example.com/other\" (its gates: "
       "example.com/data, example.com/quota)"},
      {std::string(kGated) + "- at: 5m\n  ungate: {job: ml/g, namespace: ml}\n", "events[0].ungate.namespace"},
      {std::string(kGated) + "- at: 5m\n  ungate: {gate: x}\n", "ungate needs a job"},
      {std::string(kGated) + "- at: 5m\n  ungate: {job: ml/g, gates: x}\n", "unknown key \"gates\""},
      {"nodes: [{name: n, allocatable: {cpu: \"8\"}}]\njobs:\n- {name: j, tasks: [{name: w}]}\nevents:\n"
       "- at: 1m\n  ungate: {job: j}\n",
       "line 5: events[0]: ungate of job default/j, whose pods have no scheduling gates"},
      {"nodes: [{name: n, allocatable: {cpu: \"8\"}}]\njobs:\n- {name: j, tasks: [{name: w, schedulingGates: [a, a]}]}\n",
       "jobs[0].tasks[0].schedulingGates[1]: duplicate scheduling gate \"a\""},
      {"nodes: [{name: n, allocatable: {cpu: \"8\"}}]\njobs:\n- {name: j, tasks: [{name: w, schedulingGates: [\"\"]}]}\n",
       "jobs[0].tasks[0].schedulingGates[0]: expected a gate name"},
      {"nodes: [{name: n, allocatable: {cpu: \"8\"}}]\njobs:\n- {name: j, tasks: [{name: w, schedulingGates: a}]}\n",
       "jobs[0].tasks[0].schedulingGates: expected a list"},
  };
  for (const Case& c : kCases) {
    INFO(c.text);
    auto input = LoadSimInput(c.text, "bad.yaml");
    REQUIRE_FALSE(input.ok());
    CHECK_THAT(std::string(input.status().message()), Catch::Contains(c.want));
  }
}

}  // namespace
}  // namespace lahar

namespace lahar {
namespace {

TEST_CASE("a scenario's jobs are listed by submit time and made again, whole, after the file's text is gone") {
  absl::StatusOr<SimInput> input;
  {
    std::string text = R"({"nodes": [{"name": "n", "allocatable": {"cpu": "8"}}],
      "queues": [{"name": "q", "weight": 1}],
      "jobs": [{"name": "late", "queue": "q", "submit": "10m", "minAvailable": 1,
                "tasks": [{"name": "w", "replicas": 2, "resources": {"cpu": "2"}}]},
               {"name": "early", "namespace": "team", "submit": "1m", "scaling": {"throughput": {"1": 10}},
                "tasks": [{"name": "w", "replicas": 1}]}]})";
    input = LoadSimInput(text, "lazy.json");
    text.assign(text.size(), 'x');  // the jobs are read from the parsed document, not the text
  }
  INFO(input.status().ToString());
  REQUIRE(input.ok());
  REQUIRE(input->jobs.size() == 2);
  CHECK(input->jobs[0].key == "team/early");
  CHECK(input->jobs[0].submit == 60'000);
  CHECK(input->jobs[0].measured);
  CHECK(input->jobs[1].key == "default/late");
  CHECK(input->jobs[1].queue == "q");
  CHECK(input->jobs[1].min == 1);
  CHECK_FALSE(input->jobs[1].measured);
  const SimJob late = JobAt(*input, 1);
  CHECK(late.group.meta.name == "late");
  CHECK(late.group.min_member == 1);
  REQUIRE(late.pods.size() == 2);
  CHECK(late.pods[1].meta.name == "late-w-1");
  CHECK(late.pods[1].requests.Get(kCpu) == 2000);
  // Made as often as asked, the same job.
  CHECK(JobAt(*input, 1).pods[1].meta.name == "late-w-1");
}

TEST_CASE("a snapshot printed as JSON (kubectl -o json, a List) is read as a snapshot, not as a JSON scenario") {
  auto input = LoadSimInput(R"({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
     "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}]}}]})", "snap.json");
  INFO(input.status().ToString());
  REQUIRE(input.ok());
  REQUIRE(input->nodes.size() == 1);
  CHECK(input->nodes[0].meta.name == "n1");
  CHECK(input->jobs.empty());
}

}  // namespace
}  // namespace lahar

namespace lahar {
namespace {

constexpr char kThroughputJob[] =
    "nodes: [{name: n, allocatable: {cpu: \"8\", nvidia.com/gpu: \"8\"}}]\n"
    "jobs:\n"
    "- name: j\n"
    "  minAvailable: 2\n"
    "  duration: 1h\n"
    "  scaling: ";

TEST_CASE("throughput scaling: interpolated between points, flat past the last, reported from the start") {
  auto input = LoadSimInput(std::string(kThroughputJob) + "{throughput: {4: 30, 1: 10, 2: 18}}\n"
                            "  tasks: [{name: w, replicas: 8, resources: {nvidia.com/gpu: 1}}]\n", "t.yaml");
  INFO(input.status().ToString());
  REQUIRE(input.ok());
  const Scaling scaling = JobAt(*input, 0).scaling;
  CHECK(scaling.kind == Scaling::Kind::kThroughput);
  CHECK(scaling.Throughput(1) == 10);
  CHECK(scaling.Throughput(3) == 24);  // halfway from 18 to 30
  CHECK(scaling.Throughput(8) == 30);  // flat past the last
  CHECK(scaling.Rate(4, 2) == Approx(30.0 / 18));
  // A job that will report says so at submit: the annotation, empty.
  CHECK(JobAt(*input, 0).group.meta.annotations.at(kThroughputAnnotation).empty());

  auto below = LoadSimInput(std::string(kThroughputJob) + "{throughput: {2: 10}}\n"
                            "  tasks: [{name: w, replicas: 8}]\n", "t.yaml");
  REQUIRE(below.ok());
  CHECK(JobAt(*below, 0).scaling.Throughput(1) == 5);  // from the origin to the first point
}

TEST_CASE("bad throughput scaling is an error naming the line") {
  struct Case {
    std::string scaling;
    const char* want;
  };
  const Case kCases[] = {
      {"{throughput: {0: 10}}", "line 6: jobs[0].scaling.throughput.0: \"0\" is not a pod count"},
      {"{throughput: {1: fast}}", "\"fast\" is not a throughput"},
      {"{throughput: {1: -1}}", "\"-1\" is not a throughput"},
      {"{throughput: {}}", "want at least one <pods>: <rate>"},
      {"{throughput: {1: 10}, amdahl: 0.1}", "want one of {amdahl"},
      {"{throughput: {4: 10}, other: 1}", "unknown key \"other\""},
  };
  for (const Case& c : kCases) {
    INFO(c.scaling);
    auto input = LoadSimInput(std::string(kThroughputJob) + c.scaling + "\n  tasks: [{name: w, replicas: 8}]\n", "bad.yaml");
    REQUIRE_FALSE(input.ok());
    CHECK_THAT(std::string(input.status().message()), Catch::Contains(c.want));
  }
  auto zero = LoadSimInput(
      "nodes: [{name: n, allocatable: {cpu: \"8\"}}]\njobs:\n- name: j\n  minAvailable: 2\n  duration: 1h\n"
      "  scaling: {throughput: {1: 10, 2: 0}}\n  tasks: [{name: w, replicas: 8}]\n", "zero.yaml");
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(std::string(zero.status().message()),
             Catch::Contains("the throughput at minAvailable (2 pods) is 0: the job would never finish"));
}

}  // namespace
}  // namespace lahar
