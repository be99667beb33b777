#include "api/encode.h"

#include <type_traits>
#include <variant>

#include "absl/time/time.h"
#include "api/quantity.h"
#include "api/resources.h"
#include "rapidjson/prettywriter.h"
#include "rapidjson/stringbuffer.h"

namespace lahar {
namespace {

using Allocator = rapidjson::Document::AllocatorType;

constexpr char kCoreApiVersion[] = "v1";
constexpr char kSchedulingApiVersion[] = "scheduling.k8s.io/v1";
constexpr char kPolicyApiVersion[] = "policy/v1";
// ObjectMeta records that deletion started, not when; see encode.h.
constexpr char kDeletionPlaceholder[] = "1970-01-01T00:00:00Z";

rapidjson::Value Str(std::string_view s, Allocator& allocator) {
  return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), allocator);
}

// Keys are string literals: RapidJSON may refer to them without copying.
template <size_t N>
void Add(rapidjson::Value& object, const char (&key)[N], rapidjson::Value value,
         Allocator& allocator) {
  object.AddMember(rapidjson::StringRef(key, N - 1), value, allocator);
}

template <size_t N>
void AddString(rapidjson::Value& object, const char (&key)[N], std::string_view value,
               Allocator& allocator) {
  Add(object, key, Str(value, allocator), allocator);
}

template <size_t N>
void AddNonEmptyString(rapidjson::Value& object, const char (&key)[N], std::string_view value,
                       Allocator& allocator) {
  if (!value.empty()) AddString(object, key, value, allocator);
}

template <size_t N>
void AddResources(rapidjson::Value& object, const char (&key)[N], const Resources& resources,
                  Allocator& allocator) {
  if (resources.IsZero()) return;
  rapidjson::Value list;
  EncodeResourceList(resources, list, allocator);
  Add(object, key, std::move(list), allocator);
}

rapidjson::Value StringMapValue(const StringMap& map, Allocator& allocator) {
  rapidjson::Value out(rapidjson::kObjectType);
  for (const auto& [key, value] : map) {
    out.AddMember(Str(key, allocator), Str(value, allocator), allocator);
  }
  return out;
}

template <size_t N>
void AddNonEmptyMap(rapidjson::Value& object, const char (&key)[N], const StringMap& map,
                    Allocator& allocator) {
  if (!map.empty()) Add(object, key, StringMapValue(map, allocator), allocator);
}

rapidjson::Value Meta(const ObjectMeta& meta, Allocator& allocator) {
  rapidjson::Value out(rapidjson::kObjectType);
  AddString(out, "name", meta.name, allocator);
  AddNonEmptyString(out, "namespace", meta.namespace_, allocator);
  AddNonEmptyString(out, "uid", meta.uid, allocator);
  AddNonEmptyString(out, "resourceVersion", meta.resource_version, allocator);
  if (meta.generation != 0) Add(out, "generation", rapidjson::Value(meta.generation), allocator);
  if (meta.creation_timestamp != 0) {
    AddString(out, "creationTimestamp", FormatTimestamp(meta.creation_timestamp), allocator);
  }
  if (meta.deleting) AddString(out, "deletionTimestamp", kDeletionPlaceholder, allocator);
  AddNonEmptyMap(out, "labels", meta.labels, allocator);
  AddNonEmptyMap(out, "annotations", meta.annotations, allocator);
  return out;
}

// Starts `out` as {apiVersion, kind, metadata}.
void Header(std::string_view api_version, std::string_view kind, const ObjectMeta& meta,
            rapidjson::Value& out, Allocator& allocator) {
  out.SetObject();
  AddString(out, "apiVersion", api_version, allocator);
  AddString(out, "kind", kind, allocator);
  Add(out, "metadata", Meta(meta, allocator), allocator);
}

