// Tests of the enqueue action (with allocate where the same session should place what it
// admits), under the default tiers without the elastic plugin.
#include "actions/enqueue/enqueue.h"

#include <catch2/catch.hpp>

#include "api/strings.h"
#include "scheduler/builtins.h"
#include "scheduler/framework/cycle.h"
#include "scheduler/framework/wait_memo.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/default_tiers.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::RunSession;
using testing::SessionOutcome;

const std::string kEnqueueOnly = testing::DefaultTiersConfig("enqueue");
const std::string kEnqueueAllocate = testing::DefaultTiersConfig("enqueue, allocate");

constexpr PodGroupPhase kPending = PodGroupPhase::kPending;

// An enqueue-only session over the cache's snapshot at `now` laid out in `layout`: the one that
// leaves parked jobs out with `memo`, the one over every job with a memo of its own.
CycleResult RunLaidOut(ClusterBuilder& b, WaitMemo& memo, Millis now, ClusterCache::Layout layout) {
  WaitMemo plain;
  auto result = RunSchedulingCycle(b.cache().Snapshot(now, {}, layout), testing::MustParseConfig(kEnqueueOnly),
                                   BuiltinRegistry(), layout == ClusterCache::Layout::kLeaveOutParked ? &memo : &plain);
  REQUIRE(result.ok());
  return *std::move(result);
}
constexpr ClusterCache::Layout kLeaveOutParked = ClusterCache::Layout::kLeaveOutParked;
constexpr ClusterCache::Layout kEveryJob = ClusterCache::Layout::kEveryJob;

// Each job update as "key Phase: message".
std::vector<std::string> Updates(const CycleResult& result) {
  std::vector<std::string> lines;
  for (const CycleResult::JobUpdate& u : result.job_updates) {
    lines.push_back(StrCat(u.job, " ", PodGroupPhaseName(u.phase), ": ", u.waiting ? u.message() : ""));
  }
  return lines;
}

PodGroupPhase PhaseOf(const SessionOutcome& out, const std::string& job) {
  auto it = out.job_updates.find(job);
  return it == out.job_updates.end() ? PodGroupPhase::kUnknown : it->second.phase;
}

TEST_CASE("enqueue: a pending job that fits is admitted and placed in the same session") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Job("p", {.min = 2, .tasks = {{"w", 2, "cpu=2"}}, .phase = kPending});
  SessionOutcome out = RunSession(b, kEnqueueAllocate);
  CHECK(out.binds.size() == 2);
  // Pending -> Inqueue (enqueue) -> Running (the gang is ready when the session closes).
  CHECK(PhaseOf(out, "default/p") == PodGroupPhase::kRunning);
}

TEST_CASE("enqueue: admissions in one session add up; a smaller job after a refused one still fits") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Job("a", {.tasks = {{"w", 1, "cpu=6"}}, .phase = kPending});
  b.Job("b", {.tasks = {{"w", 1, "cpu=6"}}, .phase = kPending});
  b.Job("c", {.tasks = {{"w", 1, "cpu=2"}}, .phase = kPending});
  SessionOutcome out = RunSession(b, kEnqueueOnly);
  // 8 free: a reserves 6 (2 left), b needs 6 (refused), c needs 2 (admitted, 0 left).
  CHECK(PhaseOf(out, "default/a") == PodGroupPhase::kInqueue);
  CHECK(PhaseOf(out, "default/b") == kPending);
  CHECK(PhaseOf(out, "default/c") == PodGroupPhase::kInqueue);
  CHECK(out.job_updates.at("default/b").reason() == "NotEnoughResources");
  CHECK(out.job_updates.at("default/b").message() ==
        "cluster: free cpu 2, needs 6");
  CHECK(out.binds.empty());
}

