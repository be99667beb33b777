// The jobs' rules answer for the session's state as it is now: the answers a session keeps
// between questions (Session::Memos) follow every task change, a discarded statement included.
#include "scheduler/framework/job_rules.h"

#include <catch2/catch.hpp>

#include "scheduler/framework/statement.h"
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
