#include "scheduler/framework/victims.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/strings.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/statement.h"
#include "scheduler/framework/victim_order.h"
#include "scheduler/framework/wait_memo.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/elastic_configs.h"
#include "test/testing/session_fixture.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using Strings = std::vector<std::string>;

// Gang only: no predicates, scores, victim hooks or queue limits, so the planner's own rules
// decide. Nodes sort by name (n1 is node 0), jobs by namespace/name.
constexpr std::string_view kConfig = "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n";

// With the elastic plugin: fulfillment order and the cooldown (60s).
constexpr std::string_view kElasticConfig =
    "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: elastic\n";

VictimPolicy Policy(VictimKind kind = VictimKind::kWholeJob) {
  VictimPolicy policy;
  policy.kind = [kind](const JobInfo&) { return kind; };
  policy.reason = {"test-for default/s"};
  return policy;
}

// Elastic workers only, and saying so (VictimPolicy::takes_workers_only).
VictimPolicy WorkersOnly() {
  VictimPolicy policy = Policy(VictimKind::kElasticWorkers);
  policy.takes_workers_only = true;
  return policy;
}

// A plan in names: victims in eviction order, placements as pod@node.
struct Planned {
  bool fits = false;
  Strings victims;
  Strings placements;
  Strings whole_jobs;
  VictimPlan raw;
};

Planned Names(const Session& s, const VictimPlan& plan) {
  Planned out{plan.fits, {}, {}, {}, plan};
  for (TaskId t : plan.victims) out.victims.push_back(s.task(t).name());
  for (const auto& [t, n] : plan.placements) {
    out.placements.push_back(StrCat(s.task(t).name(), "@", s.node(n).name()));
  }
  for (JobId j : plan.whole_jobs) out.whole_jobs.push_back(s.job(j).name);
  return out;
}

// Plans job default/<job> in `statement` (left as the plan left it).
Planned PlanIn(testing::SessionFixture& s, Statement& statement, std::string_view job, const VictimPolicy& policy,
               VictimOrderCache* cache = nullptr) {
  Session& session = s.session();
  VictimPlan plan = PlanForStarvingJob(session, statement, s.job(StrCat("default/", job)).id, policy,
                                       ScalableJobs(session), cache);
  return Names(session, plan);
}

// Plans job default/<job> on a fresh session of `b` and discards the statement.
Planned Plan(const ClusterBuilder& b, std::string_view job, const VictimPolicy& policy = Policy(),
             std::string_view config = kConfig) {
  testing::SessionFixture s(b, config);
  Statement statement(s.session());
  return PlanIn(s, statement, job, policy);
}

void EditPod(ClusterBuilder& b, std::string_view pod, const std::function<void(Pod&)>& edit) {
  Pod copy = *b.cache().FindPod(StrCat("default/", pod));
  edit(copy);
  b.cache().UpsertPod(std::move(copy));
}

void StartedAt(ClusterBuilder& b, std::string_view pod, int64_t ms) {
  EditPod(b, pod, [ms](Pod& p) { p.start_time_ms = ms; });
}

void Unpreemptable(ClusterBuilder& b, std::string_view pod) {
  EditPod(b, pod, [](Pod& p) { p.meta.annotations[kPreemptableAnnotation] = "false"; });
}

// Task states and node usage, to check that a discarded plan left nothing behind.
std::string Cluster(const Session& s) {
  std::string out;
  for (const TaskInfo& t : s.cluster().tasks) StrAppend(&out, t.name(), ":", TaskStatusName(t.status), " ");
  for (const NodeInfo& n : s.cluster().nodes) {
    StrAppend(&out, n.name(), ":", n.used.DebugString(), "/", n.releasing.DebugString(), "/",
              n.pipelined.DebugString(), " ");
  }
  return out;
}

TEST_CASE("a plan that does not fit is discarded and evicts nothing") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=2");
  b.Job("a", {.tasks = {{"w", 1, "cpu=4"}}}).Running("a-w-0", "n1");
  b.Job("b", {.tasks = {{"w", 1, "cpu=2"}}}).Running("b-w-0", "n2");
  b.Job("s", {.min = 2, .tasks = {{"w", 2, "cpu=3"}}});   // 6 of the 6 takeable, but not per node
  b.Job("huge", {.tasks = {{"w", 1, "cpu=7"}}});           // more than all takeable
  testing::SessionFixture s(b, kConfig);
  const std::string before = Cluster(s.session());
  {
    Statement statement(s.session());
    const Planned plan = PlanIn(s, statement, "s", Policy());
    // s-w-0 went to n1 for a; nothing frees 3 for s-w-1.
    CHECK_FALSE(plan.fits);
    CHECK(plan.victims == Strings{"a-w-0"});
    CHECK(plan.placements == Strings{"s-w-0@n1"});
    statement.Discard();
  }
  CHECK(Cluster(s.session()) == before);
  CHECK(s->evictions().empty());
  Statement statement(s.session());
  const Planned plan = PlanIn(s, statement, "huge", Policy());
  CHECK_FALSE(plan.fits);
  CHECK(statement.empty());
}

TEST_CASE("a gang held back by scheduling gates gets no plan: nothing is evicted for it") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=4");
  b.Job("a", {.tasks = {{"w", 1, "cpu=4"}}}).Running("a-w-0", "n1");
  b.Job("b", {.tasks = {{"w", 1, "cpu=4"}}}).Running("b-w-0", "n2");
  // s-w-0 has no gates and would take a's place; s-w-1 waits for a gate, so fits no node.
  b.Job("s", {.min = 2, .tasks = {{"w", 2, "cpu=4"}}});
  b.SchedulingGates("s-w-1", {"example.com/quota"});
  constexpr std::string_view kWithPredicates =
      "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: predicates\n";
  {
    testing::SessionFixture s(b, kWithPredicates);
    const std::string before = Cluster(s.session());
    Statement statement(s.session());
    const Planned plan = PlanIn(s, statement, "s", Policy());
    CHECK_FALSE(plan.fits);
    CHECK(plan.placements == Strings{"s-w-0@n1"});  // the dry run got as far as the gated pod
    statement.Discard();
    CHECK(Cluster(s.session()) == before);
    CHECK(s->evictions().empty());
  }
  // Ungated, the same plan fits: both nodes are taken for it.
  b.SchedulingGates("s-w-1", {});
  Planned plan = Plan(b, "s", Policy(), kWithPredicates);
  CHECK(plan.fits);
  CHECK(plan.victims == Strings{"a-w-0", "b-w-0"});
}

