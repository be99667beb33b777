#include "scheduler/sim/scenario.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "api/cluster_info.h"
#include "api/decode.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/sim/snapshot.h"

namespace lahar {

double Scaling::Rate(int running, int min) const {
  if (running <= 0 || min <= 0) return 0;
  if (kind == Kind::kLinear) return static_cast<double>(running) / min;
  auto speedup = [&](int n) { return 1.0 / (serial_fraction + (1.0 - serial_fraction) / n); };
  return speedup(running) / speedup(min);
}

namespace {

// A YAML node with the path that led to it, so that errors say "line 12: jobs[1].tasks[0]...".
class Y {
 public:
  Y(YAML::Node node, std::string path) : node_(std::move(node)), path_(std::move(path)) {}

  bool present() const { return node_.IsDefined() && !node_.IsNull(); }
  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }

  Y operator[](std::string_view key) const {
    std::string child = path_.empty() ? std::string(key) : StrCat(path_, ".", key);
    if (!node_.IsMap()) return Y(YAML::Node(YAML::NodeType::Undefined), child);
    return Y(node_[std::string(key)], std::move(child));
  }
  Y At(size_t i) const { return Y(node_[i], StrCat(path_, "[", i, "]")); }

  absl::Status Error(std::string_view what) const {
    int line = node_.IsDefined() ? node_.Mark().line + 1 : 0;
    if (line > 0) return absl::InvalidArgumentError(StrCat("line ", line, ": ", path_, ": ", what));
    return absl::InvalidArgumentError(StrCat(path_, ": ", what));
  }

