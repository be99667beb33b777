#include "api/decode.h"

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/status/status.h"

namespace lahar {
namespace {

constexpr int64_t kMi = int64_t{1} << 20;
constexpr int64_t kGi = int64_t{1} << 30;

// Trimmed output of `kubectl get nodes,pods,podgroups,queues,priorityclasses -A -o yaml`, with
// the noise kubectl prints (managedFields, status fields Lahar ignores) partly kept on purpose.
constexpr char kKubectlList[] = R"(apiVersion: v1
items:
- apiVersion: v1
  kind: Node
  metadata:
    annotations:
      node.alpha.kubernetes.io/ttl: "0"
    creationTimestamp: "2024-01-02T03:04:05Z"
    labels:
      kubernetes.io/arch: amd64
      kubernetes.io/hostname: gpu-node-1
      node.kubernetes.io/instance-type: p4d.24xlarge
      nvidia.com/gpu.count: "8"
    name: gpu-node-1
    resourceVersion: "123456"
    uid: 6f1c2a8e-0000-4000-8000-000000000001
  spec:
    podCIDR: 10.244.1.0/24
    taints:
    - effect: NoSchedule
      key: nvidia.com/gpu
      value: present
    - effect: PreferNoSchedule
      key: spot
  status:
    allocatable:
      cpu: 95500m
      ephemeral-storage: "1797549023603"
      hugepages-1Gi: "0"
      memory: 1114953992Ki
      nvidia.com/gpu: "8"
      pods: "110"
    capacity:
      cpu: "96"
      ephemeral-storage: 1950368312Ki
      memory: 1176784696Ki
      nvidia.com/gpu: "8"
      pods: "110"
    conditions:
    - lastHeartbeatTime: "2024-01-02T03:04:05Z"
      message: kubelet is posting ready status
      reason: KubeletReady
      status: "True"
      type: Ready
    nodeInfo:
      kubeletVersion: v1.28.3
- apiVersion: v1
  kind: Node
  metadata:
    name: cpu-node-2
  spec:
    unschedulable: true
  status:
    capacity:
      cpu: "16"
      memory: 64Gi
      pods: "110"
    conditions:
    - status: "False"
      type: Ready
- apiVersion: v1
  kind: Pod
  metadata:
    annotations:
      scheduling.k8s.io/group-name: llama-ft
      volcano.sh/task-spec: worker
    creationTimestamp: "2024-01-02T03:05:00Z"
    labels:
      app: llama-ft
      volcano.sh/task-index: "0"
    name: llama-ft-worker-0
    namespace: research
    ownerReferences:
    - apiVersion: batch.volcano.sh/v1alpha1
      controller: true
      kind: Job
      name: llama-ft
      uid: 0000
    uid: pod-uid-0
  spec:
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - key: node.kubernetes.io/instance-type
              operator: In
              values:
              - p4d.24xlarge
              - p5.48xlarge
            - key: spot
              operator: DoesNotExist
          - matchFields:
            - key: metadata.name
              operator: In
              values: [gpu-node-1]
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 1
          preference:
            matchExpressions:
            - {key: zone, operator: In, values: [a]}
    containers:
    - image: llama:latest
      name: trainer
      resources:
        limits:
          nvidia.com/gpu: "4"
          memory: 200Gi
        requests:
          cpu: "12"
          memory: 160Gi
          nvidia.com/gpu: "4"
    - image: sidecar:latest
      name: log-shipper
      resources:
        requests:
          cpu: 500m
          memory: 256Mi
    initContainers:
    - image: fetch:latest
      name: fetch-weights
      resources:
        requests:
          cpu: "16"
          memory: 8Gi
    nodeSelector:
      kubernetes.io/arch: amd64
      gpu: "true"
    overhead:
      cpu: 250m
    priority: 1000
    priorityClassName: training-high
    schedulerName: lahar
    terminationGracePeriodSeconds: 60
    tolerations:
    - effect: NoSchedule
      key: nvidia.com/gpu
      operator: Exists
    - key: spot
      operator: Equal
      value: "true"
    - operator: Exists
  status:
    phase: Pending
    qosClass: Burstable
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-0
    namespace: default
    deletionTimestamp: "2024-01-02T03:06:00Z"
  spec:
    containers:
    - name: nginx
      resources:
        limits:
          cpu: "2"
          memory: 1Gi
    nodeName: cpu-node-2
  status:
    phase: Running
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: PodGroup
  metadata:
    name: llama-ft
    namespace: research
  spec:
    minMember: 4
    minResources:
      cpu: "48"
      memory: 640Gi
      nvidia.com/gpu: "16"
    minTaskMember:
      master: 1
      worker: 3
    priorityClassName: training-high
    queue: research
  status:
    phase: Inqueue
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: Queue
  metadata:
    name: research
  spec:
    capability:
      cpu: "512"
      nvidia.com/gpu: "64"
    deserved:
      cpu: "256"
      nvidia.com/gpu: "32"
    guarantee:
      resource:
        cpu: "64"
        nvidia.com/gpu: "8"
    reclaimable: false
    weight: 3
  status:
    state: Open
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: Queue
  metadata:
    name: default
  spec:
    weight: 1
  status:
    state: Closed
- apiVersion: scheduling.k8s.io/v1
  description: Training jobs that may preempt batch work.
  kind: PriorityClass
  metadata:
    name: training-high
  preemptionPolicy: PreemptLowerPriority
  value: 1000000
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: ignored
  data:
    key: value
kind: List
metadata:
  resourceVersion: ""
)";

template <typename T>
std::vector<T> OfKind(const std::vector<KubeObject>& objects) {
  std::vector<T> out;
  for (const auto& object : objects) {
    if (const T* t = std::get_if<T>(&object)) out.push_back(*t);
  }
  return out;
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

// Decodes a stream that must fail and returns the error.
absl::Status StreamError(std::string_view text) {
  auto decoded = DecodeObjectStream(text);
  REQUIRE_FALSE(decoded.ok());
  return decoded.status();
}

// Decodes a stream holding exactly one object of kind T.
template <typename T>
T DecodeOne(std::string_view text) {
  auto decoded = DecodeObjectStream(text);
  INFO(decoded.status().ToString());
  REQUIRE(decoded.ok());
  REQUIRE(decoded->size() == 1);
  REQUIRE(std::holds_alternative<T>(decoded->front()));
  return std::get<T>(decoded->front());
}

TEST_CASE("a kubectl List decodes every kind the scheduler uses, in order") {
  auto decoded = DecodeObjectStream(kKubectlList);
  INFO(decoded.status().ToString());
  REQUIRE(decoded.ok());
  REQUIRE(decoded->size() == 8);  // the ConfigMap is skipped
  CHECK(std::holds_alternative<Node>((*decoded)[0]));
  CHECK(std::holds_alternative<Node>((*decoded)[1]));
  CHECK(std::holds_alternative<Pod>((*decoded)[2]));
  CHECK(std::holds_alternative<Pod>((*decoded)[3]));
  CHECK(std::holds_alternative<PodGroup>((*decoded)[4]));
  CHECK(std::holds_alternative<Queue>((*decoded)[5]));
  CHECK(std::holds_alternative<Queue>((*decoded)[6]));
  CHECK(std::holds_alternative<PriorityClass>((*decoded)[7]));
}

TEST_CASE("nodes: allocatable, capacity fallback, taints, unschedulable, readiness") {
  auto decoded = DecodeObjectStream(kKubectlList);
  REQUIRE(decoded.ok());
  auto nodes = OfKind<Node>(*decoded);
  REQUIRE(nodes.size() == 2);

  const Node& gpu = nodes[0];
  CHECK(gpu.meta.name == "gpu-node-1");
  CHECK(gpu.meta.namespace_.empty());
  CHECK(gpu.meta.uid == "6f1c2a8e-0000-4000-8000-000000000001");
  CHECK(gpu.meta.resource_version == "123456");
  CHECK(gpu.meta.creation_timestamp == 1'704'164'645);  // 2024-01-02T03:04:05Z
  CHECK_FALSE(gpu.meta.deleting);
  CHECK(gpu.meta.labels.at("nvidia.com/gpu.count") == "8");
  CHECK(gpu.meta.annotations.at("node.alpha.kubernetes.io/ttl") == "0");
  CHECK(gpu.allocatable.Get(kCpu) == 95'500);
  CHECK(gpu.allocatable.Get(kMemory) == 1'114'953'992 * int64_t{1024});
  CHECK(gpu.allocatable.Get(kNvidiaGpu) == 8);
  CHECK(gpu.allocatable.Get(kPods) == 110);
  CHECK(gpu.allocatable.Get(kEphemeralStorage) == 1'797'549'023'603);
  CHECK(gpu.allocatable.Get(InternResource("hugepages-1Gi")) == 0);
  CHECK(gpu.capacity.Get(kCpu) == 96'000);
  REQUIRE(gpu.taints.size() == 2);
  CHECK(gpu.taints[0].key == "nvidia.com/gpu");
  CHECK(gpu.taints[0].value == "present");
  CHECK(gpu.taints[0].effect == "NoSchedule");
  CHECK(gpu.taints[1].key == "spot");
  CHECK(gpu.taints[1].value.empty());
  CHECK(gpu.taints[1].effect == "PreferNoSchedule");
  CHECK_FALSE(gpu.unschedulable);
  CHECK(gpu.ready);
  CHECK(gpu.meta.labels.at(kHostnameLabel) == "gpu-node-1");

  const Node& cpu = nodes[1];
  CHECK(cpu.unschedulable);
  CHECK_FALSE(cpu.ready);
  // Without allocatable the capacity is what the node offers.
  CHECK(cpu.allocatable.Get(kCpu) == 16'000);
  CHECK(cpu.allocatable.Get(kMemory) == 64 * kGi);
  CHECK(cpu.allocatable == cpu.capacity);
  CHECK(cpu.taints.empty());
  // A hand-written node gets the hostname label a kubelet would set.
  CHECK(cpu.meta.labels.at(kHostnameLabel) == "cpu-node-2");
}

TEST_CASE("pods: effective requests, limits, placement constraints") {
  auto decoded = DecodeObjectStream(kKubectlList);
  REQUIRE(decoded.ok());
  auto pods = OfKind<Pod>(*decoded);
  REQUIRE(pods.size() == 2);

  const Pod& worker = pods[0];
  CHECK(worker.meta.name == "llama-ft-worker-0");
  CHECK(worker.meta.namespace_ == "research");
  CHECK(worker.meta.annotations.at(kGroupNameAnnotation) == "llama-ft");
  CHECK(worker.meta.annotations.at(kTaskSpecKey) == "worker");
  CHECK(worker.meta.labels.at("volcano.sh/task-index") == "0");
  CHECK(worker.scheduler_name == "lahar");
  CHECK(worker.node_name.empty());
  CHECK(worker.phase == PodPhase::kPending);
  CHECK(worker.priority_class_name == "training-high");
  REQUIRE(worker.priority.has_value());
  CHECK(*worker.priority == 1000);
  CHECK(worker.termination_grace_period_seconds == 60);

  // cpu: max(12 + 0.5 containers, 16 init) + 0.25 overhead = 16.25
  CHECK(worker.requests.Get(kCpu) == 16'250);
  // memory: max(160Gi + 256Mi containers, 8Gi init)
  CHECK(worker.requests.Get(kMemory) == 160 * kGi + 256 * kMi);
  CHECK(worker.requests.Get(kNvidiaGpu) == 4);
  // Limits: the trainer's own limits; dimensions without a limit default to the requests.
  CHECK(worker.limits.Get(kMemory) == 200 * kGi);
  CHECK(worker.limits.Get(kNvidiaGpu) == 4);
  CHECK(worker.limits.Get(kCpu) == 16'250);

  CHECK(worker.node_selector == StringMap{{"gpu", "true"}, {"kubernetes.io/arch", "amd64"}});
  REQUIRE(worker.required_node_affinity.size() == 2);
  const NodeSelectorTerm& by_type = worker.required_node_affinity[0];
  REQUIRE(by_type.match_expressions.size() == 2);
  CHECK(by_type.match_expressions[0].key == "node.kubernetes.io/instance-type");
  CHECK(by_type.match_expressions[0].operator_ == "In");
  CHECK(by_type.match_expressions[0].values ==
        std::vector<std::string>{"p4d.24xlarge", "p5.48xlarge"});
  CHECK(by_type.match_expressions[1].operator_ == "DoesNotExist");
  CHECK(by_type.match_expressions[1].values.empty());
  CHECK(by_type.match_fields.empty());
  const NodeSelectorTerm& by_name = worker.required_node_affinity[1];
  CHECK(by_name.match_expressions.empty());
  REQUIRE(by_name.match_fields.size() == 1);
  CHECK(by_name.match_fields[0].key == "metadata.name");
  CHECK(by_name.match_fields[0].values == std::vector<std::string>{"gpu-node-1"});

  REQUIRE(worker.tolerations.size() == 3);
  CHECK(worker.tolerations[0].key == "nvidia.com/gpu");
  CHECK(worker.tolerations[0].operator_ == "Exists");
  CHECK(worker.tolerations[0].effect == "NoSchedule");
  CHECK(worker.tolerations[1].key == "spot");
  CHECK(worker.tolerations[1].operator_ == "Equal");
  CHECK(worker.tolerations[1].value == "true");
  CHECK(worker.tolerations[1].effect.empty());
  CHECK(worker.tolerations[2].key.empty());  // tolerates everything
  CHECK(worker.tolerations[2].operator_ == "Exists");

  const Pod& web = pods[1];
  CHECK(web.meta.namespace_ == "default");
  CHECK(web.meta.deleting);
  CHECK(web.node_name == "cpu-node-2");
  CHECK(web.phase == PodPhase::kRunning);
  CHECK(web.scheduler_name == "default-scheduler");
  CHECK_FALSE(web.priority.has_value());
  CHECK(web.termination_grace_period_seconds == 30);
  // Requests default to the limits, as the apiserver does.
  CHECK(web.requests.Get(kCpu) == 2000);
  CHECK(web.requests.Get(kMemory) == kGi);
  CHECK(web.limits == web.requests);
}

TEST_CASE("podgroups, queues and priority classes") {
  auto decoded = DecodeObjectStream(kKubectlList);
  REQUIRE(decoded.ok());

  auto groups = OfKind<PodGroup>(*decoded);
  REQUIRE(groups.size() == 1);
  const PodGroup& pg = groups[0];
  CHECK(pg.meta.name == "llama-ft");
  CHECK(pg.meta.namespace_ == "research");
  CHECK(pg.min_member == 4);
  CHECK(pg.min_task_member == std::map<std::string, int32_t, std::less<>>{{"master", 1},
                                                                           {"worker", 3}});
  CHECK(pg.queue == "research");
  CHECK(pg.priority_class_name == "training-high");
  CHECK(pg.min_resources.Get(kCpu) == 48'000);
  CHECK(pg.min_resources.Get(kMemory) == 640 * kGi);
  CHECK(pg.min_resources.Get(kNvidiaGpu) == 16);
  CHECK(pg.phase == PodGroupPhase::kInqueue);

  auto queues = OfKind<Queue>(*decoded);
  REQUIRE(queues.size() == 2);
  const Queue& research = queues[0];
  CHECK(research.meta.name == "research");
  CHECK(research.weight == 3);
  CHECK(research.capability.Get(kCpu) == 512'000);
  CHECK(research.capability.Get(kNvidiaGpu) == 64);
  CHECK(research.capability.Get(kMemory) == 0);  // not limited
  CHECK(research.deserved.Get(kCpu) == 256'000);
  CHECK(research.deserved.Get(kNvidiaGpu) == 32);
  CHECK(research.guarantee.Get(kCpu) == 64'000);
  CHECK(research.guarantee.Get(kNvidiaGpu) == 8);
  CHECK_FALSE(research.reclaimable);
  CHECK(research.open);
  const Queue& closed = queues[1];
  CHECK(closed.weight == 1);
  CHECK(closed.capability.IsZero());
  CHECK(closed.deserved.IsZero());
  CHECK(closed.reclaimable);
  CHECK_FALSE(closed.open);

  auto classes = OfKind<PriorityClass>(*decoded);
  REQUIRE(classes.size() == 1);
  CHECK(classes[0].meta.name == "training-high");
  CHECK(classes[0].value == 1'000'000);
  CHECK_FALSE(classes[0].global_default);
}

TEST_CASE("pod disruption budgets: selector, counts and percentages, status") {
  const auto pdb = DecodeOne<PodDisruptionBudget>(R"(
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: bert, namespace: ml, generation: 3}
spec:
  maxUnavailable: "25%"
  selector:
    matchLabels: {job-name: bert}
    matchExpressions:
    - {key: role, operator: In, values: [worker]}
status: {observedGeneration: 2, disruptionsAllowed: 1, currentHealthy: 4}
)");
  CHECK(pdb.meta.namespace_ == "ml");
  CHECK(pdb.meta.generation == 3);
  REQUIRE(pdb.selector.has_value());
  CHECK(pdb.selector->match_labels.at("job-name") == "bert");
  REQUIRE(pdb.selector->match_expressions.size() == 1);
  CHECK(pdb.selector->match_expressions[0].operator_ == "In");
  CHECK_FALSE(pdb.min_available.has_value());
  REQUIRE(pdb.max_unavailable.has_value());
  CHECK(pdb.max_unavailable->value == 25);
  CHECK(pdb.max_unavailable->percent);
  CHECK(pdb.has_status);
  CHECK(pdb.observed_generation == 2);
  CHECK(pdb.disruptions_allowed == 1);

  const auto counted = DecodeOne<PodDisruptionBudget>(
      "{apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: a, namespace: d}, spec: {minAvailable: 2}}");
  CHECK_FALSE(counted.selector.has_value());  // null selector: selects nothing
  REQUIRE(counted.min_available.has_value());
  CHECK(counted.min_available->value == 2);
  CHECK_FALSE(counted.min_available->percent);
  CHECK_FALSE(counted.has_status);

  CHECK(Message(StreamError("{kind: PodDisruptionBudget, metadata: {name: a, namespace: d}, spec: {minAvailable: 1, "
                            "maxUnavailable: 1}}"))
            .find("PodDisruptionBudget d/a: spec: minAvailable and maxUnavailable are both set") != std::string::npos);
  CHECK(Message(StreamError("{kind: PodDisruptionBudget, metadata: {name: a, namespace: d}, spec: {minAvailable: "
                            "\"150%\"}}"))
            .find("spec.minAvailable: expected an integer") != std::string::npos);
  CHECK(Message(StreamError("{kind: PodDisruptionBudget, metadata: {name: a, namespace: d}, spec: {selector: "
                            "{matchExpressions: [{key: x, operator: Gt, values: ['1']}]}}}"))
            .find("unknown operator \"Gt\" (want In, NotIn, Exists or DoesNotExist)") != std::string::npos);
}

TEST_CASE("a multi-document YAML stream decodes like a List") {
  constexpr char kStream[] = R"(# hand-written snapshot
---
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: 4, memory: 16Gi, pods: 110}
---
---
kind: Pod
metadata:
  name: p1
spec:
  containers:
  - name: a
    resources: {requests: {cpu: 1, memory: 1Gi}}
  - name: b
    resources: {requests: {cpu: 0.5, memory: 512Mi}}
---
kind: Service
metadata: {name: ignored}
spec: {ports: [{port: 80}]}
---
kind: PodGroup
metadata: {name: pg, namespace: ml}
spec: {minMember: 2}
---
kind: Queue
metadata: {name: q}
spec:
  weight: 2
  state: Closed
---
kind: PriorityClass
metadata: {name: low}
value: -10
globalDefault: true
...
)";
  auto decoded = DecodeObjectStream(kStream);
  INFO(decoded.status().ToString());
  REQUIRE(decoded.ok());
  REQUIRE(decoded->size() == 5);

  const Node& node = std::get<Node>((*decoded)[0]);
  CHECK(node.allocatable.Get(kCpu) == 4000);
  CHECK(node.allocatable.Get(kMemory) == 16 * kGi);
  CHECK(node.capacity.IsZero());

  const Pod& pod = std::get<Pod>((*decoded)[1]);
  CHECK(pod.meta.namespace_ == "default");
  CHECK(pod.requests.Get(kCpu) == 1500);  // 1 + 0.5 over containers
  CHECK(pod.requests.Get(kMemory) == kGi + 512 * kMi);
  CHECK(pod.limits == pod.requests);
  CHECK(pod.phase == PodPhase::kPending);

  const PodGroup& pg = std::get<PodGroup>((*decoded)[2]);
  CHECK(pg.meta.namespace_ == "ml");
  CHECK(pg.min_member == 2);
  CHECK(pg.queue == "default");
  CHECK(pg.min_task_member.empty());
  CHECK(pg.phase == PodGroupPhase::kPending);

  const Queue& queue = std::get<Queue>((*decoded)[3]);
  CHECK(queue.weight == 2);
  CHECK_FALSE(queue.open);  // spec.state: Closed

  const PriorityClass& pc = std::get<PriorityClass>((*decoded)[4]);
  CHECK(pc.value == -10);
  CHECK(pc.global_default);
}

TEST_CASE("an empty stream or an empty List decodes to nothing") {
  for (std::string_view text : {"", "\n", "# only a comment\n", "---\n---\n",
                                "kind: List\nitems: []\n", "apiVersion: v1\nkind: List\n"}) {
    INFO('"' << text << '"');
    auto decoded = DecodeObjectStream(text);
    REQUIRE(decoded.ok());
    CHECK(decoded->empty());
  }
}

TEST_CASE("unknown kinds are skipped, at top level and inside a List") {
  auto decoded = DecodeObjectStream(R"(kind: ConfigMap
metadata: {name: a}
data: {cpu: abc}
---
kind: List
items:
- kind: Deployment
  metadata: {name: d}
  spec: {replicas: 3}
- kind: Queue
  metadata: {name: q}
)");
  REQUIRE(decoded.ok());
  REQUIRE(decoded->size() == 1);
  CHECK(std::get<Queue>(decoded->front()).meta.name == "q");
}

TEST_CASE("init containers count by their maximum, not their sum") {
  Pod pod = DecodeOne<Pod>(R"(kind: Pod
metadata: {name: p}
spec:
  initContainers:
  - resources: {requests: {cpu: 2, memory: 1Gi}}
  - resources: {requests: {cpu: 3, memory: 512Mi}}
  containers:
  - resources: {requests: {cpu: 1, memory: 4Gi}}
)");
  CHECK(pod.requests.Get(kCpu) == 3000);        // max(1, 2, 3), not 2 + 3
  CHECK(pod.requests.Get(kMemory) == 4 * kGi);  // max(4Gi, 1Gi, 512Mi)
}

TEST_CASE("limits default requests per container, before summing") {
  Pod pod = DecodeOne<Pod>(R"(kind: Pod
metadata: {name: p}
spec:
  containers:
  - resources:
      limits: {cpu: 2, nvidia.com/gpu: 1}
      requests: {cpu: 500m}
  - resources:
      limits: {memory: 2Gi}
)");
  CHECK(pod.requests.Get(kCpu) == 500);      // an explicit request wins over the limit
  CHECK(pod.requests.Get(kNvidiaGpu) == 1);  // defaulted from the limit
  CHECK(pod.requests.Get(kMemory) == 2 * kGi);
  CHECK(pod.limits.Get(kCpu) == 2000);
  CHECK(pod.limits.Get(kMemory) == 2 * kGi);
}

TEST_CASE("a pod's scheduling gates are read by name, in the order written") {
  Pod pod = DecodeOne<Pod>(R"(kind: Pod
metadata: {name: p}
spec:
  schedulingGates:
  - name: example.com/quota
  - {name: example.com/data-ready}
)");
  CHECK(pod.scheduling_gates == std::vector<std::string>{"example.com/quota", "example.com/data-ready"});
  CHECK(DecodeOne<Pod>("kind: Pod\nmetadata: {name: p}\nspec: {schedulingGates: []}\n").scheduling_gates.empty());
  CHECK(DecodeOne<Pod>("kind: Pod\nmetadata: {name: p}\n").scheduling_gates.empty());
}

TEST_CASE("a pod without requests is best effort") {
  Pod pod = DecodeOne<Pod>("kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a}]}\n");
  CHECK(pod.requests.IsZero());
  CHECK(pod.limits.IsZero());
}

TEST_CASE("errors name the object and the field") {
  absl::Status status = StreamError(R"(apiVersion: v1
kind: List
items:
- kind: Pod
  metadata: {name: ok, namespace: web}
- kind: Pod
  metadata: {name: bad-cpu, namespace: web}
  spec:
    containers:
    - name: a
      resources:
        requests:
          cpu: abc
)");
  CHECK(absl::IsInvalidArgument(status));
  std::string message = Message(status);
  CHECK_THAT(message, Catch::Contains("web/bad-cpu"));
  CHECK_THAT(message, Catch::Contains("spec.containers[0].resources.requests.cpu"));
  CHECK_THAT(message, Catch::Contains("\"abc\""));
  CHECK_THAT(message, Catch::Contains("items[1]"));

  status = StreamError(R"(kind: Node
metadata: {name: n1}
---
kind: Node
metadata: {name: n2}
status: {allocatable: {memory: 4 Gi}}
)");
  message = Message(status);
  CHECK_THAT(message, Catch::Contains("document 2"));
  CHECK_THAT(message, Catch::Contains("Node n2"));
  CHECK_THAT(message, Catch::Contains("status.allocatable.memory"));

  struct Case {
    const char* yaml;
    const char* object;
    const char* field;
  };
  const Case kCases[] = {
      {"kind: Pod\nmetadata: {name: p}\nspec: {initContainers: [{}, {resources: {limits: "
       "{cpu: 1x}}}]}\n",
       "Pod p", "spec.initContainers[1].resources.limits.cpu"},
      {"kind: Pod\nmetadata: {name: p}\nspec: {overhead: {memory: [1]}}\n", "Pod p",
       "spec.overhead.memory"},
      {"kind: Pod\nmetadata: {name: p}\nspec: {priority: high}\n", "Pod p",
       "spec.priority"},
      {"kind: Pod\nmetadata: {name: p}\nspec: {priority: 3000000000}\n", "Pod p",
       "spec.priority"},
      {"kind: Pod\nmetadata: {name: p}\nspec: {containers: {a: b}}\n", "Pod p",
       "spec.containers"},
      {"kind: Pod\nmetadata: {name: p}\nspec: {nodeSelector: {a: [b]}}\n", "Pod p",
       "spec.nodeSelector.a"},
      {"kind: Pod\nmetadata: {name: p}\nspec: {tolerations: [{operator: Maybe}]}\n",
       "Pod p", "spec.tolerations[0].operator"},
      {"kind: Pod\nmetadata: {name: p}\nspec: {schedulingGates: example.com/quota}\n", "Pod p",
       "spec.schedulingGates"},
      {"kind: Pod\nmetadata: {name: p}\nspec: {schedulingGates: [example.com/quota]}\n", "Pod p",
       "spec.schedulingGates[0]"},
      {"kind: Pod\nmetadata: {name: p}\nspec: {schedulingGates: [{}]}\n", "Pod p",
       "spec.schedulingGates[0].name"},
      {"kind: Pod\nmetadata: {name: p}\nspec: {schedulingGates: [{name: [a]}]}\n", "Pod p",
       "spec.schedulingGates[0].name"},
      {"kind: Pod\nmetadata: {name: p}\nspec: {schedulingGates: [{name: a}, {name: a}]}\n", "Pod p",
       "spec.schedulingGates[1].name"},
      {"kind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n    nodeAffinity:\n"
       "      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n"
       "        - matchExpressions: [{key: a, operator: Like}]\n",
       "Pod p",
       "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0].matchExpressions[0].operator"},
      {"kind: Pod\nmetadata: {name: p}\nstatus: {phase: Sleeping}\n", "Pod p",
       "status.phase"},
      {"kind: Pod\nmetadata: {name: p, creationTimestamp: yesterday}\n", "Pod p",
       "metadata.creationTimestamp"},
      {"kind: Pod\nmetadata: {name: p, labels: [a]}\n", "Pod p", "metadata.labels"},
      {"kind: Pod\nmetadata: {namespace: x}\n", "Pod <unnamed>", "metadata.name"},
      {"kind: Pod\nspec: {}\n", "Pod <unnamed>", "metadata"},
      {"kind: Node\nmetadata: {name: n}\nspec: {unschedulable: maybe}\n", "Node n",
       "spec.unschedulable"},
      {"kind: Node\nmetadata: {name: n}\nspec: {taints: [{key: [a]}]}\n", "Node n",
       "spec.taints[0].key"},
      {"kind: PodGroup\nmetadata: {name: g}\nspec: {minMember: -1}\n", "PodGroup g",
       "spec.minMember"},
      {"kind: PodGroup\nmetadata: {name: g}\nspec: {minMember: two}\n", "PodGroup g",
       "spec.minMember"},
      {"kind: PodGroup\nmetadata: {name: g}\nspec: {minTaskMember: {worker: x}}\n",
       "PodGroup g", "spec.minTaskMember.worker"},
      {"kind: PodGroup\nmetadata: {name: g}\nspec: {minTaskMember: [1]}\n",
       "PodGroup g", "spec.minTaskMember"},
      {"kind: PodGroup\nmetadata: {name: g}\nspec: {minResources: {cpu: 1.2.3}}\n",
       "PodGroup g", "spec.minResources.cpu"},
      {"kind: Queue\nmetadata: {name: q}\nspec: {weight: -1}\n", "Queue q", "spec.weight"},
      {"kind: Queue\nmetadata: {name: q}\nspec: {capability: {cpu: lots}}\n", "Queue q",
       "spec.capability.cpu"},
      {"kind: Queue\nmetadata: {name: q}\nspec: {guarantee: {resource: {memory: 1KB}}}\n",
       "Queue q", "spec.guarantee.resource.memory"},
      {"kind: Queue\nmetadata: {name: q}\nspec: {deserved: {cpu: 1e99}}\n", "Queue q",
       "spec.deserved.cpu"},
      {"kind: Queue\nmetadata: {name: q}\nspec: {reclaimable: sometimes}\n", "Queue q",
       "spec.reclaimable"},
      {"kind: PriorityClass\nmetadata: {name: c}\nvalue: 1.5\n", "PriorityClass c", "value"},
      {"kind: PriorityClass\nmetadata: {name: c}\nvalue: 99999999999\n", "PriorityClass c",
       "value"},
  };
  for (const Case& c : kCases) {
    INFO(c.yaml);
    absl::Status error = StreamError(c.yaml);
    CHECK(absl::IsInvalidArgument(error));
    CHECK_THAT(Message(error), Catch::Contains(c.object) && Catch::Contains(c.field));
  }
}

TEST_CASE("negative quantities are rejected wherever resources are read") {
  for (const char* yaml : {
           "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{resources: {requests: "
           "{cpu: -1}}}]}\n",
           "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{resources: {limits: "
           "{memory: -1Gi}}}]}\n",
           "kind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: -100m}}\n",
           "kind: Queue\nmetadata: {name: q}\nspec: {capability: {nvidia.com/gpu: \"-2\"}}\n",
       }) {
    INFO(yaml);
    absl::Status error = StreamError(yaml);
    CHECK(absl::IsInvalidArgument(error));
    CHECK_THAT(Message(error), Catch::Contains("negative quantity"));
  }
}

TEST_CASE("requests that overflow when summed are an error, not a wrapped number") {
  absl::Status error = StreamError(R"(kind: Pod
metadata: {name: huge}
spec:
  containers:
  - resources: {requests: {memory: 5Ei}}
  - resources: {requests: {memory: 5Ei}}
)");
  CHECK(absl::IsInvalidArgument(error));
  CHECK_THAT(Message(error), Catch::Contains("huge") &&
                                 Catch::Contains("spec.containers[1].resources.requests") &&
                                 Catch::Contains("memory"));

  error = StreamError(R"(kind: Pod
metadata: {name: huge}
spec:
  containers: [{resources: {requests: {cpu: 9223372036854775}}}]
  overhead: {cpu: 1}
)");
  CHECK_THAT(Message(error), Catch::Contains("spec.overhead"));
}

TEST_CASE("YAML syntax errors report the line") {
  absl::Status error = StreamError("kind: Pod\nmetadata:\n  name: x\n bad: 1\n");
  CHECK(absl::IsInvalidArgument(error));
  CHECK_THAT(Message(error), Catch::Contains("line 4"));

  error = StreamError("kind: List\nitems:\n- kind: Pod\n  metadata: {name: [x\n");
  CHECK_THAT(Message(error), Catch::Contains("YAML syntax error at line"));

  auto docs = ParseYamlDocuments("a: 1\n---\nb:\n  c: 1\n d: 2\ne: 3\n");
  REQUIRE_FALSE(docs.ok());
  CHECK_THAT(Message(docs.status()), Catch::Contains("line 5"));
}

TEST_CASE("a document that starts with a stray token is an error, not a hang") {
  // yaml-cpp 0.7's LoadAll loops forever on these (jbeder/yaml-cpp#1040).
  for (std::string_view text : {",", ",a", "---\n,", "&x ,", "!t ,", "kind: Queue\n---\n,\n"}) {
    INFO(text);
    absl::Status error = StreamError(text);
    CHECK(absl::IsInvalidArgument(error));
    CHECK_THAT(Message(error), Catch::Contains("YAML syntax error at line"));
  }
  CHECK_THAT(Message(StreamError("kind: Queue\nmetadata: {name: q}\n---\n,\n")),
             Catch::Contains("line 4"));
}

TEST_CASE("documents that are not objects are rejected with their position") {
  CHECK_THAT(Message(StreamError("- 1\n- 2\n")), Catch::Contains("document 1: not a map"));
  CHECK_THAT(Message(StreamError("kind: Queue\nmetadata: {name: q}\n---\njust text\n")),
             Catch::Contains("document 2"));
  CHECK_THAT(Message(StreamError("metadata: {name: x}\n")), Catch::Contains("no kind"));
  CHECK_THAT(Message(StreamError("kind: List\nitems: [42]\n")),
             Catch::Contains("items[0]") && Catch::Contains("not a map"));
}

TEST_CASE("recursive and exploding aliases are errors, not crashes") {
  for (std::string_view text : {
           "&a [*a]\n",
           "kind: Pod\nmetadata: &m {name: p, labels: *m}\n",
           "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
           "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
           "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
           "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
           "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
           "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
           "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
           "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
           "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]\n"
           "kind: Queue\nmetadata: {name: q}\n",
       }) {
    INFO(text);
    absl::Status error = StreamError(text);
    CHECK(absl::IsInvalidArgument(error));
    CHECK_THAT(Message(error), Catch::Contains("alias"));
  }
  // Plain, non-recursive aliases are fine.
  Queue q = DecodeOne<Queue>(
      "kind: Queue\nmetadata: {name: q}\nspec:\n  capability: &cap {cpu: 8}\n  deserved: *cap\n");
  CHECK(q.capability.Get(kCpu) == 8000);
  CHECK(q.deserved == q.capability);
}

TEST_CASE("YamlToJson types plain scalars and keeps quoted ones as strings") {
  auto docs = ParseYamlDocuments(R"(int: 42
negative: -7
quoted: "42"
plus: +5
float: 1.5
yes: true
no: False
nothing: null
tilde: ~
empty:
text: hello
list: [1, "a"]
)");
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  rapidjson::Document doc;
  rapidjson::Value json;
  YamlToJson(docs->front(), json, doc.GetAllocator());
  REQUIRE(json.IsObject());
  CHECK(json["int"].IsInt64());
  CHECK(json["int"].GetInt64() == 42);
  CHECK(json["negative"].GetInt64() == -7);
  CHECK(json["quoted"].IsString());
  CHECK(json["plus"].IsString());
  CHECK(json["float"].IsString());
  CHECK(std::string(json["float"].GetString()) == "1.5");
  CHECK(json["yes"].IsBool());
  CHECK(json["yes"].GetBool());
  CHECK(json["no"].IsBool());
  CHECK_FALSE(json["no"].GetBool());
  CHECK(json["nothing"].IsNull());
  CHECK(json["tilde"].IsNull());
  CHECK(json["empty"].IsNull());
  CHECK(std::string(json["text"].GetString()) == "hello");
  REQUIRE(json["list"].IsArray());
  CHECK(json["list"][0].GetInt64() == 1);
  CHECK(json["list"][1].IsString());
}

TEST_CASE("JSON objects from the apiserver decode directly") {
  rapidjson::Document doc;
  doc.Parse(R"({
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "labels": {"replica": 3, "gpu": true}},
    "spec": {"containers": [{"resources": {"requests": {"cpu": 0.5, "memory": 1e9}}}],
             "priority": "7"}
  })");
  REQUIRE_FALSE(doc.HasParseError());
  auto object = DecodeObject(doc);
  INFO(object.status().ToString());
  REQUIRE(object.ok());
  const Pod& pod = std::get<Pod>(*object);
  CHECK(pod.requests.Get(kCpu) == 500);
  CHECK(pod.requests.Get(kMemory) == 1'000'000'000);
  CHECK(pod.meta.labels.at("replica") == "3");
  CHECK(pod.meta.labels.at("gpu") == "true");
  CHECK(pod.priority == 7);  // integers written as strings are accepted

  rapidjson::Document other;
  other.Parse(R"({"kind": "Secret", "metadata": {"name": "s"}})");
  CHECK(absl::IsNotFound(DecodeObject(other).status()));
  other.Parse(R"([1])");
  CHECK(absl::IsInvalidArgument(DecodeObject(other).status()));
  other.Parse(R"({"metadata": {"name": "s"}})");
  CHECK(absl::IsInvalidArgument(DecodeObject(other).status()));
}

TEST_CASE("DecodeResourceList prefixes errors with the caller's location") {
  rapidjson::Document doc;
  doc.Parse(R"({"cpu": "2", "memory": "4Gi", "example.com/widget": 3})");
  auto resources = DecodeResourceList(doc, "nodes[0].allocatable");
  REQUIRE(resources.ok());
  CHECK(resources->Get(kCpu) == 2000);
  CHECK(resources->Get(kMemory) == 4 * kGi);
  CHECK(resources->Get(InternResource("example.com/widget")) == 3);

  doc.Parse(R"({"cpu": "2", "memory": "4GB"})");
  auto bad = DecodeResourceList(doc, "nodes[0].allocatable");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(Message(bad.status()), Catch::StartsWith("nodes[0].allocatable.memory: "));
  doc.Parse(R"(["cpu"])");
  CHECK_FALSE(DecodeResourceList(doc, "x").ok());
}

TEST_CASE("ParseTimestamp reads RFC 3339") {
  CHECK(ParseTimestamp("1970-01-01T00:00:00Z").value() == 0);
  CHECK(ParseTimestamp("2024-01-02T03:04:05Z").value() == 1'704'164'645);
  CHECK(ParseTimestamp("2024-01-02T04:04:05+01:00").value() == 1'704'164'645);
  CHECK(ParseTimestamp("2024-01-02T03:04:05.75Z").value() == 1'704'164'645);
  for (std::string_view text : {"", "yesterday", "2024-01-02", "2024-13-02T03:04:05Z"}) {
    INFO(text);
    auto parsed = ParseTimestamp(text);
    REQUIRE_FALSE(parsed.ok());
    CHECK(absl::IsInvalidArgument(parsed.status()));
  }
}

TEST_CASE("phase names") {
  CHECK(PodPhaseName(PodPhase::kRunning) == "Running");
  CHECK(PodPhaseName(PodPhase::kSucceeded) == "Succeeded");
  CHECK(PodGroupPhaseName(PodGroupPhase::kInqueue) == "Inqueue");
  CHECK(PodGroupPhaseName(PodGroupPhase::kCompleted) == "Completed");
}

}  // namespace
}  // namespace lahar