TEST_CASE("elastic workers go first, highest index first, and a job keeps its min unless taken whole") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Job("el", {.min = 2, .tasks = {{"w", 4, "cpu=1"}}}).RunningRange("el", "w", 0, 3, "n1");
  b.Job("g", {.min = 2, .tasks = {{"w", 2, "cpu=2"}}}).RunningRange("g", "w", 0, 1, "n1");
  b.Job("s2", {.tasks = {{"w", 1, "cpu=2"}}});
  b.Job("s3", {.tasks = {{"w", 1, "cpu=3"}}});
  // 2 workers free cpu=2, as many pods as taking g whole: the workers rank first.
  Planned two = Plan(b, "s2");
  CHECK(two.fits);
  CHECK(two.victims == Strings{"el-w-3", "el-w-2"});
  CHECK(two.placements == Strings{"s2-w-0@n1"});
  CHECK(two.whole_jobs.empty());
  // Workers only: cpu=2 is all el can give without going below min 2.
  Planned workers_only = Plan(b, "s3", Policy(VictimKind::kElasticWorkers));
  CHECK_FALSE(workers_only.fits);
  CHECK(workers_only.victims.empty());
  // Whole jobs allowed: el (first by name) is taken whole, its workers first.
  Planned three = Plan(b, "s3");
  CHECK(three.fits);
  CHECK(three.victims == Strings{"el-w-3", "el-w-2", "el-w-0", "el-w-1"});
  CHECK(three.whole_jobs == Strings{"el"});
}

TEST_CASE("candidates made for a workers-only policy serve a whole-job policy of the same run as fresh ones") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Job("el", {.min = 2, .tasks = {{"w", 4, "cpu=1"}}}).RunningRange("el", "w", 0, 3, "n1");
  b.Job("g", {.min = 2, .tasks = {{"w", 2, "cpu=2"}}}).RunningRange("g", "w", 0, 1, "n1");
  b.Job("s3", {.tasks = {{"w", 1, "cpu=3"}}});
  const Planned fresh = Plan(b, "s3");
  REQUIRE(fresh.fits);

  testing::SessionFixture s(b, kConfig);
  Session& session = s.session();
  VictimOrderCache cache;
  const std::vector<bool> scalable = ScalableJobs(session);
  const JobId s3 = s.job("default/s3").id;
  {
    Statement statement(session);
    CHECK_FALSE(PlanForStarvingJob(session, statement, s3, Policy(VictimKind::kElasticWorkers), scalable, &cache,
                                   {1, 0}).fits);
  }
  Statement statement(session);
  const Planned whole = Names(session, PlanForStarvingJob(session, statement, s3, Policy(), scalable, &cache, {2, 0}));
  CHECK(whole.fits);
  CHECK(whole.victims == fresh.victims);
  CHECK(whole.whole_jobs == fresh.whole_jobs);
}

TEST_CASE("workers of the most fulfilled job go first, fulfillment re-evaluated after each") {
  ClusterBuilder b;
  b.Node("n1", "cpu=7");
  b.Job("a", {.tasks = {{"w", 4, "cpu=1"}}}).RunningRange("a", "w", 0, 3, "n1");  // 3/3
  b.Job("b", {.tasks = {{"w", 5, "cpu=1"}}}).RunningRange("b", "w", 0, 2, "n1");  // 2/4
  b.Job("s", {.tasks = {{"w", 1, "cpu=4"}}});
  // a 3/3 -> a-w-3 -> 2/3 -> a-w-2 -> 1/3 < b 2/4 -> b-w-2 -> 1/4 < a 1/3 -> a-w-1.
  const Planned plan = Plan(b, "s", Policy(VictimKind::kElasticWorkers), kElasticConfig);
  CHECK(plan.fits);
  CHECK(plan.victims == Strings{"a-w-3", "a-w-2", "b-w-2", "a-w-1"});
}

TEST_CASE("orders of two keys with the same elastic workers give the plans fresh orders give") {
  ClusterBuilder b;
  b.Node("n1", "cpu=7");
  b.Job("a", {.tasks = {{"w", 4, "cpu=1"}}}).RunningRange("a", "w", 0, 3, "n1");
  b.Job("b", {.tasks = {{"w", 5, "cpu=1"}}}).RunningRange("b", "w", 0, 2, "n1");
  b.Job("s1", {.tasks = {{"w", 1, "cpu=4"}}});
  b.Job("s2", {.tasks = {{"w", 1, "cpu=3"}}});
  const VictimPolicy policy = Policy(VictimKind::kElasticWorkers);
  const Planned fresh1 = Plan(b, "s1", policy, kElasticConfig);
  const Planned fresh2 = Plan(b, "s2", policy, kElasticConfig);
  REQUIRE(fresh1.fits);
  REQUIRE(fresh2.fits);

  testing::SessionFixture s(b, kElasticConfig);
  Session& session = s.session();
  VictimOrderCache cache;
  const std::vector<bool> scalable = ScalableJobs(session);
  auto plan = [&](std::string_view job, std::pair<int64_t, int64_t> key) {
    Statement statement(session);
    Planned out = Names(session, PlanForStarvingJob(session, statement, s.job(StrCat("default/", job)).id, policy,
                                                    scalable, &cache, key));
    statement.Discard();  // not kept: the second key may reuse the first one's ranking
    return out;
  };
  const Planned shared1 = plan("s1", {1, 0});
  const Planned shared2 = plan("s2", {2, 0});
  CHECK(shared1.victims == fresh1.victims);
  CHECK(shared1.placements == fresh1.placements);
  CHECK(shared2.victims == fresh2.victims);
  CHECK(shared2.placements == fresh2.placements);
}

TEST_CASE("which jobs may scale follows a scaling within the session") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Job("a", {.tasks = {{"w", 3, "cpu=1"}}}).RunningRange("a", "w", 0, 2, "n1");
  testing::SessionFixture s(b, kElasticConfig);
  Session& session = s.session();
  const JobId a = s.job("default/a").id;
  CHECK(ScalableJobs(session)[a]);
  session.MarkScaled(a);  // its cooldown starts now
  CHECK_FALSE(ScalableJobs(session)[a]);
}

