#include "scheduler/framework/statement.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "api/strings.h"
#include "scheduler/framework/session.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/session_fixture.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::Res;

constexpr std::string_view kConfig = "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n";

// A session on the builder's snapshot that records what its event handlers are told.
struct TestSession : testing::SessionFixture {
  explicit TestSession(const ClusterBuilder& b) : SessionFixture(b, kConfig) {
    session().AddEventHandler({[this](const TaskInfo& t) { events.push_back("allocate " + t.name()); },
                               [this](const TaskInfo& t) { events.push_back("deallocate " + t.name()); }});
  }
  TaskId id(std::string_view pod) { return task(StrCat("default/", pod)).id; }
  TaskStatus status(std::string_view pod) { return task(StrCat("default/", pod)).status; }
  NodeId node_id(std::string_view name) { return node(name).id; }
  std::vector<std::string> events;
};

// Everything a statement may change, one line per task, node and job, so that a failed
// comparison shows what differs. A node's tasks are listed as a set: their order is not state.
std::string Describe(const ClusterSnapshot& c) {
  std::string out;
  for (const TaskInfo& t : c.tasks) {
    StrAppend(&out, "task ", t.name(), " ", TaskStatusName(t.status), " ",
              t.node == kNoId ? "-" : c.nodes[t.node].name(), "\n");
  }
  for (const NodeInfo& n : c.nodes) {
    std::vector<TaskId> tasks = n.tasks;
    std::sort(tasks.begin(), tasks.end());
    StrAppend(&out, "node ", n.name(), " used ", n.used.DebugString(), " limits ", n.used_limits.DebugString(),
              " releasing ", n.releasing.DebugString(), " pipelined ", n.pipelined.DebugString(), " pods ",
              n.pod_count, " releasing pods ", n.releasing_pods, " pipelined pods ", n.pipelined_pods, " tasks");
    for (TaskId t : tasks) StrAppend(&out, " ", c.tasks[t].name());
    out += "\n";
  }
  for (const JobInfo& j : c.jobs) {
    StrAppend(&out, "job ", j.name, " allocated ", j.allocated.DebugString(), " counts");
    for (int32_t count : j.status_count) StrAppend(&out, " ", count);
    out += "\n";
  }
  return out;
}

// The same cluster with job and node aggregates recomputed from the tasks alone: what
// SetTaskStatus must have kept in step (the tests' nodes carry no foreign pods).
std::string Recomputed(const ClusterSnapshot& cluster) {
  ClusterSnapshot c = cluster;
  c.RecomputeJobAggregates();
  for (NodeInfo& n : c.nodes) {
    n.used = n.used_limits = n.releasing = n.pipelined = Resources();
    n.pod_count = n.releasing_pods = n.pipelined_pods = 0;
    n.tasks.clear();
  }
  for (const TaskInfo& t : c.tasks) {
    if (t.node == kNoId) continue;
    NodeInfo& n = c.nodes[t.node];
    if (HoldsNode(t.status)) {
      n.used += t.request;
      n.used_limits += t.limit;
      ++n.pod_count;
      n.tasks.push_back(t.id);
    }
    if (t.status == TaskStatus::kReleasing) {
      n.releasing += t.request;
      ++n.releasing_pods;
    }
    if (t.status == TaskStatus::kPipelined) {
      n.pipelined += t.request;
      ++n.pipelined_pods;
    }
  }
  return Describe(c);
}