TEST_CASE("enqueue: releasing pods free room; cordoned nodes and other schedulers' pods take it") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=8").Node("n3", "cpu=4");
  b.Cordon("n2");
  b.ForeignPod("daemon", "n3", "cpu=3");
  // An elastic job (min 1) whose extra worker is being evicted.
  b.Job("old", {.tasks = {{"w", 2, "cpu=2"}}, .phase = PodGroupPhase::kRunning});
  b.Running("old-w-0", "n1").Running("old-w-1", "n1");
  REQUIRE(b.cache().MarkReleasing("default/old-w-1").ok());
  b.Job("a", {.tasks = {{"w", 1, "cpu=3"}}, .phase = kPending});
  b.Job("b", {.tasks = {{"w", 1, "cpu=1"}}, .phase = kPending});
  SessionOutcome out = RunSession(b, kEnqueueOnly);
  // Free: n1 4 - 4 + 2 releasing = 2, n2 cordoned, n3 4 - 3 = 1: 3 in all.
  // a takes 3, b finds none (the queue alone, with 8 cpu of schedulable nodes, would take it).
  CHECK(PhaseOf(out, "default/a") == PodGroupPhase::kInqueue);
  CHECK(PhaseOf(out, "default/b") == kPending);
  CHECK(out.job_updates.at("default/b").message() ==
        "cluster: free cpu 0, needs 1");
}

TEST_CASE("enqueue: a queue's capability refuses admission") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Queue("capped", 1, "cpu=2");
  b.Job("big", {.queue = "capped", .min = 2, .tasks = {{"w", 2, "cpu=2"}}, .phase = kPending});
  SessionOutcome out = RunSession(b, kEnqueueOnly);
  // minResources 2 x 2 = 4 cpu > capability 2.
  CHECK(PhaseOf(out, "default/big") == kPending);
  CHECK(out.job_updates.at("default/big").message() == "queue capped: capability cpu 2, allocated 0, needs 4");
}

TEST_CASE("enqueue: jobs alike in their admission facts share a refusal only until an admission") {
  // Queue capped may hold 4 cpu. In job order: a (2, admitted), b and c (3 each, refused with
  // 2 held), d (2, admitted), e (3, refused with 4 held: the state changed since b's refusal).
  ClusterBuilder b;
  b.Node("n1", "cpu=16");
  b.Queue("capped", 1, "cpu=4");
  for (const auto& [name, cpu] : {std::pair{"a", "cpu=2"}, {"b", "cpu=3"}, {"c", "cpu=3"}, {"d", "cpu=2"},
                                  {"e", "cpu=3"}}) {
    b.Job(name, {.queue = "capped", .tasks = {{"w", 1, cpu}}, .phase = kPending});
  }
  WaitMemo memory;
  WaitMemo none(/*enabled=*/false);
  for (WaitMemo* memo : {&memory, &none}) {
    SessionOutcome out = RunSession(b, kEnqueueOnly, 0, memo);
    CHECK(PhaseOf(out, "default/a") == PodGroupPhase::kInqueue);
    CHECK(PhaseOf(out, "default/d") == PodGroupPhase::kInqueue);
    for (const char* job : {"default/b", "default/c"}) {
      CHECK(out.job_updates.at(job).message() == "queue capped: capability cpu 4, allocated 2, needs 3");
    }
    CHECK(out.job_updates.at("default/e").message() == "queue capped: capability cpu 4, allocated 4, needs 3");
  }
}

TEST_CASE("enqueue: alike jobs that reported the same reason make no update; one that reported another does") {
  ClusterBuilder b;
  b.Node("n1", "cpu=16");
  b.Queue("capped", 1, "cpu=2");
  for (const char* name : {"a", "b", "c"}) {
    b.Job(name, {.queue = "capped", .tasks = {{"w", 1, "cpu=3"}}, .phase = kPending});
  }
  WaitMemo memo;
  SessionOutcome first = RunSession(b, kEnqueueOnly, 0, &memo);
  const std::string held = "queue capped: capability cpu 2, allocated 0, needs 3";
  for (const char* job : {"default/a", "default/b", "default/c"}) CHECK(first.job_updates.at(job).message() == held);
  Apply(b, first);
  CHECK(RunSession(b, kEnqueueOnly, 1000, &memo).job_updates.empty());
  // The owner of c took another reason since (an update it applied late): only c is told again.
  b.cache().NoteWaitReported("default/c", WaitReason{.kind = WaitKind::kQueueClosed, .subject = "capped"});
  SessionOutcome third = RunSession(b, kEnqueueOnly, 2000, &memo);
  REQUIRE(third.job_updates.size() == 1);
  CHECK(third.job_updates.at("default/c").message() == held);
}

