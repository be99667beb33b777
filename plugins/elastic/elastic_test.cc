// Tests of the `elastic` plugin's hooks, called through the session as actions call them.
#include "plugins/elastic/elastic.h"

#include <catch2/catch.hpp>

#include "api/strings.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/builtins.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/elastic_configs.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::JobSpec;
using testing::TaskSpec;

// A plugin that rejects every job at enqueue, so that a test can tell elastic's permit from
// its abstention (with no vote at all the session's answer is "permit").
class RejectEnqueuePlugin : public Plugin {
 public:
  std::string_view Name() const override { return "test-reject-enqueue"; }
  void OnSessionOpen(Session& session) override {
    session.AddJobEnqueueableFn([](const JobInfo&) { return kReject; });
  }
};

const Registry& TestRegistry() {
  static const Registry* registry = [] {
    auto* r = new Registry();
    (void)RegisterBuiltinActions(*r);
    (void)RegisterBuiltinPlugins(*r);
    (void)r->RegisterPlugin("test-reject-enqueue", [](const Arguments&) -> absl::StatusOr<std::unique_ptr<Plugin>> {
      return std::make_unique<RejectEnqueuePlugin>();
    }, {});
    return r;
  }();
  return *registry;
}

SchedulerConfig Config(std::string_view yaml) {
  auto config = ParseSchedulerConfig(yaml, TestRegistry());
  REQUIRE(config.ok());
  return *config;
}

std::unique_ptr<Session> Open(const ClusterBuilder& cluster, const SchedulerConfig& config, Millis now = 0) {
  auto session = Session::Open(cluster.Snapshot(now), config, TestRegistry());
  REQUIRE(session.ok());
  return std::move(*session);
}

const JobInfo& Job(const Session& session, std::string_view name) {
  JobId id = session.cluster().FindJob(StrCat("default/", name));
  REQUIRE(id != kNoId);
  return session.job(id);
}

const TaskInfo& FirstTask(const Session& session, std::string_view job) {
  return session.task(Job(session, job).tasks.front());
}

constexpr char kElasticOnly[] = R"(
actions: "elastic-scale"
tiers:
- plugins:
  - name: elastic
)";

TEST_CASE("elastic arguments: defaults, Go durations, malformed values name plugin and key") {
  auto defaults = ParseElasticPluginOptions(Arguments("plugin elastic", {}));
  REQUIRE(defaults.ok());
  CHECK(defaults->cooldown == 60 * 1000);
  CHECK(defaults->cpu_by_limits);

  auto set = ParseElasticPluginOptions(
      Arguments("plugin elastic", {{"elastic.cooldown", "1m30s"}, {"elastic.cpuByLimits", "false"}}));
  REQUIRE(set.ok());
  CHECK(set->cooldown == 90 * 1000);
  CHECK_FALSE(set->cpu_by_limits);

  auto bad_cooldown = NewElasticPlugin(Arguments("plugin elastic", {{"elastic.cooldown", "soon"}}));
  REQUIRE_FALSE(bad_cooldown.ok());
  CHECK(bad_cooldown.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(bad_cooldown.status().message()),
             Catch::Contains("plugin elastic") && Catch::Contains("elastic.cooldown"));

  auto bad_limits = NewElasticPlugin(Arguments("plugin elastic", {{"elastic.cpuByLimits", "maybe"}}));
  REQUIRE_FALSE(bad_limits.ok());
  CHECK_THAT(std::string(bad_limits.status().message()), Catch::Contains("elastic.cpuByLimits"));

  // The configuration parser constructs the plugin once, so the file is rejected at load time.
  auto config = ParseSchedulerConfig(R"(
actions: "elastic-scale"
tiers:
- plugins:
  - name: elastic
    arguments:
      elastic.cooldown: -5s
)",
                                     TestRegistry());
  REQUIRE_FALSE(config.ok());
  CHECK_THAT(std::string(config.status().message()), Catch::Contains("elastic.cooldown"));
}

