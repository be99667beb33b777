#include "scheduler/sim/scenario_job.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "absl/strings/numbers.h"
#include "api/decode.h"
#include "api/status_macros.h"
#include "api/strings.h"

namespace lahar {


double Scaling::Throughput(int running) const {
  if (running <= 0 || throughput.empty()) return 0;
  const ThroughputPoint* below = nullptr;
  for (const ThroughputPoint& p : throughput) {
    if (p.size == running) return p.rate;
    if (p.size > running) {
      const double x0 = below ? below->size : 0, y0 = below ? below->rate : 0;
      return y0 + (p.rate - y0) * (running - x0) / (p.size - x0);
    }
    below = &p;
  }
  return throughput.back().rate;  // flat past the last point
}

double Scaling::Rate(int running, int min) const {
  if (running <= 0 || min <= 0) return 0;
  if (kind == Kind::kLinear) return static_cast<double>(running) / min;
  if (kind == Kind::kThroughput) {
    const double at_min = Throughput(min);
    return at_min > 0 ? Throughput(running) / at_min : 0;
  }
  auto speedup = [&](int n) { return 1.0 / (serial_fraction + (1.0 - serial_fraction) / n); };
  return speedup(running) / speedup(min);
}


namespace {

using Y = ScenarioNode;
absl::StatusOr<Scaling> ReadScaling(const Y& s) {
  Scaling scaling;
  if (!s.present()) return scaling;
  if (s.IsScalar()) {
    if (s.ScalarText() == "linear") return scaling;
    if (s.ScalarText() == "amdahl") {
      scaling.kind = Scaling::Kind::kAmdahl;
      scaling.serial_fraction = 0.05;
      return scaling;
    }
    return s.Error(StrCat("unknown scaling \"", s.ScalarText(), "\" (want linear or {amdahl: <serial fraction>})"));
  }
  RETURN_IF_ERROR(s.ExpectMap({"amdahl", "throughput"}));
  if (s["amdahl"].present() == s["throughput"].present()) {
    return s.Error("want one of {amdahl: <serial fraction>} or {throughput: {<pods>: <rate>, ...}}");
  }
  if (s["throughput"].present()) {
    scaling.kind = Scaling::Kind::kThroughput;
    RETURN_IF_ERROR(s["throughput"].ForEachEntry([&](const std::string& key, const Y& value) -> absl::Status {
      ThroughputPoint point;
      ASSIGN_OR_RETURN(std::string rate, value.Str());
      if (!absl::SimpleAtoi(key, &point.size) || point.size <= 0) {
        return value.Error(StrCat("\"", key, "\" is not a pod count (a positive integer)"));
      }
      if (!absl::SimpleAtod(rate, &point.rate) || !std::isfinite(point.rate) || point.rate < 0) {
        return value.Error(StrCat("\"", rate, "\" is not a throughput (a finite number >= 0)"));
      }
      for (const ThroughputPoint& seen : scaling.throughput) {
        if (seen.size == point.size) return value.Error(StrCat("pod count ", key, " is given twice"));
      }
      scaling.throughput.push_back(point);
      return absl::OkStatus();
    }));
    if (scaling.throughput.empty()) return s["throughput"].Error("want at least one <pods>: <rate>");
    std::sort(scaling.throughput.begin(), scaling.throughput.end(),
              [](const ThroughputPoint& a, const ThroughputPoint& b) { return a.size < b.size; });
    return scaling;
  }
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
    // Decode through the Pod decoder ({metadata: {name}, spec: {tolerations, affinity}}), so the
    // scenario and snapshot formats accept exactly the same fields.
    rapidjson::Document json(rapidjson::kObjectType);
    auto& allocator = json.GetAllocator();
    rapidjson::Value metadata(rapidjson::kObjectType);
    metadata.AddMember("name", "task", allocator);
    rapidjson::Value spec(rapidjson::kObjectType);
    for (const char* field : {"tolerations", "affinity"}) {
      if (!t[field].present()) continue;
      rapidjson::Document part = t[field].ToJson();
      spec.AddMember(rapidjson::StringRef(field), rapidjson::Value(part, allocator), allocator);
    }
    json.AddMember("metadata", metadata, allocator);
    json.AddMember("spec", spec, allocator);
    auto decoded = DecodePod(json);
    if (!decoded.ok()) return t.Error(FromAbsl(decoded.status().message()));
    task.tolerations = decoded->tolerations;
    task.affinity = decoded->required_node_affinity;
  }
  return task;
}

}  // namespace

absl::StatusOr<SimJob> ReadScenarioJob(const Y& j,
                                       const std::map<std::string, int32_t, std::less<>>& priority_classes,
                                       std::vector<PriorityClass>& new_classes) {
  RETURN_IF_ERROR(j.ExpectMap({"name", "namespace", "queue", "submit", "minAvailable", "priorityClass",
                               "duration", "scaling", "restartCost", "cooldown", "terminationGracePeriod",
                               "preemptable", "networkTopology", "tierRate", "tasks"}));
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
  if (j["networkTopology"].present()) {
    const Y nt = j["networkTopology"];
    RETURN_IF_ERROR(nt.ExpectMap({"mode", "highestTierAllowed", "highestTierName"}));
    auto decoded = DecodeNetworkTopology(nt.ToJson(), "");
    if (!decoded.ok()) return nt.Error(FromAbsl(decoded.status().message()));
    if (!decoded->invalid.empty()) return nt.Error(decoded->invalid);
    pg.network_topology = *std::move(decoded);
  }
  RETURN_IF_ERROR(j["tierRate"].ForEachEntry([&](const std::string& key, const Y& value) -> absl::Status {
    int32_t tier = 0;
    if (!absl::SimpleAtoi(key, &tier) || tier < 2) {
      return value.Error(StrCat("tierRate key \"", key, "\" is not a tier of 2 or above"));
    }
    double factor = 0;
    if (!absl::SimpleAtod(value.ScalarText(), &factor) || !(factor > 0 && factor <= 1)) {
      return value.Error(StrCat("tierRate factor \"", value.ScalarText(), "\" is not a number in (0, 1]"));
    }
    job.tier_rate[tier] = factor;
    return absl::OkStatus();
  }));
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
  if (job.scaling.kind == Scaling::Kind::kThroughput) {
    if (min > 0 && job.duration && job.scaling.Throughput(static_cast<int>(min)) <= 0) {
      return j["scaling"].Error(StrCat("the throughput at minAvailable (", min, " pods) is 0: the job would never finish"));
    }
    // A job that will report its throughput says so from the start (spec 3.2).
    pg.meta.annotations[kThroughputAnnotation] = "";
  }

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

}  // namespace lahar
