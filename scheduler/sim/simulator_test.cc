#include "scheduler/sim/simulator.h"
#include "scheduler/sim/summary_table.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>

#include "api/yaml.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/builtins.h"
#include "test/testing/cluster_builder.h"

namespace lahar {
namespace {

struct Event {
  double t;
  std::string type;
  std::string pod, job, node, reason, change;
  std::map<std::string, int64_t> requests, allocatable;
};

std::vector<Event> ParseEvents(const std::string& jsonl) {
  std::vector<Event> events;
  std::istringstream in(jsonl);
  std::string line;
  while (std::getline(in, line)) {
    rapidjson::Document doc;
    doc.Parse(line.c_str());
    REQUIRE(doc.IsObject());
    Event e;
    e.t = doc["t"].GetDouble();
    e.type = doc["type"].GetString();
    for (auto [key, field] : {std::pair{"pod", &e.pod}, std::pair{"job", &e.job}, std::pair{"node", &e.node},
                              std::pair{"reason", &e.reason}, std::pair{"change", &e.change}}) {
      if (doc.HasMember(key)) *field = doc[key].GetString();
    }
    for (auto [key, map] : {std::pair{"requests", &e.requests}, std::pair{"allocatable", &e.allocatable}}) {
      if (!doc.HasMember(key)) continue;
      for (const auto& m : doc[key].GetObject()) (*map)[m.name.GetString()] = m.value.GetInt64();
    }
    events.push_back(std::move(e));
  }
  return events;
}

SimRun MustRun(std::string_view scenario, std::string_view config = DefaultSchedulerConfigYaml(),
               Millis until = -1) {
  auto input = LoadSimInput(scenario, "test.yaml");
  if (!input.ok()) FAIL(std::string(input.status().message()));
  SimOptions options;
  options.until = until;
  auto run = RunSimulation(*input, testing::MustParseConfig(config), BuiltinRegistry(), options);
  if (!run.ok()) FAIL(std::string(run.status().message()));
  return std::move(*run);
}

std::vector<Event> OfType(const std::vector<Event>& events, std::string_view type) {
  std::vector<Event> out;
  for (const Event& e : events) {
    if (e.type == type) out.push_back(e);
  }
  return out;
}

constexpr char kTwoJobs[] = R"(
nodes:
- namePrefix: n-
  count: 2
  allocatable: {cpu: "8", memory: 32Gi}
jobs:
- name: a
  minAvailable: 2
  duration: 10m
  tasks: [{name: w, replicas: 2, resources: {cpu: "4", memory: 1Gi}}]
- name: b
  submit: 1m
  duration: 5m
  tasks: [{name: w, replicas: 1, resources: {cpu: "8"}}]
)";

TEST_CASE("the same input gives byte-identical events") {
  SimRun first = MustRun(kTwoJobs);
  SimRun second = MustRun(kTwoJobs);
  CHECK(first.events_jsonl == second.events_jsonl);
  CHECK(first.figures.jobs == 2);
}

TEST_CASE("events streamed as the run goes are the events kept in memory") {
  auto input = LoadSimInput(kTwoJobs, "test.yaml");
  REQUIRE(input.ok());
  const SchedulerConfig config = testing::MustParseConfig(DefaultSchedulerConfigYaml());
  SimOptions options;
  std::ostringstream streamed;
  options.events_out = &streamed;
  auto run = RunSimulation(*input, config, BuiltinRegistry(), options);
  REQUIRE(run.ok());
  CHECK(run->events_jsonl.empty());
  CHECK(streamed.str() == MustRun(kTwoJobs).events_jsonl);
  CHECK_FALSE(streamed.str().empty());

  SimOptions dropped;
  dropped.keep_events = false;
  auto quiet = RunSimulation(*input, config, BuiltinRegistry(), dropped);
  REQUIRE(quiet.ok());
  CHECK(quiet->events_jsonl.empty());
  CHECK(quiet->figures.completed_jobs == 2);
  CHECK(quiet->figures.binds == run->figures.binds);
}

TEST_CASE("events follow the spec: nodes added at the start in canonical units, binds carry requests") {
  std::vector<Event> events = ParseEvents(MustRun(kTwoJobs).events_jsonl);
  std::vector<Event> nodes = OfType(events, "node");
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].t == 0);
  CHECK(nodes[0].change == "add");
  CHECK(nodes[0].allocatable["cpu"] == 8000);                  // millicores
  CHECK(nodes[0].allocatable["memory"] == 32LL * 1024 * 1024 * 1024);  // bytes
  std::vector<Event> binds = OfType(events, "bind");
  REQUIRE(binds.size() == 3);
  CHECK(binds[0].job == "default/a");
  CHECK(binds[0].requests["cpu"] == 4000);
  CHECK(binds[0].requests["memory"] == 1LL << 30);
  // Times never go backwards.
  for (size_t i = 1; i < events.size(); ++i) CHECK(events[i].t >= events[i - 1].t);
}

