#include "scheduler/framework/capacity.h"

#include <catch2/catch.hpp>

#include <string_view>

#include "scheduler/framework/statement.h"
#include "scheduler/framework/wait_memo.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/session_fixture.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;

constexpr std::string_view kConfig = "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n";

TEST_CASE("free capacity follows task changes, held resources and their release, and undone changes") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=4");
  b.Job("a", {.tasks = {{"w", 1, "cpu=1"}}});
  testing::SessionFixture s(b, kConfig);
  Session& session = s.session();
  CHECK(FreeCapacity(session).Get(kCpu) == 8000);
  Resources two;
  two.Set(kCpu, 2000);
  session.HoldResources(0, two);
  CHECK(FreeCapacity(session).Get(kCpu) == 6000);
  {
    Statement statement(session);
    statement.Allocate(s.task("default/a-w-0").id, 1);
    CHECK(FreeCapacity(session).Get(kCpu) == 5000);
    statement.Discard();
  }
  CHECK(FreeCapacity(session).Get(kCpu) == 6000);  // the state it was, under its old version
  session.ReleaseHeldResources(0, two);
  CHECK(FreeCapacity(session).Get(kCpu) == 8000);
}

// As if another answer had been made for the node's carried part, in cpu: the sums move with it.
void SetCarriedCpu(WaitMemo& memo, NodeId node, int64_t free, int64_t idle) {
  WaitMemo::CarriedCapacity& carried = memo.carried_capacity();
  WaitMemo::NodeFree& part = carried.parts[node];
  carried.free.Add(kCpu, free - part.free.Get(kCpu));
  carried.idle.Add(kCpu, idle - part.idle.Get(kCpu));
  part.free.Set(kCpu, free);
  part.idle.Set(kCpu, idle);
}

// Runs `body` in a session of `b` that reads and leaves the sessions' memory `memo`, then ends it.
template <typename Body>
void InSession(const ClusterBuilder& b, WaitMemo& memo, Body body) {
  testing::SessionFixture s(b, kConfig);
  s->set_wait_memo(&memo);
  body(s);
  memo.SessionEnded();
}

TEST_CASE("free capacity of nodes as laid out comes from the sessions' memory until their pods change") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=4");
  b.Job("a", {.tasks = {{"w", 2, "cpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Running("a-w-0", "n1");
  WaitMemo memo;
  InSession(b, memo, [&](testing::SessionFixture& s) {
    CHECK(FreeCapacity(s.session()).Get(kCpu) == 7000);
    REQUIRE(memo.carried_capacity().parts.size() == 2);
    // As if another answer had been made for n1: the next session must read it.
    SetCarriedCpu(memo, s.node("n1").id, 1000, 3000);
  });
  InSession(b, memo, [&](testing::SessionFixture& s) {
    CHECK(FreeCapacity(s.session()).Get(kCpu) == 5000);
    // A node the session changes is counted afresh, and what it carried is not changed.
    Statement statement(s.session());
    statement.Allocate(s.task("default/a-w-1").id, s.node("n1").id);
    CHECK(FreeCapacity(s.session()).Get(kCpu) == 6000);
    statement.Discard();  // undone, but under a new version: still counted afresh
    CHECK(FreeCapacity(s.session()).Get(kCpu) == 7000);
    CHECK(memo.carried_capacity().parts[s.node("n1").id].free.Get(kCpu) == 1000);
    CHECK(memo.carried_capacity().free.Get(kCpu) == 5000);
  });
  b.Running("a-w-1", "n1");  // the cache counts n1's pods again: its part is made afresh
  InSession(b, memo, [&](testing::SessionFixture& s) {
    CHECK(FreeCapacity(s.session()).Get(kCpu) == 6000);
  });
}

TEST_CASE("idle capacity counts what nodes hold now, not what releasing pods will free") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=4");
  b.Job("a", {.tasks = {{"w", 2, "cpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Running("a-w-0", "n1").Running("a-w-1", "n2");
  WaitMemo memo;
  InSession(b, memo, [&](testing::SessionFixture& s) {
    CHECK(IdleCapacity(s.session()).Get(kCpu) == 6000);
    // As if another answer had been made for n1: the next session must read it.
    SetCarriedCpu(memo, s.node("n1").id, 3000, 1000);
  });
  InSession(b, memo, [&](testing::SessionFixture& s) {
    CHECK(IdleCapacity(s.session()).Get(kCpu) == 4000);
    Statement statement(s.session());
    statement.Evict(s.task("default/a-w-1").id, "test");  // releasing: free later, not idle now
    CHECK(IdleCapacity(s.session()).Get(kCpu) == 4000);
    CHECK(FreeCapacity(s.session()).Get(kCpu) == 7000);
    statement.Discard();
  });
}

}  // namespace
}  // namespace lahar
