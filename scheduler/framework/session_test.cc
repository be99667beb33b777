// A session tells the owner of its jobs (the simulator, the daemon) only what changed: a job's
// phase, its scaling, and why it waits when that is not the reason the owner took last
// (JobInfo::reported_wait, kept by the cache until the job's objects change).
#include "scheduler/framework/session.h"

#include <catch2/catch.hpp>

#include "scheduler/builtins.h"
#include "scheduler/framework/statement.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/default_tiers.h"
#include "test/testing/session_fixture.h"

namespace lahar {
namespace {

using testing::Apply;
using testing::ClusterBuilder;
using testing::RunSession;
using testing::SessionOutcome;

const std::string kConfig = testing::DefaultTiersConfig("enqueue, allocate");

TEST_CASE("a job's reason is reported when it first appears and when it changes, not while it holds") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4,memory=16Gi,nvidia.com/gpu=4");
  b.Job("big", {.min = 1, .tasks = {{"worker", 1, "cpu=1,nvidia.com/gpu=8"}}});
  SessionOutcome first = RunSession(b, kConfig, 1000);
  REQUIRE(first.job_updates.count("default/big") == 1);
  REQUIRE(first.job_updates.at("default/big").waiting != nullptr);
  const WaitReason reason = *first.job_updates.at("default/big").waiting;
  CHECK(reason.kind == WaitKind::kNoFit);
  Apply(b, first);

  // Nothing changed: the owner already has the reason; the job's update is not sent again.
  SessionOutcome second = RunSession(b, kConfig, 2000);
  CHECK(second.job_updates.count("default/big") == 0);
  Apply(b, second);

  // A second node changes the counts in the reason: reported anew, with the new figures.
  b.Node("n2", "cpu=4,memory=16Gi,nvidia.com/gpu=2");
  SessionOutcome third = RunSession(b, kConfig, 3000);
  REQUIRE(third.job_updates.count("default/big") == 1);
  REQUIRE(third.job_updates.at("default/big").waiting != nullptr);
  CHECK_FALSE(*third.job_updates.at("default/big").waiting == reason);
  Apply(b, third);
  CHECK(RunSession(b, kConfig, 4000).job_updates.count("default/big") == 0);

