// The jobs' rules answer for the session's state as it is now: the answers a session keeps
// between questions (Session::Memos) follow every task change, a discarded statement included.
#include "scheduler/framework/job_rules.h"

#include <algorithm>

#include <catch2/catch.hpp>

#include "api/strings.h"
#include "scheduler/builtins.h"
#include "scheduler/framework/statement.h"
#include "scheduler/framework/wait_memo.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/session_fixture.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;

constexpr std::string_view kConfig = "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n";

std::vector<std::string> Names(const Session& session, const std::vector<TaskId>& tasks) {
  std::vector<std::string> out;
  for (TaskId t : tasks) out.push_back(session.task(t).name());
  return out;
}

TEST_CASE("starving jobs and the tasks a job lacks follow task changes, also when they are undone") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Job("a", {.min = 2, .tasks = {{"w", 3, "cpu=1"}}}).Running("a-w-0", "n1");  // lacks one
  b.Job("c", {.min = 1, .tasks = {{"w", 1, "cpu=1"}}});                          // lacks one
  testing::SessionFixture s(b, kConfig);
  Session& session = s.session();
  const JobInfo& a = s.job("default/a");
  const JobId c = s.job("default/c").id;

  REQUIRE(StarvingJobs(session).size() == 2);
  CHECK(Names(session, TasksToReachMin(session, a)) == std::vector<std::string>{"a-w-1"});
  const uint64_t shapes_before = MinShapesHash(session, a);
  {
    Statement statement(session);
    statement.Allocate(s.task("default/a-w-1").id, s.node("n1").id);
    CHECK(StarvingJobs(session) == std::vector<JobId>{c});
    CHECK(TasksToReachMin(session, a).empty());
    CHECK(MinShapesHash(session, a) != shapes_before);
    statement.Discard();
  }
  CHECK(StarvingJobs(session).size() == 2);
  CHECK(Names(session, TasksToReachMin(session, a)) == std::vector<std::string>{"a-w-1"});
  CHECK(MinShapesHash(session, a) == shapes_before);
  // A job sent back to Pending is not starving (not admitted), and starving again once admitted.
  session.SetJobPhase(c, PodGroupPhase::kPending);
  CHECK(StarvingJobIds(session) == std::vector<JobId>{a.id});
  session.SetJobPhase(c, PodGroupPhase::kInqueue);
  CHECK(StarvingJobIds(session).size() == 2);
}

TEST_CASE("a job with roles starves while a role lacks its minimum, though it has minMember ready") {
  ClusterBuilder b;
  b.Node("n1", "cpu=16");
  // Every pod running, every role at its minimum: it lacks nothing.
  b.Job("full", {.min = 3, .tasks = {{"ps", 1, "cpu=1"}, {"worker", 2, "cpu=1"}},
                 .min_task_member = {{"ps", 1}, {"worker", 2}}})
      .Running("full-ps-0", "n1")
      .Running("full-worker-0", "n1")
      .Running("full-worker-1", "n1");
  // Two workers running make minMember 2, but role ps has none of its one.
  b.Job("short", {.min = 2, .tasks = {{"ps", 1, "cpu=1"}, {"worker", 2, "cpu=1"}},
                  .min_task_member = {{"ps", 1}, {"worker", 1}}})
      .Running("short-worker-0", "n1")
      .Running("short-worker-1", "n1");
  testing::SessionFixture s(b, kConfig);
  Session& session = s.session();
  CHECK(StarvingJobIds(session) == std::vector<JobId>{s.job("default/short").id});
  CHECK(Names(session, TasksToReachMin(session, s.job("default/short"))) == std::vector<std::string>{"short-ps-0"});
  CHECK(TasksToReachMin(session, s.job("default/full")).empty());
}