rapidjson::Value Requirements(const std::vector<NodeSelectorRequirement>& requirements,
                              Allocator& allocator) {
  rapidjson::Value out(rapidjson::kArrayType);
  for (const NodeSelectorRequirement& r : requirements) {
    rapidjson::Value item(rapidjson::kObjectType);
    AddString(item, "key", r.key, allocator);
    AddString(item, "operator", r.operator_, allocator);
    if (!r.values.empty()) {
      rapidjson::Value values(rapidjson::kArrayType);
      for (const std::string& v : r.values) values.PushBack(Str(v, allocator), allocator);
      Add(item, "values", std::move(values), allocator);
    }
    out.PushBack(item, allocator);
  }
  return out;
}

}  // namespace

std::string FormatTimestamp(int64_t seconds) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%SZ", absl::FromUnixSeconds(seconds),
                          absl::UTCTimeZone());
}

void EncodeResourceList(const Resources& resources, rapidjson::Value& out, Allocator& allocator) {
  out.SetObject();
  for (const auto& [id, amount] : resources.NonZero()) {
    out.AddMember(Str(ResourceName(id), allocator),
                  Str(FormatQuantity(amount, ResourceUnit(id)), allocator), allocator);
  }
}

void EncodeNode(const Node& node, rapidjson::Value& out, Allocator& allocator) {
  Header(kCoreApiVersion, "Node", node.meta, out, allocator);

  rapidjson::Value spec(rapidjson::kObjectType);
  if (node.unschedulable) Add(spec, "unschedulable", rapidjson::Value(true), allocator);
  if (!node.taints.empty()) {
    rapidjson::Value taints(rapidjson::kArrayType);
    for (const Taint& t : node.taints) {
      rapidjson::Value taint(rapidjson::kObjectType);
      AddString(taint, "key", t.key, allocator);
      AddNonEmptyString(taint, "value", t.value, allocator);
      AddString(taint, "effect", t.effect, allocator);
      taints.PushBack(taint, allocator);
    }
    Add(spec, "taints", std::move(taints), allocator);
  }
  Add(out, "spec", std::move(spec), allocator);

  rapidjson::Value status(rapidjson::kObjectType);
  AddResources(status, "allocatable", node.allocatable, allocator);
  AddResources(status, "capacity", node.capacity, allocator);
  rapidjson::Value ready(rapidjson::kObjectType);
  AddString(ready, "type", "Ready", allocator);
  AddString(ready, "status", node.ready ? "True" : "False", allocator);
  rapidjson::Value conditions(rapidjson::kArrayType);
  conditions.PushBack(ready, allocator);
  Add(status, "conditions", std::move(conditions), allocator);
  Add(out, "status", std::move(status), allocator);
}