TEST_CASE("a job runs for its duration at min size, then its pods complete and free the node") {
  // a: 2 pods of 4 cpu; nodeorder (least allocated) spreads them, one per node. b (8 cpu)
  // arrives at 60s and needs a whole node, so it waits until a completes at 600s.
  std::vector<Event> events = ParseEvents(MustRun(kTwoJobs).events_jsonl);
  std::vector<Event> binds = OfType(events, "bind");
  REQUIRE(binds.size() == 3);
  CHECK(binds[0].node == "n-0");
  CHECK(binds[1].node == "n-1");
  std::map<std::string, double> start, complete;
  for (const Event& e : OfType(events, "job-start")) start[e.job] = e.t;
  for (const Event& e : OfType(events, "job-complete")) complete[e.job] = e.t;
  CHECK(start["default/a"] == 0);
  CHECK(complete["default/a"] == 600);  // 10m at min size
  CHECK(start["default/b"] == 600);
  CHECK(complete["default/b"] == 900);  // 600s + 5m
  CHECK(OfType(events, "pod-complete").size() == 3);
}

TEST_CASE("summary figures: JCT, wait and utilization") {
  SimRun run = MustRun(kTwoJobs);
  // a: submit 0, end 600 -> JCT 600, wait 0. b: submit 60, start 600, end 900 -> JCT 840,
  // wait 540. Means: JCT 720, wait 270.
  CHECK(run.figures.jct_mean == Approx(720));
  CHECK(run.figures.wait_mean == Approx(270));
  CHECK(run.figures.makespan == Approx(900));
  // cpu: a holds 8 of 16 cores for 600 s, b 8 cores for 300 s: (8*600 + 8*300) / (16*900) = 0.5
  CHECK(run.figures.Utilization("cpu") == Approx(0.5));
  rapidjson::Document summary;
  summary.Parse(run.summary_json.c_str());
  REQUIRE(summary.IsObject());
  CHECK(summary["jobs"].Size() == 2);
  CHECK(summary["cluster"]["jct"]["p95"].GetDouble() == Approx(840));
  // Every action of the configuration has its wall time per session.
  const auto& actions = summary["cluster"]["actionMicros"];
  REQUIRE(actions.IsObject());
  for (const char* action : {"enqueue", "allocate", "preempt-elastic-workers", "reclaim", "preempt", "elastic-scale", "backfill"}) {
    INFO(action);
    REQUIRE(actions.HasMember(action));
    CHECK(actions[action]["total"].GetDouble() >= actions[action]["p99"].GetDouble());
  }
}

TEST_CASE("the summary table prints - for JCT and wait when no job completed or started") {
  SimRun none = MustRun(kTwoJobs);
  none.figures.completed_jobs = 0;
  none.figures.started_jobs = 0;
  const std::string table = FormatSummaryTable("two", {none});
  CHECK_THAT(table, Catch::Contains("mean JCT") && !Catch::Contains("0.0s"));
  CHECK(table.find("mean wait") != std::string::npos);
  for (const char* row : {"mean JCT", "p95 JCT", "mean wait", "p95 wait"}) {
    const size_t at = table.find(row);
    REQUIRE(at != std::string::npos);
    const std::string line = table.substr(at, table.find('\n', at) - at);
    INFO(line);
    CHECK(line.back() == '-');
  }
}