TEST_CASE("a pending job's tasks to reach min come from the sessions' memory until its objects change") {
  ClusterBuilder b;
  b.Node("n1", "cpu=1");
  b.Job("a", {.min = 2, .tasks = {{"w", 3, "cpu=1"}}});  // every pod pending
  WaitMemo memo;
  uint64_t version = 0;
  {
    testing::SessionFixture s(b, kConfig);
    s->set_wait_memo(&memo);
    const JobInfo& a = s.job("default/a");
    version = a.version;
    CHECK(Names(s.session(), TasksToReachMin(s.session(), a)) == std::vector<std::string>{"a-w-0", "a-w-1"});
    WaitMemo::PendingJobMin& carried = memo.PendingJobMinOf(version);
    REQUIRE(carried.known);
    CHECK(carried.offsets == std::vector<int32_t>{0, 1});
    carried.offsets = {2, 1};  // as if another answer had been made: the next session must read it
  }
  memo.SessionEnded();
  {
    testing::SessionFixture s(b, kConfig);
    s->set_wait_memo(&memo);
    CHECK(Names(s.session(), TasksToReachMin(s.session(), s.job("default/a"))) ==
          std::vector<std::string>{"a-w-2", "a-w-1"});
  }
  memo.SessionEnded();
  // One of its pods went: a new version, ranked afresh; the old entry is dropped once two
  // sessions passed without asking for it.
  b.cache().DeletePod("default", "a-w-0");
  {
    testing::SessionFixture s(b, kConfig);
    s->set_wait_memo(&memo);
    const JobInfo& a = s.job("default/a");
    CHECK(a.version != version);
    CHECK(Names(s.session(), TasksToReachMin(s.session(), a)) == std::vector<std::string>{"a-w-1", "a-w-2"});
  }
  memo.SessionEnded();
  memo.SessionEnded();
  CHECK_FALSE(memo.PendingJobMinOf(version).known);
}

TEST_CASE("a running job's elastic workers come from the sessions' memory while it is as laid out") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Job("a", {.min = 1, .tasks = {{"w", 3, "cpu=1"}}, .phase = PodGroupPhase::kRunning});
  for (const char* pod : {"a-w-0", "a-w-1", "a-w-2"}) b.Running(pod, "n1");
  WaitMemo memo;
  uint64_t key = 0;
  {
    testing::SessionFixture s(b, kConfig);
    s->set_wait_memo(&memo);
    const JobInfo& a = s.job("default/a");
    CHECK(Names(s.session(), ElasticWorkers(s.session(), a)) == std::vector<std::string>{"a-w-2", "a-w-1"});
    REQUIRE(CarriedWorkersKey(s.session(), a).has_value());
    key = *CarriedWorkersKey(s.session(), a);
    WaitMemo::JobWorkers& carried = memo.JobWorkersOf(key);
    REQUIRE(carried.known);
    CHECK(carried.offsets == std::vector<int32_t>{2, 1});
    carried.offsets = {1};  // as if another answer had been made: the next session must read it
  }
  memo.SessionEnded();
  {
    testing::SessionFixture s(b, kConfig);
    s->set_wait_memo(&memo);
    const JobInfo& a = s.job("default/a");
    CHECK(Names(s.session(), ElasticWorkers(s.session(), a)) == std::vector<std::string>{"a-w-1"});
    // Once a task of it moves, its workers are made afresh, and not carried.
    Statement statement(s.session());
    statement.Evict(s.task("default/a-w-1").id, "test");
    CHECK_FALSE(CarriedWorkersKey(s.session(), a).has_value());
    CHECK(Names(s.session(), ElasticWorkers(s.session(), a)) == std::vector<std::string>{"a-w-2"});
    statement.Discard();  // undone: as laid out again, and carried again
    CHECK(CarriedWorkersKey(s.session(), a) == key);
  }
  memo.SessionEnded();
  // One of its pods went: another key, made afresh; the old entry is kept while sessions that do
  // not ask pass (those that judge a backlog are often far apart), and dropped in the end.
  b.cache().DeletePod("default", "a-w-0");
  {
    testing::SessionFixture s(b, kConfig);
    s->set_wait_memo(&memo);
    const JobInfo& a = s.job("default/a");
    CHECK(CarriedWorkersKey(s.session(), a) != key);
    CHECK(Names(s.session(), ElasticWorkers(s.session(), a)) == std::vector<std::string>{"a-w-2"});
  }
  memo.SessionEnded();
  memo.SessionEnded();
  CHECK(memo.JobWorkersOf(key).known);
  for (uint64_t i = 0; i < 2 * WaitMemo::kWorkersKeptSessions; ++i) memo.SessionEnded();
  CHECK_FALSE(memo.JobWorkersOf(key).known);
}

