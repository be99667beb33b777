#include "api/encode.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <catch2/catch.hpp>

#include "api/decode.h"
#include "rapidjson/document.h"

namespace lahar {
namespace {

constexpr int64_t kMi = int64_t{1} << 20;
constexpr int64_t kGi = int64_t{1} << 30;

// One object of every kind with every field the decoder reads set to a non-default value
// somewhere: taints, tolerations, affinity (expressions and fields), labels, annotations,
// minTaskMember, quantities in millicores, binary and decimal units, GPUs, storage.
constexpr char kObjects[] = R"(
apiVersion: v1
kind: Node
metadata:
  name: gpu-1
  uid: node-uid-1
  resourceVersion: "42"
  creationTimestamp: "2024-01-02T03:04:05Z"
  labels: {kubernetes.io/hostname: gpu-1, nvidia.com/gpu.product: A100, zone: a}
  annotations: {node.alpha.kubernetes.io/ttl: "0"}
spec:
  taints:
  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
  - {key: spot, effect: PreferNoSchedule}
status:
  allocatable: {cpu: 95500m, memory: 1114953992Ki, nvidia.com/gpu: 8, pods: 110,
                ephemeral-storage: "1797549023603", hugepages-1Gi: "0"}
  capacity: {cpu: 96, memory: 1176784696Ki, nvidia.com/gpu: 8, pods: 110,
             ephemeral-storage: 1950368312Ki}
  conditions:
  - {type: Ready, status: "True"}
---
apiVersion: v1
kind: Node
metadata: {name: cpu-2}
spec: {unschedulable: true}
status:
  capacity: {cpu: 1500m, memory: 6G}
  conditions:
  - {type: Ready, status: "False"}
---
apiVersion: v1
kind: Pod
metadata:
  name: llama-worker-0
  namespace: research
  uid: pod-uid-0
  resourceVersion: "77"
  creationTimestamp: "2024-01-02T03:05:00Z"
  labels: {app: llama, volcano.sh/task-index: "0"}
  annotations:
    scheduling.k8s.io/group-name: llama
    volcano.sh/task-spec: worker
    note: "quotes \" and\nnewlines, ünïcödé"
spec:
  schedulerName: lahar
  priority: 1000
  priorityClassName: training-high
  terminationGracePeriodSeconds: 60
  containers:
  - name: trainer
    resources:
      requests: {cpu: 1500m, memory: 160Gi, nvidia.com/gpu: 4, ephemeral-storage: 10Gi}
      limits: {memory: 200Gi, nvidia.com/gpu: 4}
  - name: sidecar
    resources:
      requests: {cpu: 250m, memory: 256Mi}
  initContainers:
  - name: fetch
    resources:
      requests: {cpu: 3, memory: 8Gi}
  overhead: {cpu: 100m}
  nodeSelector: {kubernetes.io/arch: amd64, gpu: "true"}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: nvidia.com/gpu.product, operator: In, values: [A100, H100]}
          - {key: spot, operator: DoesNotExist}
          - {key: gpu-count, operator: Gt, values: ["3"]}
        - matchFields:
          - {key: metadata.name, operator: In, values: [gpu-1]}
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  - {key: spot, operator: Equal, value: "true"}
  - {operator: Exists}
  schedulingGates:
  - {name: example.com/quota}
  - {name: example.com/data-ready}
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata:
  name: web-0
  deletionTimestamp: "2024-01-02T03:06:00Z"
spec:
  nodeName: cpu-2
  containers:
  - name: nginx
    resources:
      limits: {cpu: 2, memory: 1Gi}
status: {phase: Running, startTime: "2024-01-02T03:04:05Z"}
---
apiVersion: v1
kind: Pod
metadata: {name: best-effort, namespace: batch}
spec:
  schedulerName: volcano
  priority: -5
  containers: [{name: c}]
status: {phase: Failed}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: llama
  namespace: research
  uid: pg-uid
  creationTimestamp: "2024-01-02T03:04:59Z"
  annotations: {lahar.sh/elastic-cooldown: 5m}
spec:
  minMember: 4
  minTaskMember: {master: 1, worker: 3}
  queue: research
  priorityClassName: training-high
  minResources: {cpu: 48500m, memory: 640Gi, nvidia.com/gpu: 16}
status: {phase: Inqueue}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: other, namespace: batch}
spec: {minMember: 0}
status: {phase: Completed}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research, labels: {team: ml}}
spec:
  weight: 3
  capability: {cpu: 512, nvidia.com/gpu: 64, memory: 4Ti}
  guarantee:
    resource: {cpu: 64, nvidia.com/gpu: 8}
  deserved: {cpu: 256, nvidia.com/gpu: 32}
  reclaimable: false
  parent: root
  priority: 5