TEST_CASE("a committed allocation is bound, counted on its node and job, and told to the event handlers") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  b.Job("j", {.tasks = {{"w", 2, "cpu=1"}}});
  TestSession s(b);
  const NodeId n1 = s.node_id("n1");
  Statement st(s.session());
  st.Allocate(s.id("j-w-0"), n1);
  CHECK(s.status("j-w-0") == TaskStatus::kAllocated);
  CHECK(s.task("default/j-w-0").node == n1);
  CHECK(s->bindings().empty());  // not before the commit
  st.Commit();
  CHECK(st.empty());
  CHECK(s.status("j-w-0") == TaskStatus::kBinding);
  REQUIRE(s->bindings().size() == 1);
  CHECK(s->bindings()[0].task == s.id("j-w-0"));
  CHECK(s->bindings()[0].node == n1);
  const NodeInfo& node = s.node("n1");
  CHECK(node.used == Res("cpu=1"));
  CHECK(node.Idle().Get(kCpu) == 3000);  // millicores
  CHECK(node.pod_count == 1);
  CHECK(node.tasks == std::vector<TaskId>{s.id("j-w-0")});
  const JobInfo& job = s.job("default/j");
  CHECK(job.allocated == Res("cpu=1"));
  CHECK(job.Count(TaskStatus::kBinding) == 1);
  CHECK(job.Count(TaskStatus::kPending) == 1);
  CHECK(job.Count(TaskStatus::kAllocated) == 0);
  // Allocated -> Binding keeps the resources: one allocate event, no more.
  CHECK(s.events == std::vector<std::string>{"allocate j-w-0"});
  CHECK(Describe(s->cluster()) == Recomputed(s->cluster()));
}

TEST_CASE("a discarded allocation is undone exactly and told to the event handlers") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  b.Job("j", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}});
  TestSession s(b);
  const std::string before = Describe(s->cluster());
  {
    Statement st(s.session());
    st.Allocate(s.id("j-w-0"), s.node_id("n1"));
    st.Allocate(s.id("j-w-1"), s.node_id("n1"));
    CHECK(s.node("n1").used == Res("cpu=2"));
    CHECK(s.job("default/j").allocated == Res("cpu=2"));
    st.Discard();
    CHECK(st.empty());
    CHECK(Describe(s->cluster()) == before);
    CHECK(s.events == std::vector<std::string>{"allocate j-w-0", "allocate j-w-1", "deallocate j-w-1",
                                               "deallocate j-w-0"});
    s.events.clear();
    // A statement that goes out of scope uncommitted is discarded too.
    Statement dropped(s.session());
    dropped.Allocate(s.id("j-w-1"), s.node_id("n1"));
  }
  CHECK(Describe(s->cluster()) == before);
  CHECK(s.events == std::vector<std::string>{"allocate j-w-1", "deallocate j-w-1"});
  CHECK(s->bindings().empty());
  CHECK(s->evictions().empty());
}

TEST_CASE("a discarded statement gives the state its version back, unless another change came between") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  b.Job("j", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}});
  b.Job("k", {.min = 1, .tasks = {{"w", 1, "cpu=1"}}});
  TestSession s(b);
  Session& session = s.session();
  const JobId j = s.job("default/j").id;
  const uint64_t state = session.state_version();
  const uint64_t job = session.job_tasks_version(j);
  {
    Statement st(session);
    st.Allocate(s.id("j-w-0"), s.node_id("n1"));
    st.Allocate(s.id("j-w-1"), s.node_id("n1"));
    CHECK(session.state_version() != state);
    CHECK(session.job_tasks_version(j) != job);
    st.Discard();
  }
  CHECK(session.state_version() == state);
  CHECK(session.job_tasks_version(j) == job);

  // Interleaved with another statement: the first one's undo leaves the other's change, so the
  // state is not the one before either of them, and no version comes back.
  {
    Statement first(session);
    Statement second(session);
    first.Allocate(s.id("j-w-0"), s.node_id("n1"));
    second.Allocate(s.id("k-w-0"), s.node_id("n1"));
    first.Discard();
    CHECK(session.state_version() != state);
    second.Discard();
  }
  const uint64_t after_interleaved = session.state_version();
  CHECK(after_interleaved != state);

  // A job change in the meantime is not undone by the statement: no version comes back either.
  {
    Statement st(session);
    st.Allocate(s.id("j-w-0"), s.node_id("n1"));
    session.MarkScaled(j);
    st.Discard();
  }
  CHECK(session.state_version() != after_interleaved);
}