TEST_CASE("workers inside their cooldown are offered only when the policy includes them, after the others") {
  ClusterBuilder b;
  b.Node("n1", "cpu=5");
  b.Job("a", {.tasks = {{"w", 3, "cpu=1"}}}).RunningRange("a", "w", 0, 2, "n1");  // 2/2, in cooldown
  b.Job("b", {.tasks = {{"w", 3, "cpu=1"}}}).RunningRange("b", "w", 0, 1, "n1");  // 1/2
  b.Job("s", {.tasks = {{"w", 1, "cpu=2"}}});
  b.LastScaled("a", 0);
  VictimPolicy policy = Policy(VictimKind::kElasticWorkers);
  const Planned outside = Plan(b, "s", policy, kElasticConfig);
  CHECK_FALSE(outside.fits);
  CHECK(outside.victims.empty());
  policy.include_cooldown = true;
  CHECK(Plan(b, "s", policy, kElasticConfig).victims == Strings{"b-w-1", "a-w-2"});
}

TEST_CASE("a queue without room takes its own queue's entries first, when the policy allows it") {
  ClusterBuilder b;
  b.Queue("qa", 1).Node("n1", "cpu=2").Node("n2", "cpu=2");
  b.Job("a", {.queue = "qa", .tasks = {{"w", 1, "cpu=2"}}}).Running("a-w-0", "n1");  // rank 0
  b.Job("x", {.tasks = {{"w", 1, "cpu=2"}}}).Running("x-w-0", "n2");                  // rank 1, queue default
  b.Job("s", {.tasks = {{"w", 1, "cpu=2"}}});
  testing::SessionFixture s(b, kConfig);
  const TaskInfo& x = s.task("default/x-w-0");
  VictimPolicy policy = Policy();
  policy.room = [&x](const TaskInfo&) { return x.status == TaskStatus::kReleasing; };
  {
    Statement statement(s.session());
    const Planned plan = PlanIn(s, statement, "s", policy);
    CHECK(plan.fits);
    CHECK(plan.victims == Strings{"x-w-0"});
    CHECK(plan.placements == Strings{"s-w-0@n2"});  // where x made room, without more evictions
  }
  policy.make_room_in_own_queue = false;
  Statement statement(s.session());
  const Planned plan = PlanIn(s, statement, "s", policy);
  CHECK_FALSE(plan.fits);
  CHECK(statement.empty());
}

TEST_CASE("whole jobs: lowest priority first") {
  ClusterBuilder b;
  b.PriorityClass("high", 100).PriorityClass("low", 10).Node("n1", "cpu=4");
  b.Job("hi", {.tasks = {{"w", 1, "cpu=2"}}, .priority_class = "high"}).Running("hi-w-0", "n1");
  b.Job("lo", {.tasks = {{"w", 1, "cpu=2"}}, .priority_class = "low"}).Running("lo-w-0", "n1");
  b.Job("s", {.tasks = {{"w", 1, "cpu=2"}}});
  CHECK(Plan(b, "s").victims == Strings{"lo-w-0"});
}

TEST_CASE("whole jobs of equal priority: the most recently started first") {
  ClusterBuilder b;
  b.Node("n1", "cpu=6");
  b.Job("j1", {.tasks = {{"w", 1, "cpu=2"}}}).Running("j1-w-0", "n1");
  b.Job("j2", {.tasks = {{"w", 1, "cpu=2"}}}).Running("j2-w-0", "n1");
  b.Job("j3", {.tasks = {{"w", 1, "cpu=2"}}}).Running("j3-w-0", "n1");
  b.Job("s", {.tasks = {{"w", 1, "cpu=2"}}});
  StartedAt(b, "j1-w-0", 1000);
  StartedAt(b, "j2-w-0", 9000);
  StartedAt(b, "j3-w-0", 5000);
  CHECK(Plan(b, "s").victims == Strings{"j2-w-0"});
  // A pod with no start time yet counts as started now.
  StartedAt(b, "j2-w-0", -1);
  StartedAt(b, "j1-w-0", 9000);
  CHECK(Plan(b, "s").victims == Strings{"j2-w-0"});
}

TEST_CASE("whole jobs started alike: the fewest pods first, then by name") {
  ClusterBuilder b;
  b.Node("n1", "cpu=6");
  b.Job("a", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}}).RunningRange("a", "w", 0, 1, "n1");
  b.Job("d", {.tasks = {{"w", 1, "cpu=2"}}}).Running("d-w-0", "n1");
  b.Job("c", {.tasks = {{"w", 1, "cpu=2"}}}).Running("c-w-0", "n1");
  b.Job("s", {.tasks = {{"w", 1, "cpu=2"}}});
  CHECK(Plan(b, "s").victims == Strings{"c-w-0"});
}

TEST_CASE("the node where the fewest pods must go wins, whatever their rank") {
  ClusterBuilder b;
  b.Node("n1", "cpu=2").Node("n2", "cpu=2");
  b.Job("x1", {.tasks = {{"w", 1, "cpu=1"}}}).Running("x1-w-0", "n1");
  b.Job("x2", {.tasks = {{"w", 1, "cpu=1"}}}).Running("x2-w-0", "n1");
  b.Job("y", {.tasks = {{"w", 1, "cpu=2"}}}).Running("y-w-0", "n2");
  b.Job("s", {.tasks = {{"w", 1, "cpu=2"}}});
  // n1: x1 (rank 0) and x2 (rank 1), 2 pods; n2: y (rank 2), 1 pod.
  const Planned plan = Plan(b, "s");
  CHECK(plan.victims == Strings{"y-w-0"});
  CHECK(plan.placements == Strings{"s-w-0@n2"});
}

TEST_CASE("nodes that cost as many pods: the lower rank wins, then the lower node id") {
  ClusterBuilder b;
  b.PriorityClass("high", 100).Node("n2", "cpu=2").Node("n1", "cpu=2").Node("n3", "cpu=2");
  // n1: hi (1 pod, rank 1); n2 and n3: one pod each of g (2 pods, rank 0).
  b.Job("hi", {.tasks = {{"w", 1, "cpu=2"}}, .priority_class = "high"}).Running("hi-w-0", "n1");
  b.Job("g", {.min = 2, .tasks = {{"w", 2, "cpu=2"}}}).Running("g-w-0", "n3").Running("g-w-1", "n2");
  b.Job("s1", {.tasks = {{"w", 1, "cpu=2"}}});
  b.Job("s2", {.min = 2, .tasks = {{"w", 2, "cpu=2"}}});
  // One pod needs room: n1 costs 1 pod (hi), n2 and n3 cost 2 (g whole).
  CHECK(Plan(b, "s1").placements == Strings{"s1-w-0@n1"});
  // After hi, the second pod costs g's 2 pods on n2 or n3: tie on (pods, rank), n2 by id.
  const Planned two = Plan(b, "s2");
  CHECK(two.victims == Strings{"hi-w-0", "g-w-0", "g-w-1"});
  CHECK(two.placements == Strings{"s2-w-0@n1", "s2-w-1@n2"});
}