TEST_CASE("elastic order: less fulfilled first, then GPUs, cpu, memory per pod, then job order") {
  ClusterBuilder b;
  b.Node("big", "cpu=512,memory=2Ti,nvidia.com/gpu=64");
  auto job = [&](const std::string& name, int min, int replicas, int running, const std::string& requests) {
    b.Job(name, {.min = min, .tasks = {{"w", replicas, requests}}, .phase = PodGroupPhase::kRunning});
    for (int i = 0; i < running; ++i) b.Running(StrCat(name, "-w-", i), "big");
  };
  job("quarter", 1, 5, 2, "cpu=1,nvidia.com/gpu=1");  // (2-1)/(5-1) = 1/4
  job("half", 1, 3, 2, "cpu=1,nvidia.com/gpu=1");     // (2-1)/(3-1) = 1/2
  job("fixed", 2, 2, 2, "cpu=1,nvidia.com/gpu=1");    // max == min: 1
  job("gpu2", 1, 3, 1, "cpu=1,nvidia.com/gpu=2");     // 0/2 = 0
  job("gpu1cpu8", 1, 3, 1, "cpu=8,nvidia.com/gpu=1");  // 0
  job("cpu8", 1, 3, 1, "cpu=8,memory=1Gi");           // 0
  job("cpu4", 1, 3, 1, "cpu=4,memory=8Gi");           // 0
  job("mem16", 1, 3, 1, "cpu=4,memory=16Gi");         // 0
  job("two-of-four", 1, 5, 3, "cpu=1");               // (3-1)/(5-1) = 2/4
  job("three-of-six", 1, 7, 4, "cpu=1");              // (4-1)/(7-1) = 3/6
  SchedulerConfig config = Config(kElasticOnly);
  auto session = Open(b, config);
  auto less = [&](std::string_view l, std::string_view r) {
    return session->ElasticOrderLess(Job(*session, l), Job(*session, r));
  };
  CHECK(FulfillmentOf(Job(*session, "quarter")).value() == 0.25);
  CHECK(FulfillmentOf(Job(*session, "fixed")).value() == 1.0);
  CHECK(less("quarter", "half"));
  CHECK_FALSE(less("half", "quarter"));
  CHECK(less("half", "fixed"));
  CHECK(less("gpu2", "quarter"));      // 0 < 1/4
  CHECK(less("gpu2", "gpu1cpu8"));     // equal scores: 2 GPUs per pod before 1, whatever the cpu
  CHECK(less("gpu1cpu8", "cpu8"));     // 1 GPU before none
  CHECK(less("cpu8", "cpu4"));         // no GPUs: 8 cpu before 4, whatever the memory
  CHECK(less("mem16", "cpu4"));        // same cpu: 16Gi before 8Gi
  // 2/4 == 3/6 exactly, same requests: the session's job order decides (creation order).
  CHECK(less("two-of-four", "three-of-six"));
  CHECK_FALSE(less("three-of-six", "two-of-four"));
}