TEST_CASE("enqueue: jobs refused as an alike one was may be parked; a session that leaves them out tells them its reason, and stops where they would be told another") {
  ClusterBuilder b;
  b.Node("n1", "cpu=16");
  b.Queue("capped", 1, "cpu=3");
  b.Queue("open", 1, "");
  b.Job("held", {.queue = "capped", .tasks = {{"w", 1, "cpu=1"}}, .phase = PodGroupPhase::kRunning});
  b.Running("held-w-0", "n1");
  for (const char* name : {"a", "b", "c"}) {
    b.Job(name, {.queue = "capped", .tasks = {{"w", 1, "cpu=4"}}, .phase = kPending});
  }
  // Job ids follow keys: a, b, c, held. a is judged; b and c are told what a is told.
  WaitMemo memo;
  SessionOutcome first;
  CHECK(testing::RunParkingSession(b, kEnqueueOnly, memo, &first) == testing::ParkableClasses{{0, {1, 2}}});
  // An owner that does not park jobs is not told any.
  WaitMemo plain;
  CHECK(RunSession(b, kEnqueueOnly, 0, &plain).raw.parkable.empty());
  Apply(b, first);
  b.cache().ParkJobs(0, {1, 2});  // by the ids of the snapshot laid out last

  auto run_parked = [&](Millis now) { return RunLaidOut(b, memo, now, kLeaveOutParked); };
  // Nothing changed: a is told what it reported, and so are b and c.
  CycleResult same = run_parked(1000);
  CHECK_FALSE(same.needs_parked_jobs());
  CHECK(same.job_updates.empty());
  // held is gone: a is told another reason, and b and c are told it too, in key order.
  b.cache().DeletePod("default", "held-w-0");
  b.cache().DeletePodGroup("default", "held");
  CycleResult moved = run_parked(2000);
  std::vector<std::string> told;
  for (const CycleResult::JobUpdate& u : moved.job_updates) {
    told.push_back(u.job);
    CHECK(u.phase == kPending);
    CHECK(u.message() == "queue capped: capability cpu 3, allocated 0, needs 4");
  }
  CHECK(told == std::vector<std::string>{"default/a", "default/b", "default/c"});
  for (const CycleResult::JobUpdate& u : moved.job_updates) b.cache().NoteWaitReported(u.job, *u.waiting);
  // A job that fits arrives in the other queue: the turns admit it, and the class is refused
  // for the same reason before and after, so the session goes on without it.
  b.Job("other", {.queue = "open", .tasks = {{"w", 1, "cpu=1"}}, .phase = kPending});
  CycleResult admitted = run_parked(3000);
  CHECK_FALSE(admitted.needs_parked_jobs());
  REQUIRE(admitted.job_updates.size() == 1);
  CHECK(admitted.job_updates[0].job == "default/other");
  CHECK(admitted.job_updates[0].phase == PodGroupPhase::kInqueue);
  // One arrives in the class's queue: admitting it changes what the class would be told, but
  // it comes after every job of the class in job order, so their turns came before: the
  // session goes on, and tells what a session over every job tells.
  b.Job("small", {.queue = "capped", .tasks = {{"w", 1, "cpu=1"}}, .phase = kPending});
  CycleResult after = run_parked(4000);
  CHECK_FALSE(after.needs_parked_jobs());
  const std::vector<std::string> told_after = Updates(after);
  CHECK(told_after == Updates(RunLaidOut(b, memo, 4000, kEveryJob)));
  CHECK(std::any_of(told_after.begin(), told_after.end(),
                    [](const std::string& line) { return line.starts_with("default/small Inqueue"); }));
}