TEST_CASE("a job the policy does not offer, or whose queue it refuses, is left alone") {
  ClusterBuilder b;
  b.Queue("qa", 1).Queue("qb", 1).Node("n1", "cpu=2").Node("n2", "cpu=2");
  // a: worker a-w-1 (rank 0), then a-w-0 whole (rank 1); b whole (rank 2).
  b.Job("a", {.queue = "qa", .tasks = {{"w", 2, "cpu=1"}}}).RunningRange("a", "w", 0, 1, "n1");
  b.Job("b", {.queue = "qb", .tasks = {{"w", 1, "cpu=2"}}}).Running("b-w-0", "n2");
  b.Job("s", {.tasks = {{"w", 1, "cpu=1"}}});
  CHECK(Plan(b, "s").victims == Strings{"a-w-1"});

  VictimPolicy not_a = Policy();
  not_a.kind = [](const JobInfo& job) { return job.name == "a" ? VictimKind::kNone : VictimKind::kWholeJob; };
  CHECK(Plan(b, "s", not_a).victims == Strings{"b-w-0"});

  testing::SessionFixture s(b, kConfig);
  const QueueId qa = s.queue("qa").id;
  Strings taken;
  VictimPolicy spare_qa = Policy();
  spare_qa.admissible = [qa](const JobInfo& victim, const Resources&) { return victim.queue != qa; };
  spare_qa.on_take = [&taken](const JobInfo& victim, const Resources& freed) {
    taken.push_back(StrCat(victim.name, " ", freed.DebugString()));
  };
  Statement statement(s.session());
  const Planned plan = PlanIn(s, statement, "s", spare_qa);
  CHECK(plan.victims == Strings{"b-w-0"});
  CHECK(plan.placements == Strings{"s-w-0@n2"});
  CHECK(taken == Strings{"b " + testing::Res("cpu=2").DebugString()});
}

TEST_CASE("a pod or PodGroup annotated preemptable false is never a victim, and its job never goes whole") {
  auto cluster = [](bool group_preemptable) {
    ClusterBuilder b;
    b.Node("n1", "cpu=2").Node("n2", "cpu=2");
    // a: a-w-1 is an elastic worker (rank 0), then a-w-0 whole (rank 1); b whole (rank 2).
    b.Job("a", {.tasks = {{"w", 2, "cpu=1"}}, .preemptable = group_preemptable});
    b.RunningRange("a", "w", 0, 1, "n1");
    b.Job("b", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}}).RunningRange("b", "w", 0, 1, "n2");
    b.Job("s1", {.tasks = {{"w", 1, "cpu=1"}}});
    b.Job("s2", {.tasks = {{"w", 1, "cpu=2"}}});
    return b;
  };
  const Strings b_whole{"b-w-0", "b-w-1"};
  SECTION("unprotected: a's worker, then a whole") {
    ClusterBuilder b = cluster(true);
    CHECK(Plan(b, "s1").victims == Strings{"a-w-1"});
    CHECK(Plan(b, "s2").victims == Strings{"a-w-1", "a-w-0"});
  }
  SECTION("the worker protected: nothing of a goes (taking a-w-0 would take it first)") {
    ClusterBuilder b = cluster(true);
    Unpreemptable(b, "a-w-1");
    CHECK(Plan(b, "s1").victims == b_whole);
    CHECK(Plan(b, "s2").victims == b_whole);
  }
  SECTION("the master protected: a's worker may go, a never whole") {
    ClusterBuilder b = cluster(true);
    Unpreemptable(b, "a-w-0");
    CHECK(Plan(b, "s1").victims == Strings{"a-w-1"});
    CHECK(Plan(b, "s2").victims == b_whole);
  }
  SECTION("the PodGroup protected: nothing of a goes") {
    ClusterBuilder b = cluster(false);
    CHECK(Plan(b, "s1").victims == b_whole);
  }
}

TEST_CASE("a protected elastic worker shields the workers ranked after it") {
  ClusterBuilder b;
  b.Node("n1", "cpu=3");
  b.Job("a", {.tasks = {{"w", 3, "cpu=1"}}}).RunningRange("a", "w", 0, 2, "n1");
  b.Job("s", {.tasks = {{"w", 1, "cpu=1"}}});
  const VictimPolicy workers = Policy(VictimKind::kElasticWorkers);
  CHECK(Plan(b, "s", workers).victims == Strings{"a-w-2"});
  Unpreemptable(b, "a-w-2");
  const Planned plan = Plan(b, "s", workers);  // a-w-1 may only go after a-w-2
  CHECK_FALSE(plan.fits);
  CHECK(plan.victims.empty());
}

TEST_CASE("a plan fits only when the pipelined-job hooks agree") {
  ClusterBuilder b;
  b.Node("n1", "cpu=2");
  b.Job("a", {.tasks = {{"w", 1, "cpu=2"}}}).Running("a-w-0", "n1");
  b.Job("s", {.tasks = {{"w", 1, "cpu=2"}}});
  testing::SessionFixture s(b, kConfig);
  s->AddJobPipelinedFn([](const JobInfo& job) { return job.name == "s" ? kReject : kAbstain; });
  Statement statement(s.session());
  const Planned plan = PlanIn(s, statement, "s", Policy());
  CHECK(plan.placements == Strings{"s-w-0@n1"});
  CHECK_FALSE(plan.fits);
}

TEST_CASE("whole jobs of a lower group go first, before priority") {
  ClusterBuilder b;
  b.PriorityClass("high", 100).Node("n1", "cpu=4");
  b.Job("a", {.tasks = {{"w", 1, "cpu=2"}}}).Running("a-w-0", "n1");
  b.Job("b", {.tasks = {{"w", 1, "cpu=2"}}, .priority_class = "high"}).Running("b-w-0", "n1");
  b.Job("s", {.tasks = {{"w", 1, "cpu=2"}}});
  CHECK(Plan(b, "s").victims == Strings{"a-w-0"});
  VictimPolicy grouped = Policy();
  grouped.whole_job_group = [](const JobInfo& job) -> int64_t { return job.name == "b" ? 1 : 2; };
  CHECK(Plan(b, "s", grouped).victims == Strings{"b-w-0"});
}