TEST_CASE("a pipelined task is promised releasing resources: future idle, not idle, until discarded") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  b.Job("old", {.tasks = {{"w", 1, "cpu=3"}}});
  b.Job("new", {.tasks = {{"w", 1, "cpu=2"}}});
  b.Job("next", {.tasks = {{"w", 1, "cpu=2"}}});
  b.Running("old-w-0", "n1");
  TestSession s(b);
  const std::string before = Describe(s->cluster());
  const NodeId n1 = s.node_id("n1");
  Statement st(s.session());
  st.Evict(s.id("old-w-0"), "make room");
  st.Pipeline(s.id("new-w-0"), n1);
  CHECK(s.status("new-w-0") == TaskStatus::kPipelined);
  CHECK(s.task("default/new-w-0").node == n1);
  const NodeInfo& node = s.node("n1");
  CHECK(node.pipelined == Res("cpu=2"));
  CHECK(node.releasing == Res("cpu=3"));
  CHECK(node.used == Res("cpu=3"));  // a promise holds no node resources yet
  CHECK(node.pod_count == 1);
  // The promise is paid from the releasing cpu: the idle cpu stays as it was.
  CHECK(node.FutureIdle().Get(kCpu) == 2000);  // 4 - 3 + 3 - 2
  CHECK(node.Idle().Get(kCpu) == 1000);        // 4 - 3
  const TaskInfo& next = s.task("default/next-w-0");
  CHECK_FALSE(s->ResourceFit(next, node, Placement::kIdle).ok());
  CHECK(s->ResourceFit(next, node, Placement::kFutureIdle).ok());
  CHECK(s.job("default/new").allocated.IsZero());  // a promise is not placed
  CHECK(s.job("default/new").Count(TaskStatus::kPipelined) == 1);
  CHECK(s.events == std::vector<std::string>{"deallocate old-w-0", "allocate new-w-0"});
  CHECK(Describe(s->cluster()) == Recomputed(s->cluster()));
  st.Discard();
  CHECK(Describe(s->cluster()) == before);
  CHECK(s.events == std::vector<std::string>{"deallocate old-w-0", "allocate new-w-0", "deallocate new-w-0",
                                             "allocate old-w-0"});
}

TEST_CASE("a search finds a node again once a node becomes freer, after searches that found none") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  b.Node("n2", "cpu=4");
  b.Job("old", {.tasks = {{"w", 1, "cpu=3"}}});
  b.Job("other", {.tasks = {{"w", 1, "cpu=3"}}});
  b.Job("small", {.tasks = {{"w", 1, "cpu=1"}}});
  b.Job("big", {.tasks = {{"w", 1, "cpu=2"}}});
  b.Running("old-w-0", "n1");
  b.Running("other-w-0", "n2");
  TestSession s(b);
  const TaskInfo& big = s.task("default/big-w-0");
  for (Placement p : {Placement::kIdle, Placement::kFutureIdle}) CHECK(s->FindBestNode(big, p) == kNoId);
  // Placing takes room (nodes only less free): still none.
  Statement place(s.session());
  place.Allocate(s.id("small-w-0"), s.node_id("n2"));
  CHECK(s->FindBestNode(big, Placement::kFutureIdle) == kNoId);
  // An eviction frees n1 once its pod is gone: the future-idle search finds it, the idle one not.
  Statement evict(s.session());
  evict.Evict(s.id("old-w-0"), "make room");
  CHECK(s->FindBestNode(big, Placement::kIdle) == kNoId);
  CHECK(s->FindBestNode(big, Placement::kFutureIdle) == s.node_id("n1"));
  evict.Discard();
  CHECK(s->FindBestNode(big, Placement::kFutureIdle) == kNoId);
  place.Discard();
  CHECK(s->FindBestNode(s.task("default/small-w-0"), Placement::kIdle) != kNoId);
}

