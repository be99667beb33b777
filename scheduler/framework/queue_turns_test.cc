// Queues take turns in queue order, each giving its jobs in job order.
#include "scheduler/framework/queue_turns.h"

#include <catch2/catch.hpp>

#include "test/testing/cluster_builder.h"
#include "test/testing/session_fixture.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;

TEST_CASE("queues take turns in queue order, each handing out its jobs in job order") {
  // No queue-order plugin: queues are ordered by id (name), so a keeps the first turn while it
  // has jobs; the priority plugin orders jobs.
  ClusterBuilder b;
  b.Node("n1", "cpu=8").Queue("a", 1).Queue("b", 1);
  b.PriorityClass("low", 1).PriorityClass("high", 9);
  b.Job("b-1", {.queue = "b", .tasks = {{"w", 1, "cpu=1"}}, .priority_class = "low"});
  b.Job("a-1", {.queue = "a", .tasks = {{"w", 1, "cpu=1"}}, .priority_class = "low"});
  b.Job("a-2", {.queue = "a", .tasks = {{"w", 1, "cpu=1"}}, .priority_class = "high"});
  testing::SessionFixture s(b, "actions: allocate\ntiers:\n- plugins:\n  - name: priority\n");
  const QueueId a = s.queue("a").id;
  const QueueId q_b = s.queue("b").id;
  std::vector<std::vector<JobId>> jobs_of(s->queues().size());
  jobs_of[a] = {s.job("default/a-1").id, s.job("default/a-2").id};
  jobs_of[q_b] = {s.job("default/b-1").id};
  QueueTurns turns(s.session(), "test", std::move(jobs_of));

  std::vector<std::string> handed_out;
  QueueId q = kNoId;
  REQUIRE(turns.NextQueue(q));
  CHECK(q == a);
  CHECK(turns.Remaining(q).size() == 2);
  handed_out.push_back(s->job(turns.TakeJob(q)).key());
  turns.PutBack(q);
  while (turns.NextQueue(q)) {
    handed_out.push_back(s->job(turns.TakeJob(q)).key());
    turns.PutBack(q);
  }
  CHECK(handed_out == std::vector<std::string>{"default/a-2", "default/a-1", "default/b-1"});
  CHECK_FALSE(turns.AnyLeft());
}

}  // namespace
}  // namespace lahar
