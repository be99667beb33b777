#include "api/decode.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "api/status_macros.h"
#include "api/strings.h"

namespace lahar {
namespace {

// A JSON value together with the path that led to it, so every error names its field.
class Field {
 public:
  Field(const rapidjson::Value* value, std::string path) : value_(value), path_(std::move(path)) {}

  bool present() const { return value_ != nullptr && !value_->IsNull(); }
  const rapidjson::Value& json() const { return *value_; }
  const std::string& path() const { return path_; }

  Field operator[](std::string_view key) const {
    std::string child = path_.empty() ? std::string(key) : StrCat(path_, ".", key);
    if (!present() || !value_->IsObject()) return Field(nullptr, std::move(child));
    auto it = value_->FindMember(rapidjson::StringRef(key.data(), key.size()));
    return Field(it == value_->MemberEnd() ? nullptr : &it->value, std::move(child));
  }

  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(StrCat(path_, ": ", what));
  }

  absl::StatusOr<std::string> String(std::string default_value = "") const {
    if (!present()) return default_value;
    if (value_->IsString()) return std::string(value_->GetString(), value_->GetStringLength());
    return Error("expected a string");
  }

  absl::StatusOr<int64_t> Int(int64_t default_value, int64_t min, int64_t max) const {
    if (!present()) return default_value;
    int64_t v;
    if (value_->IsInt64()) {
      v = value_->GetInt64();
    } else if (value_->IsString() && absl::SimpleAtoi(value_->GetString(), &v)) {
      // Integers written as strings are accepted (YAML authors quote numbers often).
    } else {
      return Error("expected an integer");
    }
    if (v < min || v > max) return Error(StrCat("value ", v, " out of range [", min, ", ", max, "]"));
    return v;
  }

  absl::StatusOr<bool> Bool(bool default_value) const {
    if (!present()) return default_value;
    if (value_->IsBool()) return value_->GetBool();
    if (value_->IsString()) {
      std::string_view s(value_->GetString(), value_->GetStringLength());
      if (s == "true") return true;
      if (s == "false") return false;
    }
    return Error("expected true or false");
  }

  absl::StatusOr<StringMap> Map() const {
    StringMap out;
    if (!present()) return out;
    if (!value_->IsObject()) return Error("expected a map");
    for (const auto& m : value_->GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      Field child = (*this)[key];
      if (m.value.IsString()) {
        out.emplace(key, std::string(m.value.GetString(), m.value.GetStringLength()));
      } else if (m.value.IsInt64()) {
        out.emplace(key, StrCat(m.value.GetInt64()));
      } else if (m.value.IsBool()) {
        out.emplace(key, m.value.GetBool() ? "true" : "false");
      } else if (m.value.IsNull()) {
        out.emplace(key, "");
      } else {
        return child.Error("expected a string");
      }
    }
    return out;
  }

  // Calls fn(Field element) for each element of an array field.
  template <typename Fn>
  absl::Status ForEach(Fn fn) const {
    if (!present()) return absl::OkStatus();
    if (!value_->IsArray()) return Error("expected a list");
    for (rapidjson::SizeType i = 0; i < value_->Size(); ++i) {
      RETURN_IF_ERROR(fn(Field(&(*value_)[i], StrCat(path_, "[", i, "]"))));
    }
    return absl::OkStatus();
  }