// Queue capped (cpu 6) holding 2 cpu, and Pending jobs a, b, c, x, d arriving in that order,
// each asking 5 cpu but x, which asks 8 until a test makes it ask less.
void AddCappedQueueWithLateJob(ClusterBuilder& b) {
  b.Node("n1", "cpu=16");
  b.Queue("capped", 1, "cpu=6");
  b.Job("held", {.queue = "capped", .tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kRunning});
  b.Running("held-w-0", "n1");
  for (const char* name : {"a", "b", "c", "x", "d"}) {
    b.Job(name, {.queue = "capped", .tasks = {{"w", 1, std::string(name) == "x" ? "cpu=8" : "cpu=5"}}, .phase = kPending});
  }
}

// A job admitted between the class's jobs in job order changes what the later ones are told:
// the parked jobs' turns decide which of them are told which, so the session stops and asks for
// every job, deciding nothing.
TEST_CASE("enqueue: a session that leaves parked jobs out stops when a job between them in job order is admitted") {
  ClusterBuilder b;
  AddCappedQueueWithLateJob(b);
  WaitMemo memo;
  SessionOutcome first;
  REQUIRE(testing::RunParkingSession(b, kEnqueueOnly, memo, &first) == testing::ParkableClasses{{0, {1, 2, 3}}});
  Apply(b, first);
  b.cache().ParkJobs(0, {1, 2, 3});  // a, b, c, d by key: a stays, b stands for c and d
  b.Job("x", {.queue = "capped", .tasks = {{"w", 1, "cpu=1"}}, .phase = kPending});
  const CycleResult stopped = RunLaidOut(b, memo, 1000, kLeaveOutParked);
  CHECK(stopped.needs_parked_jobs());
  CHECK(stopped.job_updates.empty());
  CHECK(stopped.parkable.empty());
  // What it took is kept: the owner counts it in the session's time.
  REQUIRE(stopped.action_micros.size() == 1);
  CHECK(stopped.action_micros[0].first == "enqueue");
  // Over every job, c is told the usage before x (as it reported), d the usage after it.
  CHECK(Updates(RunLaidOut(b, memo, 1000, kEveryJob)) ==
        std::vector<std::string>{"default/d Pending: queue capped: capability cpu 6, allocated 3, needs 5",
                                 "default/x Inqueue: 1/1 pods unschedulable: 0 of minAvailable 1 ready"});
}

// The session stops for the class whose turns would decide, and names it: run again with only
// that class laid out, the other class still parked, it decides what a session over every job
// decides.
TEST_CASE("enqueue: a session stopped for parked jobs names their class, and goes on with that class alone back") {
  ClusterBuilder b;
  AddCappedQueueWithLateJob(b);
  b.Queue("tight", 1, "cpu=1");
  // p, q, r and s: refused by their queue's capability whatever happens in the other queue.
  for (const char* name : {"p", "q", "r", "s"}) {
    b.Job(name, {.queue = "tight", .tasks = {{"w", 1, "cpu=2"}}, .phase = kPending});
  }
  WaitMemo memo;
  SessionOutcome first;
  // By key: a b c d held p q r s x.
  REQUIRE(testing::RunParkingSession(b, kEnqueueOnly, memo, &first) ==
          testing::ParkableClasses{{0, {1, 2, 3}}, {5, {6, 7, 8}}});
  Apply(b, first);
  b.cache().ParkJobs(0, {1, 2, 3});  // class 0: a stays, b stands for c and d
  b.cache().ParkJobs(5, {6, 7, 8});  // class 1: p stays, q stands for r and s
  b.Job("x", {.queue = "capped", .tasks = {{"w", 1, "cpu=1"}}, .phase = kPending});
  const CycleResult stopped = RunLaidOut(b, memo, 1000, kLeaveOutParked);
  REQUIRE(stopped.needs_parked_jobs());
  CHECK(stopped.parked_classes_needed == std::vector<int32_t>{0});
  b.cache().UnparkClasses(stopped.parked_classes_needed);
  REQUIRE(b.cache().AnyParked());  // r and s
  const CycleResult again = RunLaidOut(b, memo, 1000, kLeaveOutParked);
  CHECK_FALSE(again.needs_parked_jobs());
  CHECK(Updates(again) == Updates(RunLaidOut(b, memo, 1000, kEveryJob)));
  CHECK(Updates(again) ==
        std::vector<std::string>{"default/d Pending: queue capped: capability cpu 6, allocated 3, needs 5",
                                 "default/x Inqueue: 1/1 pods unschedulable: 0 of minAvailable 1 ready"});
}