TEST_CASE("--until stops the simulation at that time") {
  SimRun run = MustRun(kTwoJobs, DefaultSchedulerConfigYaml(), 120'000);
  std::vector<Event> events = ParseEvents(run.events_jsonl);
  CHECK(OfType(events, "job-complete").empty());
  for (const Event& e : events) CHECK(e.t <= 120);
  // Until 30 s only job a (submitted at 0) exists; b (60 s) is counted, not listed.
  SimRun early = MustRun(kTwoJobs, DefaultSchedulerConfigYaml(), 30'000);
  rapidjson::Document summary;
  summary.Parse(early.summary_json.c_str());
  REQUIRE(summary.IsObject());
  CHECK(summary["cluster"]["jobs"].GetInt() == 2);
  REQUIRE(summary["jobs"].Size() == 1);
  CHECK(std::string(summary["jobs"][0]["job"].GetString()) == "default/a");
}

TEST_CASE("linear scaling: a job with twice its min runs twice as fast") {
  // One node with room for 4 pods; min 2, max 4, 1h at min size -> 30m with 4 pods.
  SimRun run = MustRun(R"(
nodes:
- name: n
  allocatable: {cpu: "4"}
jobs:
- name: e
  minAvailable: 2
  duration: 1h
  scaling: linear
  tasks: [{name: w, replicas: 4, resources: {cpu: "1"}}]
)");
  std::vector<Event> events = ParseEvents(run.events_jsonl);
  CHECK(OfType(events, "bind").size() == 4);
  REQUIRE(OfType(events, "job-complete").size() == 1);
  CHECK(OfType(events, "job-complete")[0].t == 1800);
  // Completion predicted at min size (3600 s) was superseded: time and figures end at 1800 s,
  // with the node's 4 cpu busy throughout.
  CHECK(run.figures.end_time == Approx(1800));
  CHECK(run.figures.Utilization("cpu") == Approx(1.0));
}

TEST_CASE("restartCost: progress since the last checkpoint is lost when the worker count changes") {
  // min 1, max 2 on a node that holds 1 pod at first; a second node is added at 30m, the job
  // grows to 2 (losing restartCost = 10m of progress) and runs at 2x from then on:
  // progress at 30m: 30m; after the restart 20m; remaining 40m at 2x = 20m -> ends at 50m.
  SimRun run = MustRun(R"(
nodes:
- name: n0
  allocatable: {cpu: "1"}
jobs:
- name: e
  minAvailable: 1
  duration: 1h
  scaling: linear
  restartCost: 10m
  tasks: [{name: w, replicas: 2, resources: {cpu: "1"}}]
events:
- at: 30m
  addNode: {name: n1, allocatable: {cpu: "1"}}
)");
  std::vector<Event> events = ParseEvents(run.events_jsonl);
  REQUIRE(OfType(events, "job-complete").size() == 1);
  CHECK(OfType(events, "job-complete")[0].t == 3000);
}

TEST_CASE("cordon keeps new pods off a node; removeNode recreates its pods elsewhere") {
  SimRun run = MustRun(R"(
nodes:
- namePrefix: n-
  count: 2
  allocatable: {cpu: "2"}
jobs:
- name: a
  duration: 2h
  tasks: [{name: w, replicas: 1, resources: {cpu: "2"}}]
- name: b
  submit: 20m
  duration: 1h
  tasks: [{name: w, replicas: 1, resources: {cpu: "2"}}]
events:
- at: 10m
  cordon: n-1
- at: 30m
  uncordon: n-1
- at: 40m
  removeNode: n-0
)");
  std::vector<Event> events = ParseEvents(run.events_jsonl);
  std::vector<Event> binds = OfType(events, "bind");
  REQUIRE(binds.size() >= 2);
  CHECK(binds[0].node == "n-0");  // a at 0s (n-0 first by name)
  // b arrives at 20m while n-1 is cordoned and n-0 is full: it binds at 30m on n-1.
  CHECK(binds[1].job == "default/b");
  CHECK(binds[1].t == 1800);
  CHECK(binds[1].node == "n-1");
  // Removing n-0 at 40m evicts a's pod; it is recreated and waits (n-1 is full) until b ends.
  std::vector<Event> evicts = OfType(events, "evict");
  REQUIRE(evicts.size() == 1);
  CHECK(evicts[0].pod == "default/a-w-0");
  CHECK(evicts[0].reason == "node-removed n-0");
  REQUIRE(binds.size() == 3);
  CHECK(binds[2].pod == "default/a-w-0");
  CHECK(binds[2].t == 5400);  // b ends at 30m + 1h = 90m
}

TEST_CASE("scale events change min and replicas of a running job") {
  SimRun run = MustRun(R"(
nodes:
- name: n
  allocatable: {cpu: "8"}
jobs:
- name: s
  minAvailable: 2
  tasks: [{name: w, replicas: 2, resources: {cpu: "1"}}]
events:
- at: 1m
  scale: {job: s, minAvailable: 4, replicas: {w: 4}}
)", R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: gang}]
- plugins: [{name: predicates}, {name: nodeorder}]
)", 10 * 60'000);
  std::vector<Event> binds = OfType(ParseEvents(run.events_jsonl), "bind");
  REQUIRE(binds.size() == 4);
  CHECK(binds[2].t == 60);
  CHECK(binds[3].pod == "default/s-w-3");
}

TEST_CASE("a snapshot keeps bound pods in place and schedules pending ones") {
  SimRun run = MustRun(R"(apiVersion: v1
kind: List
items:
- kind: Node
  metadata: {name: n1}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
- kind: Pod
  metadata: {name: old, namespace: default, annotations: {lahar.sh/sim-duration: 10m}}
  spec:
    schedulerName: lahar
    nodeName: n1
    containers: [{name: c, resources: {requests: {cpu: "3"}}}]
  status: {phase: Running}
- kind: Pod
  metadata: {name: new, namespace: default, annotations: {lahar.sh/sim-duration: 5m}}
  spec:
    schedulerName: lahar
    containers: [{name: c, resources: {requests: {cpu: "2"}}}]
- kind: Pod
  metadata: {name: other, namespace: kube-system}
  spec:
    schedulerName: default-scheduler
    nodeName: n1
    containers: [{name: c, resources: {requests: {cpu: "1"}}}]
  status: {phase: Running}
)");
  std::vector<Event> events = ParseEvents(run.events_jsonl);
  std::vector<Event> binds = OfType(events, "bind");
  REQUIRE(binds.size() == 2);
  CHECK(binds[0].pod == "default/old");  // already there at t=0
  CHECK(binds[0].t == 0);
  // new needs 2 cpu; old (3) and other (1) fill the node until old completes at 10m.
  CHECK(binds[1].pod == "default/new");
  CHECK(binds[1].t == 600);
  CHECK(OfType(events, "job-complete").size() == 2);
}

}  // namespace
}  // namespace lahar