void EncodePod(const Pod& pod, rapidjson::Value& out, Allocator& allocator) {
  Header(kCoreApiVersion, "Pod", pod.meta, out, allocator);

  rapidjson::Value spec(rapidjson::kObjectType);
  AddString(spec, "schedulerName", pod.scheduler_name, allocator);
  AddNonEmptyString(spec, "nodeName", pod.node_name, allocator);
  AddNonEmptyString(spec, "priorityClassName", pod.priority_class_name, allocator);
  if (pod.priority) Add(spec, "priority", rapidjson::Value(*pod.priority), allocator);
  Add(spec, "terminationGracePeriodSeconds",
      rapidjson::Value(static_cast<int64_t>(pod.termination_grace_period_seconds)), allocator);

  // The effective requests and limits, as one container: decoding sums one container to itself.
  rapidjson::Value resources(rapidjson::kObjectType);
  AddResources(resources, "requests", pod.requests, allocator);
  AddResources(resources, "limits", pod.limits, allocator);
  rapidjson::Value container(rapidjson::kObjectType);
  AddString(container, "name", "main", allocator);
  Add(container, "resources", std::move(resources), allocator);
  rapidjson::Value containers(rapidjson::kArrayType);
  containers.PushBack(container, allocator);
  Add(spec, "containers", std::move(containers), allocator);

  AddNonEmptyMap(spec, "nodeSelector", pod.node_selector, allocator);
  if (!pod.required_node_affinity.empty()) {
    rapidjson::Value terms(rapidjson::kArrayType);
    for (const NodeSelectorTerm& term : pod.required_node_affinity) {
      rapidjson::Value t(rapidjson::kObjectType);
      if (!term.match_expressions.empty()) {
        Add(t, "matchExpressions", Requirements(term.match_expressions, allocator), allocator);
      }
      if (!term.match_fields.empty()) {
        Add(t, "matchFields", Requirements(term.match_fields, allocator), allocator);
      }
      terms.PushBack(t, allocator);
    }
    rapidjson::Value required(rapidjson::kObjectType);
    Add(required, "nodeSelectorTerms", std::move(terms), allocator);
    rapidjson::Value node_affinity(rapidjson::kObjectType);
    Add(node_affinity, "requiredDuringSchedulingIgnoredDuringExecution", std::move(required),
        allocator);
    rapidjson::Value affinity(rapidjson::kObjectType);
    Add(affinity, "nodeAffinity", std::move(node_affinity), allocator);
    Add(spec, "affinity", std::move(affinity), allocator);
  }
  if (!pod.tolerations.empty()) {
    rapidjson::Value tolerations(rapidjson::kArrayType);
    for (const Toleration& t : pod.tolerations) {
      rapidjson::Value toleration(rapidjson::kObjectType);
      AddNonEmptyString(toleration, "key", t.key, allocator);
      AddString(toleration, "operator", t.operator_, allocator);
      AddNonEmptyString(toleration, "value", t.value, allocator);
      AddNonEmptyString(toleration, "effect", t.effect, allocator);
      tolerations.PushBack(toleration, allocator);
    }
    Add(spec, "tolerations", std::move(tolerations), allocator);
  }
  if (!pod.scheduling_gates.empty()) {
    rapidjson::Value gates(rapidjson::kArrayType);
    for (const std::string& name : pod.scheduling_gates) {
      rapidjson::Value gate(rapidjson::kObjectType);
      AddString(gate, "name", name, allocator);
      gates.PushBack(gate, allocator);
    }
    Add(spec, "schedulingGates", std::move(gates), allocator);
  }
  Add(out, "spec", std::move(spec), allocator);

  rapidjson::Value status(rapidjson::kObjectType);
  AddString(status, "phase", PodPhaseName(pod.phase), allocator);
  if (pod.start_time_ms >= 0) AddString(status, "startTime", FormatTimestamp(pod.start_time_ms / 1000), allocator);
  Add(out, "status", std::move(status), allocator);
}

void EncodePodGroup(const PodGroup& group, rapidjson::Value& out, Allocator& allocator) {
  Header(kVolcanoApiVersion, "PodGroup", group.meta, out, allocator);

  rapidjson::Value spec(rapidjson::kObjectType);
  Add(spec, "minMember", rapidjson::Value(group.min_member), allocator);
  if (!group.min_task_member.empty()) {
    rapidjson::Value tasks(rapidjson::kObjectType);
    for (const auto& [task, count] : group.min_task_member) {
      tasks.AddMember(Str(task, allocator), rapidjson::Value(count), allocator);
    }
    Add(spec, "minTaskMember", std::move(tasks), allocator);
  }
  AddString(spec, "queue", group.queue, allocator);
  AddNonEmptyString(spec, "priorityClassName", group.priority_class_name, allocator);
  AddResources(spec, "minResources", group.min_resources, allocator);
  if (group.network_topology) {
    const NetworkTopology& nt = *group.network_topology;
    rapidjson::Value topology(rapidjson::kObjectType);
    AddString(topology, "mode", nt.hard ? "hard" : "soft", allocator);
    if (nt.highest_tier_allowed > 0) Add(topology, "highestTierAllowed", rapidjson::Value(nt.highest_tier_allowed), allocator);
    AddNonEmptyString(topology, "highestTierName", nt.highest_tier_name, allocator);
    Add(spec, "networkTopology", std::move(topology), allocator);
  }
  Add(out, "spec", std::move(spec), allocator);

  rapidjson::Value status(rapidjson::kObjectType);
  AddString(status, "phase", PodGroupPhaseName(group.phase), allocator);
  Add(out, "status", std::move(status), allocator);
}