  // The job's own objects changed (a new pod version): the reason is told again, though equal.
  b.Job("big", {.min = 1, .tasks = {{"worker", 1, "cpu=1,nvidia.com/gpu=8"}}});
  SessionOutcome fifth = RunSession(b, kConfig, 5000);
  REQUIRE(fifth.job_updates.count("default/big") == 1);
  CHECK(*fifth.job_updates.at("default/big").waiting == *third.job_updates.at("default/big").waiting);
}

TEST_CASE("a phase change is reported even when the reason is the one the owner has") {
  ClusterBuilder b;
  b.Node("n1", "cpu=2,memory=16Gi").Node("n2", "cpu=2,memory=16Gi");
  // Pending: enqueue admits it (4 cpu free), allocate finds no node with 3 cpu.
  b.Job("wide", {.min = 1, .tasks = {{"worker", 1, "cpu=3"}}, .phase = PodGroupPhase::kPending});
  SessionOutcome first = RunSession(b, kConfig, 1000);
  REQUIRE(first.job_updates.count("default/wide") == 1);
  REQUIRE(first.job_updates.at("default/wide").phase == PodGroupPhase::kInqueue);
  REQUIRE(first.job_updates.at("default/wide").waiting != nullptr);
  CHECK(first.job_updates.at("default/wide").waiting->kind == WaitKind::kNoFit);

  // The owner has that reason, but not the phase (the first session's update was not applied).
  b.cache().NoteWaitReported("default/wide", *first.job_updates.at("default/wide").waiting);
  SessionOutcome second = RunSession(b, kConfig, 2000);
  REQUIRE(second.job_updates.count("default/wide") == 1);
  CHECK(second.job_updates.at("default/wide").phase == PodGroupPhase::kInqueue);
  CHECK(*second.job_updates.at("default/wide").waiting == *first.job_updates.at("default/wide").waiting);
}

TEST_CASE("a reason set as the owner has it makes no update until something else about the job changes") {
  ClusterBuilder b;
  b.Node("n1", "cpu=2");
  b.Job("wide", {.min = 1, .tasks = {{"worker", 1, "cpu=3"}}, .phase = PodGroupPhase::kPending});
  const WaitReason held{.kind = WaitKind::kQueueLimit, .subject = "default", .limit = "capability"};
  b.Snapshot(0);  // builds the cache's job blocks, which keep what the owner took
  b.cache().NoteWaitReported("default/wide", held);
  SchedulerConfig config = testing::MustParseConfig(kConfig);
  absl::StatusOr<std::unique_ptr<Session>> opened = Session::Open(b.Snapshot(1000), config, BuiltinRegistry());
  REQUIRE(opened.ok());
  Session& session = **opened;
  const JobId job = session.cluster().jobs.front().id;
  CHECK_FALSE(session.HasWaitReason(job));
  CHECK(session.SetWaitReason(job, held));  // as the owner has it
  CHECK(session.HasWaitReason(job));  // gang's closing explanation must not overwrite it
  CHECK(session.job_updates().empty());
  // A phase change reports the job, with the reason it was given.
  session.SetJobPhase(job, PodGroupPhase::kInqueue);
  REQUIRE(session.job_updates().size() == 1);
  REQUIRE(session.job_updates().front().waiting.has_value());
  CHECK(*session.job_updates().front().waiting == held);
}

TEST_CASE("live jobs: all but Pending jobs that hold nothing, in id order, joined by a phase or task change") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Job("a-waiting", {.tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kPending});
  b.Job("b-admitted", {.tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kInqueue});
  b.Job("c-evicted", {.tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kPending});
  b.Running("c-evicted-w-0", "n1");  // Pending again, its pod still on the node
  b.Job("d-waiting", {.tasks = {{"w", 2, "cpu=2"}}, .phase = PodGroupPhase::kPending});
  testing::SessionFixture s(b, kConfig);
  Session& session = s.session();
  const JobId a = s.job("default/a-waiting").id;
  const JobId b_admitted = s.job("default/b-admitted").id;
  const JobId c = s.job("default/c-evicted").id;
  const JobId d = s.job("default/d-waiting").id;
  CHECK(session.LiveJobs() == std::vector<JobId>{b_admitted, c});
  session.AdmitJob(d, Resources());
  CHECK(session.LiveJobs() == std::vector<JobId>{b_admitted, c, d});
  session.SetTaskStatus(session.job(a).tasks.front(), TaskStatus::kPipelined, 0);
  CHECK(session.LiveJobs() == std::vector<JobId>{a, b_admitted, c, d});
}

TEST_CASE("live elastic jobs: the live jobs with more tasks than their min, in id order, joined as live jobs are") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Job("a-elastic-waiting", {.min = 1, .tasks = {{"w", 3, "cpu=1"}}, .phase = PodGroupPhase::kPending});
  b.Job("b-gang", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}});
  b.Job("c-elastic", {.min = 2, .tasks = {{"w", 3, "cpu=1"}}});
  b.Job("d-gang-waiting", {.min = 2, .tasks = {{"w", 2, "cpu=1"}}, .phase = PodGroupPhase::kPending});
  testing::SessionFixture s(b, kConfig);
  Session& session = s.session();
  const JobId a = s.job("default/a-elastic-waiting").id;
  const JobId b_gang = s.job("default/b-gang").id;
  const JobId c = s.job("default/c-elastic").id;
  const JobId d = s.job("default/d-gang-waiting").id;
  CHECK(session.LiveJobs() == std::vector<JobId>{b_gang, c});
  CHECK(session.LiveElasticJobs() == std::vector<JobId>{c});
  session.AdmitJob(d, Resources());  // live, but never more ready than its min
  CHECK(session.LiveElasticJobs() == std::vector<JobId>{c});
  session.AdmitJob(a, Resources());
  CHECK(session.LiveJobs() == std::vector<JobId>{a, b_gang, c, d});
  CHECK(session.LiveElasticJobs() == std::vector<JobId>{a, c});
}