status: {state: Open}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: default}
spec: {weight: 1}
status: {state: Closing}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: training-high}
value: 1000000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch-default}
value: -10
globalDefault: true
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: bert-pdb, namespace: ml, generation: 4}
spec:
  minAvailable: "50%"
  selector:
    matchLabels: {job-name: bert}
    matchExpressions:
    - {key: role, operator: NotIn, values: [ps]}
status: {observedGeneration: 4, disruptionsAllowed: 2}
)";

// Field-by-field equality: CHECK per field, so a failure names what differs.
void CheckSameResources(const Resources& a, const Resources& b, std::string_view what) {
  INFO(what << ": " << a.DebugString() << " vs " << b.DebugString());
  CHECK(a == b);
}

void CheckSameMeta(const ObjectMeta& a, const ObjectMeta& b) {
  INFO("object " << a.namespace_ << "/" << a.name);
  CHECK(a.name == b.name);
  CHECK(a.namespace_ == b.namespace_);
  CHECK(a.uid == b.uid);
  CHECK(a.resource_version == b.resource_version);
  CHECK(a.generation == b.generation);
  CHECK(a.creation_timestamp == b.creation_timestamp);
  CHECK(a.deleting == b.deleting);
  CHECK(a.labels == b.labels);
  CHECK(a.annotations == b.annotations);
}

void CheckSame(const Node& a, const Node& b) {
  CheckSameMeta(a.meta, b.meta);
  CheckSameResources(a.allocatable, b.allocatable, "allocatable");
  CheckSameResources(a.capacity, b.capacity, "capacity");
  REQUIRE(a.taints.size() == b.taints.size());
  for (size_t i = 0; i < a.taints.size(); ++i) {
    CHECK(a.taints[i].key == b.taints[i].key);
    CHECK(a.taints[i].value == b.taints[i].value);
    CHECK(a.taints[i].effect == b.taints[i].effect);
  }
  CHECK(a.unschedulable == b.unschedulable);
  CHECK(a.ready == b.ready);
}

void CheckSameRequirements(const std::vector<NodeSelectorRequirement>& a,
                           const std::vector<NodeSelectorRequirement>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].key == b[i].key);
    CHECK(a[i].operator_ == b[i].operator_);
    CHECK(a[i].values == b[i].values);
  }
}

void CheckSame(const Pod& a, const Pod& b) {
  CheckSameMeta(a.meta, b.meta);
  CHECK(a.scheduler_name == b.scheduler_name);
  CHECK(a.node_name == b.node_name);
  CHECK(a.phase == b.phase);
  CHECK(a.start_time_ms == b.start_time_ms);
  CHECK(a.priority_class_name == b.priority_class_name);
  CHECK(a.priority == b.priority);
  CHECK(a.termination_grace_period_seconds == b.termination_grace_period_seconds);
  CheckSameResources(a.requests, b.requests, "requests");
  CheckSameResources(a.limits, b.limits, "limits");
  CHECK(a.node_selector == b.node_selector);
  REQUIRE(a.required_node_affinity.size() == b.required_node_affinity.size());
  for (size_t i = 0; i < a.required_node_affinity.size(); ++i) {
    CheckSameRequirements(a.required_node_affinity[i].match_expressions,
                          b.required_node_affinity[i].match_expressions);
    CheckSameRequirements(a.required_node_affinity[i].match_fields,
                          b.required_node_affinity[i].match_fields);
  }
  REQUIRE(a.tolerations.size() == b.tolerations.size());
  for (size_t i = 0; i < a.tolerations.size(); ++i) {
    CHECK(a.tolerations[i].key == b.tolerations[i].key);
    CHECK(a.tolerations[i].operator_ == b.tolerations[i].operator_);
    CHECK(a.tolerations[i].value == b.tolerations[i].value);
    CHECK(a.tolerations[i].effect == b.tolerations[i].effect);
  }
  CHECK(a.scheduling_gates == b.scheduling_gates);
}