// The first of a class stays laid out ahead of its representative (ClusterCache::ParkJobs), and
// the members' turns come after the representative's: the first may be admitted, and the session
// goes on without the members, telling them what the representative is told after it.
TEST_CASE("enqueue: the first of a class of parked jobs is admitted without the class coming back") {
  ClusterBuilder b;
  b.Node("n1", "cpu=16");
  b.Queue("capped", 1, "cpu=5");
  b.Job("held", {.queue = "capped", .tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kRunning});
  b.Running("held-w-0", "n1");
  for (const char* name : {"a", "b", "c", "d"}) {
    b.Job(name, {.queue = "capped", .tasks = {{"w", 1, "cpu=4"}}, .phase = kPending});
  }
  WaitMemo memo;
  SessionOutcome first;
  REQUIRE(testing::RunParkingSession(b, kEnqueueOnly, memo, &first) == testing::ParkableClasses{{0, {1, 2, 3}}});
  Apply(b, first);
  b.cache().ParkJobs(0, {1, 2, 3});  // a stays laid out, b stands for c and d
  // held is gone: a fits the queue's capability, and the jobs after it do not.
  b.cache().DeletePod("default", "held-w-0");
  b.cache().DeletePodGroup("default", "held");
  const std::vector<std::string> every = Updates(RunLaidOut(b, memo, 1000, kEveryJob));
  REQUIRE(every == std::vector<std::string>{
                             "default/a Inqueue: 1/1 pods unschedulable: 0 of minAvailable 1 ready",
                             "default/b Pending: queue capped: capability cpu 5, allocated 4, needs 4",
                             "default/c Pending: queue capped: capability cpu 5, allocated 4, needs 4",
                             "default/d Pending: queue capped: capability cpu 5, allocated 4, needs 4"});
  const CycleResult parked = RunLaidOut(b, memo, 1000, kLeaveOutParked);
  CHECK_FALSE(parked.needs_parked_jobs());
  CHECK(Updates(parked) == every);
}

// A queue whose laid-out jobs are all refused in one state has its parked jobs refused in it too
// (the queue stays first while its jobs are refused): what a later admission changes is none of
// theirs.
TEST_CASE("enqueue: a class whose queue's turns ended before an admission is told its reason from before it") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Queue("alpha", 1, "").Queue("beta", 1, "");
  for (const char* name : {"a", "b", "c", "d"}) {
    b.Job(name, {.queue = "alpha", .tasks = {{"w", 1, "cpu=16"}}, .phase = kPending});
  }
  WaitMemo memo;
  SessionOutcome first;
  REQUIRE(testing::RunParkingSession(b, kEnqueueOnly, memo, &first) == testing::ParkableClasses{{0, {1, 2, 3}}});
  Apply(b, first);
  b.cache().ParkJobs(0, {1, 2, 3});
  // x arrives in beta, after alpha in the queue order: admitted once alpha's jobs are all refused.
  b.Job("x", {.queue = "beta", .tasks = {{"w", 1, "cpu=2"}}, .phase = kPending});
  const std::vector<std::string> every = Updates(RunLaidOut(b, memo, 1000, kEveryJob));
  REQUIRE(every == std::vector<std::string>{"default/x Inqueue: 1/1 pods unschedulable: 0 of minAvailable 1 ready"});
  const CycleResult parked = RunLaidOut(b, memo, 1000, kLeaveOutParked);
  CHECK_FALSE(parked.needs_parked_jobs());
  CHECK(Updates(parked) == every);
}