TEST_CASE("an eviction in a statement releases the task but reaches the session's evictions only on commit") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  b.Job("r", {.min = 1, .tasks = {{"w", 2, "cpu=1"}}});
  b.RunningRange("r", "w", 0, 1, "n1");
  TestSession s(b);
  const std::string before = Describe(s->cluster());
  const TaskId victim = s.id("r-w-1");
  Statement st(s.session());
  st.Evict(victim, "preempted-for default/x");
  CHECK(s.status("r-w-1") == TaskStatus::kReleasing);
  CHECK(s.task("default/r-w-1").node == s.node_id("n1"));
  CHECK(s.node("n1").releasing == Res("cpu=1"));
  CHECK(s.node("n1").used == Res("cpu=2"));  // still held until the pod is gone
  CHECK(s.job("default/r").allocated == Res("cpu=1"));
  CHECK(s.job("default/r").Count(TaskStatus::kRunning) == 1);
  CHECK(s.job("default/r").Count(TaskStatus::kReleasing) == 1);
  CHECK(s->evictions().empty());
  CHECK(s.events == std::vector<std::string>{"deallocate r-w-1"});

  st.Discard();
  CHECK(s.status("r-w-1") == TaskStatus::kRunning);
  CHECK(Describe(s->cluster()) == before);
  CHECK(s.events == std::vector<std::string>{"deallocate r-w-1", "allocate r-w-1"});

  st.Evict(victim, "preempted-for default/x");
  st.Commit();
  CHECK(s.status("r-w-1") == TaskStatus::kReleasing);
  REQUIRE(s->evictions().size() == 1);
  CHECK(s->evictions()[0].task == victim);
  CHECK(s->evictions()[0].reason == "preempted-for default/x");
  CHECK(s->bindings().empty());
  CHECK(Describe(s->cluster()) == Recomputed(s->cluster()));
}

TEST_CASE("scratch evictions show the jobs and handlers the pods gone, never the nodes, and undo every trace but the counts") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  b.Job("r", {.min = 1, .tasks = {{"w", 3, "cpu=1"}}});
  b.RunningRange("r", "w", 0, 2, "n1");
  b.Job("q", {.min = 1, .tasks = {{"w", 1, "cpu=1"}}});
  b.RunningRange("q", "w", 0, 0, "n1");
  b.Job("p", {.min = 1, .tasks = {{"w", 1, "cpu=1"}}});
  TestSession s(b);
  Session& session = s.session();
  const std::string before = Describe(s->cluster());
  const JobId r = s.job("default/r").id;
  const uint64_t state = session.state_version();
  const uint64_t job = session.job_tasks_version(r);
  const uint64_t node_version = session.node_version(s.node_id("n1"));
  const uint64_t changes = session.task_state_changes();
  {
    ScratchEvictions scratch(session);
    scratch.Evict(s.id("r-w-2"));
    scratch.Evict(s.id("q-w-0"));
    scratch.Evict(s.id("r-w-1"));
    CHECK(s.status("r-w-1") == TaskStatus::kReleasing);
    CHECK(s.job("default/r").allocated == Res("cpu=1"));
    CHECK(s.job("default/r").Count(TaskStatus::kReleasing) == 2);
    CHECK(s.job("default/q").allocated == Res(""));
    CHECK(session.state_version() != state);
    CHECK(session.job_tasks_version(r) != job);
    // The nodes are left alone: nothing is released on them, and nothing marks them changed.
    CHECK(s.node("n1").releasing == Res(""));
    CHECK(session.node_version(s.node_id("n1")) == node_version);
    CHECK(s.events == std::vector<std::string>{"deallocate r-w-2", "deallocate q-w-0", "deallocate r-w-1"});
  }
  CHECK(Describe(s->cluster()) == before);
  CHECK(s.events == std::vector<std::string>{"deallocate r-w-2", "deallocate q-w-0", "deallocate r-w-1",
                                             "allocate r-w-1", "allocate q-w-0", "allocate r-w-2"});
  CHECK(session.state_version() == state);
  CHECK(session.job_tasks_version(r) == job);
  CHECK(session.job_tasks_version(s.job("default/q").id) == 0);
  // As a discarded statement's: six task state changes counted.
  CHECK(session.task_state_changes() == changes + 6);
  CHECK(s->evictions().empty());

  // Another change kept after the evictions: they are undone, but no version comes back.
  {
    ScratchEvictions scratch(session);
    scratch.Evict(s.id("r-w-2"));
    Statement kept(session);
    kept.Allocate(s.id("p-w-0"), s.node_id("n1"));
    kept.Commit();
  }
  CHECK(s.status("r-w-2") == TaskStatus::kRunning);
  CHECK(session.state_version() != state);
  CHECK(session.job_tasks_version(r) != job);
}