void CheckSame(const PodGroup& a, const PodGroup& b) {
  CheckSameMeta(a.meta, b.meta);
  CHECK(a.min_member == b.min_member);
  CHECK(a.min_task_member == b.min_task_member);
  CHECK(a.queue == b.queue);
  CHECK(a.priority_class_name == b.priority_class_name);
  CheckSameResources(a.min_resources, b.min_resources, "minResources");
  CHECK(a.phase == b.phase);
}

void CheckSame(const Queue& a, const Queue& b) {
  CheckSameMeta(a.meta, b.meta);
  CHECK(a.weight == b.weight);
  CheckSameResources(a.capability, b.capability, "capability");
  CheckSameResources(a.guarantee, b.guarantee, "guarantee");
  CheckSameResources(a.deserved, b.deserved, "deserved");
  CHECK(a.open == b.open);
  CHECK(a.reclaimable == b.reclaimable);
  CHECK(a.parent == b.parent);
  CHECK(a.priority == b.priority);
}

void CheckSame(const PriorityClass& a, const PriorityClass& b) {
  CheckSameMeta(a.meta, b.meta);
  CHECK(a.value == b.value);
  CHECK(a.global_default == b.global_default);
}

void CheckSame(const PodDisruptionBudget& a, const PodDisruptionBudget& b) {
  CheckSameMeta(a.meta, b.meta);
  REQUIRE(a.selector.has_value() == b.selector.has_value());
  if (a.selector) {
    CHECK(a.selector->match_labels == b.selector->match_labels);
    REQUIRE(a.selector->match_expressions.size() == b.selector->match_expressions.size());
    for (size_t i = 0; i < a.selector->match_expressions.size(); ++i) {
      CHECK(a.selector->match_expressions[i].key == b.selector->match_expressions[i].key);
      CHECK(a.selector->match_expressions[i].operator_ == b.selector->match_expressions[i].operator_);
      CHECK(a.selector->match_expressions[i].values == b.selector->match_expressions[i].values);
    }
  }
  auto same_count = [](const std::optional<IntOrPercent>& x, const std::optional<IntOrPercent>& y) {
    REQUIRE(x.has_value() == y.has_value());
    if (x) CHECK((x->value == y->value && x->percent == y->percent));
  };
  same_count(a.min_available, b.min_available);
  same_count(a.max_unavailable, b.max_unavailable);
  CHECK(a.has_status == b.has_status);
  CHECK(a.observed_generation == b.observed_generation);
  CHECK(a.disruptions_allowed == b.disruptions_allowed);
}

void CheckSame(const KubeObject& a, const KubeObject& b) {
  REQUIRE(a.index() == b.index());
  std::visit([&](const auto& x) { CheckSame(x, std::get<std::decay_t<decltype(x)>>(b)); }, a);
}

std::vector<KubeObject> DecodeFixture() {
  auto decoded = DecodeObjectStream(kObjects);
  INFO(decoded.status().ToString());
  REQUIRE(decoded.ok());
  REQUIRE(decoded->size() == 12);
  return *decoded;
}

template <typename T>
std::vector<const T*> OfKind(const std::vector<KubeObject>& objects) {
  std::vector<const T*> out;
  for (const auto& object : objects) {
    if (const T* t = std::get_if<T>(&object)) out.push_back(t);
  }
  return out;
}

std::string EncodeAll(const std::vector<KubeObject>& objects) {
  return EncodeObjectList(OfKind<Node>(objects), OfKind<Pod>(objects), OfKind<PodGroup>(objects),
                          OfKind<Queue>(objects), OfKind<PriorityClass>(objects),
                          OfKind<PodDisruptionBudget>(objects));
}

TEST_CASE("every kind decodes back to the same values from its encoding") {
  for (const KubeObject& original : DecodeFixture()) {
    rapidjson::Document doc;
    EncodeObject(original, doc, doc.GetAllocator());
    auto decoded = DecodeObject(doc);
    INFO(decoded.status().ToString());
    REQUIRE(decoded.ok());
    CheckSame(original, *decoded);
  }
}

TEST_CASE("the per-kind encoders match EncodeObject and decode with the per-kind decoders") {
  auto objects = DecodeFixture();
  const Pod& worker = std::get<Pod>(objects[2]);
  rapidjson::Document doc;
  EncodePod(worker, doc, doc.GetAllocator());
  auto pod = DecodePod(doc);
  REQUIRE(pod.ok());
  CheckSame(worker, *pod);

  const Queue& research = std::get<Queue>(objects[7]);
  rapidjson::Document queue_doc;
  EncodeQueue(research, queue_doc, queue_doc.GetAllocator());
  auto queue = DecodeQueue(queue_doc);
  REQUIRE(queue.ok());
  CheckSame(research, *queue);
}