TEST_CASE("enqueue: queues come in share order") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  b.Queue("a", 1).Queue("b", 1);
  b.Job("running", {.queue = "a", .tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kRunning});
  b.Running("running-w-0", "n1");
  // 2 cpu free. Queue a already holds 2 cpu, b nothing: b goes first although a's job is older
  // and its name sorts first.
  b.Job("aj", {.queue = "a", .tasks = {{"w", 1, "cpu=2"}}, .phase = kPending});
  b.Job("bj", {.queue = "b", .tasks = {{"w", 1, "cpu=2"}}, .phase = kPending});
  SessionOutcome out = RunSession(b, kEnqueueOnly);
  CHECK(PhaseOf(out, "default/bj") == PodGroupPhase::kInqueue);
  CHECK(PhaseOf(out, "default/aj") == kPending);
}

TEST_CASE("enqueue: without minResources, the requests of the min pods are what must fit") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4");
  b.Job("m", {.min = 2, .tasks = {{"w", 3, "cpu=2"}}, .phase = kPending});
  b.Job("n", {.tasks = {{"w", 1, "cpu=1"}}, .phase = kPending});
  for (const char* key : {"default/m", "default/n"}) {
    PodGroup group = *b.cache().FindPodGroup(key);
    group.min_resources = Resources();
    b.cache().UpsertPodGroup(std::move(group));
  }
  SessionOutcome out = RunSession(b, kEnqueueOnly);
  // m: 2 pods x 2 cpu = 4 of the 4 free; n: 1 cpu, none left.
  CHECK(PhaseOf(out, "default/m") == PodGroupPhase::kInqueue);
  CHECK(PhaseOf(out, "default/n") == kPending);
  // The user set no minResources: the message names the gang's min instead.
  CHECK(out.job_updates.at("default/n").message() ==
        "cluster: free cpu 0, needs 1");
}

TEST_CASE("enqueue: a closed queue admits nothing") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  Queue closed;
  closed.meta.name = "closed";
  closed.open = false;
  b.cache().UpsertQueue(closed);
  b.Job("j", {.queue = "closed", .tasks = {{"w", 1, "cpu=1"}}, .phase = kPending});
  SessionOutcome out = RunSession(b, kEnqueueAllocate);
  CHECK(PhaseOf(out, "default/j") == kPending);
  CHECK(out.job_updates.at("default/j").message() == "queue closed is closed");
  CHECK(out.binds.empty());
}

TEST_CASE("enqueue: a PodGroup whose pods do not exist yet is admitted by its minResources (operators create them once Inqueue)") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Job("fits", {.min = 4, .min_resources = "cpu=4", .tasks = {}, .phase = kPending});
  b.Job("too-big", {.min = 4, .min_resources = "cpu=9", .tasks = {}, .phase = kPending});
  b.Job("short", {.min = 3, .tasks = {{"w", 2, "cpu=1"}}, .phase = kPending});
  SessionOutcome out = RunSession(b, kEnqueueAllocate);
  CHECK(PhaseOf(out, "default/fits") == PodGroupPhase::kInqueue);
  CHECK(PhaseOf(out, "default/too-big") == kPending);
  CHECK(out.job_updates.at("default/too-big").message() == "cluster: free cpu 4, needs 9");
  // Admitted, then held by allocate, which says why.
  CHECK(PhaseOf(out, "default/short") == PodGroupPhase::kInqueue);
  CHECK(out.job_updates.at("default/short").reason() == "NotEnoughPods");
  CHECK(out.binds.empty());
}