TEST_CASE("a statement of mixed operations discarded in reverse restores every node and job") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=4");
  b.Job("r", {.min = 1, .tasks = {{"w", 2, "cpu=2", 0, "cpu=3"}}});
  b.Job("p", {.min = 3, .tasks = {{"w", 3, "cpu=2"}}});
  b.RunningRange("r", "w", 0, 1, "n1");
  TestSession s(b);
  const std::string before = Describe(s->cluster());
  const NodeId n1 = s.node_id("n1");
  const NodeId n2 = s.node_id("n2");
  Statement st(s.session());
  st.Evict(s.id("r-w-0"), "a");
  st.Pipeline(s.id("p-w-0"), n1);
  st.Allocate(s.id("p-w-1"), n2);
  st.Evict(s.id("r-w-1"), "b");
  st.Allocate(s.id("p-w-2"), n2);
  CHECK(st.size() == 5);
  // n1: r's two pods releasing (cpu=4), p-w-0 promised cpu=2; n2: p-w-1 and p-w-2 (cpu=4).
  CHECK(s.node("n1").releasing == Res("cpu=4"));
  CHECK(s.node("n1").pipelined == Res("cpu=2"));
  CHECK(s.node("n1").used_limits == Res("cpu=6"));
  CHECK(s.node("n2").used == Res("cpu=4"));
  CHECK(s.job("default/p").allocated == Res("cpu=4"));
  CHECK(s.job("default/r").allocated.IsZero());
  CHECK(Describe(s->cluster()) == Recomputed(s->cluster()));
  st.Discard();
  CHECK(Describe(s->cluster()) == before);
  // Each operation undone by its opposite, last first.
  CHECK(s.events == std::vector<std::string>{"deallocate r-w-0", "allocate p-w-0", "allocate p-w-1",
                                             "deallocate r-w-1", "allocate p-w-2", "deallocate p-w-2",
                                             "allocate r-w-1", "deallocate p-w-1", "deallocate p-w-0",
                                             "allocate r-w-0"});
}

TEST_CASE("after committed and discarded statements every job's counts and node's usage match its tasks") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=4");
  b.Job("r", {.min = 1, .tasks = {{"w", 3, "cpu=1"}}});
  b.Job("p", {.min = 2, .tasks = {{"w", 3, "cpu=1"}}});
  b.RunningRange("r", "w", 0, 1, "n1").Running("r-w-2", "n2");
  TestSession s(b);
  {
    Statement st(s.session());
    st.Evict(s.id("r-w-2"), "x");
    st.Pipeline(s.id("p-w-0"), s.node_id("n2"));
    st.Allocate(s.id("p-w-1"), s.node_id("n1"));
    st.Commit();
  }
  {
    Statement st(s.session());
    st.Allocate(s.id("p-w-2"), s.node_id("n1"));
    st.Evict(s.id("r-w-1"), "y");
    st.Discard();
  }
  Statement st(s.session());
  st.Evict(s.id("r-w-0"), "z");
  CHECK(s.status("r-w-0") == TaskStatus::kReleasing);
  CHECK(s.status("r-w-1") == TaskStatus::kRunning);
  CHECK(s.status("r-w-2") == TaskStatus::kReleasing);
  CHECK(s.status("p-w-0") == TaskStatus::kPipelined);
  CHECK(s.status("p-w-1") == TaskStatus::kBinding);
  CHECK(s.status("p-w-2") == TaskStatus::kPending);
  CHECK(s.job("default/r").Count(TaskStatus::kReleasing) == 2);
  CHECK(s.job("default/p").Count(TaskStatus::kPending) == 1);
  CHECK(Describe(s->cluster()) == Recomputed(s->cluster()));
  REQUIRE(s->evictions().size() == 1);
  CHECK(s->evictions()[0].reason == "x");
  REQUIRE(s->bindings().size() == 1);
  CHECK(s->bindings()[0].task == s.id("p-w-1"));
}

}  // namespace
}  // namespace lahar