TEST_CASE("a pod's effective resources are written as one container") {
  auto objects = DecodeFixture();
  const Pod& worker = std::get<Pod>(objects[2]);
  // cpu: max(1.5 + 0.25 containers, 3 init) + 0.1 overhead = 3.1
  REQUIRE(worker.requests.Get(kCpu) == 3100);
  // memory: max(160Gi + 256Mi, 8Gi); a limit only where the trainer set one, else the request
  REQUIRE(worker.requests.Get(kMemory) == 160 * kGi + 256 * kMi);
  REQUIRE(worker.limits.Get(kMemory) == 200 * kGi);

  rapidjson::Document doc;
  EncodePod(worker, doc, doc.GetAllocator());
  const rapidjson::Value& spec = doc["spec"];
  CHECK_FALSE(spec.HasMember("initContainers"));
  CHECK_FALSE(spec.HasMember("overhead"));
  REQUIRE(spec["containers"].Size() == 1);
  const rapidjson::Value& container = spec["containers"][0];
  CHECK(std::string(container["name"].GetString()) == "main");
  const rapidjson::Value& requests = container["resources"]["requests"];
  CHECK(std::string(requests["cpu"].GetString()) == "3100m");
  CHECK(std::string(requests["memory"].GetString()) == "164096Mi");  // 160Gi + 256Mi
  CHECK(std::string(requests["nvidia.com/gpu"].GetString()) == "4");
  CHECK(std::string(requests["ephemeral-storage"].GetString()) == "10Gi");
  CHECK(std::string(container["resources"]["limits"]["memory"].GetString()) == "200Gi");
}

TEST_CASE("metadata, timestamps and optional fields are written as Kubernetes prints them") {
  auto objects = DecodeFixture();
  rapidjson::Document node;
  EncodeObject(objects[0], node, node.GetAllocator());
  CHECK(std::string(node["apiVersion"].GetString()) == "v1");
  CHECK(std::string(node["kind"].GetString()) == "Node");
  CHECK(std::string(node["metadata"]["creationTimestamp"].GetString()) ==
        "2024-01-02T03:04:05Z");
  CHECK(std::string(node["status"]["allocatable"]["cpu"].GetString()) == "95500m");
  CHECK(std::string(node["status"]["capacity"]["cpu"].GetString()) == "96");
  // hugepages-1Gi: "0" is dropped: zero amounts are not written.
  CHECK_FALSE(node["status"]["allocatable"].HasMember("hugepages-1Gi"));
  CHECK_FALSE(node["spec"].HasMember("unschedulable"));

  rapidjson::Document web;
  EncodeObject(objects[3], web, web.GetAllocator());
  CHECK(web["metadata"].HasMember("deletionTimestamp"));
  CHECK_FALSE(web["metadata"].HasMember("creationTimestamp"));  // unset stays unset
  CHECK(std::string(web["metadata"]["namespace"].GetString()) == "default");
  CHECK_FALSE(web["spec"].HasMember("priority"));
  CHECK(web["spec"]["terminationGracePeriodSeconds"].GetInt64() == 30);

  rapidjson::Document group;
  EncodeObject(objects[5], group, group.GetAllocator());
  CHECK(std::string(group["apiVersion"].GetString()) == "scheduling.volcano.sh/v1beta1");
  CHECK(group["spec"]["minTaskMember"]["worker"].GetInt() == 3);
  CHECK(std::string(group["spec"]["minResources"]["cpu"].GetString()) == "48500m");

  rapidjson::Document closing;  // status Closing decodes as closed and is written as Closed
  EncodeObject(objects[8], closing, closing.GetAllocator());
  CHECK(std::string(closing["status"]["state"].GetString()) == "Closed");

  rapidjson::Document pc;
  EncodeObject(objects[10], pc, pc.GetAllocator());
  CHECK(std::string(pc["apiVersion"].GetString()) == "scheduling.k8s.io/v1");
  CHECK(pc["value"].GetInt() == -10);
  CHECK(pc["globalDefault"].GetBool());
}