namespace lahar {
namespace {

TEST_CASE("an evicted pod frees its node only after the job's terminationGracePeriod") {
  // One node of 4 cpu. `e` (min 1, max 4, 1 cpu each) fills it with elastic workers at t=0;
  // its cooldown (60s) has passed when gang `g` (2 x 1 cpu) arrives at 600s. Two of e's workers
  // are evicted at 600s (highest index first) but hold their cpu for 30s: g binds at 630s.
  SimRun run = MustRun(R"(
nodes:
- name: n
  allocatable: {cpu: "4"}
jobs:
- name: e
  minAvailable: 1
  terminationGracePeriod: 30s
  tasks: [{name: w, replicas: 4, resources: {cpu: "1"}}]
- name: g
  submit: 10m
  minAvailable: 2
  duration: 5m
  tasks: [{name: w, replicas: 2, resources: {cpu: "1"}}]
)", DefaultSchedulerConfigYaml(), 20 * 60'000);
  std::vector<Event> events = ParseEvents(run.events_jsonl);
  std::vector<Event> evicts = OfType(events, "evict");
  REQUIRE(evicts.size() == 2);
  CHECK(evicts[0].t == 600);
  CHECK(evicts[0].pod == "default/e-w-3");
  CHECK(evicts[1].pod == "default/e-w-2");
  CHECK(evicts[0].reason == "elastic-preempted-for default/g");
  CHECK(evicts[0].requests["cpu"] == 1000);
  double g_bound = -1;
  for (const Event& e : OfType(events, "bind")) {
    if (e.job == "default/g" && g_bound < 0) g_bound = e.t;
  }
  CHECK(g_bound == 630);
}

TEST_CASE("a gated job waits until ungate events remove its gates; pods created later come without them") {
  SimRun run = MustRun(R"(
nodes:
- name: n
  allocatable: {cpu: "8"}
jobs:
- name: g
  minAvailable: 2
  duration: 10m
  tasks: [{name: w, replicas: 2, resources: {cpu: "1"}, schedulingGates: [example.com/quota, example.com/data]}]
- name: free
  duration: 10m
  tasks: [{name: w, replicas: 1, resources: {cpu: "1"}}]
events:
- at: 2m
  ungate: {job: g, gate: example.com/quota}
- at: 5m
  ungate: {job: g}
- at: 6m
  scale: {job: g, replicas: {w: 3}}
)", DefaultSchedulerConfigYaml(), 8 * 60'000);
  std::vector<Event> events = ParseEvents(run.events_jsonl);
  std::vector<Event> ungates = OfType(events, "ungate");
  REQUIRE(ungates.size() == 2);
  CHECK(ungates[0].t == 120);
  CHECK(ungates[0].job == "default/g");
  CHECK(ungates[1].t == 300);
  std::map<std::string, double> bound;
  for (const Event& e : OfType(events, "bind")) bound.emplace(e.pod, e.t);
  CHECK(bound.at("default/free-w-0") == 0);
  // One gate left after 2m still holds both pods; the second ungate lets the gang start at once.
  CHECK(bound.at("default/g-w-0") == 300);
  CHECK(bound.at("default/g-w-1") == 300);
  // Scaled up after its gates were removed: the new pod has none and binds as an elastic worker.
  REQUIRE(bound.count("default/g-w-2") == 1);
  CHECK(bound.at("default/g-w-2") >= 360);
  std::vector<Event> starts = OfType(events, "job-start");
  REQUIRE(starts.size() == 2);
  CHECK(starts[1].job == "default/g");
  CHECK(starts[1].t == 300);
}

}  // namespace
}  // namespace lahar