TEST_CASE("what a job's elastic workers request follows its tasks, and leaves out those on unschedulable nodes") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8").Node("n2", "cpu=8");
  b.Job("a", {.min = 1, .tasks = {{"w", 4, "cpu=1"}}, .phase = PodGroupPhase::kRunning});
  for (const char* pod : {"a-w-0", "a-w-1", "a-w-2"}) b.Running(pod, "n1");
  b.Running("a-w-3", "n2");
  b.Cordon("n2");
  testing::SessionFixture s(b, kConfig);
  Session& session = s.session();
  const JobInfo& a = s.job("default/a");
  // Three workers above its min of one; the one on the cordoned n2 frees nothing for others.
  CHECK(ElasticWorkerRequests(session, a).Get(kCpu) == 2000);
  {
    Statement statement(session);
    statement.Evict(s.task("default/a-w-2").id, "test");
    CHECK(ElasticWorkerRequests(session, a).Get(kCpu) == 1000);
    statement.Discard();
  }
  CHECK(ElasticWorkerRequests(session, a).Get(kCpu) == 2000);
}

TEST_CASE("a running job's carried elastic workers are not read once a node of its tasks is gone") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8").Node("n2", "cpu=8");
  b.Job("a", {.min = 1, .tasks = {{"w", 3, "cpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Running("a-w-0", "n1").Running("a-w-1", "n1").Running("a-w-2", "n2");
  WaitMemo memo;
  uint64_t key = 0;
  {
    testing::SessionFixture s(b, kConfig);
    s->set_wait_memo(&memo);
    const JobInfo& a = s.job("default/a");
    CHECK(Names(s.session(), ElasticWorkers(s.session(), a)) == std::vector<std::string>{"a-w-2", "a-w-1"});
    key = *CarriedWorkersKey(s.session(), a);
  }
  memo.SessionEnded();
  // The pods and the PodGroup are as they were; the node set is not: a-w-2 has failed.
  b.cache().DeleteNode("n2");
  testing::SessionFixture s(b, kConfig);
  s->set_wait_memo(&memo);
  const JobInfo& a = s.job("default/a");
  CHECK(s.task("default/a-w-2").status == TaskStatus::kFailed);
  CHECK(CarriedWorkersKey(s.session(), a) != key);
  CHECK(Names(s.session(), ElasticWorkers(s.session(), a)) == std::vector<std::string>{"a-w-1"});
}

TEST_CASE("jobs that lack the same shapes have the same shapes hash") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Job("a", {.min = 2, .tasks = {{"w", 2, "cpu=2"}}});
  b.Job("c", {.min = 2, .tasks = {{"w", 3, "cpu=2"}}});
  b.Job("d", {.min = 2, .tasks = {{"w", 2, "cpu=3"}}});
  testing::SessionFixture s(b, kConfig);
  const Session& session = s.session();
  CHECK(MinShapesHash(session, s.job("default/a")) == MinShapesHash(session, s.job("default/c")));
  CHECK(MinShapesHash(session, s.job("default/a")) != MinShapesHash(session, s.job("default/d")));
}

}  // namespace
}  // namespace lahar