TEST_CASE("a session hands its snapshot back with the jobs it changed marked, and the next snapshot resets them") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Node("n2", "cpu=8");
  b.Job("a-waiting", {.tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kPending});
  b.Job("b-running", {.tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kRunning});
  b.Running("b-running-w-0", "n1");
  b.Job("c-waiting", {.tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kPending});
  SchedulerConfig config = testing::MustParseConfig(kConfig);
  absl::StatusOr<std::unique_ptr<Session>> opened = Session::Open(b.Snapshot(0), config, BuiltinRegistry());
  REQUIRE(opened.ok());
  Session& session = **opened;
  const JobId a = session.cluster().FindJob("default/a-waiting");
  const JobId b_running = session.cluster().FindJob("default/b-running");
  const JobId c = session.cluster().FindJob("default/c-waiting");
  const TaskId a_task = session.job(a).tasks.front();
  session.SetTaskStatus(a_task, TaskStatus::kPipelined, 0);  // a plan the session did not commit
  ClusterSnapshot spent = std::move(session).TakeCluster();
  REQUIRE(spent.job_as_laid_out.size() == 3);
  CHECK_FALSE(spent.job_as_laid_out[a]);
  CHECK(spent.job_as_laid_out[b_running]);  // live (it holds a node), but the session did not change it
  CHECK(spent.job_as_laid_out[c]);
  // And the nodes: n1, where it promised a task, is laid out again; n2 keeps what it was.
  CHECK(spent.nodes[0].held_version == 0);
  const uint64_t n2_held = spent.nodes[1].held_version;
  CHECK(n2_held != 0);

  ClusterSnapshot next = b.cache().Snapshot(1000, std::move(spent));
  const JobId a_next = next.FindJob("default/a-waiting");
  CHECK(next.tasks[next.jobs[a_next].tasks.front()].status == TaskStatus::kPending);
  CHECK(next.jobs[a_next].Count(TaskStatus::kPipelined) == 0);
  CHECK(next.nodes[0].pipelined.IsZero());
  CHECK(next.nodes[0].held_version != 0);
  CHECK(next.nodes[1].held_version == n2_held);
  CHECK(next.job_as_laid_out == std::vector<uint8_t>(3, 1));
  CHECK(testing::DescribeSnapshot(next) == testing::DescribeSnapshot(b.cache().Snapshot(1000)));
}

TEST_CASE("a job whose task a statement changed and undid is handed back as changed") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Job("a-running", {.tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kRunning});
  b.Running("a-running-w-0", "n1");
  b.Job("b-running", {.tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kRunning});
  b.Running("b-running-w-0", "n1");
  SchedulerConfig config = testing::MustParseConfig(kConfig);
  absl::StatusOr<std::unique_ptr<Session>> opened = Session::Open(b.Snapshot(0), config, BuiltinRegistry());
  REQUIRE(opened.ok());
  Session& session = **opened;
  const JobId a = session.cluster().FindJob("default/a-running");
  const JobId b_running = session.cluster().FindJob("default/b-running");
  {
    Statement trial(session);  // a victim plan that did not fit
    trial.Evict(session.job(a).tasks.front(), "trial");
    trial.Discard();
  }
  ClusterSnapshot spent = std::move(session).TakeCluster();
  CHECK_FALSE(spent.job_as_laid_out[a]);
  CHECK(spent.job_as_laid_out[b_running]);
  ClusterSnapshot next = b.cache().Snapshot(1000, std::move(spent));
  CHECK(testing::DescribeSnapshot(next) == testing::DescribeSnapshot(b.cache().Snapshot(1000)));
}

