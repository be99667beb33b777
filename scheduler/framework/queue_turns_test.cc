// Queues take turns in queue order, each giving its jobs in job order.
#include "scheduler/framework/queue_turns.h"

#include <catch2/catch.hpp>

#include "test/testing/cluster_builder.h"
#include "test/testing/session_fixture.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using Names = std::vector<std::string>;

// Turns over the named jobs (namespace default) of each named queue, in the order given.
QueueTurns TurnsOver(testing::SessionFixture& s, const std::vector<std::pair<std::string, Names>>& jobs) {
  std::vector<std::vector<JobId>> jobs_of(s->queues().size());
  for (const auto& [queue, names] : jobs) {
    for (const std::string& name : names) jobs_of[s.queue(queue).id].push_back(s.job("default/" + name).id);
  }
  return QueueTurns(s.session(), "test", std::move(jobs_of));
}

// Takes the rest of the jobs turn by turn, each queue put back after it gave one.
void TakeTheRest(testing::SessionFixture& s, QueueTurns& turns, Names& handed_out) {
  QueueId q = kNoId;
  while (turns.NextQueue(q)) {
    handed_out.push_back(s->job(turns.TakeJob(q)).key());
    turns.PutBack(q);
  }
}

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
  QueueTurns turns = TurnsOver(s, {{"a", {"a-1", "a-2"}}, {"b", {"b-1"}}});

  Names handed_out;
  QueueId q = kNoId;
  REQUIRE(turns.NextQueue(q));
  CHECK(q == a);
  CHECK(turns.Remaining(q).size() == 2);
  handed_out.push_back(s->job(turns.TakeJob(q)).key());
  turns.PutBack(q);
  TakeTheRest(s, turns, handed_out);
  CHECK(handed_out == Names{"default/a-2", "default/a-1", "default/b-1"});
  CHECK_FALSE(turns.NextQueue(q));  // no queue has jobs left
}

// A queue put back with the session as it took it keeps its turn; one whose job was placed in
// between goes back into the queue order, which its larger share now puts after the other.
TEST_CASE("a queue keeps its turn only while nothing changed since it was taken") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8").Queue("a", 1).Queue("b", 1);
  for (const char* name : {"a-1", "a-2", "a-3"}) b.Job(name, {.queue = "a", .tasks = {{"w", 1, "cpu=1"}}});
  b.Job("b-1", {.queue = "b", .tasks = {{"w", 1, "cpu=1"}}});
  testing::SessionFixture s(b, "actions: allocate\ntiers:\n- plugins:\n  - name: proportion\n");
  const QueueId a = s.queue("a").id;
  QueueTurns turns = TurnsOver(s, {{"a", {"a-1", "a-2", "a-3"}}, {"b", {"b-1"}}});

  Names handed_out;
  QueueId q = kNoId;
  // Equal shares: a first, by name. Its first job is refused: nothing changes.
  REQUIRE(turns.NextQueue(q));
  CHECK(q == a);
  handed_out.push_back(s->job(turns.TakeJob(q)).key());
  turns.PutBack(q);
  // Still a's turn; its second job is placed, so a holds more than b.
  REQUIRE(turns.NextQueue(q));
  CHECK(q == a);
  const JobInfo& placed = s->job(turns.TakeJob(q));
  handed_out.push_back(placed.key());
  s->SetTaskStatus(placed.tasks.front(), TaskStatus::kAllocated, s.node("n1").id);
  turns.PutBack(q);
  TakeTheRest(s, turns, handed_out);
  CHECK(handed_out == Names{"default/a-1", "default/a-2", "default/b-1", "default/a-3"});
}

}  // namespace
}  // namespace lahar
