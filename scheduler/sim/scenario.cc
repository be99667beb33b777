#include "scheduler/sim/scenario.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "api/cluster_info.h"
#include "api/decode.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "api/topology.h"
#include "scheduler/sim/scenario_job.h"
#include "scheduler/sim/scenario_reader.h"
#include "scheduler/sim/snapshot.h"

namespace lahar {

SimJobEntry EntryOf(std::string key, const SimJob& job) {
  return SimJobEntry{.key = std::move(key),
                     .queue = job.group.queue,
                     .submit = job.submit,
                     .min = job.group.min_member,
                     .measured = job.scaling.kind == Scaling::Kind::kThroughput,
                     .network_topology = job.group.network_topology.has_value()};
}

namespace {

// Jobs made whole when the input loaded (a snapshot's): handed out as copies.
class JobsMadeAtLoad : public SimJobSource {
 public:
  explicit JobsMadeAtLoad(std::vector<SimJob> jobs) : jobs_(std::move(jobs)) {}
  absl::StatusOr<SimJob> Make(size_t index) const override { return jobs_.at(index); }

 private:
  std::vector<SimJob> jobs_;
};

// Indexes of `jobs` by submit time, then as written.
std::vector<size_t> SubmitOrder(const std::vector<SimJobEntry>& jobs) {
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return jobs[a].submit < jobs[b].submit; });
  return order;
}

using Y = ScenarioNode;

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