 private:
  const rapidjson::Value* value_;
  std::string path_;
};

absl::StatusOr<std::vector<std::string>> StringList(const Field& field) {
  std::vector<std::string> out;
  RETURN_IF_ERROR(field.ForEach([&](const Field& item) -> absl::Status {
    ASSIGN_OR_RETURN(std::string s, item.String());
    out.push_back(std::move(s));
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<Resources> ResourceList(const Field& field) {
  Resources out;
  if (!field.present()) return out;
  if (!field.json().IsObject()) return field.Error("expected a map of resource quantities");
  for (const auto& m : field.json().GetObject()) {
    std::string name(m.name.GetString(), m.name.GetStringLength());
    Field child = field[name];
    std::string text;
    if (m.value.IsString()) {
      text.assign(m.value.GetString(), m.value.GetStringLength());
    } else if (m.value.IsInt64()) {
      text = StrCat(m.value.GetInt64());
    } else if (m.value.IsDouble()) {
      text = StrCat(m.value.GetDouble());
    } else {
      return child.Error("expected a quantity");
    }
    auto interned = InternInputResource(name);
    if (!interned.ok()) return child.Error(FromAbsl(interned.status().message()));
    ResourceId id = *interned;
    auto amount = ParseQuantity(text, ResourceUnit(id));
    if (!amount.ok()) return child.Error(FromAbsl(amount.status().message()));
    if (*amount < 0) return child.Error(StrCat("negative quantity \"", text, "\""));
    out.Set(id, *amount);
  }
  return out;
}

absl::StatusOr<ObjectMeta> DecodeMeta(const Field& object) {
  ObjectMeta meta;
  Field m = object["metadata"];
  if (!m.present()) return m.Error("missing");
  ASSIGN_OR_RETURN(meta.name, m["name"].String());
  if (meta.name.empty()) return m["name"].Error("missing");
  ASSIGN_OR_RETURN(meta.namespace_, m["namespace"].String());
  ASSIGN_OR_RETURN(meta.uid, m["uid"].String());
  ASSIGN_OR_RETURN(meta.resource_version, m["resourceVersion"].String());
  ASSIGN_OR_RETURN(meta.generation, m["generation"].Int(0, 0, std::numeric_limits<int64_t>::max()));
  ASSIGN_OR_RETURN(std::string created, m["creationTimestamp"].String());
  if (!created.empty()) {
    auto seconds = ParseTimestamp(created);
    if (!seconds.ok()) return m["creationTimestamp"].Error(FromAbsl(seconds.status().message()));
    meta.creation_timestamp = *seconds;
  }
  meta.deleting = m["deletionTimestamp"].present();
  ASSIGN_OR_RETURN(meta.labels, m["labels"].Map());
  ASSIGN_OR_RETURN(meta.annotations, m["annotations"].Map());
  return meta;
}

// Node selectors also know Gt and Lt; label selectors only the first four.
constexpr std::string_view kNodeSelectorOperators[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
constexpr size_t kLabelSelectorOperatorCount = 4;

absl::StatusOr<std::vector<NodeSelectorRequirement>> Requirements(const Field& list, bool node_selector = true) {
  const size_t operator_count = node_selector ? std::size(kNodeSelectorOperators) : kLabelSelectorOperatorCount;
  const auto* ops_begin = std::begin(kNodeSelectorOperators);
  const auto* ops_end = ops_begin + operator_count;
  std::vector<NodeSelectorRequirement> out;
  RETURN_IF_ERROR(list.ForEach([&](const Field& item) -> absl::Status {
    NodeSelectorRequirement r;
    ASSIGN_OR_RETURN(r.key, item["key"].String());
    ASSIGN_OR_RETURN(r.operator_, item["operator"].String());
    if (std::find(ops_begin, ops_end, r.operator_) == ops_end) {
      return item["operator"].Error(StrCat("unknown operator \"", r.operator_, "\" (want ",
                                           node_selector ? "In, NotIn, Exists, DoesNotExist, Gt or Lt"
                                                         : "In, NotIn, Exists or DoesNotExist",
                                           ")"));
    }
    ASSIGN_OR_RETURN(r.values, StringList(item["values"]));
    out.push_back(std::move(r));
    return absl::OkStatus();
  }));
  return out;
}

// sum += add, refusing totals beyond int64: a wrapped sum would make a huge pod look tiny.
absl::Status AddChecked(Resources& sum, const Resources& add, const Field& where) {
  for (const auto& [id, amount] : add.NonZero()) {
    int64_t total;
    if (__builtin_add_overflow(sum.Get(id), amount, &total)) {
      return where.Error(StrCat(ResourceName(id), ": total over the pod is too large"));
    }
    sum.Set(id, total);
  }
  return absl::OkStatus();
}

// Effective pod resources as the kube-scheduler computes them: the larger of the sum over
// app containers and any single init container, plus pod overhead.
absl::Status PodResources(const Field& spec, Pod& pod) {
  Resources requests, limits;
  auto container_resources = [](const Field& c, Resources& req, Resources& lim) -> absl::Status {
    ASSIGN_OR_RETURN(Resources r, ResourceList(c["resources"]["requests"]));
    ASSIGN_OR_RETURN(Resources l, ResourceList(c["resources"]["limits"]));
    // The apiserver defaults a missing request to the limit; files written by hand need the same.
    for (const auto& [id, amount] : l.NonZero()) {
      if (r.Get(id) == 0) r.Set(id, amount);
    }
    req = r;
    lim = l;
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(spec["containers"].ForEach([&](const Field& c) -> absl::Status {
    Resources r, l;
    RETURN_IF_ERROR(container_resources(c, r, l));
    RETURN_IF_ERROR(AddChecked(requests, r, c["resources"]["requests"]));
    RETURN_IF_ERROR(AddChecked(limits, l, c["resources"]["limits"]));
    return absl::OkStatus();
  }));
  RETURN_IF_ERROR(spec["initContainers"].ForEach([&](const Field& c) -> absl::Status {
    Resources r, l;
    RETURN_IF_ERROR(container_resources(c, r, l));
    requests = requests.Max(r);
    limits = limits.Max(l);
    return absl::OkStatus();
  }));
  ASSIGN_OR_RETURN(Resources overhead, ResourceList(spec["overhead"]));
  RETURN_IF_ERROR(AddChecked(requests, overhead, spec["overhead"]));
  // A dimension without a limit is limited by nothing; for elastic accounting the request is
  // the best estimate of use, so missing limits default to requests.
  for (const auto& [id, amount] : requests.NonZero()) {
    if (limits.Get(id) == 0) limits.Set(id, amount);
  }
  pod.requests = requests;
  pod.limits = limits;
  return absl::OkStatus();
}

template <typename T>
absl::StatusOr<T> WithObjectName(absl::StatusOr<T> result, std::string_view kind,
                                 const rapidjson::Value& json) {
  if (result.ok()) return result;
  std::string name = "<unnamed>";
  if (json.IsObject()) {
    auto meta = json.FindMember("metadata");
    if (meta != json.MemberEnd() && meta->value.IsObject()) {
      auto ns = meta->value.FindMember("namespace");
      auto n = meta->value.FindMember("name");
      if (n != meta->value.MemberEnd() && n->value.IsString()) {
        name = n->value.GetString();
        if (ns != meta->value.MemberEnd() && ns->value.IsString()) {
          name = StrCat(ns->value.GetString(), "/", name);
        }
      }
    }
  }
  return absl::Status(result.status().code(),
                      StrCat(kind, " ", name, ": ", result.status().message()));
}

absl::StatusOr<Node> DecodeNodeImpl(const Field& f) {
  Node node;
  ASSIGN_OR_RETURN(node.meta, DecodeMeta(f));
  ASSIGN_OR_RETURN(node.allocatable, ResourceList(f["status"]["allocatable"]));
  ASSIGN_OR_RETURN(node.capacity, ResourceList(f["status"]["capacity"]));
  if (node.allocatable.IsZero()) node.allocatable = node.capacity;
  ASSIGN_OR_RETURN(node.unschedulable, f["spec"]["unschedulable"].Bool(false));
  RETURN_IF_ERROR(f["spec"]["taints"].ForEach([&](const Field& t) -> absl::Status {
    Taint taint;
    ASSIGN_OR_RETURN(taint.key, t["key"].String());
    ASSIGN_OR_RETURN(taint.value, t["value"].String());
    ASSIGN_OR_RETURN(taint.effect, t["effect"].String());
    node.taints.push_back(std::move(taint));
    return absl::OkStatus();
  }));
  RETURN_IF_ERROR(f["status"]["conditions"].ForEach([&](const Field& c) -> absl::Status {
    ASSIGN_OR_RETURN(std::string type, c["type"].String());
    ASSIGN_OR_RETURN(std::string status, c["status"].String());
    if (type == "Ready") node.ready = status == "True";
    return absl::OkStatus();
  }));
  // Kubelets always set the hostname label; snapshots written by hand may omit it.
  node.meta.labels.emplace(kHostnameLabel, node.meta.name);
  return node;
}

absl::StatusOr<PodPhase> ParsePodPhase(const Field& f) {
  ASSIGN_OR_RETURN(std::string phase, f.String("Pending"));
  if (phase == "Pending" || phase.empty()) return PodPhase::kPending;
  if (phase == "Running") return PodPhase::kRunning;
  if (phase == "Succeeded") return PodPhase::kSucceeded;
  if (phase == "Failed") return PodPhase::kFailed;
  if (phase == "Unknown") return PodPhase::kUnknown;
  return f.Error(StrCat("unknown pod phase \"", phase, "\""));
}

absl::StatusOr<Pod> DecodePodImpl(const Field& f) {
  Pod pod;
  ASSIGN_OR_RETURN(pod.meta, DecodeMeta(f));
  if (pod.meta.namespace_.empty()) pod.meta.namespace_ = "default";
  Field spec = f["spec"];
  ASSIGN_OR_RETURN(pod.scheduler_name, spec["schedulerName"].String("default-scheduler"));
  ASSIGN_OR_RETURN(pod.node_name, spec["nodeName"].String());
  ASSIGN_OR_RETURN(pod.priority_class_name, spec["priorityClassName"].String());
  if (spec["priority"].present()) {
    ASSIGN_OR_RETURN(int64_t p, spec["priority"].Int(0, std::numeric_limits<int32_t>::min(),
                                                     std::numeric_limits<int32_t>::max()));
    pod.priority = static_cast<int32_t>(p);
  }
  ASSIGN_OR_RETURN(pod.termination_grace_period_seconds,
                   spec["terminationGracePeriodSeconds"].Int(30, 0, int64_t{1} << 40));
  RETURN_IF_ERROR(PodResources(spec, pod));
  ASSIGN_OR_RETURN(pod.node_selector, spec["nodeSelector"].Map());
  Field required = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
  RETURN_IF_ERROR(required["nodeSelectorTerms"].ForEach([&](const Field& term) -> absl::Status {
    NodeSelectorTerm t;
    ASSIGN_OR_RETURN(t.match_expressions, Requirements(term["matchExpressions"]));
    ASSIGN_OR_RETURN(t.match_fields, Requirements(term["matchFields"]));
    pod.required_node_affinity.push_back(std::move(t));
    return absl::OkStatus();
  }));
  RETURN_IF_ERROR(spec["tolerations"].ForEach([&](const Field& t) -> absl::Status {
    Toleration tol;
    ASSIGN_OR_RETURN(tol.key, t["key"].String());
    ASSIGN_OR_RETURN(tol.operator_, t["operator"].String("Equal"));
    if (tol.operator_.empty()) tol.operator_ = "Equal";
    if (tol.operator_ != "Equal" && tol.operator_ != "Exists") {
      return t["operator"].Error(StrCat("unknown operator \"", tol.operator_, "\" (want Equal or Exists)"));
    }
    ASSIGN_OR_RETURN(tol.value, t["value"].String());
    ASSIGN_OR_RETURN(tol.effect, t["effect"].String());
    pod.tolerations.push_back(std::move(tol));
    return absl::OkStatus();
  }));
  RETURN_IF_ERROR(spec["schedulingGates"].ForEach([&](const Field& g) -> absl::Status {
    if (!g.present() || !g.json().IsObject()) return g.Error("expected a map with a name");
    ASSIGN_OR_RETURN(std::string name, g["name"].String());
    if (name.empty()) return g["name"].Error("missing");
    // The apiserver refuses duplicates too; files written by hand get the same answer.
    if (std::find(pod.scheduling_gates.begin(), pod.scheduling_gates.end(), name) != pod.scheduling_gates.end()) {
      return g["name"].Error(StrCat("duplicate scheduling gate \"", name, "\""));
    }
    pod.scheduling_gates.push_back(std::move(name));
    return absl::OkStatus();
  }));
  ASSIGN_OR_RETURN(pod.phase, ParsePodPhase(f["status"]["phase"]));
  ASSIGN_OR_RETURN(std::string started, f["status"]["startTime"].String());
  if (!started.empty()) {
    auto seconds = ParseTimestamp(started);
    if (!seconds.ok()) return f["status"]["startTime"].Error(FromAbsl(seconds.status().message()));
    pod.start_time_ms = *seconds * 1000;
  }
  return pod;
}

absl::StatusOr<NetworkTopology> NetworkTopologyImpl(const Field& f) {
  if (!f.json().IsObject()) return f.Error("expected a map");
  NetworkTopology topology;
  ASSIGN_OR_RETURN(std::string mode, f["mode"].String("hard"));
  if (mode != "hard" && mode != "soft") return f["mode"].Error(StrCat("\"", mode, "\" is neither hard nor soft"));
  topology.hard = mode == "hard";
  ASSIGN_OR_RETURN(int64_t tier, f["highestTierAllowed"].Int(0, 0, 1 << 20));
  topology.highest_tier_allowed = static_cast<int32_t>(tier);
  ASSIGN_OR_RETURN(topology.highest_tier_name, f["highestTierName"].String());
  // Kept, not refused: the daemon must still see the PodGroup to tell its job why it waits.
  if (f["highestTierAllowed"].present() && !topology.highest_tier_name.empty()) {
    topology.invalid = "networkTopology: highestTierAllowed and highestTierName are both set (at most one may be)";
  }
  return topology;
}

absl::StatusOr<PodGroup> DecodePodGroupImpl(const Field& f) {
  PodGroup pg;
  ASSIGN_OR_RETURN(pg.meta, DecodeMeta(f));
  if (pg.meta.namespace_.empty()) pg.meta.namespace_ = "default";
  Field spec = f["spec"];
  ASSIGN_OR_RETURN(int64_t min_member, spec["minMember"].Int(1, 0, 1 << 20));
  pg.min_member = static_cast<int32_t>(min_member);
  if (spec["minTaskMember"].present()) {
    if (!spec["minTaskMember"].json().IsObject()) return spec["minTaskMember"].Error("expected a map");
    for (const auto& m : spec["minTaskMember"].json().GetObject()) {
      std::string role(m.name.GetString(), m.name.GetStringLength());
      ASSIGN_OR_RETURN(int64_t n, spec["minTaskMember"][role].Int(0, 0, 1 << 20));
      pg.min_task_member.emplace(role, static_cast<int32_t>(n));
    }
  }
  ASSIGN_OR_RETURN(pg.queue, spec["queue"].String("default"));
  if (pg.queue.empty()) pg.queue = "default";
  ASSIGN_OR_RETURN(pg.priority_class_name, spec["priorityClassName"].String());
  ASSIGN_OR_RETURN(pg.min_resources, ResourceList(spec["minResources"]));
  if (spec["networkTopology"].present()) {
    ASSIGN_OR_RETURN(pg.network_topology, NetworkTopologyImpl(spec["networkTopology"]));
  }
  ASSIGN_OR_RETURN(std::string phase, f["status"]["phase"].String("Pending"));
  pg.phase = ParsePodGroupPhase(phase);
  return pg;
}

absl::StatusOr<Queue> DecodeQueueImpl(const Field& f) {
  Queue q;
  ASSIGN_OR_RETURN(q.meta, DecodeMeta(f));
  Field spec = f["spec"];
  ASSIGN_OR_RETURN(int64_t weight, spec["weight"].Int(1, 0, std::numeric_limits<int32_t>::max()));
  q.weight = static_cast<int32_t>(weight);
  ASSIGN_OR_RETURN(q.capability, ResourceList(spec["capability"]));
  ASSIGN_OR_RETURN(q.guarantee, ResourceList(spec["guarantee"]["resource"]));
  ASSIGN_OR_RETURN(q.deserved, ResourceList(spec["deserved"]));
  ASSIGN_OR_RETURN(q.reclaimable, spec["reclaimable"].Bool(true));
  ASSIGN_OR_RETURN(q.parent, spec["parent"].String());
  ASSIGN_OR_RETURN(int64_t priority, spec["priority"].Int(0, std::numeric_limits<int32_t>::min(),
                                                          std::numeric_limits<int32_t>::max()));
  q.priority = static_cast<int32_t>(priority);
  ASSIGN_OR_RETURN(std::string spec_state, spec["state"].String("Open"));
  ASSIGN_OR_RETURN(std::string state, f["status"]["state"].String("Open"));
  q.open = spec_state != "Closed" && state != "Closed" && state != "Closing";
  return q;
}

absl::StatusOr<PriorityClass> DecodePriorityClassImpl(const Field& f) {
  PriorityClass pc;
  ASSIGN_OR_RETURN(pc.meta, DecodeMeta(f));
  ASSIGN_OR_RETURN(int64_t value, f["value"].Int(0, std::numeric_limits<int32_t>::min(),
                                                 std::numeric_limits<int32_t>::max()));
  pc.value = static_cast<int32_t>(value);
  ASSIGN_OR_RETURN(pc.global_default, f["globalDefault"].Bool(false));
  return pc;
}

// An IntOrString field that must be a count or a percentage ("25%").
absl::StatusOr<std::optional<IntOrPercent>> CountOrPercent(const Field& field) {
  if (!field.present()) return std::optional<IntOrPercent>();
  IntOrPercent out;
  if (field.json().IsString()) {
    std::string_view text(field.json().GetString(), field.json().GetStringLength());
    int32_t value;
    if (!text.empty() && text.back() == '%' && absl::SimpleAtoi(absl::string_view(text.data(), text.size() - 1), &value) &&
        value >= 0 && value <= 100) {
      return IntOrPercent{value, true};
    }
  }
  ASSIGN_OR_RETURN(int64_t count, field.Int(0, 0, std::numeric_limits<int32_t>::max()));
  out.value = static_cast<int32_t>(count);
  return out;
}

absl::StatusOr<PodDisruptionBudget> DecodePodDisruptionBudgetImpl(const Field& f) {
  PodDisruptionBudget pdb;
  ASSIGN_OR_RETURN(pdb.meta, DecodeMeta(f));
  const Field spec = f["spec"];
  if (spec["selector"].present()) {
    LabelSelector selector;
    ASSIGN_OR_RETURN(selector.match_labels, spec["selector"]["matchLabels"].Map());
    ASSIGN_OR_RETURN(selector.match_expressions,
                     Requirements(spec["selector"]["matchExpressions"], /*node_selector=*/false));
    pdb.selector = std::move(selector);
  }
  ASSIGN_OR_RETURN(pdb.min_available, CountOrPercent(spec["minAvailable"]));
  ASSIGN_OR_RETURN(pdb.max_unavailable, CountOrPercent(spec["maxUnavailable"]));
  if (pdb.min_available && pdb.max_unavailable) {
    return spec.Error("minAvailable and maxUnavailable are both set (at most one may be)");
  }
  const Field status = f["status"];
  pdb.has_status = status["disruptionsAllowed"].present() || status["observedGeneration"].present();
  ASSIGN_OR_RETURN(pdb.observed_generation,
                   status["observedGeneration"].Int(0, 0, std::numeric_limits<int64_t>::max()));
  ASSIGN_OR_RETURN(int64_t allowed, status["disruptionsAllowed"].Int(0, 0, std::numeric_limits<int32_t>::max()));
  pdb.disruptions_allowed = static_cast<int32_t>(allowed);
  return pdb;
}

absl::StatusOr<HyperNode> DecodeHyperNodeImpl(const Field& f) {
  HyperNode hn;
  ASSIGN_OR_RETURN(hn.meta, DecodeMeta(f));
  const Field spec = f["spec"];
  if (!spec["tier"].present()) return spec["tier"].Error("missing (the HyperNode's tier, 1 for the lowest)");
  ASSIGN_OR_RETURN(int64_t tier, spec["tier"].Int(0, 0, 1 << 20));
  hn.tier = static_cast<int32_t>(tier);
  ASSIGN_OR_RETURN(hn.tier_name, spec["tierName"].String());
  RETURN_IF_ERROR(spec["members"].ForEach([&](const Field& m) -> absl::Status {
    HyperNodeMember member;
    ASSIGN_OR_RETURN(std::string type, m["type"].String());
    if (type == "Node") {
      member.type = HyperNodeMember::Type::kNode;
    } else if (type == "HyperNode") {
      member.type = HyperNodeMember::Type::kHyperNode;
    } else {
      return m["type"].Error(type.empty() ? "missing (Node or HyperNode)" : StrCat("\"", type, "\" is neither Node nor HyperNode"));
    }
    const Field selector = m["selector"];
    if (selector["exactMatch"].present()) {
      ASSIGN_OR_RETURN(std::string name, selector["exactMatch"]["name"].String());
      if (name.empty()) return selector["exactMatch"]["name"].Error("missing");
      member.exact_name = std::move(name);
    }
    if (selector["regexMatch"].present()) {
      ASSIGN_OR_RETURN(std::string pattern, selector["regexMatch"]["pattern"].String());
      if (pattern.empty()) return selector["regexMatch"]["pattern"].Error("missing");
      member.regex = std::move(pattern);
    }
    if (selector["labelMatch"].present()) {
      LabelSelector labels;
      ASSIGN_OR_RETURN(labels.match_labels, selector["labelMatch"]["matchLabels"].Map());
      ASSIGN_OR_RETURN(labels.match_expressions,
                       Requirements(selector["labelMatch"]["matchExpressions"], /*node_selector=*/false));
      member.label_match = std::move(labels);
    }
    hn.members.push_back(std::move(member));
    return absl::OkStatus();
  }));
  return hn;
}

}  // namespace

absl::StatusOr<HyperNode> DecodeHyperNode(const rapidjson::Value& json) {
  return WithObjectName(DecodeHyperNodeImpl(Field(&json, "")), "HyperNode", json);
}

absl::StatusOr<NetworkTopology> DecodeNetworkTopology(const rapidjson::Value& json, std::string_view where) {
  return NetworkTopologyImpl(Field(&json, std::string(where)));
}

absl::StatusOr<Node> DecodeNode(const rapidjson::Value& json) {
  return WithObjectName(DecodeNodeImpl(Field(&json, "")), "Node", json);
}
absl::StatusOr<Pod> DecodePod(const rapidjson::Value& json) {
  return WithObjectName(DecodePodImpl(Field(&json, "")), "Pod", json);
}
absl::StatusOr<PodGroup> DecodePodGroup(const rapidjson::Value& json) {
  return WithObjectName(DecodePodGroupImpl(Field(&json, "")), "PodGroup", json);
}
absl::StatusOr<Queue> DecodeQueue(const rapidjson::Value& json) {
  return WithObjectName(DecodeQueueImpl(Field(&json, "")), "Queue", json);
}
absl::StatusOr<PriorityClass> DecodePriorityClass(const rapidjson::Value& json) {
  return WithObjectName(DecodePriorityClassImpl(Field(&json, "")), "PriorityClass", json);
}

absl::StatusOr<PodDisruptionBudget> DecodePodDisruptionBudget(const rapidjson::Value& json) {
  return WithObjectName(DecodePodDisruptionBudgetImpl(Field(&json, "")), "PodDisruptionBudget", json);
}

absl::StatusOr<Resources> DecodeResourceList(const rapidjson::Value& json, std::string_view where) {
  return ResourceList(Field(&json, std::string(where)));
}

absl::StatusOr<KubeObject> DecodeObject(const rapidjson::Value& json) {
  if (!json.IsObject()) return absl::InvalidArgumentError("object is not a map");
  auto kind_it = json.FindMember("kind");
  if (kind_it == json.MemberEnd() || !kind_it->value.IsString()) {
    return absl::InvalidArgumentError("object has no kind");
  }
  std::string_view kind = kind_it->value.GetString();
  if (kind == "Node") return DecodeNode(json);
  if (kind == "Pod") return DecodePod(json);
  if (kind == "PodGroup") return DecodePodGroup(json);
  if (kind == "Queue") return DecodeQueue(json);
  if (kind == "PriorityClass") return DecodePriorityClass(json);
  if (kind == "PodDisruptionBudget") return DecodePodDisruptionBudget(json);
  if (kind == "HyperNode") return DecodeHyperNode(json);
  return absl::NotFoundError(StrCat("kind ", kind, " is not used by the scheduler"));
}

absl::StatusOr<std::vector<KubeObject>> DecodeObjectStream(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<YAML::Node> documents, ParseYamlDocuments(text));
  std::vector<KubeObject> objects;
  rapidjson::Document doc;
  auto decode_one = [&](const rapidjson::Value& json, std::string_view where) -> absl::Status {
    auto object = DecodeObject(json);
    if (object.ok()) {
      objects.push_back(std::move(*object));
      return absl::OkStatus();
    }
    if (absl::IsNotFound(object.status())) return absl::OkStatus();
    return Annotate(object.status(), where);
  };
  // Without aliases a node takes at least one byte of text, so this only stops alias bombs.
  int64_t budget = int64_t{1'000'000} + 8 * static_cast<int64_t>(text.size());
  for (size_t d = 0; d < documents.size(); ++d) {
    if (documents[d].IsNull()) continue;
    rapidjson::Value json;
    std::string where = StrCat("document ", d + 1);
    absl::Status converted;
    try {
      converted = ConvertYamlToJson(documents[d], json, doc.GetAllocator(), budget);
    } catch (const YAML::Exception& e) {
      // Node accessors throw on malformed graphs; no exception may leave the decoder.
      converted = absl::InvalidArgumentError(e.what());
    }
    RETURN_IF_ERROR(Annotate(converted, where));
    if (!json.IsObject()) return absl::InvalidArgumentError(StrCat(where, ": not a map"));
    auto kind = json.FindMember("kind");
    if (kind != json.MemberEnd() && kind->value.IsString() &&
        std::string_view(kind->value.GetString()) == "List") {
      auto items = json.FindMember("items");
      if (items == json.MemberEnd() || !items->value.IsArray()) continue;
      for (rapidjson::SizeType i = 0; i < items->value.Size(); ++i) {
        RETURN_IF_ERROR(decode_one(items->value[i], StrCat(where, " items[", i, "]")));
      }
    } else {
      RETURN_IF_ERROR(decode_one(json, where));
    }
  }
  return objects;
}

absl::StatusOr<int64_t> ParseTimestamp(std::string_view text) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(text), &t, &err)) {
    return absl::InvalidArgumentError(StrCat("bad timestamp \"", text, "\": ", err));
  }
  return absl::ToUnixSeconds(t);
}

std::string_view PodPhaseName(PodPhase phase) {
  switch (phase) {
    case PodPhase::kPending: return "Pending";
    case PodPhase::kRunning: return "Running";
    case PodPhase::kSucceeded: return "Succeeded";
    case PodPhase::kFailed: return "Failed";
    case PodPhase::kUnknown: return "Unknown";
  }
  return "Unknown";
}

PodGroupPhase ParsePodGroupPhase(std::string_view name) {
  if (name.empty() || name == "Pending") return PodGroupPhase::kPending;
  if (name == "Inqueue") return PodGroupPhase::kInqueue;
  if (name == "Running") return PodGroupPhase::kRunning;
  if (name == "Completed") return PodGroupPhase::kCompleted;
  return PodGroupPhase::kUnknown;
}

std::string_view PodGroupPhaseName(PodGroupPhase phase) {
  switch (phase) {
    case PodGroupPhase::kPending: return "Pending";
    case PodGroupPhase::kInqueue: return "Inqueue";
    case PodGroupPhase::kRunning: return "Running";
    case PodGroupPhase::kUnknown: return "Unknown";
    case PodGroupPhase::kCompleted: return "Completed";
  }
  return "Unknown";
}

}  // namespace lahar