TEST_CASE("elastic victim order: the lower last gain gives up a worker first, as it is after each worker goes") {
  // Two measured jobs of 3 running workers. "flat"'s third worker added little, its second
  // doubled the rate; "steady"'s each added a third or a half.
  ClusterBuilder b;
  b.Node("big", "cpu=64,memory=256Gi,nvidia.com/gpu=8");
  auto job = [&](const std::string& name, const std::string& throughput) {
    b.Job(name, {.min = 1, .tasks = {{"w", 3, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning,
                 .throughput = throughput});
    b.RunningRange(name, "w", 0, 2, "big");
  };
  job("flat", "1=10,2=20,3=20.5");
  job("steady", "1=10,2=15,3=20");
  SchedulerConfig config = Config(kElasticOnly);
  auto session = Open(b, config);
  auto flat_first = [&] { return session->ElasticVictimOrderLess(Job(*session, "flat"), Job(*session, "steady")); };
  CHECK(flat_first());
  // Once "flat"'s third worker goes, its last one is the one that doubled its rate: "steady"
  // gives up a worker first. The plugin's gains follow the task's move.
  const JobInfo& flat = Job(*session, "flat");
  Statement statement(*session);
  statement.Evict(flat.tasks.back(), "test");
  CHECK_FALSE(flat_first());
  statement.Discard();
  CHECK(flat_first());
}

TEST_CASE("scalable: cooldown since the last scale, per-job override, a start is not a change") {
  ClusterBuilder b;
  b.Node("n", "cpu=64,memory=64Gi");
  for (const char* name : {"fresh", "scaled", "short", "long"}) {
    std::string cooldown = name == std::string("short") ? "10s" : name == std::string("long") ? "120s" : "";
    b.Job(name, {.min = 1, .tasks = {{"w", 3, "cpu=1"}}, .phase = PodGroupPhase::kRunning, .cooldown = cooldown});
    b.Running(StrCat(name, "-w-0"), "n");
  }
  b.LastScaled("scaled", 0).LastScaled("short", 0).LastScaled("long", 0);
  SchedulerConfig config = Config(testing::kScaleOnly);
  auto scalable_at = [&](std::string_view job, Millis now) {
    auto session = Open(b, config, now);
    return session->Scalable(Job(*session, job));
  };
  CHECK(scalable_at("fresh", 0));             // never scaled: its start does not count
  CHECK_FALSE(scalable_at("scaled", 30000));  // 30s - 0 < 60s
  CHECK(scalable_at("scaled", 60000));        // 60s - 0 >= 60s
  CHECK(scalable_at("scaled", 61000));
  CHECK(scalable_at("short", 30000));         // override 10s: 30s >= 10s
  CHECK_FALSE(scalable_at("long", 61000));    // override 120s: 61s < 120s
  CHECK(scalable_at("long", 120000));

  SchedulerConfig five_minutes = Config(R"(
actions: "elastic-scale"
tiers:
- plugins:
  - name: elastic
    arguments:
      elastic.cooldown: 5m
)");
  auto session = Open(b, five_minutes, 61000);
  CHECK_FALSE(session->Scalable(Job(*session, "scaled")));  // 61s < 300s
  CHECK(session->Scalable(Job(*session, "short")));         // the override wins: 61s >= 10s

  // Scaling inside a session restarts the cooldown at once.
  auto later = Open(b, config, 200000);
  JobId fresh = Job(*later, "fresh").id;
  REQUIRE(later->Scalable(later->job(fresh)));
  later->MarkScaled(fresh);
  CHECK_FALSE(later->Scalable(later->job(fresh)));  // 200s - 200s < 60s
}

TEST_CASE("cpuByLimits: CPU-only elastic workers fit only within pod limits; GPU pods unaffected") {
  ClusterBuilder b;
  b.Node("n", "cpu=8,memory=16Gi,nvidia.com/gpu=1");
  b.ForeignPod("system", "n", "cpu=4,memory=8Gi");  // limits = requests: cpu 4, memory 8Gi used
  b.Job("fits", {.tasks = {{"w", 1, "cpu=1,memory=1Gi", 0, "cpu=4,memory=1Gi"}}});
  b.Job("cpu-over", {.tasks = {{"w", 1, "cpu=1,memory=1Gi", 0, "cpu=5,memory=1Gi"}}});
  b.Job("mem-over", {.tasks = {{"w", 1, "cpu=1,memory=1Gi", 0, "cpu=1,memory=9Gi"}}});
  b.Job("gpu", {.tasks = {{"w", 1, "cpu=1,nvidia.com/gpu=1", 0, "cpu=16,nvidia.com/gpu=1"}}});
  SchedulerConfig config = Config(kElasticOnly);
  auto session = Open(b, config);
  const NodeInfo& node = session->node(0);
  CHECK(session->ElasticPredicate(FirstTask(*session, "fits"), node).ok());  // cpu 4 + 4 <= 8
  FitResult cpu = session->ElasticPredicate(FirstTask(*session, "cpu-over"), node);  // 4 + 5 > 8
  CHECK(cpu.code == FitCode::kElasticLimit);
  CHECK(cpu.detail == "cpu");
  FitResult memory = session->ElasticPredicate(FirstTask(*session, "mem-over"), node);  // 8Gi + 9Gi > 16Gi
  CHECK(memory.code == FitCode::kElasticLimit);
  CHECK(memory.detail == "memory");
  CHECK(session->ElasticPredicate(FirstTask(*session, "gpu"), node).ok());  // asks a GPU: by requests
  // The ordinary predicates never look at limits: the min is placed by requests.
  CHECK(session->Predicate(FirstTask(*session, "cpu-over"), node).ok());

  SchedulerConfig off = Config(R"(
actions: "elastic-scale"
tiers:
- plugins:
  - name: elastic
    arguments:
      elastic.cpuByLimits: false
)");
  auto without = Open(b, off);
  CHECK(without->ElasticPredicate(FirstTask(*without, "cpu-over"), without->node(0)).ok());
}

TEST_CASE("enqueue: elastic workers count as free, within the queue's capability") {
  // One node of 8 GPUs, all held by `run` (min 2, 8 running: 6 elastic workers, 2 GPUs of min).
  auto cluster = [] {
    ClusterBuilder b;
    b.Node("n", "cpu=64,memory=256Gi,nvidia.com/gpu=8");
    b.Queue("research", 1, "nvidia.com/gpu=6");
    b.Job("run", {.queue = "research", .min = 2, .tasks = {{"w", 8, "cpu=1,nvidia.com/gpu=1"}},
                  .phase = PodGroupPhase::kRunning});
    for (int i = 0; i < 8; ++i) b.Running(StrCat("run-w-", i), "n");
    auto pending = [&](const std::string& name, const std::string& queue, int min) {
      b.Job(name, {.queue = queue, .min = min, .tasks = {{"w", min, "cpu=1,nvidia.com/gpu=1"}},
                   .phase = PodGroupPhase::kPending});
    };
    pending("fits", "default", 4);     // cluster: idle 0 + elastic 6 = 6 >= 4
    pending("too-big", "default", 7);  // 6 < 7
    pending("capped", "research", 5);  // queue: run's min part 2 + 5 = 7 > capability 6
    pending("cap-ok", "research", 4);  // 2 + 4 = 6 <= 6
    pending("one", "research", 1);     // 2 + 1 = 3 <= 6
    return b;
  };
  // Tier 2 rejects everything: a job is enqueueable only if elastic (tier 1) permits it.
  SchedulerConfig config = Config(R"(
actions: "enqueue"
tiers:
- plugins:
  - name: elastic
- plugins:
  - name: test-reject-enqueue
)");
  {
    ClusterBuilder b = cluster();
    auto session = Open(b, config);
    CHECK(session->JobEnqueueable(Job(*session, "fits")));
    CHECK_FALSE(session->JobEnqueueable(Job(*session, "too-big")));
    CHECK_FALSE(session->JobEnqueueable(Job(*session, "capped")));
    CHECK(session->JobEnqueueable(Job(*session, "cap-ok")));
  }
  {
    // An admitted job still waiting for its min holds its share of the free capacity.
    ClusterBuilder b = cluster();
    b.Job("waiting", {.min = 3, .tasks = {{"w", 3, "cpu=1,nvidia.com/gpu=1"}}});  // Inqueue
    auto session = Open(b, config);
    CHECK_FALSE(session->JobEnqueueable(Job(*session, "fits")));  // 6 - 3 = 3 < 4
  }
  {
    // A job admitted earlier in the session holds its share for the votes after it.
    ClusterBuilder b = cluster();
    auto session = Open(b, config);
    CHECK(session->JobEnqueueable(Job(*session, "cap-ok")));
    const JobInfo& fits = Job(*session, "fits");
    session->AdmitJob(fits.id, fits.min_resources);
    CHECK_FALSE(session->JobEnqueueable(Job(*session, "cap-ok")));  // 6 - 4 = 2 < 4
  }
  {
    // ... and its queue's commitment: research holds 2 + 4 once cap-ok is admitted.
    ClusterBuilder b = cluster();
    auto session = Open(b, config);
    CHECK(session->JobEnqueueable(Job(*session, "one")));
    const JobInfo& cap_ok = Job(*session, "cap-ok");
    session->AdmitJob(cap_ok.id, cap_ok.min_resources);
    CHECK_FALSE(session->JobEnqueueable(Job(*session, "one")));  // 6 + 1 > 6
    CHECK_FALSE(session->JobEnqueueable(Job(*session, "fits")));  // free 6 - 4 = 2 < 4
  }
  {
    // Another queue's guarantee leaves research a real capability of min(6, 8 - 4) = 4 GPUs.
    ClusterBuilder b = cluster();
    b.Queue("ops", 1, "", "nvidia.com/gpu=4");
    auto session = Open(b, config);
    CHECK_FALSE(session->JobEnqueueable(Job(*session, "cap-ok")));  // 2 + 4 = 6 > 4
    CHECK(session->JobEnqueueable(Job(*session, "fits")));          // default: min(8, 8 - 4) = 4 >= 4
  }
  // Without the elastic plugin nothing permits.
  ClusterBuilder b = cluster();
  SchedulerConfig reject_only = Config(R"(
actions: "enqueue"
tiers:
- plugins:
  - name: test-reject-enqueue
)");
  auto session = Open(b, reject_only);
  CHECK_FALSE(session->JobEnqueueable(Job(*session, "cap-ok")));
}

TEST_CASE("elastic workers: highest index first, never the master, never below min or a role minimum") {
  ClusterBuilder b;
  b.Node("n", "cpu=64,memory=64Gi");
  // Different task priorities: the highest-priority tasks (both ps) are masters.
  b.Job("ps", {.min = 1, .tasks = {{"ps", 2, "cpu=1", 10}, {"worker", 2, "cpu=1"}}, .phase = PodGroupPhase::kRunning});
  for (const char* pod : {"ps-ps-0", "ps-ps-1", "ps-worker-0", "ps-worker-1"}) b.Running(pod, "n");
  // Equal priorities: rank 0 is the master, even when the min would allow taking it.
  b.Job("eq", {.min = 1, .tasks = {{"w", 4, "cpu=1"}}, .phase = PodGroupPhase::kRunning});
  for (const char* pod : {"eq-w-0", "eq-w-1", "eq-w-2", "eq-w-3"}) b.Running(pod, "n");
  // A role minimum: 2 of 3 workers must stay even though min is 1.
  b.Job("roles", {.min = 1, .tasks = {{"chief", 1, "cpu=1"}, {"worker", 3, "cpu=1"}},
                  .min_task_member = {{"worker", 2}}, .phase = PodGroupPhase::kRunning});
  for (const char* pod : {"roles-chief-0", "roles-worker-0", "roles-worker-1", "roles-worker-2"}) b.Running(pod, "n");
  SchedulerConfig config = Config(kElasticOnly);
  auto session = Open(b, config);
  auto names = [&](std::string_view job) {
    std::vector<std::string> out;
    for (TaskId t : ElasticWorkers(*session, Job(*session, job))) out.push_back(session->task(t).name());
    return out;
  };
  // surplus 4 - 1 = 3, but ps-ps-1 has the job's highest priority: only the two workers.
  CHECK(names("ps") == std::vector<std::string>{"ps-worker-1", "ps-worker-0"});
  // surplus 3: ranks 3, 2, 1; rank 0 stays.
  CHECK(names("eq") == std::vector<std::string>{"eq-w-3", "eq-w-2", "eq-w-1"});
  // surplus 3, but workers may only drop from 3 to 2; the chief (rank 0 of equal priorities) stays.
  CHECK(names("roles") == std::vector<std::string>{"roles-worker-2"});
}

}  // namespace
}  // namespace lahar