namespace lahar {
namespace {

// Jobs named by key, in the order SortInJobOrder gives them with the memo, checked against a
// plain sort in job order.
std::vector<std::string> SortedKeys(testing::SessionFixture& s, WaitMemo& memo, const std::vector<std::string>& keys) {
  s->set_wait_memo(&memo);
  std::vector<JobId> jobs;
  for (const std::string& key : keys) jobs.push_back(s.job(key).id);
  std::vector<JobId> plain = jobs;
  std::sort(plain.begin(), plain.end(), [&](JobId a, JobId b) { return s->JobOrderLess(s->job(a), s->job(b)); });
  SortInJobOrder(s.session(), "list", jobs);
  CHECK(jobs == plain);
  std::vector<std::string> out;
  for (JobId j : jobs) out.push_back(s->job(j).key());
  return out;
}

TEST_CASE("what lower priorities hold is made again once a placement moved the session state") {
  ClusterBuilder b;
  b.Node("n1", "cpu=16").Queue("q", 1);
  b.PriorityClass("low", 1).PriorityClass("high", 9);
  b.Job("l", {.queue = "q", .tasks = {{"w", 2, "cpu=1"}}, .priority_class = "low"}).Running("l-w-0", "n1");
  testing::SessionFixture s(b, kConfig);
  const QueueId q = s.queue("q").id;
  CHECK(HoldingsByPriority::Of(s.session())->Below(q, 9).Get(kCpu) == 1000);
  s.Place("default/l-w-1");  // the low job's second pod now holds its cpu too
  CHECK(HoldingsByPriority::Of(s.session())->Below(q, 9).Get(kCpu) == 2000);
}

TEST_CASE("what lower priorities of a queue hold is summed strictly below the asking priority") {
  ClusterBuilder b;
  b.Node("n1", "cpu=16").Queue("q", 1).Queue("other", 1);
  b.PriorityClass("low", 1).PriorityClass("mid", 5).PriorityClass("high", 9);
  b.Job("l", {.queue = "q", .tasks = {{"w", 1, "cpu=1"}}, .priority_class = "low"}).Running("l-w-0", "n1");
  b.Job("m", {.queue = "q", .tasks = {{"w", 1, "cpu=2"}}, .priority_class = "mid"}).Running("m-w-0", "n1");
  b.Job("h", {.queue = "q", .tasks = {{"w", 1, "cpu=4"}}, .priority_class = "high"}).Running("h-w-0", "n1");
  testing::SessionFixture s(b, kConfig);
  const HoldingsByPriority holdings(s.session());
  const QueueId q = s.queue("q").id;
  auto cpu_below = [&](int32_t priority) { return holdings.Below(q, priority).Get(kCpu); };
  CHECK(cpu_below(0) == 0);
  CHECK(cpu_below(1) == 0);      // its own priority is not below it
  CHECK(cpu_below(2) == 1000);
  CHECK(cpu_below(5) == 1000);
  CHECK(cpu_below(6) == 3000);
  CHECK(cpu_below(9) == 3000);
  CHECK(cpu_below(INT32_MAX) == 7000);
  CHECK(holdings.Below(s.queue("other").id, INT32_MAX).IsZero());
}

TEST_CASE("a list sorted in job order reuses the last session's order only while it still holds") {
  constexpr std::string_view kByPriority = "actions: enqueue\ntiers:\n- plugins:\n  - name: priority\n";
  auto cluster = [](std::initializer_list<std::pair<const char*, const char*>> jobs) {
    ClusterBuilder b;
    b.Node("n1", "cpu=8").PriorityClass("low", 1).PriorityClass("mid", 5).PriorityClass("high", 9);
    for (const auto& [name, priority] : jobs) b.Job(name, {.tasks = {{"w", 1, "cpu=1"}}, .priority_class = priority});
    return b;
  };
  WaitMemo memo;
  testing::SessionFixture first(cluster({{"a", "low"}, {"b", "high"}, {"c", "mid"}}), kByPriority);
  CHECK(SortedKeys(first, memo, {"default/a", "default/b", "default/c"}) ==
        std::vector<std::string>{"default/b", "default/c", "default/a"});
  // a now comes first: the remembered order no longer holds; d is new.
  testing::SessionFixture second(cluster({{"a", "high"}, {"b", "mid"}, {"c", "low"}, {"d", "mid"}}), kByPriority);
  CHECK(SortedKeys(second, memo, {"default/a", "default/b", "default/c", "default/d"}) ==
        std::vector<std::string>{"default/a", "default/b", "default/d", "default/c"});
  // Unchanged but for a new job, merged in among the remembered ones; b has left the list.
  testing::SessionFixture third(
      cluster({{"a", "high"}, {"b", "mid"}, {"c", "low"}, {"d", "mid"}, {"e", "high"}}), kByPriority);
  CHECK(SortedKeys(third, memo, {"default/a", "default/c", "default/d", "default/e"}) ==
        std::vector<std::string>{"default/a", "default/e", "default/d", "default/c"});
}

TEST_CASE("sessions that leave parked jobs out remember their orders apart from sessions over every job") {
  constexpr std::string_view kByPriority = "actions: enqueue\ntiers:\n- plugins:\n  - name: priority\n";
  ClusterBuilder b;
  b.Node("n1", "cpu=8").PriorityClass("low", 1).PriorityClass("high", 9);
  b.Job("a", {.tasks = {{"w", 1, "cpu=1"}}, .priority_class = "low"});
  b.Job("b", {.tasks = {{"w", 1, "cpu=1"}}, .priority_class = "high"});
  WaitMemo memo;
  testing::SessionFixture every_job(b, kByPriority);  // its snapshot leaves nothing out
  CHECK(SortedKeys(every_job, memo, {"default/a", "default/b"}) == std::vector<std::string>{"default/b", "default/a"});
  const std::vector<int64_t> over_every_job = memo.OrderOf("list", /*parked_left_out=*/false);
  CHECK(over_every_job == std::vector<int64_t>{every_job.job("default/b").creation_order,
                                               every_job.job("default/a").creation_order});
  // A session with parked jobs left out lists a few jobs only: what it remembers leaves the
  // order over every job as it was, for the next session over every job to merge into.
  ClusterSnapshot parked_out = b.Snapshot();
  parked_out.parked.push_back({"default/c", 0});
  parked_out.parked_representatives = {kNoId};
  const SchedulerConfig config = testing::MustParseConfig(kByPriority);
  auto parked_session = Session::Open(std::move(parked_out), config, BuiltinRegistry());
  REQUIRE(parked_session.ok());
  (*parked_session)->set_wait_memo(&memo);
  std::vector<JobId> few = {(*parked_session)->cluster().FindJob("default/a")};
  SortInJobOrder(**parked_session, "list", few);
  CHECK(memo.OrderOf("list", /*parked_left_out=*/true) ==
        std::vector<int64_t>{every_job.job("default/a").creation_order});
  CHECK(memo.OrderOf("list", /*parked_left_out=*/false) == over_every_job);
}

TEST_CASE("a remembered order finds its jobs by creation order whether they arrived close together or far apart") {
  constexpr std::string_view kByPriority = "actions: enqueue\ntiers:\n- plugins:\n  - name: priority\n";
  // 120 jobs in arrival order; every third is of high priority, and `raised` of low ones too.
  auto cluster = [](std::initializer_list<int> raised) {
    ClusterBuilder b;
    b.Node("n1", "cpu=8").PriorityClass("low", 1).PriorityClass("high", 9);
    for (int i = 0; i < 120; ++i) {
      const bool high = i % 3 == 0 || std::find(raised.begin(), raised.end(), i) != raised.end();
      b.Job(StrCat("j", 1000 + i), {.tasks = {{"w", 1, "cpu=1"}}, .priority_class = high ? "high" : "low"});
    }
    return b;
  };
  auto keys = [](std::initializer_list<int> jobs) {
    std::vector<std::string> out;
    for (int i : jobs) out.push_back(StrCat("default/j", 1000 + i));
    return out;
  };
  // A few jobs spread over all 120 arrivals (looked up by hash), then most of them (by table).
  for (const auto& listed : {keys({1, 40, 81, 119}), keys({1, 40, 81, 90, 119})}) {
    WaitMemo memo;
    testing::SessionFixture first(cluster({}), kByPriority);
    const std::vector<std::string> order = SortedKeys(first, memo, listed);
    CHECK(order.front() == "default/j1081");  // 81 is a multiple of 3: high
    // One job raised: the remembered order no longer holds.
    testing::SessionFixture second(cluster({119}), kByPriority);
    CHECK(SortedKeys(second, memo, listed).front() == "default/j1081");
    // Unchanged: the remembered order, with a job new to the list merged in.
    std::vector<std::string> more = listed;
    more.push_back("default/j1060");
    testing::SessionFixture third(cluster({119}), kByPriority);
    const std::vector<std::string> merged = SortedKeys(third, memo, more);
    CHECK(merged.size() == more.size());
  }
  std::vector<std::string> dense;
  for (int i = 0; i < 120; i += 2) dense.push_back(StrCat("default/j", 1000 + i));
  WaitMemo memo;
  testing::SessionFixture first(cluster({}), kByPriority);
  SortedKeys(first, memo, dense);
  testing::SessionFixture second(cluster({2, 4}), kByPriority);
  const std::vector<std::string> raised = SortedKeys(second, memo, dense);
  CHECK(raised[0] == "default/j1000");
  CHECK(raised[1] == "default/j1002");  // raised: among the high ones, in arrival order
  testing::SessionFixture third(cluster({2, 4}), kByPriority);
  CHECK(SortedKeys(third, memo, dense) == raised);
}

}  // namespace
}  // namespace lahar