TEST_CASE("a cached victim order gives the same plans as a fresh one") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=2");
  b.Job("a", {.min = 1, .tasks = {{"w", 2, "cpu=2"}}}).RunningRange("a", "w", 0, 1, "n1");
  b.Job("b", {.tasks = {{"w", 1, "cpu=2"}}}).Running("b-w-0", "n2");
  b.Job("s1", {.min = 2, .tasks = {{"w", 2, "cpu=3"}}});  // takes from n1, then fails
  b.Job("s2", {.tasks = {{"w", 1, "cpu=4"}}});
  const Planned fresh = Plan(b, "s2");
  CHECK(fresh.victims == Strings{"a-w-1", "a-w-0"});
  CHECK(fresh.placements == Strings{"s2-w-0@n1"});

  testing::SessionFixture s(b, kConfig);
  VictimOrderCache cache;
  // The policy is asked about each job when an order is built: counting its calls shows reuse.
  int asked = 0;
  VictimPolicy counted = Policy();
  counted.kind = [&asked](const JobInfo&) {
    ++asked;
    return VictimKind::kWholeJob;
  };
  {
    Statement statement(s.session());
    CHECK_FALSE(PlanIn(s, statement, "s1", counted, &cache).fits);
    CHECK_FALSE(statement.empty());
    statement.Discard();
  }
  CHECK(asked == 2);  // a and b: the other starving job s2, short of its min, is passed over first
  Statement statement(s.session());
  const Planned cached = PlanIn(s, statement, "s2", counted, &cache);
  CHECK(asked == 2);  // the same order, reused
  CHECK(cached.fits);
  CHECK(cached.victims == fresh.victims);
  CHECK(cached.placements == fresh.placements);
  CHECK(cached.whole_jobs == fresh.whole_jobs);
}

TEST_CASE("after a committed plan, a cached order of whole jobs gives the same plan as a fresh one") {
  ClusterBuilder b;
  b.Node("n1", "cpu=2").Node("n2", "cpu=2").Node("n3", "cpu=2");
  b.Job("a", {.tasks = {{"w", 1, "cpu=2"}}}).Running("a-w-0", "n1");
  b.Job("b", {.tasks = {{"w", 1, "cpu=2"}}}).Running("b-w-0", "n2");
  b.Job("c", {.tasks = {{"w", 1, "cpu=2"}}}).Running("c-w-0", "n3");
  b.Job("s1", {.tasks = {{"w", 1, "cpu=2"}}});
  b.Job("s2", {.tasks = {{"w", 1, "cpu=2"}}});
  testing::SessionFixture s(b, kConfig);
  VictimOrderCache cache;
  {
    Statement statement(s.session());
    const Planned first = PlanIn(s, statement, "s1", Policy(), &cache);
    REQUIRE(first.victims == Strings{"a-w-0"});
    statement.Commit();
    cache.Committed(s.session(), first.raw);
  }
  Planned fresh;
  {
    Statement statement(s.session());
    fresh = PlanIn(s, statement, "s2", Policy());
  }
  CHECK(fresh.victims == Strings{"b-w-0"});
  CHECK(fresh.placements == Strings{"s2-w-0@n2"});
  Statement statement(s.session());
  const Planned cached = PlanIn(s, statement, "s2", Policy(), &cache);
  CHECK(cached.fits);
  CHECK(cached.victims == fresh.victims);
  CHECK(cached.placements == fresh.placements);
}

TEST_CASE("promises count pod slots: a node with one slot free takes one pipelined task") {
  ClusterBuilder b;
  b.Node("n1", "cpu=3,pods=2").Node("n2", "cpu=1");
  b.Job("k", {.tasks = {{"w", 1, "cpu=1"}}, .preemptable = false}).Running("k-w-0", "n1");
  b.Job("v", {.tasks = {{"w", 1, "cpu=1"}}}).Running("v-w-0", "n2");
  b.Job("s", {.min = 3, .tasks = {{"w", 3, "cpu=1"}}});
  // n1 has cpu for two more but a slot for one: evicting v would not let s start.
  CHECK_FALSE(Plan(b, "s").fits);
  // End to end: preempt evicts nothing for it.
  b.PriorityClass("low", 1).PriorityClass("high", 100);
  PodGroup v = *b.cache().FindPodGroup("default/v");
  v.priority_class_name = "low";
  b.cache().UpsertPodGroup(v);
  PodGroup s = *b.cache().FindPodGroup("default/s");
  s.priority_class_name = "high";
  b.cache().UpsertPodGroup(s);
  CHECK(testing::RunSession(b, DefaultSchedulerConfigYaml()).evicts.empty());
}

TEST_CASE("evicting a pod frees its slot for the promise") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4,pods=2");
  b.Job("k", {.tasks = {{"w", 1, "cpu=1"}}, .preemptable = false}).Running("k-w-0", "n1");
  b.Job("v", {.tasks = {{"w", 1, "cpu=1"}}}).Running("v-w-0", "n1");
  b.Job("s", {.tasks = {{"w", 1, "cpu=1"}}});
  // cpu is free, the pod slots are not: v goes for s.
  const Planned plan = Plan(b, "s");
  CHECK(plan.fits);
  CHECK(plan.victims == Strings{"v-w-0"});
  CHECK(plan.placements == Strings{"s-w-0@n1"});
}

TEST_CASE("an eviction reason splits back into its verb and the job it was for") {
  JobInfo starving;
  starving.namespace_ = "ml";
  starving.name = "bert";
  const std::string reason = EvictionReason("reclaimed-for", starving);
  CHECK(reason == "reclaimed-for ml/bert");
  CHECK(SplitEvictionReason(reason) == std::pair<std::string_view, std::string_view>{"reclaimed-for", "ml/bert"});
  CHECK(SplitEvictionReason("node-removed").second.empty());
}

}  // namespace
}  // namespace lahar