TEST_CASE("enqueue: a pod-less PodGroup of an idle queue is admitted on what a borrowing queue would give back") {
  // Queue a borrows all 4 GPUs; b's job has no pods yet (its operator creates them once the
  // PodGroup is Inqueue): its minResources are b's demand, so b deserves half, and reclaim
  // could take back the 2 GPUs a holds beyond its half.
  ClusterBuilder b;
  b.Node("n1", "cpu=16,nvidia.com/gpu=4");
  b.Queue("a", 1).Queue("b", 1);
  b.Job("borrower", {.queue = "a", .min = 2, .tasks = {{"w", 4, "cpu=1,nvidia.com/gpu=1"}}});
  for (int i = 0; i < 4; ++i) b.Running(StrCat("borrower-w-", i), "n1");
  b.Job("owner", {.queue = "b", .min = 2, .min_resources = "cpu=2,nvidia.com/gpu=2", .tasks = {}, .phase = kPending});
  b.Job("greedy", {.queue = "b", .min = 3, .min_resources = "cpu=3,nvidia.com/gpu=3", .tasks = {}, .phase = kPending});
  const std::string config = testing::DefaultTiersConfig("enqueue, allocate, reclaim");
  SessionOutcome out = RunSession(b, config);
  CHECK(PhaseOf(out, "default/owner") == PodGroupPhase::kInqueue);
  // 3 more GPUs than b deserves once owner is in: a lends only 2.
  CHECK(PhaseOf(out, "default/greedy") == kPending);
}

TEST_CASE("enqueue: with preempt configured, lower-priority jobs of the job's queue count as room") {
  // The node is full of a low-priority job; a high-priority job of the same queue is admitted
  // only when preempt could take that room for it, never on a job of its own priority.
  auto cluster = [] {
    ClusterBuilder b;
    b.Node("n1", "cpu=4");
    b.PriorityClass("low", 1).PriorityClass("high", 100);
    b.Job("low", {.min = 4, .tasks = {{"w", 4, "cpu=1"}}, .priority_class = "low"});
    for (int i = 0; i < 4; ++i) b.Running(StrCat("low-w-", i), "n1");
    b.Job("urgent", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}, .priority_class = "high", .phase = kPending});
    b.Job("peer", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}, .priority_class = "low", .phase = kPending});
    return b;
  };
  ClusterBuilder with = cluster();
  SessionOutcome out = RunSession(with, testing::DefaultTiersConfig("enqueue, allocate, preempt"));
  CHECK(PhaseOf(out, "default/urgent") == PodGroupPhase::kInqueue);
  CHECK(PhaseOf(out, "default/peer") == kPending);
  ClusterBuilder without = cluster();
  CHECK(PhaseOf(RunSession(without, kEnqueueAllocate), "default/urgent") == kPending);
}

TEST_CASE("enqueue: a pod without a PodGroup needs no admission") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  Pod pod;
  pod.meta.name = "solo";
  pod.meta.namespace_ = "default";
  pod.meta.uid = "uid-solo";
  pod.scheduler_name = "lahar";
  pod.requests = testing::Res("cpu=1");
  pod.limits = pod.requests;
  b.cache().UpsertPod(pod);
  SessionOutcome out = RunSession(b, kEnqueueAllocate);
  CHECK(out.binds == std::map<std::string, std::string>{{"default/solo", "n1"}});
}

TEST_CASE("enqueue: takes only older Volcano's overcommit-factor, with a warning") {
  CHECK(NewEnqueueAction(Arguments()).ok());
  CHECK(!BuiltinRegistry().NewAction("enqueue", Arguments("action enqueue", {{"overcommitfactor", "1.2"}})).ok());
  auto warnings = BuiltinRegistry().CheckActionArguments("enqueue", Arguments("action enqueue", {{"overcommit-factor", "1.2"}}));
  REQUIRE(warnings.ok());
  REQUIRE(warnings->size() == 1);
  CHECK_THAT((*warnings)[0], Catch::Contains("overcommit-factor"));
}

}  // namespace
}  // namespace lahar