void EncodeQueue(const Queue& queue, rapidjson::Value& out, Allocator& allocator) {
  Header(kVolcanoApiVersion, "Queue", queue.meta, out, allocator);

  rapidjson::Value spec(rapidjson::kObjectType);
  Add(spec, "weight", rapidjson::Value(queue.weight), allocator);
  AddResources(spec, "capability", queue.capability, allocator);
  if (!queue.guarantee.IsZero()) {
    rapidjson::Value guarantee(rapidjson::kObjectType);
    AddResources(guarantee, "resource", queue.guarantee, allocator);
    Add(spec, "guarantee", std::move(guarantee), allocator);
  }
  AddResources(spec, "deserved", queue.deserved, allocator);
  Add(spec, "reclaimable", rapidjson::Value(queue.reclaimable), allocator);
  AddNonEmptyString(spec, "parent", queue.parent, allocator);
  if (queue.priority != 0) Add(spec, "priority", rapidjson::Value(queue.priority), allocator);
  Add(out, "spec", std::move(spec), allocator);

  // The decoder folds spec.state and status.state into `open`; status.state alone carries it.
  rapidjson::Value status(rapidjson::kObjectType);
  AddString(status, "state", queue.open ? "Open" : "Closed", allocator);
  Add(out, "status", std::move(status), allocator);
}

void EncodePriorityClass(const PriorityClass& priority_class, rapidjson::Value& out,
                         Allocator& allocator) {
  Header(kSchedulingApiVersion, "PriorityClass", priority_class.meta, out, allocator);
  Add(out, "value", rapidjson::Value(priority_class.value), allocator);
  if (priority_class.global_default) Add(out, "globalDefault", rapidjson::Value(true), allocator);
}

void EncodePodDisruptionBudget(const PodDisruptionBudget& pdb, rapidjson::Value& out, Allocator& allocator) {
  Header(kPolicyApiVersion, "PodDisruptionBudget", pdb.meta, out, allocator);
  rapidjson::Value spec(rapidjson::kObjectType);
  if (pdb.selector) {
    rapidjson::Value selector(rapidjson::kObjectType);
    AddNonEmptyMap(selector, "matchLabels", pdb.selector->match_labels, allocator);
    if (!pdb.selector->match_expressions.empty()) {
      Add(selector, "matchExpressions", Requirements(pdb.selector->match_expressions, allocator), allocator);
    }
    Add(spec, "selector", std::move(selector), allocator);
  }
  auto count = [&](const IntOrPercent& v) {
    return v.percent ? Str(std::to_string(v.value) + "%", allocator) : rapidjson::Value(v.value);
  };
  if (pdb.min_available) Add(spec, "minAvailable", count(*pdb.min_available), allocator);
  if (pdb.max_unavailable) Add(spec, "maxUnavailable", count(*pdb.max_unavailable), allocator);
  Add(out, "spec", std::move(spec), allocator);
  if (pdb.has_status) {
    rapidjson::Value status(rapidjson::kObjectType);
    Add(status, "observedGeneration", rapidjson::Value(pdb.observed_generation), allocator);
    Add(status, "disruptionsAllowed", rapidjson::Value(pdb.disruptions_allowed), allocator);
    Add(out, "status", std::move(status), allocator);
  }
}