TEST_CASE("session after session, a snapshot built over the spent one is the snapshot built afresh") {
  // Running jobs, a backlog that waits (one too wide for any node, three beyond the cluster's
  // room), and jobs that come and go before the backlog between sessions, so that it moves.
  ClusterBuilder b;
  b.Node("n1", "cpu=4").Node("n2", "cpu=4");
  b.Job("b-running", {.tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kRunning});
  b.Running("b-running-w-0", "n1");
  b.Job("c-wide", {.tasks = {{"w", 1, "cpu=8"}}, .phase = PodGroupPhase::kPending});
  for (const char* name : {"d-wait", "e-wait", "f-wait", "g-wait"}) {
    b.Job(name, {.min = 2, .tasks = {{"w", 2, "cpu=2"}}, .phase = PodGroupPhase::kPending});
  }
  const SchedulerConfig config = testing::MustParseConfig(kConfig);
  ClusterSnapshot spent;
  for (Millis now = 1000; now <= 5000; now += 1000) {
    if (now == 2000) b.Node("n0", "cpu=1");  // sorts first: the running job's node id moves
    if (now == 3000) {
      b.Job("a-new", {.tasks = {{"w", 1, "cpu=1"}}, .phase = PodGroupPhase::kPending});
    }
    if (now == 4000) {  // the running job finishes: the backlog moves towards the front
      b.cache().DeletePod("default", "b-running-w-0");
      b.cache().DeletePodGroup("default", "b-running");
    }
    ClusterSnapshot snapshot = b.cache().Snapshot(now, std::move(spent));
    INFO("session at " << now);
    CHECK(testing::DescribeSnapshot(snapshot) == testing::DescribeSnapshot(b.cache().Snapshot(now)));
    absl::StatusOr<CycleResult> result =
        RunSchedulingCycle(std::move(snapshot), config, BuiltinRegistry(), nullptr, &spent);
    REQUIRE(result.ok());
    SessionOutcome outcome;
    outcome.raw = *std::move(result);
    outcome.now = now;
    Apply(b, outcome);
  }
}

TEST_CASE("a shared reason as reported makes no update, is known by the reported object, and carries into a later update") {
  ClusterBuilder b;
  b.Node("n1", "cpu=2");
  b.Job("wide", {.min = 1, .tasks = {{"worker", 1, "cpu=3"}}, .phase = PodGroupPhase::kPending});
  b.Job("other", {.min = 1, .tasks = {{"worker", 1, "cpu=3"}}, .phase = PodGroupPhase::kPending});
  b.Job("third", {.min = 1, .tasks = {{"worker", 1, "cpu=3"}}, .phase = PodGroupPhase::kPending});
  const WaitReason held{.kind = WaitKind::kQueueLimit, .subject = "default", .limit = "capability"};
  b.Snapshot(0);
  b.cache().NoteWaitReported("default/wide", held);
  b.cache().NoteWaitReported("default/other", held);
  b.cache().NoteWaitReported("default/third", WaitReason{.kind = WaitKind::kQueueClosed, .subject = "default"});
  SchedulerConfig config = testing::MustParseConfig(kConfig);
  absl::StatusOr<std::unique_ptr<Session>> opened = Session::Open(b.Snapshot(1000), config, BuiltinRegistry());
  REQUIRE(opened.ok());
  Session& session = **opened;
  const JobId wide = session.cluster().FindJob("default/wide");
  const JobId other = session.cluster().FindJob("default/other");
  const JobId third = session.cluster().FindJob("default/third");
  Session::SharedWaitReason shared{held};
  session.SetSharedWaitReason(wide, shared);
  CHECK(session.HasWaitReason(wide));
  CHECK(session.job_updates().empty());
  CHECK(shared.equal_reported == session.job(wide).reported_wait.get());
  session.SetJobPhase(wide, PodGroupPhase::kInqueue);
  REQUIRE(session.job_updates().size() == 1);
  CHECK(session.job_updates().front().waiting == held);
  // A job with an update already, that reported the very same object, gets the reason on it.
  session.SetJobPhase(other, PodGroupPhase::kInqueue);
  session.SetSharedWaitReason(other, shared);
  REQUIRE(session.job_updates().size() == 2);
  CHECK(session.job_updates().back().waiting == held);
  // One that reported another reason is told this one.
  session.SetSharedWaitReason(third, shared);
  REQUIRE(session.job_updates().size() == 3);
  CHECK(session.job_updates().back().waiting == held);
}