absl::StatusOr<SimEvent> ReadEvent(const Y& e) {
  RETURN_IF_ERROR(e.ExpectMap({"at", "scale", "cordon", "uncordon", "removeNode", "addNode", "ungate"}));
  SimEvent event;
  event.line = e.Line();
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
      if (!replicas.IsMap()) return replicas.Error("expected a map of task to replicas");
      RETURN_IF_ERROR(replicas.ForEachEntry([&](const std::string& task, const Y& r) -> absl::Status {
        ASSIGN_OR_RETURN(int64_t n, r.Int(0, 0, 100'000));
        event.replicas.emplace_back(task, static_cast<int32_t>(n));
        return absl::OkStatus();
      }));
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

// A scenario's jobs, read again from the parsed file when the simulation submits them: they
// were read and checked once when it loaded, so reading them again gives the same jobs.
class ScenarioJobs : public SimJobSource {
 public:
  // `nodes[i]`: the file's node of the input's job i. They point into `json` when the file was
  // JSON (a YAML node keeps its own document alive).
  ScenarioJobs(std::shared_ptr<const rapidjson::Document> json, std::vector<Y> nodes,
               std::map<std::string, int32_t, std::less<>> priority_classes)
      : json_(std::move(json)), nodes_(std::move(nodes)), priority_classes_(std::move(priority_classes)) {}

  absl::StatusOr<SimJob> Make(size_t index) const override {
    std::vector<PriorityClass> known;  // every class is known by now
    return ReadScenarioJob(nodes_.at(index), priority_classes_, known);
  }

 private:
  std::shared_ptr<const rapidjson::Document> json_;
  std::vector<Y> nodes_;
  std::map<std::string, int32_t, std::less<>> priority_classes_;
};

// `json`: the document `y` points into, when the file was JSON.
absl::StatusOr<SimInput> LoadScenario(const Y& y, std::shared_ptr<const rapidjson::Document> json = nullptr) {
  // description: free text (the converters put their command and the trace attribution there).
  RETURN_IF_ERROR(y.ExpectMap({"name", "description", "schedulePeriod", "scheduler", "nodes", "queues", "hypernodes",
                               "jobs", "events"}));
  SimInput input;
  ASSIGN_OR_RETURN(input.name, y["name"].Str("scenario"));
  ASSIGN_OR_RETURN(input.schedule_period, y["schedulePeriod"].Duration(1000));
  if (input.schedule_period <= 0) return y["schedulePeriod"].Error("must be positive");
  if (y["scheduler"].present()) input.scheduler = y["scheduler"].ToYaml();

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
  std::set<std::string, std::less<>> hypernode_names;
  RETURN_IF_ERROR(y["hypernodes"].ForEach([&](const Y& h) -> absl::Status {
    // The HyperNode's spec as written, plus its name: decoded as the apiserver's object would be.
    RETURN_IF_ERROR(h.ExpectMap({"name", "tier", "tierName", "members"}));
    rapidjson::Document object(rapidjson::kObjectType);
    auto& alloc = object.GetAllocator();
    rapidjson::Document spec = h.ToJson();
    const std::string name = h["name"].ScalarText();
    if (name.empty()) return h.Error("a HyperNode needs a name");
    spec.RemoveMember("name");
    rapidjson::Value metadata(rapidjson::kObjectType);
    metadata.AddMember("name", rapidjson::Value(name.c_str(), alloc), alloc);
    object.AddMember("metadata", metadata, alloc);
    object.AddMember("spec", rapidjson::Value(spec, alloc), alloc);
    auto decoded = DecodeHyperNode(object);
    if (!decoded.ok()) return h.Error(FromAbsl(decoded.status().message()));
    if (!hypernode_names.insert(name).second) return h.Error(StrCat("duplicate HyperNode name \"", name, "\""));
    input.hypernodes.push_back(*std::move(decoded));
    return absl::OkStatus();
  }));
  std::map<std::string, int32_t, std::less<>> priority_classes;
  std::set<std::string, std::less<>> job_keys;
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> job_gates;  // every gate of its pods
  std::vector<Y> job_nodes;
  RETURN_IF_ERROR(y["jobs"].ForEach([&](const Y& j) -> absl::Status {
    std::vector<PriorityClass> new_classes;
    ASSIGN_OR_RETURN(SimJob job, ReadScenarioJob(j, priority_classes, new_classes));
    std::string key = StrCat(job.group.meta.namespace_, "/", job.group.meta.name);
    if (!job_keys.insert(key).second) return j.Error(StrCat("duplicate job name \"", key, "\""));
    for (const Pod& pod : job.pods) {
      if (!pod.scheduling_gates.empty()) job_gates[key].insert(pod.scheduling_gates.begin(), pod.scheduling_gates.end());
    }
    if (job.group.queue != "default" && queue_names.count(job.group.queue) == 0) {
      return j["queue"].Error(StrCat("unknown queue \"", job.group.queue, "\""));
    }
    for (PriorityClass& cls : new_classes) {
      if (priority_classes.emplace(cls.meta.name, cls.value).second) input.priority_classes.push_back(cls);
    }
    input.jobs.push_back(EntryOf(std::move(key), job));
    job_nodes.push_back(j);
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
  std::vector<size_t> order = SubmitOrder(input.jobs);
  std::vector<SimJobEntry> entries;
  std::vector<Y> nodes;
  entries.reserve(order.size());
  nodes.reserve(order.size());
  for (size_t i : order) {
    entries.push_back(std::move(input.jobs[i]));
    nodes.push_back(std::move(job_nodes[i]));
  }
  input.jobs = std::move(entries);
  input.job_source = std::make_shared<ScenarioJobs>(std::move(json), std::move(nodes), std::move(priority_classes));
  std::stable_sort(input.events.begin(), input.events.end(), [](const SimEvent& a, const SimEvent& b) { return a.at < b.at; });
  return input;
}

// A scenario written as JSON (its first character '{', no "kind"): read with RapidJSON, which
// for a trace of 80,000 jobs takes a fraction of yaml-cpp's time and memory.
std::optional<absl::StatusOr<SimInput>> LoadJsonScenario(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{') return std::nullopt;
  auto doc = std::make_shared<rapidjson::Document>();
  doc->Parse(text.data(), text.size());
  if (doc->HasParseError() || !doc->IsObject() || doc->HasMember("kind")) return std::nullopt;  // YAML's to read
  const Y root(doc.get(), "");
  return LoadScenario(root, std::move(doc));
}

// The scenario or snapshot in `text`, read by its format.
absl::StatusOr<SimInput> ReadSimInput(std::string_view text) {
  if (std::optional<absl::StatusOr<SimInput>> json = LoadJsonScenario(text)) return *std::move(json);
  ASSIGN_OR_RETURN(std::vector<YAML::Node> documents, ParseYamlDocuments(text));
  std::vector<YAML::Node> nonempty;
  for (auto& d : documents) {
    if (!d.IsNull()) nonempty.push_back(d);
  }
  if (nonempty.empty()) return absl::InvalidArgumentError("file is empty");
  // A snapshot is Kubernetes objects (they have a kind); a scenario is one map with nodes/jobs.
  bool snapshot = nonempty.size() > 1 || (nonempty[0].IsMap() && nonempty[0]["kind"].IsDefined());
  return snapshot ? LoadSnapshot(text) : LoadScenario(Y(nonempty[0], ""));
}

// A topology that does not hold together, or a job's constraint it cannot honour, is a bad file
// (spec 3.3; the daemon reports the same and goes on). Nodes added by events count as members.
absl::Status CheckTopology(const SimInput& input) {
  if (input.hypernodes.empty()) return absl::OkStatus();
  std::vector<const Node*> all;
  for (const Node& n : input.nodes) all.push_back(&n);
  for (const SimEvent& e : input.events) {
    for (const Node& n : e.nodes) all.push_back(&n);
  }
  std::sort(all.begin(), all.end(), [](const Node* a, const Node* b) { return a->meta.name < b->meta.name; });
  std::vector<NodeInfo> nodes;
  for (const Node* n : all) {
    NodeInfo info;
    info.id = static_cast<NodeId>(nodes.size());
    info.node = std::make_shared<const Node>(*n);
    nodes.push_back(std::move(info));
  }
  std::vector<const HyperNode*> hypernodes;
  for (const HyperNode& h : input.hypernodes) hypernodes.push_back(&h);
  const Topology topology = BuildTopology(std::move(hypernodes), nodes);
  if (!topology.problems.empty()) return absl::InvalidArgumentError(StrCat("hypernodes: ", topology.problems.front()));
  for (size_t i = 0; i < input.jobs.size(); ++i) {
    if (!input.jobs[i].network_topology) continue;
    ASSIGN_OR_RETURN(const SimJob job, input.MakeJob(i));
    const auto& nt = job.group.network_topology;
    const std::string& key = input.jobs[i].key;
    if (!nt->invalid.empty()) return absl::InvalidArgumentError(StrCat("job ", key, ": ", nt->invalid));
    if (!nt->highest_tier_name.empty() && topology.TierNamed(nt->highest_tier_name) == 0) {
      return absl::InvalidArgumentError(StrCat("job ", key, ": networkTopology.highestTierName \"", nt->highest_tier_name,
                                               "\" is the tierName of no HyperNode"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::shared_ptr<const SimJobSource> MadeJobsSource(std::vector<SimJob> jobs) {
  return std::make_shared<JobsMadeAtLoad>(std::move(jobs));
}

absl::StatusOr<SimInput> LoadSimInput(std::string_view text, std::string_view source) {
  absl::StatusOr<SimInput> input = ReadSimInput(text);
  if (!input.ok()) return Annotate(input.status(), source);
  if (absl::Status topology = CheckTopology(*input); !topology.ok()) return Annotate(topology, source);
  if (input->nodes.empty() && input->events.empty()) {
    return Annotate(absl::InvalidArgumentError("the cluster has no nodes"), source);
  }
  return input;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot read ", path));
  // Read in place when the size is known (a trace is tens of MB: no stream buffer and copy).
  std::string contents;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size > 0 && in) {
    contents.resize(static_cast<size_t>(size));
    in.read(contents.data(), size);
    contents.resize(static_cast<size_t>(in.gcount()));
    if (in.bad()) return absl::DataLossError(StrCat("error reading ", path));
    return contents;
  }
  in.clear();
  in.seekg(0, std::ios::beg);
  std::ostringstream stream;  // not seekable (a pipe): as it comes
  stream << in.rdbuf();
  if (in.bad()) return absl::DataLossError(StrCat("error reading ", path));
  return stream.str();
}

absl::StatusOr<SimInput> LoadSimInputFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return LoadSimInput(text, path);
}

}  // namespace lahar