void EncodeHyperNode(const HyperNode& hypernode, rapidjson::Value& out, Allocator& allocator) {
  Header(kTopologyApiVersion, "HyperNode", hypernode.meta, out, allocator);
  rapidjson::Value spec(rapidjson::kObjectType);
  Add(spec, "tier", rapidjson::Value(hypernode.tier), allocator);
  AddNonEmptyString(spec, "tierName", hypernode.tier_name, allocator);
  rapidjson::Value members(rapidjson::kArrayType);
  for (const HyperNodeMember& m : hypernode.members) {
    rapidjson::Value member(rapidjson::kObjectType);
    AddString(member, "type", m.type == HyperNodeMember::Type::kNode ? "Node" : "HyperNode", allocator);
    rapidjson::Value selector(rapidjson::kObjectType);
    if (m.exact_name) {
      rapidjson::Value exact(rapidjson::kObjectType);
      AddString(exact, "name", *m.exact_name, allocator);
      Add(selector, "exactMatch", std::move(exact), allocator);
    }
    if (m.regex) {
      rapidjson::Value regex(rapidjson::kObjectType);
      AddString(regex, "pattern", *m.regex, allocator);
      Add(selector, "regexMatch", std::move(regex), allocator);
    }
    if (m.label_match) {
      rapidjson::Value labels(rapidjson::kObjectType);
      AddNonEmptyMap(labels, "matchLabels", m.label_match->match_labels, allocator);
      if (!m.label_match->match_expressions.empty()) {
        Add(labels, "matchExpressions", Requirements(m.label_match->match_expressions, allocator), allocator);
      }
      Add(selector, "labelMatch", std::move(labels), allocator);
    }
    Add(member, "selector", std::move(selector), allocator);
    members.PushBack(member, allocator);
  }
  Add(spec, "members", std::move(members), allocator);
  Add(out, "spec", std::move(spec), allocator);
}

void EncodeObject(const KubeObject& object, rapidjson::Value& out, Allocator& allocator) {
  std::visit(
      [&](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, Node>) {
          EncodeNode(o, out, allocator);
        } else if constexpr (std::is_same_v<T, Pod>) {
          EncodePod(o, out, allocator);
        } else if constexpr (std::is_same_v<T, PodGroup>) {
          EncodePodGroup(o, out, allocator);
        } else if constexpr (std::is_same_v<T, Queue>) {
          EncodeQueue(o, out, allocator);
        } else if constexpr (std::is_same_v<T, PriorityClass>) {
          EncodePriorityClass(o, out, allocator);
        } else if constexpr (std::is_same_v<T, PodDisruptionBudget>) {
          EncodePodDisruptionBudget(o, out, allocator);
        } else {
          static_assert(std::is_same_v<T, HyperNode>);
          EncodeHyperNode(o, out, allocator);
        }
      },
      object);
}

std::string EncodeObjectList(const std::vector<const Node*>& nodes,
                             const std::vector<const Pod*>& pods,
                             const std::vector<const PodGroup*>& groups,
                             const std::vector<const Queue*>& queues,
                             const std::vector<const PriorityClass*>& priority_classes,
                             const std::vector<const PodDisruptionBudget*>& disruption_budgets,
                             const std::vector<const HyperNode*>& hypernodes) {
  rapidjson::Document doc(rapidjson::kObjectType);
  Allocator& allocator = doc.GetAllocator();
  rapidjson::Value items(rapidjson::kArrayType);
  auto append = [&](const auto& objects, auto encode) {
    for (const auto* object : objects) {
      rapidjson::Value item;
      encode(*object, item, allocator);
      items.PushBack(item, allocator);
    }
  };
  append(nodes, EncodeNode);
  append(pods, EncodePod);
  append(groups, EncodePodGroup);
  append(queues, EncodeQueue);
  append(priority_classes, EncodePriorityClass);
  append(disruption_budgets, EncodePodDisruptionBudget);
  append(hypernodes, EncodeHyperNode);
  AddString(doc, "apiVersion", "v1", allocator);
  AddString(doc, "kind", "List", allocator);
  Add(doc, "items", std::move(items), allocator);

  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
  writer.SetIndent(' ', 2);
  doc.Accept(writer);
  std::string out(buffer.GetString(), buffer.GetSize());
  out.push_back('\n');
  return out;
}

}  // namespace lahar