namespace lahar {
namespace {

// `yaml` as JSON text, scalars kept as strings (as a converter may write them) except those that
// are plainly integers, to exercise both kinds.
std::string AsJson(const std::string& yaml) {
  auto docs = ParseYamlDocuments(yaml);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  rapidjson::Document json;
  YamlToJson((*docs)[0], json, json.GetAllocator());
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  json.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

TEST_CASE("a session stopped for parked classes decides the same however often it runs again with classes back") {
  for (const char* file : {"topology.yaml", "traces/philly-200.yaml"}) {
    INFO(file);
    std::ifstream in(std::string(LAHAR_EXAMPLES_DIR) + "/" + file);
    REQUIRE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    auto input = LoadSimInput(text.str(), file);
    REQUIRE(input.ok());
    const SchedulerConfig config = testing::MustParseConfig(DefaultSchedulerConfigYaml());
    auto run_with = [&](int class_reruns, bool skip_unchanged) {
      SimOptions options;
      options.until = 48 * 3600 * 1000;
      options.class_reruns = class_reruns;
      options.skip_unchanged = skip_unchanged;
      auto run = RunSimulation(*input, config, BuiltinRegistry(), options);
      REQUIRE(run.ok());
      return std::move(*run);
    };
    const SimRun classes_back = run_with(3, true);
    REQUIRE(classes_back.figures.rerun_sessions > 0);  // the runs again happen
    const SimRun every_job_back = run_with(0, true);   // straight to every job
    const SimRun nothing_skipped = run_with(3, false);
    CHECK(every_job_back.events_jsonl == classes_back.events_jsonl);
    CHECK(nothing_skipped.events_jsonl == classes_back.events_jsonl);
  }
}

TEST_CASE("every bundled example scenario written as JSON simulates to byte-identical events") {
  for (const char* file : {"departments-elastic.yaml", "departments-quotas.yaml", "dlrover-speedup.yaml",
                           "paddle-fulfillment.yaml", "traces/philly-200.yaml"}) {
    INFO(file);
    std::ifstream in(std::string(LAHAR_EXAMPLES_DIR) + "/" + file);
    REQUIRE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    const std::string json = AsJson(text.str());
    REQUIRE(json.front() == '{');
    SimRun from_yaml = MustRun(text.str(), DefaultSchedulerConfigYaml(), 48 * 3600 * 1000);
    SimRun from_json = MustRun(json, DefaultSchedulerConfigYaml(), 48 * 3600 * 1000);
    CHECK(from_json.events_jsonl == from_yaml.events_jsonl);
  }
  // An error in a JSON scenario names the path (JSON has no line to name).
  auto bad = LoadSimInput(R"({"nodes":[{"name":"n","allocatable":{"cpu":"lots"}}]})", "bad.json");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("bad.json") && Catch::Contains("nodes[0].allocatable.cpu"));
}

}  // namespace
}  // namespace lahar