TEST_CASE("EncodeObjectList is a List that DecodeObjectStream reads back in order") {
  auto objects = DecodeFixture();
  std::string text = EncodeAll(objects);

  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["apiVersion"].GetString()) == "v1");
  CHECK(std::string(doc["kind"].GetString()) == "List");
  CHECK(doc["items"].Size() == 12);

  // The fixture is already in the List's order: nodes, pods, groups, queues, classes.
  auto decoded = DecodeObjectStream(text);
  INFO(decoded.status().ToString());
  REQUIRE(decoded.ok());
  REQUIRE(decoded->size() == objects.size());
  for (size_t i = 0; i < objects.size(); ++i) CheckSame(objects[i], (*decoded)[i]);

  // Deterministic, and a fixed point: encoding what was decoded prints the same text.
  CHECK(EncodeAll(objects) == text);
  CHECK(EncodeAll(*decoded) == text);
}

TEST_CASE("objects built in code survive the round trip") {
  Pod pod;
  pod.meta.name = "p";
  pod.meta.namespace_ = "ns";
  pod.meta.creation_timestamp = -86'400;  // 1969-12-31T00:00:00Z
  pod.requests.Set(kCpu, 1);              // 1m
  pod.requests.Set(kMemory, 1000);
  pod.requests.Set(InternResource("example.com/fpga"), 2);
  pod.limits = pod.requests;
  pod.limits.Set(kMemory, 3 * kGi);
  pod.required_node_affinity.push_back({});  // an empty term is kept
  pod.required_node_affinity.push_back(
      {{}, {{"metadata.name", "NotIn", {"a", "b"}}}});
  pod.phase = PodPhase::kUnknown;
  pod.termination_grace_period_seconds = 0;

  rapidjson::Document doc;
  EncodePod(pod, doc, doc.GetAllocator());
  CHECK(std::string(doc["metadata"]["creationTimestamp"].GetString()) == "1969-12-31T00:00:00Z");
  CHECK(std::string(doc["spec"]["containers"][0]["resources"]["requests"]["cpu"].GetString()) ==
        "1m");
  auto decoded = DecodePod(doc);
  INFO(decoded.status().ToString());
  REQUIRE(decoded.ok());
  CheckSame(pod, *decoded);

  Node node;  // no resources, ready: the decoder adds the hostname label a kubelet would set
  node.meta.name = "bare";
  node.meta.labels[kHostnameLabel] = "bare";
  rapidjson::Document node_doc;
  EncodeNode(node, node_doc, node_doc.GetAllocator());
  auto decoded_node = DecodeNode(node_doc);
  REQUIRE(decoded_node.ok());
  CheckSame(node, *decoded_node);
}

TEST_CASE("a pod's status.startTime and a queue's priority are read (victims: most recently started)") {
  bool seen_pod = false, seen_queue = false;
  for (const KubeObject& object : DecodeFixture()) {
    if (const Pod* pod = std::get_if<Pod>(&object); pod != nullptr && pod->node_name == "cpu-2") {
      CHECK(pod->start_time_ms == 1704164645000);  // 2024-01-02T03:04:05Z
      seen_pod = true;
    } else if (pod != nullptr) {
      CHECK(pod->start_time_ms == -1);  // no startTime: unset
    }
    if (const Queue* queue = std::get_if<Queue>(&object); queue != nullptr && queue->meta.name == "research") {
      CHECK(queue->priority == 5);
      seen_queue = true;
    }
  }
  CHECK(seen_pod);
  CHECK(seen_queue);
}

TEST_CASE("FormatTimestamp is the inverse of ParseTimestamp") {
  CHECK(FormatTimestamp(0) == "1970-01-01T00:00:00Z");
  CHECK(FormatTimestamp(1'704'164'645) == "2024-01-02T03:04:05Z");
  for (int64_t seconds : {int64_t{0}, int64_t{1'704'164'645}, int64_t{-1}, int64_t{4'102'444'800}}) {
    auto parsed = ParseTimestamp(FormatTimestamp(seconds));
    REQUIRE(parsed.ok());
    CHECK(*parsed == seconds);
  }
}

TEST_CASE("an empty list is still a List") {
  std::string text = EncodeObjectList({}, {}, {}, {}, {});
  auto decoded = DecodeObjectStream(text);
  REQUIRE(decoded.ok());
  CHECK(decoded->empty());
  CHECK(text.find("\"kind\": \"List\"") != std::string::npos);
}

}  // namespace
}  // namespace lahar