// A full scan counts "too little <resource>" per resource as it goes and names it only when
// asked, among the other refusals, as spec 7's no-fit reason lists them.
TEST_CASE("fit errors count each shortage by resource, most nodes first, and name the most common") {
  FitErrors errors;
  CHECK(errors.empty());
  CHECK_FALSE(errors.MostShort().has_value());
  for (int i = 0; i < 3; ++i) errors.AddTooLittle(kNvidiaGpu, 8);
  errors.Add({FitCode::kUntoleratedTaint, "dedicated=infra"});
  for (int i = 0; i < 3; ++i) errors.AddTooLittle(kCpu, 4000);
  errors.Add({FitCode::kUntoleratedTaint, "dedicated=infra"});
  errors.AddTooLittle(kMemory, 1024);
  CHECK_FALSE(errors.empty());
  using Counts = std::vector<std::pair<std::string, int32_t>>;
  // Equal counts by text.
  CHECK(errors.Counts() == Counts{{"too little cpu", 3},
                                  {"too little nvidia.com/gpu", 3},
                                  {"taint dedicated=infra", 2},
                                  {"too little memory", 1}});
  // The most nodes short of it; a tie goes to the lower resource id.
  REQUIRE(errors.MostShort().has_value());
  CHECK(errors.MostShort()->resource == kCpu);
  CHECK(errors.MostShort()->need == 4000);
  errors.AddTooLittle(kNvidiaGpu, 8);
  CHECK(errors.MostShort()->resource == kNvidiaGpu);
  CHECK(errors.MostShort()->need == 8);
}

TEST_CASE("some node fits exactly when a search finds one: room and the plugins' predicates both") {
  ClusterBuilder b;
  b.Node("n1", "cpu=2").Node("n2", "cpu=4", {{"zone", "a"}});
  b.Job("small", {.tasks = {{"w", 1, "cpu=3"}}});
  b.Job("big", {.tasks = {{"w", 1, "cpu=5"}}});
  b.Job("picky", {.tasks = {{"w", 1, "cpu=1", 0, "", {{"zone", "b"}}}}});
  testing::SessionFixture s(b, kConfig);
  CHECK(s->SomeNodeFits(s.task("default/small-w-0"), Placement::kIdle));
  CHECK_FALSE(s->SomeNodeFits(s.task("default/big-w-0"), Placement::kIdle));
  CHECK_FALSE(s->SomeNodeFits(s.task("default/picky-w-0"), Placement::kIdle));  // room, on no node it selects
  for (const char* key : {"default/small-w-0", "default/big-w-0", "default/picky-w-0"}) {
    const TaskInfo& task = s.task(key);
    CHECK(s->SomeNodeFits(task, Placement::kIdle) == (s->FindBestNode(task, Placement::kIdle) != kNoId));
  }
}

TEST_CASE("a job is judged by its admission facts only when every admission hook says it may be") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8");
  b.Job("waiting", {.tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kPending});
  b.Job("admitted", {.tasks = {{"w", 1, "cpu=2"}}, .phase = PodGroupPhase::kInqueue});
  SchedulerConfig config = testing::MustParseConfig(kConfig);
  absl::StatusOr<std::unique_ptr<Session>> opened = Session::Open(b.Snapshot(0), config, BuiltinRegistry());
  REQUIRE(opened.ok());
  Session& session = **opened;
  const JobInfo& waiting = session.job(session.cluster().FindJob("default/waiting"));
  const JobInfo& admitted = session.job(session.cluster().FindJob("default/admitted"));
  CHECK(session.JudgedByAdmissionFacts(waiting));
  // proportion counts an admitted job in its queue's inqueue: its own promise is in the answer.
  CHECK_FALSE(session.JudgedByAdmissionFacts(admitted));
  // A hook that does not say which jobs it judges by facts alone judges every job on its own.
  session.AddJobEnqueueableFn([](const JobInfo&) { return kAbstain; });
  CHECK_FALSE(session.JudgedByAdmissionFacts(waiting));
}

}  // namespace
}  // namespace lahar