namespace lahar {
namespace {

// When the last run found no plan, the starving jobs are first tried by id; once one fits they
// are served in job order all the same. z arrived first (job order: z, a; id order: a, z), and
// m's elastic workers make room for one of them only.
TEST_CASE("starving jobs tried by id first are served in job order once a plan fits") {
  for (bool memo_enabled : {true, false}) {
    CAPTURE(memo_enabled);
    ClusterBuilder b;
    b.Node("n", "cpu=32,memory=128Gi,nvidia.com/gpu=4");
    b.Job("m", {.min = 1, .tasks = {{"worker", 4, "cpu=1,nvidia.com/gpu=1"}}, .phase = PodGroupPhase::kRunning});
    b.RunningRange("m", "worker", 0, 3, "n");
    b.LastScaled("m", 0);
    b.Job("z", {.min = 2, .tasks = {{"worker", 2, "cpu=1,nvidia.com/gpu=1"}}});
    b.Job("a", {.min = 2, .tasks = {{"worker", 2, "cpu=1,nvidia.com/gpu=1"}}});
    WaitMemo memo(memo_enabled);
    // m is in its cooldown: nothing may go, and the run is remembered as fruitless.
    testing::SessionOutcome first = testing::RunSession(b, testing::kPreemptOnly, 10'000, &memo);
    REQUIRE(first.evicts.empty());
    CHECK(memo.LastRunFruitless("preempt-elastic-workers") == memo_enabled);
    // The cooldown is over: two of m's workers go, for z.
    testing::SessionOutcome second = testing::RunSession(b, testing::kPreemptOnly, 61'000, &memo);
    REQUIRE(second.evicts.size() == 2);
    for (const auto& [pod, reason] : second.evicts) CHECK(reason == "elastic-preempted-for default/z");
    CHECK_FALSE(memo.LastRunFruitless("preempt-elastic-workers"));
  }
}

// A run remembered as fruitless is skipped only while the state it read holds: a node freed
// between sessions, with no job changed (another scheduler's pod left it), is read afresh.
TEST_CASE("a fruitless run is tried again once a node became freer, though no job changed") {
  ClusterBuilder b;
  b.Node("n", "cpu=8,memory=32Gi");
  b.ForeignPod("other", "n", "cpu=6");
  b.Job("s", {.min = 1, .tasks = {{"worker", 1, "cpu=4"}}, .phase = PodGroupPhase::kInqueue});
  WaitMemo memo;
  testing::SessionOutcome first = testing::RunSession(b, testing::kPreemptOnly, 10'000, &memo);
  REQUIRE(memo.LastRunFruitless("preempt-elastic-workers"));
  // Unchanged: the run is skipped.
  testing::RunSession(b, testing::kPreemptOnly, 11'000, &memo);
  CHECK(memo.skipped() == 1);
  b.cache().DeletePod("kube-system", "other");
  testing::RunSession(b, testing::kPreemptOnly, 12'000, &memo);
  CHECK(memo.skipped() == 1);
  CHECK_FALSE(memo.LastRunFruitless("preempt-elastic-workers"));  // s's plan fits on n now
}

// A handler keyed by queue and priority, as preempt's, that records which jobs it is asked a
// policy for and answers with `policy_for`.
StarvingJobHandler RecordingHandler(Strings& asked,
                                    std::function<std::optional<VictimPolicy>(const JobInfo&)> policy_for) {
  StarvingJobHandler handler;
  handler.key = [](QueueId queue, int32_t priority) { return std::pair<int64_t, int64_t>{queue, priority}; };
  handler.policy = [&asked, policy_for = std::move(policy_for)](const JobInfo& job) {
    asked.push_back(job.name);
    return policy_for(job);
  };
  return handler;
}

// A job the handler leaves alone (no policy) fails for every starving job of its key and its
// shapes until a plan commits: those are not asked again; another shape or another key is.
TEST_CASE("a starving job left alone is not asked again for the jobs of its key and shapes") {
  ClusterBuilder b;
  b.Node("n", "cpu=8,memory=32Gi");
  b.Job("a", {.min = 2, .tasks = {{"worker", 2, "cpu=16"}}});
  b.Job("b", {.min = 2, .tasks = {{"worker", 2, "cpu=16"}}});
  b.Job("c", {.min = 2, .tasks = {{"worker", 2, "cpu=16"}}});
  b.Job("d", {.min = 2, .tasks = {{"worker", 2, "cpu=32"}}});  // another shape
  b.Job("e", {.min = 2, .tasks = {{"worker", 2, "cpu=16"}}, .priority_class = "high"});
  b.PriorityClass("high", 100);
  testing::SessionFixture s(b, kConfig);
  Strings asked;
  RelieveStarvingJobs(s.session(), "test",
                      RecordingHandler(asked, [](const JobInfo&) -> std::optional<VictimPolicy> { return std::nullopt; }));
  std::sort(asked.begin(), asked.end());
  // One of a, b, c (whichever comes first in job order), d and e.
  REQUIRE(asked.size() == 3);
  CHECK((asked[0] == "a" || asked[0] == "b" || asked[0] == "c"));
  CHECK(asked[1] == "d");
  CHECK(asked[2] == "e");
}

// Jobs of one class (StarvingClassOf) fail as the first of them did only until a plan commits:
// the commit changes what the rest of the class would find.
TEST_CASE("a class of starving jobs is asked again once a plan between its jobs commits") {
  ClusterBuilder b;
  b.PriorityClass("high", 100);
  b.Node("n", "cpu=8,memory=32Gi");
  b.Job("low", {.min = 1, .tasks = {{"worker", 1, "cpu=8"}}, .phase = PodGroupPhase::kRunning});
  b.Running("low-worker-0", "n");
  // In job order: a, b and c alike (they fit nowhere, and are left alone), b2 between them,
  // whose plan takes low's node.
  b.Job("a", {.min = 2, .tasks = {{"worker", 2, "cpu=16"}}, .priority_class = "high"});
  b.Job("b", {.min = 2, .tasks = {{"worker", 2, "cpu=16"}}, .priority_class = "high"});
  b.Job("b2", {.min = 1, .tasks = {{"worker", 1, "cpu=4"}}, .priority_class = "high"});
  b.Job("c", {.min = 2, .tasks = {{"worker", 2, "cpu=16"}}, .priority_class = "high"});
  testing::SessionFixture s(b, kConfig);
  Strings asked;
  auto takes_lower_priority_for_b2 = [](const JobInfo& job) -> std::optional<VictimPolicy> {
    if (job.name != "b2") return std::nullopt;
    VictimPolicy policy;
    policy.kind = [priority = job.priority](const JobInfo& other) {
      return other.priority < priority ? VictimKind::kWholeJob : VictimKind::kNone;
    };
    policy.reason = {"preempted-for test"};
    return policy;
  };
  RelieveStarvingJobs(s.session(), "test", RecordingHandler(asked, takes_lower_priority_for_b2));
  CHECK(asked == Strings{"a", "b2", "c"});
  REQUIRE(s.session().evictions().size() == 1);
  CHECK(s.session().task(s.session().evictions()[0].task).name() == "low-worker-0");
}

// On n1: el, 4 pods of cpu=1 with a min of 2 (two elastic workers, w2 and w3), and g, 2 pods
// of cpu=2 with a min of 2 (none): cpu=8.
void ElasticWorkersOnN1(ClusterBuilder& b) {
  b.Job("el", {.min = 2, .tasks = {{"w", 4, "cpu=1"}}}).RunningRange("el", "w", 0, 3, "n1");
  b.Job("g", {.min = 2, .tasks = {{"w", 2, "cpu=2"}}}).RunningRange("g", "w", 0, 1, "n1");
}

// A session of `b` (kConfig) whose wait memo skips work, or not (`lahar-sim --no-skip`).
struct SessionWithMemo {
  SessionWithMemo(const ClusterBuilder& b, bool skipping) : memo(skipping), fixture(b, kConfig) {
    fixture.session().set_wait_memo(&memo);
  }
  WaitMemo memo;  // outlives the session, which points to it
  testing::SessionFixture fixture;
};

// The bound a workers-only plan fails by before collecting an order: every elastic worker of
// the cluster taken, on the nodes where workers run, kept up as jobs' tasks change.
TEST_CASE("with every elastic worker gone, a task may fit only on a node where workers run") {
  ClusterBuilder b;
  b.Node("n1", "cpu=11").Node("n2", "cpu=3").Node("n3", "cpu=3");
  ElasticWorkersOnN1(b);
  b.Job("solo", {.min = 1, .tasks = {{"w", 2, "cpu=3"}}}).RunningRange("solo", "w", 0, 0, "n1");
  b.RunningRange("solo", "w", 1, 1, "n2");  // beyond its min of 1: a worker
  b.Job("s", {.tasks = {{"w", 1, "cpu=3"}, {"x", 1, "cpu=4"}}});
  testing::SessionFixture s(b, kConfig);
  Session& session = s.session();
  auto may_fit = [&](std::string_view task) {
    return victims_internal::SomeNodeMayFitWithAnyWorkers(session, victims_internal::CountWorkerHoldings(session),
                                                          s.task(StrCat("default/", task)));
  };
  // n1: nothing idle, el's two workers hold cpu=2; n2: solo's worker holds cpu=3; n3 is idle but
  // runs no worker (a task that fits there needs no eviction).
  CHECK(may_fit("s-w-0"));        // cpu=3: n2
  CHECK_FALSE(may_fit("s-x-0"));  // cpu=4
  {
    // Without solo's worker, n2 is a node no order of workers bounds, however idle.
    Statement statement(session);
    statement.Evict(s.task("default/solo-w-1").id, "test");
    CHECK_FALSE(may_fit("s-w-0"));
    statement.Discard();
  }
  CHECK(may_fit("s-w-0"));
  {
    // g's pod going frees cpu=2 on n1, and el's workers two more.
    Statement statement(session);
    statement.Evict(s.task("default/g-w-1").id, "test");
    CHECK(may_fit("s-x-0"));
    statement.Discard();
  }
  CHECK_FALSE(may_fit("s-x-0"));
  // Resources held on n2 (elastic-scale's reservation) move no task, and still leave it no room.
  Resources held;
  held.Set(kCpu, 1000);
  session.HoldResources(s.node("n2").id, held);
  CHECK_FALSE(may_fit("s-w-0"));
  session.ReleaseHeldResources(s.node("n2").id, held);
  CHECK(may_fit("s-w-0"));
}

// A workers-only plan whose first task fits no node, even with every elastic worker of the
// cluster gone, fails as it does by its collected order, and leaves the session as it was, with
// skipping on and off.
TEST_CASE("a workers-only plan fails by the workers' bound as it fails by its collected order") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8").Node("n2", "cpu=8").Node("n3", "cpu=4");
  ElasticWorkersOnN1(b);
  b.Job("h", {.min = 1, .tasks = {{"w", 1, "cpu=8"}}}).RunningRange("h", "w", 0, 0, "n2");
  b.Job("el2", {.min = 1, .tasks = {{"w", 2, "cpu=2"}}}).RunningRange("el2", "w", 0, 1, "n3");
  b.Job("wide", {.min = 1, .tasks = {{"w", 1, "cpu=3"}}});  // all workers hold cpu=4, no node's 3
  b.Job("two", {.min = 1, .tasks = {{"w", 1, "cpu=2"}}});
  for (bool skipping : {true, false}) {
    CAPTURE(skipping);
    SessionWithMemo with(b, skipping);
    testing::SessionFixture& s = with.fixture;
    Session& session = s.session();
    const std::string before = Cluster(session);
    {
      VictimOrderCache cache;
      Statement failing(session);
      const Planned wide = PlanIn(s, failing, "wide", WorkersOnly(), &cache);
      CHECK_FALSE(wide.fits);
      CHECK(wide.victims.empty());
      CHECK(cache.entries().orders.empty() == skipping);  // failed by the bound: no order collected
      failing.Discard();
      CHECK(Cluster(session) == before);
    }
    // A plan the bound lets through is made as before: el2's one worker makes room for cpu=2
    // where el's two would take two pods.
    VictimOrderCache cache;
    Statement fitting(session);
    const Planned two = PlanIn(s, fitting, "two", WorkersOnly(), &cache);
    CHECK(two.fits);
    CHECK(two.victims == Strings{"el2-w-1"});
    CHECK(two.placements == Strings{"two-w-0@n3"});
  }
}

// A gang of alike pods whose first needs evictions, when all the nodes together cannot hold it
// even with every elastic worker gone, fails without its order ranked, and leaves the trace the
// plan would have: its first pod placed with evictions, then discarded by the caller.
TEST_CASE("a gang that no set of nodes holds fails unranked, leaving the trace of its first pod") {
  ClusterBuilder b;
  // Each node has cpu=1 idle and cpu=2 of elastic workers: cpu=6 in all, but room for one pod
  // of cpu=2 on each.
  b.Node("n1", "cpu=9").Node("n2", "cpu=5");
  ElasticWorkersOnN1(b);
  b.Job("el3", {.min = 1, .tasks = {{"w", 2, "cpu=2"}}}).RunningRange("el3", "w", 0, 1, "n2");
  b.Job("pair", {.min = 2, .tasks = {{"w", 2, "cpu=2"}}});    // one pod on each node, after evictions
  b.Job("triple", {.min = 3, .tasks = {{"w", 3, "cpu=2"}}});  // one more than the nodes hold
  {
    testing::SessionFixture s(b, kConfig);
    const victims_internal::WorkerHoldings& holdings = victims_internal::CountWorkerHoldings(s.session());
    const Resources& two_cpus = s.task("default/pair-w-0").request;
    // Asked again in one state, the sums answer first: cpu=6 in all holds no 4 pods of cpu=2,
    // but 3 is within them, and the nodes are counted one by one.
    for (int ask = 0; ask < 2; ++ask) {
      CAPTURE(ask);
      CHECK_FALSE(victims_internal::FewerFitWithAnyWorkers(s.session(), holdings, two_cpus, 2));
      CHECK(victims_internal::FewerFitWithAnyWorkers(s.session(), holdings, two_cpus, 3));
      CHECK(victims_internal::FewerFitWithAnyWorkers(s.session(), holdings, two_cpus, 4));
    }
  }
  for (bool skipping : {true, false}) {
    CAPTURE(skipping);
    SessionWithMemo with(b, skipping);
    testing::SessionFixture& s = with.fixture;
    Session& session = s.session();
    const std::string before = Cluster(session);
    VictimOrderCache cache;
    const uint64_t changes_before = session.task_state_changes();
    Statement failing(session);
    const Planned triple = PlanIn(s, failing, "triple", WorkersOnly(), &cache);
    failing.Discard();
    CHECK_FALSE(triple.fits);
    CHECK(Cluster(session) == before);
    CHECK(session.task_state_changes() != changes_before);  // its first pod placed, then undone
    const bool ranked = std::any_of(cache.entries().orders.begin(), cache.entries().orders.end(),
                                    [](const auto& entry) { return entry.second.is_ranked; });
    CHECK(ranked != skipping);
    Statement fitting(session);
    const Planned pair = PlanIn(s, fitting, "pair", WorkersOnly());
    CHECK(pair.fits);
    CHECK(pair.placements.size() == 2);
  }
}

// Per node: the cpu and pods of the elastic workers there, as WorkerHoldings counts them.
using NodeHoldings = std::vector<std::pair<int64_t, int32_t>>;
NodeHoldings HoldingsOf(const victims_internal::WorkerHoldings& holdings) {
  NodeHoldings held;
  for (const victims_internal::WorkerHoldings::Held& node : holdings.per_node) {
    held.emplace_back(node.freed.Get(kCpu), node.pods);
  }
  return held;
}
// The same counted afresh from every live job's elastic workers.
NodeHoldings HoldingsAfresh(const Session& session) {
  NodeHoldings held(session.cluster().nodes.size());
  for (JobId id : session.LiveJobs()) {
    for (TaskId t : ElasticWorkers(session, session.job(id))) {
      const TaskInfo& task = session.task(t);
      if (task.node == kNoId) continue;
      held[task.node].first += task.request.Get(kCpu);
      ++held[task.node].second;
    }
  }
  return held;
}

// The holdings go on from one session to the next: a job as laid out before keeps its part
// untouched, and what changed in between (a job's pods, a job gone, a node gone) and what a
// session changes (an eviction, undone) leave them as a count made afresh would.
TEST_CASE("the elastic workers' holdings carried from session to session are those counted afresh") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8").Node("n2", "cpu=8").Node("n3", "cpu=8");
  b.Job("early", {.min = 1, .tasks = {{"w", 3, "cpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("early", "w", 0, 2, "n1");  // two workers on n1
  b.Job("el", {.min = 2, .tasks = {{"w", 4, "cpu=2"}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("el", "w", 0, 1, "n2").RunningRange("el", "w", 2, 3, "n3");  // two on n3
  b.Job("g", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.RunningRange("g", "w", 0, 1, "n3");  // none
  WaitMemo memo;
  auto in_session = [&](const std::function<void(testing::SessionFixture&)>& body) {
    testing::SessionFixture s(b, kConfig);
    s->set_wait_memo(&memo);
    body(s);
    memo.SessionEnded();
  };
  auto count = [](Session& session) { return HoldingsOf(victims_internal::CountWorkerHoldings(session)); };
  in_session([&](testing::SessionFixture& s) {
    CHECK(count(s.session()) == NodeHoldings{{2000, 2}, {0, 0}, {4000, 2}});
    CHECK(count(s.session()) == HoldingsAfresh(s.session()));
  });
  in_session([&](testing::SessionFixture& s) {
    // As if another count had been made for n2: a session with every job as laid out reads it.
    REQUIRE(memo.worker_holdings() != nullptr);
    memo.worker_holdings()->per_node[s.node("n2").id].pods = 5;
    CHECK(count(s.session())[s.node("n2").id].second == 5);
    memo.worker_holdings()->per_node[s.node("n2").id].pods = 0;
  });
  in_session([&](testing::SessionFixture& s) {
    Session& session = s.session();
    CHECK(count(session) == HoldingsAfresh(session));
    Statement statement(session);
    statement.Evict(s.task("default/el-w-3").id, "test");  // el keeps one worker, el-w-2
    CHECK(count(session) == HoldingsAfresh(session));
    CHECK(count(session)[s.node("n3").id] == std::pair<int64_t, int32_t>{2000, 1});
    statement.Discard();
    CHECK(count(session) == NodeHoldings{{2000, 2}, {0, 0}, {4000, 2}});
  });
  // A worker of early's goes.
  b.cache().DeletePod("default", "early-w-2");
  in_session([&](testing::SessionFixture& s) {
    CHECK(count(s.session()) == HoldingsAfresh(s.session()));
    CHECK(count(s.session())[s.node("n1").id] == std::pair<int64_t, int32_t>{1000, 1});
  });
  // el goes altogether: its part is taken out of the sums.
  for (int i = 0; i < 4; ++i) b.cache().DeletePod("default", StrCat("el-w-", i));
  in_session([&](testing::SessionFixture& s) {
    CHECK(count(s.session()) == NodeHoldings{{1000, 1}, {0, 0}, {0, 0}});
    CHECK(count(s.session()) == HoldingsAfresh(s.session()));
  });
  // Another node set: the node ids the parts were counted under are another's.
  b.cache().DeleteNode("n2");
  in_session([&](testing::SessionFixture& s) {
    CHECK(count(s.session()) == HoldingsAfresh(s.session()));
    CHECK(count(s.session()).size() == 2);
  });
}

}  // namespace
}  // namespace lahar