  absl::Status ExpectMap(std::initializer_list<std::string_view> keys) const {
    if (!node_.IsMap()) return Error("expected a map");
    for (const auto& kv : node_) {
      const std::string& key = kv.first.Scalar();
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        std::string valid;
        for (std::string_view k : keys) StrAppend(&valid, valid.empty() ? "" : ", ", k);
        return Y(kv.first, path_).Error(StrCat("unknown key \"", key, "\" (valid keys: ", valid, ")"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Str(std::string default_value = "") const {
    if (!present()) return default_value;
    if (!node_.IsScalar()) return Error("expected a single value");
    return node_.Scalar();
  }

  absl::StatusOr<int64_t> Int(int64_t default_value, int64_t min, int64_t max) const {
    if (!present()) return default_value;
    ASSIGN_OR_RETURN(std::string s, Str());
    int64_t v;
    if (!absl::SimpleAtoi(s, &v)) return Error(StrCat("\"", s, "\" is not an integer"));
    if (v < min) return Error(StrCat(v < 0 ? "negative value " : "value ", v, " (must be at least ", min, ")"));
    if (v > max) return Error(StrCat("value ", v, " is larger than ", max));
    return v;
  }

  absl::StatusOr<Millis> Duration(Millis default_value) const {
    if (!present()) return default_value;
    ASSIGN_OR_RETURN(std::string s, Str());
    auto d = ParseDuration(s);
    if (!d.ok()) return Error(FromAbsl(d.status().message()));
    return *d;
  }

  absl::StatusOr<Resources> ResourceList() const {
    Resources out;
    if (!present()) return out;
    if (!node_.IsMap()) return Error("expected a map of resource quantities");
    for (const auto& kv : node_) {
      const std::string& name = kv.first.Scalar();
      Y value(kv.second, StrCat(path_, ".", name));
      ASSIGN_OR_RETURN(std::string text, value.Str());
      auto interned = InternInputResource(name);
      if (!interned.ok()) return value.Error(FromAbsl(interned.status().message()));
      ResourceId id = *interned;
      auto amount = ParseQuantity(text, ResourceUnit(id));
      if (!amount.ok()) return value.Error(FromAbsl(amount.status().message()));
      if (*amount < 0) return value.Error(StrCat("negative quantity \"", text, "\""));
      out.Set(id, *amount);
    }
    return out;
  }

  absl::StatusOr<StringMap> Map() const {
    StringMap out;
    if (!present()) return out;
    if (!node_.IsMap()) return Error("expected a map");
    for (const auto& kv : node_) {
      if (!kv.second.IsScalar()) return Y(kv.second, StrCat(path_, ".", kv.first.Scalar())).Error("expected a single value");
      out[kv.first.Scalar()] = kv.second.Scalar();
    }
    return out;
  }

  template <typename Fn>
  absl::Status ForEach(Fn fn) const {
    if (!present()) return absl::OkStatus();
    if (!node_.IsSequence()) return Error("expected a list");
    for (size_t i = 0; i < node_.size(); ++i) RETURN_IF_ERROR(fn(At(i)));
    return absl::OkStatus();
  }

 private:
  YAML::Node node_;
  std::string path_;
};

// Reads a Kubernetes-shaped sub-object (taints, tolerations, affinity) through the object
// decoder, so the scenario and snapshot formats accept exactly the same fields.
absl::StatusOr<rapidjson::Document> ToJson(const Y& y) {
  rapidjson::Document doc;
  YamlToJson(y.node(), doc, doc.GetAllocator());
  return doc;
}

absl::StatusOr<std::vector<Taint>> ReadTaints(const Y& y) {
  std::vector<Taint> taints;
  RETURN_IF_ERROR(y.ForEach([&](const Y& t) -> absl::Status {
    RETURN_IF_ERROR(t.ExpectMap({"key", "value", "effect"}));
    Taint taint;
    ASSIGN_OR_RETURN(taint.key, t["key"].Str());
    ASSIGN_OR_RETURN(taint.value, t["value"].Str());
    ASSIGN_OR_RETURN(taint.effect, t["effect"].Str("NoSchedule"));
    if (taint.key.empty()) return t.Error("taint without a key");
    if (taint.effect != "NoSchedule" && taint.effect != "PreferNoSchedule" && taint.effect != "NoExecute") {
      return t["effect"].Error(StrCat("unknown effect \"", taint.effect, "\" (want NoSchedule, PreferNoSchedule or NoExecute)"));
    }
    taints.push_back(std::move(taint));
    return absl::OkStatus();
  }));
  return taints;
}

absl::StatusOr<std::vector<Node>> ReadNodeSpec(const Y& n) {
  RETURN_IF_ERROR(n.ExpectMap({"name", "namePrefix", "count", "allocatable", "labels", "taints", "unschedulable"}));
  Node node;
  ASSIGN_OR_RETURN(node.allocatable, n["allocatable"].ResourceList());
  if (node.allocatable.Get(kPods) == 0) node.allocatable.Set(kPods, 110);
  node.capacity = node.allocatable;
  ASSIGN_OR_RETURN(node.meta.labels, n["labels"].Map());
  ASSIGN_OR_RETURN(node.taints, ReadTaints(n["taints"]));
  ASSIGN_OR_RETURN(std::string unschedulable, n["unschedulable"].Str("false"));
  node.unschedulable = unschedulable == "true";
  ASSIGN_OR_RETURN(std::string name, n["name"].Str());
  ASSIGN_OR_RETURN(std::string prefix, n["namePrefix"].Str());
  std::vector<Node> out;
  if (!name.empty() && !prefix.empty()) return n.Error("give either name or namePrefix, not both");
  if (!name.empty()) {
    if (n["count"].present()) return n["count"].Error("count goes with namePrefix");
    node.meta.name = name;
    node.meta.labels[kHostnameLabel] = name;
    out.push_back(std::move(node));
  } else if (!prefix.empty()) {
    ASSIGN_OR_RETURN(int64_t count, n["count"].Int(1, 0, 1'000'000));
    for (int64_t i = 0; i < count; ++i) {
      Node copy = node;
      copy.meta.name = StrCat(prefix, i);
      copy.meta.labels[kHostnameLabel] = copy.meta.name;
      out.push_back(std::move(copy));
    }
  } else {
    return n.Error("a node needs a name or a namePrefix");
  }
  return out;
}

absl::StatusOr<Queue> ReadQueue(const Y& q) {
  RETURN_IF_ERROR(q.ExpectMap({"name", "weight", "capability", "guarantee", "deserved", "reclaimable", "state",
                               "parent", "priority"}));
  Queue queue;
  ASSIGN_OR_RETURN(queue.meta.name, q["name"].Str());
  if (queue.meta.name.empty()) return q.Error("a queue needs a name");
  ASSIGN_OR_RETURN(int64_t weight, q["weight"].Int(1, 0, 1 << 30));
  queue.weight = static_cast<int32_t>(weight);
  ASSIGN_OR_RETURN(queue.capability, q["capability"].ResourceList());
  ASSIGN_OR_RETURN(queue.guarantee, q["guarantee"].ResourceList());
  ASSIGN_OR_RETURN(queue.deserved, q["deserved"].ResourceList());
  ASSIGN_OR_RETURN(std::string reclaimable, q["reclaimable"].Str("true"));
  queue.reclaimable = reclaimable != "false";
  ASSIGN_OR_RETURN(std::string state, q["state"].Str("Open"));
  if (state != "Open" && state != "Closed" && state != "Closing") {
    return q["state"].Error(StrCat("unknown queue state \"", state, "\" (want Open, Closed or Closing)"));
  }
  queue.open = state == "Open";
  ASSIGN_OR_RETURN(queue.parent, q["parent"].Str(""));
  ASSIGN_OR_RETURN(int64_t priority, q["priority"].Int(0, -(int64_t{1} << 31), (int64_t{1} << 31) - 1));
  queue.priority = static_cast<int32_t>(priority);
  return queue;
}

absl::StatusOr<Scaling> ReadScaling(const Y& s) {
  Scaling scaling;
  if (!s.present()) return scaling;
  if (s.node().IsScalar()) {
    if (s.node().Scalar() == "linear") return scaling;
    if (s.node().Scalar() == "amdahl") {
      scaling.kind = Scaling::Kind::kAmdahl;
      scaling.serial_fraction = 0.05;
      return scaling;
    }
    return s.Error(StrCat("unknown scaling \"", s.node().Scalar(), "\" (want linear or {amdahl: <serial fraction>})"));
  }
  RETURN_IF_ERROR(s.ExpectMap({"amdahl"}));
  ASSIGN_OR_RETURN(std::string text, s["amdahl"].Str());
  double fraction;
  if (!absl::SimpleAtod(text, &fraction) || !(fraction >= 0 && fraction <= 1)) {
    return s["amdahl"].Error(StrCat("\"", text, "\" is not a serial fraction between 0 and 1"));
  }
  scaling.kind = Scaling::Kind::kAmdahl;
  scaling.serial_fraction = fraction;
  return scaling;
}

struct TaskTemplate {
  std::string name;
  int32_t replicas = 1;
  int32_t priority = 0;
  bool has_priority = false;
  std::optional<int32_t> min_available;
  Resources requests, limits;
  StringMap node_selector;
  std::vector<Toleration> tolerations;
  std::vector<NodeSelectorTerm> affinity;
  std::vector<std::string> scheduling_gates;
};

absl::StatusOr<TaskTemplate> ReadTask(const Y& t) {
  RETURN_IF_ERROR(t.ExpectMap({"name", "replicas", "priority", "minAvailable", "resources", "limits",
                               "nodeSelector", "tolerations", "affinity", "schedulingGates"}));
  TaskTemplate task;
  ASSIGN_OR_RETURN(task.name, t["name"].Str());
  if (task.name.empty()) return t.Error("a task needs a name");
  ASSIGN_OR_RETURN(int64_t replicas, t["replicas"].Int(1, 0, 100'000));
  task.replicas = static_cast<int32_t>(replicas);
  if (t["priority"].present()) {
    ASSIGN_OR_RETURN(int64_t priority, t["priority"].Int(0, -(1LL << 31), (1LL << 31) - 1));
    task.priority = static_cast<int32_t>(priority);
    task.has_priority = true;
  }
  if (t["minAvailable"].present()) {
    ASSIGN_OR_RETURN(int64_t min, t["minAvailable"].Int(0, 0, task.replicas));
    task.min_available = static_cast<int32_t>(min);
  }
  ASSIGN_OR_RETURN(task.requests, t["resources"].ResourceList());
  ASSIGN_OR_RETURN(task.limits, t["limits"].ResourceList());
  for (const auto& [id, amount] : task.requests.NonZero()) {
    if (task.limits.Get(id) == 0) task.limits.Set(id, amount);
  }
  for (const auto& [id, amount] : task.requests.NonZero()) {
    if (task.limits.Get(id) < amount) {
      return t["limits"].Error(StrCat("limit of ", ResourceName(id), " is below its request"));
    }
  }
  ASSIGN_OR_RETURN(task.node_selector, t["nodeSelector"].Map());
  // Gate names, as a list: each pod of the task is created with spec.schedulingGates {name: ...}.
  RETURN_IF_ERROR(t["schedulingGates"].ForEach([&](const Y& g) -> absl::Status {
    ASSIGN_OR_RETURN(std::string name, g.Str());
    if (name.empty()) return g.Error("expected a gate name");
    if (std::find(task.scheduling_gates.begin(), task.scheduling_gates.end(), name) != task.scheduling_gates.end()) {
      return g.Error(StrCat("duplicate scheduling gate \"", name, "\""));
    }
    task.scheduling_gates.push_back(std::move(name));
    return absl::OkStatus();
  }));
  if (t["tolerations"].present() || t["affinity"].present()) {
    // Decode through the Pod decoder: {spec: {tolerations, affinity}}.
    YAML::Node pod;
    pod["metadata"]["name"] = "task";
    if (t["tolerations"].present()) pod["spec"]["tolerations"] = t["tolerations"].node();
    if (t["affinity"].present()) pod["spec"]["affinity"] = t["affinity"].node();
    ASSIGN_OR_RETURN(rapidjson::Document json, ToJson(Y(pod, t.path())));
    auto decoded = DecodePod(json);
    if (!decoded.ok()) return t.Error(FromAbsl(decoded.status().message()));
    task.tolerations = decoded->tolerations;
    task.affinity = decoded->required_node_affinity;
  }
  return task;
}

absl::StatusOr<SimJob> ReadJob(const Y& j, const std::map<std::string, int32_t, std::less<>>& priority_classes,
                               std::vector<PriorityClass>& new_classes) {
  RETURN_IF_ERROR(j.ExpectMap({"name", "namespace", "queue", "submit", "minAvailable", "priorityClass",
                               "duration", "scaling", "restartCost", "cooldown", "terminationGracePeriod",
                               "preemptable", "tasks"}));
  SimJob job;
  PodGroup& pg = job.group;
  ASSIGN_OR_RETURN(pg.meta.name, j["name"].Str());
  if (pg.meta.name.empty()) return j.Error("a job needs a name");
  ASSIGN_OR_RETURN(pg.meta.namespace_, j["namespace"].Str("default"));
  pg.meta.uid = StrCat("pg-", pg.meta.namespace_, "-", pg.meta.name);
  ASSIGN_OR_RETURN(pg.queue, j["queue"].Str("default"));
  ASSIGN_OR_RETURN(job.submit, j["submit"].Duration(0));
  if (j["duration"].present()) {
    ASSIGN_OR_RETURN(Millis duration, j["duration"].Duration(0));
    job.duration = duration;
  }
  ASSIGN_OR_RETURN(job.scaling, ReadScaling(j["scaling"]));
  ASSIGN_OR_RETURN(job.restart_cost, j["restartCost"].Duration(0));
  ASSIGN_OR_RETURN(job.termination_grace, j["terminationGracePeriod"].Duration(0));
  ASSIGN_OR_RETURN(std::string preemptable, j["preemptable"].Str("true"));
  if (preemptable != "true" && preemptable != "false") {
    return j["preemptable"].Error(StrCat("want true or false, got \"", preemptable, "\""));
  }
  if (preemptable == "false") pg.meta.annotations[kPreemptableAnnotation] = "false";
  if (j["cooldown"].present()) {
    ASSIGN_OR_RETURN(Millis cooldown, j["cooldown"].Duration(0));
    pg.meta.annotations[kElasticCooldownAnnotation] = FormatDuration(cooldown);
  }
  Y pc = j["priorityClass"];
  if (pc.present()) {
    RETURN_IF_ERROR(pc.ExpectMap({"name", "value"}));
    ASSIGN_OR_RETURN(pg.priority_class_name, pc["name"].Str());
    if (pg.priority_class_name.empty()) return pc.Error("a priorityClass needs a name");
    if (pc["value"].present()) {
      ASSIGN_OR_RETURN(int64_t value, pc["value"].Int(0, -(1LL << 31), (1LL << 31) - 1));
      auto known = priority_classes.find(pg.priority_class_name);
      if (known != priority_classes.end() && known->second != value) {
        return pc["value"].Error(StrCat("priority class ", pg.priority_class_name, " already has value ", known->second));
      }
      PriorityClass cls;
      cls.meta.name = pg.priority_class_name;
      cls.value = static_cast<int32_t>(value);
      new_classes.push_back(cls);
    } else if (priority_classes.find(pg.priority_class_name) == priority_classes.end()) {
      return pc.Error(StrCat("priority class ", pg.priority_class_name, " has no value"));
    }
  }

  std::vector<TaskTemplate> tasks;
  std::set<std::string, std::less<>> task_names;
  Y tasks_node = j["tasks"];
  if (!tasks_node.present()) return j.Error("a job needs tasks");
  RETURN_IF_ERROR(tasks_node.ForEach([&](const Y& t) -> absl::Status {
    ASSIGN_OR_RETURN(TaskTemplate task, ReadTask(t));
    if (!task_names.insert(task.name).second) return t.Error(StrCat("duplicate task name \"", task.name, "\""));
    tasks.push_back(std::move(task));
    return absl::OkStatus();
  }));
  int32_t total = 0;
  for (const TaskTemplate& t : tasks) total += t.replicas;
  if (total == 0) return tasks_node.Error("the job has no pods (every task has 0 replicas)");
  ASSIGN_OR_RETURN(int64_t min, j["minAvailable"].Int(total, 0, total));
  pg.min_member = static_cast<int32_t>(min);

  // Task order (spec section 2): higher task priority first, then as written.
  std::vector<size_t> order(tasks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tasks[a].priority > tasks[b].priority; });
  int32_t counted = 0;
  for (size_t i : order) {
    const TaskTemplate& t = tasks[i];
    if (t.min_available) pg.min_task_member[t.name] = *t.min_available;
    for (int32_t r = 0; r < t.replicas; ++r) {
      if (counted < pg.min_member) pg.min_resources += t.requests;
      ++counted;
    }
  }
  for (const TaskTemplate& t : tasks) {
    for (int32_t r = 0; r < t.replicas; ++r) {
      Pod pod;
      pod.meta.name = StrCat(pg.meta.name, "-", t.name, "-", r);
      pod.meta.namespace_ = pg.meta.namespace_;
      pod.meta.annotations[kGroupNameAnnotation] = pg.meta.name;
      pod.meta.annotations[kTaskSpecKey] = t.name;
      if (t.has_priority) pod.meta.annotations[kTaskPriorityAnnotation] = StrCat(t.priority);
      pod.meta.labels["volcano.sh/task-index"] = StrCat(r);
      pod.meta.labels[kTaskSpecKey] = t.name;
      pod.scheduler_name = "lahar";
      pod.priority_class_name = pg.priority_class_name;
      pod.requests = t.requests;
      pod.limits = t.limits;
      pod.node_selector = t.node_selector;
      pod.tolerations = t.tolerations;
      pod.required_node_affinity = t.affinity;
      pod.scheduling_gates = t.scheduling_gates;
      pod.termination_grace_period_seconds = job.termination_grace / 1000;
      job.pods.push_back(std::move(pod));
      job.pod_tasks.push_back(t.name);
    }
  }
  return job;
}

absl::StatusOr<SimEvent> ReadEvent(const Y& e) {
  RETURN_IF_ERROR(e.ExpectMap({"at", "scale", "cordon", "uncordon", "removeNode", "addNode", "ungate"}));
  SimEvent event;
  event.line = e.node().Mark().line + 1;
  if (!e["at"].present()) return e.Error("an event needs a time (at)");
  ASSIGN_OR_RETURN(event.at, e["at"].Duration(0));
  int kinds = 0;
  if (e["scale"].present()) {
    ++kinds;
    Y s = e["scale"];
    RETURN_IF_ERROR(s.ExpectMap({"job", "minAvailable", "replicas"}));
    event.kind = SimEvent::Kind::kScale;
    ASSIGN_OR_RETURN(event.target, s["job"].Str());
    if (event.target.empty()) return s.Error("scale needs a job");
    if (s["minAvailable"].present()) {
      ASSIGN_OR_RETURN(int64_t min, s["minAvailable"].Int(0, 0, 1 << 20));
      event.min_available = static_cast<int32_t>(min);
    }
    const Y replicas = s["replicas"];  // named: the loop must not iterate a temporary's node
    if (replicas.present()) {
      if (!replicas.node().IsMap()) return replicas.Error("expected a map of task to replicas");
      for (const auto& kv : replicas.node()) {
        Y r(kv.second, StrCat(replicas.path(), ".", kv.first.Scalar()));
        ASSIGN_OR_RETURN(int64_t n, r.Int(0, 0, 100'000));
        event.replicas.emplace_back(kv.first.Scalar(), static_cast<int32_t>(n));
      }
    }
  }
  for (auto [key, kind] : {std::pair{"cordon", SimEvent::Kind::kCordon},
                           std::pair{"uncordon", SimEvent::Kind::kUncordon},
                           std::pair{"removeNode", SimEvent::Kind::kRemoveNode}}) {
    if (!e[key].present()) continue;
    ++kinds;
    event.kind = kind;
    ASSIGN_OR_RETURN(event.target, e[key].Str());
    if (event.target.empty()) return e[key].Error("expected a node name");
  }
  if (e["addNode"].present()) {
    ++kinds;
    event.kind = SimEvent::Kind::kAddNode;
    ASSIGN_OR_RETURN(event.nodes, ReadNodeSpec(e["addNode"]));
  }
  if (e["ungate"].present()) {
    ++kinds;
    const Y u = e["ungate"];
    RETURN_IF_ERROR(u.ExpectMap({"job", "namespace", "gate"}));
    event.kind = SimEvent::Kind::kUngate;
    ASSIGN_OR_RETURN(event.target, u["job"].Str());
    if (event.target.empty()) return u.Error("ungate needs a job");
    ASSIGN_OR_RETURN(std::string ns, u["namespace"].Str());
    if (!ns.empty()) {
      if (event.target.find('/') != std::string::npos) {
        return u["namespace"].Error("the job is written as namespace/name already");
      }
      event.target = StrCat(ns, "/", event.target);
    }
    ASSIGN_OR_RETURN(event.gate, u["gate"].Str());
  }
  if (kinds != 1) return e.Error("an event needs exactly one of scale, cordon, uncordon, removeNode, addNode, ungate");
  return event;
}

absl::StatusOr<SimInput> LoadScenario(const YAML::Node& root) {
  Y y(root, "");
  RETURN_IF_ERROR(y.ExpectMap({"name", "schedulePeriod", "scheduler", "nodes", "queues", "jobs", "events"}));
  SimInput input;
  ASSIGN_OR_RETURN(input.name, y["name"].Str("scenario"));
  ASSIGN_OR_RETURN(input.schedule_period, y["schedulePeriod"].Duration(1000));
  if (input.schedule_period <= 0) return y["schedulePeriod"].Error("must be positive");
  if (y["scheduler"].present()) input.scheduler = y["scheduler"].node();

  std::set<std::string, std::less<>> node_names;
  RETURN_IF_ERROR(y["nodes"].ForEach([&](const Y& n) -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<Node> nodes, ReadNodeSpec(n));
    for (Node& node : nodes) {
      if (!node_names.insert(node.meta.name).second) return n.Error(StrCat("duplicate node name \"", node.meta.name, "\""));
      input.nodes.push_back(std::move(node));
    }
    return absl::OkStatus();
  }));
  std::set<std::string, std::less<>> queue_names;
  RETURN_IF_ERROR(y["queues"].ForEach([&](const Y& q) -> absl::Status {
    ASSIGN_OR_RETURN(Queue queue, ReadQueue(q));
    if (!queue_names.insert(queue.meta.name).second) return q.Error(StrCat("duplicate queue name \"", queue.meta.name, "\""));
    input.queues.push_back(std::move(queue));
    return absl::OkStatus();
  }));
  {
    // A queue tree that does not hold together is a bad file (the daemon reports it and goes on).
    std::vector<QueueInfo> tree;
    std::vector<std::string> parents;
    for (const Queue& q : input.queues) {
      QueueInfo info;
      info.id = static_cast<QueueId>(tree.size());
      info.name = q.meta.name;
      tree.push_back(std::move(info));
      parents.push_back(q.parent);
    }
    LinkQueueTree(tree, parents);
    for (const QueueInfo& q : tree) {
      if (!q.broken.empty()) return y["queues"].Error(q.broken);
    }
  }
  std::map<std::string, int32_t, std::less<>> priority_classes;
  std::set<std::string, std::less<>> job_keys;
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> job_gates;  // every gate of its pods
  RETURN_IF_ERROR(y["jobs"].ForEach([&](const Y& j) -> absl::Status {
    std::vector<PriorityClass> new_classes;
    ASSIGN_OR_RETURN(SimJob job, ReadJob(j, priority_classes, new_classes));
    std::string key = StrCat(job.group.meta.namespace_, "/", job.group.meta.name);
    if (!job_keys.insert(key).second) return j.Error(StrCat("duplicate job name \"", key, "\""));
    for (const Pod& pod : job.pods) job_gates[key].insert(pod.scheduling_gates.begin(), pod.scheduling_gates.end());
    if (job.group.queue != "default" && queue_names.count(job.group.queue) == 0) {
      return j["queue"].Error(StrCat("unknown queue \"", job.group.queue, "\""));
    }
    for (PriorityClass& cls : new_classes) {
      if (priority_classes.emplace(cls.meta.name, cls.value).second) input.priority_classes.push_back(cls);
    }
    input.jobs.push_back(std::move(job));
    return absl::OkStatus();
  }));
  RETURN_IF_ERROR(y["events"].ForEach([&](const Y& e) -> absl::Status {
    ASSIGN_OR_RETURN(SimEvent event, ReadEvent(e));
    if (event.kind == SimEvent::Kind::kScale || event.kind == SimEvent::Kind::kUngate) {
      const std::string_view verb = event.kind == SimEvent::Kind::kScale ? "scale" : "ungate";
      std::string key = event.target.find('/') == std::string::npos ? StrCat("default/", event.target) : event.target;
      if (job_keys.count(key) == 0) return e.Error(StrCat(verb, " of unknown job \"", event.target, "\""));
      event.target = key;
    }
    if (event.kind == SimEvent::Kind::kUngate) {
      const auto& gates = job_gates[event.target];
      if (gates.empty()) return e.Error(StrCat("ungate of job ", event.target, ", whose pods have no scheduling gates"));
      if (!event.gate.empty() && gates.count(event.gate) == 0) {
        std::string known;
        for (const std::string& g : gates) StrAppend(&known, known.empty() ? "" : ", ", g);
        return e["ungate"]["gate"].Error(
            StrCat("job ", event.target, " has no scheduling gate \"", event.gate, "\" (its gates: ", known, ")"));
      }
    }
    input.events.push_back(std::move(event));
    return absl::OkStatus();
  }));
  std::stable_sort(input.jobs.begin(), input.jobs.end(), [](const SimJob& a, const SimJob& b) { return a.submit < b.submit; });
  std::stable_sort(input.events.begin(), input.events.end(), [](const SimEvent& a, const SimEvent& b) { return a.at < b.at; });
  return input;
}

}  // namespace

absl::StatusOr<SimInput> LoadSimInput(std::string_view text, std::string_view source) {
  auto annotate = [&](const absl::Status& s) { return Annotate(s, source); };
  auto documents = ParseYamlDocuments(text);
  if (!documents.ok()) return annotate(documents.status());
  std::vector<YAML::Node> nonempty;
  for (auto& d : *documents) {
    if (!d.IsNull()) nonempty.push_back(d);
  }
  if (nonempty.empty()) return annotate(absl::InvalidArgumentError("file is empty"));
  // A snapshot is Kubernetes objects (they have a kind); a scenario is one map with nodes/jobs.
  bool snapshot = nonempty.size() > 1 || (nonempty[0].IsMap() && nonempty[0]["kind"].IsDefined());
  absl::StatusOr<SimInput> input = snapshot ? LoadSnapshot(text) : LoadScenario(nonempty[0]);
  if (!input.ok()) return annotate(input.status());
  if (input->nodes.empty() && input->events.empty()) {
    return annotate(absl::InvalidArgumentError("the cluster has no nodes"));
  }
  return input;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot read ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return absl::DataLossError(StrCat("error reading ", path));
  return contents.str();
}

absl::StatusOr<SimInput> LoadSimInputFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return LoadSimInput(text, path);
}

}  // namespace lahar
