#include "plugins/gang/gang.h"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "scheduler/builtins.h"
#include "scheduler/framework/session.h"
#include "test/testing/cluster_builder.h"
#include "test/testing/default_tiers.h"
#include "test/testing/session_fixture.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;

constexpr std::string_view kConfig = R"(
actions: "allocate"
tiers:
- plugins:
  - name: gang
)";

// A session on the builder's snapshot, with this file's configuration unless given another.
struct TestSession : testing::SessionFixture {
  explicit TestSession(const ClusterBuilder& b, std::string_view yaml = kConfig) : SessionFixture(b, yaml) {}
};

void MarkFailed(ClusterBuilder& b, const std::string& pod_key) {
  Pod pod = *b.cache().FindPod(pod_key);
  pod.phase = PodPhase::kFailed;
  b.cache().UpsertPod(std::move(pod));
}

TEST_CASE("a job with fewer pods than minMember is invalid, and says how many it has") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi");
  b.Job("short", {.min = 3, .tasks = {{"worker", 2, "cpu=1"}}});
  b.Job("whole", {.min = 3, .tasks = {{"worker", 3, "cpu=1"}}});
  TestSession s(b);
  CHECK(WaitReasonText(s->JobInvalidReason(s.job("default/short")).value()) == "NotEnoughPods: 2/3 pods, minAvailable 3");
  CHECK(s->JobInvalidReason(s.job("default/whole")) == std::nullopt);
}

TEST_CASE("failed pods do not count towards minMember") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi");
  b.Job("job", {.min = 3, .tasks = {{"worker", 3, "cpu=1"}}});
  MarkFailed(b, "default/job-worker-1");
  TestSession s(b);
  CHECK(WaitReasonText(s->JobInvalidReason(s.job("default/job")).value()) == "NotEnoughPods: 2/3 pods, minAvailable 3");
}

TEST_CASE("a job missing pods of a minTaskMember role is invalid") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi");
  b.Job("job", {.min = 2,
                .tasks = {{"worker", 3, "cpu=1"}},
                .min_task_member = {{"ps", 1}, {"worker", 1}}});
  TestSession s(b);
  CHECK(WaitReasonText(s->JobInvalidReason(s.job("default/job")).value()) == "NotEnoughPods: 0/1 pods of role ps, minTaskMember 1");
}

TEST_CASE("a failed pod leaves its role short even when the job has minMember valid pods") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi");
  b.Job("job", {.min = 2,
                .tasks = {{"ps", 1, "cpu=1"}, {"worker", 2, "cpu=1"}},
                .min_task_member = {{"ps", 1}, {"worker", 1}}});
  b.Job("whole", {.min = 2,
                  .tasks = {{"ps", 1, "cpu=1"}, {"worker", 2, "cpu=1"}},
                  .min_task_member = {{"ps", 1}, {"worker", 1}}});
  MarkFailed(b, "default/job-ps-0");
  TestSession s(b);
  CHECK(WaitReasonText(s->JobInvalidReason(s.job("default/job")).value()) == "NotEnoughPods: 0/1 pods of role ps, minTaskMember 1");
  CHECK(s->JobInvalidReason(s.job("default/whole")) == std::nullopt);
}

TEST_CASE("a job is ready once minMember of its tasks are placed") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi");
  b.Job("job", {.min = 2, .tasks = {{"worker", 3, "cpu=1"}}});
  TestSession s(b);
  CHECK_FALSE(s->JobReady(s.job("default/job")));
  s.Place("default/job-worker-0");
  CHECK_FALSE(s->JobReady(s.job("default/job")));  // 1 of 2
  s.Place("default/job-worker-1");
  CHECK(s->JobReady(s.job("default/job")));  // 2 of 2
}

TEST_CASE("readiness also needs every minTaskMember role at its minimum") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi");
  b.Job("job", {.min = 2,
                .tasks = {{"ps", 1, "cpu=1"}, {"worker", 3, "cpu=1"}},
                .min_task_member = {{"ps", 1}, {"worker", 1}}});
  TestSession s(b);
  s.Place("default/job-worker-0");
  s.Place("default/job-worker-1");
  CHECK_FALSE(s->JobReady(s.job("default/job")));  // 2 placed >= min 2, but ps 0 of 1
  s.Place("default/job-ps-0");
  CHECK(s->JobReady(s.job("default/job")));
}

TEST_CASE("pipelined tasks count for pipelining and starvation, not for readiness") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi");
  b.Job("job", {.min = 2, .tasks = {{"worker", 2, "cpu=1"}}});
  TestSession s(b);
  s.Place("default/job-worker-0");
  CHECK_FALSE(s->JobPipelined(s.job("default/job")));  // 1 of 2: gang votes reject
  CHECK(s->JobStarving(s.job("default/job")));
  s.Place("default/job-worker-1", TaskStatus::kPipelined);
  CHECK(s->JobPipelined(s.job("default/job")));  // 1 placed + 1 pipelined
  CHECK_FALSE(s->JobStarving(s.job("default/job")));
  CHECK_FALSE(s->JobReady(s.job("default/job")));
}

TEST_CASE("jobs that do not have their gang yet go before jobs that do") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi");
  b.Job("running", {.min = 1, .tasks = {{"worker", 2, "cpu=1"}}});
  b.Job("waiting", {.min = 1, .tasks = {{"worker", 1, "cpu=1"}}});
  b.Running("running-worker-0", "n1");
  TestSession s(b);
  // "running" is older, so without gang it would go first.
  CHECK(s->JobOrderLess(s.job("default/waiting"), s.job("default/running")));
  CHECK_FALSE(s->JobOrderLess(s.job("default/running"), s.job("default/waiting")));
}

TEST_CASE("at session close, a job still waiting for its gang is marked Unschedulable") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi");
  b.Job("waiting", {.min = 3, .tasks = {{"worker", 4, "cpu=1"}}});
  b.Job("done", {.min = 1, .tasks = {{"worker", 1, "cpu=1"}}});
  b.Running("done-worker-0", "n1");
  TestSession s(b);
  s.Place("default/waiting-worker-0");
  s->Close();
  const JobStatusUpdate* waiting = s.update("default/waiting");
  REQUIRE(waiting != nullptr);
  REQUIRE(waiting->waiting.has_value());
  CHECK(waiting->waiting->kind == WaitKind::kNoFit);
  // min 3 - 1 placed = 2 short.
  CHECK(WaitReasonText(*waiting->waiting) == "2/3 pods unschedulable: 1 of minAvailable 3 ready");
  const JobStatusUpdate* done = s.update("default/done");
  CHECK((done == nullptr || !done->waiting));
}

TEST_CASE("gang keeps the more specific message an action set for a job") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi");
  b.Job("waiting", {.min = 2, .tasks = {{"worker", 2, "cpu=1"}}});
  TestSession s(b);
  const JobId job = s.job("default/waiting").id;
  const WaitReason specific{.kind = WaitKind::kNoFit, .pods = 2, .of = 2, .counts = {{"too little cpu", 1}}};
  s->SetWaitReason(job, specific);
  s->Close();
  CHECK(s.update("default/waiting")->waiting == specific);
  CHECK(WaitReasonText(specific) == "2/2 pods unschedulable: 1 node has too little cpu");
}

TEST_CASE("an invalid job is reported with the reason it can never run") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi");
  b.Job("short", {.min = 3, .tasks = {{"worker", 2, "cpu=1"}}});
  TestSession s(b);
  s->Close();
  REQUIRE(s.update("default/short") != nullptr);
  REQUIRE(s.update("default/short")->waiting.has_value());
  CHECK(s.update("default/short")->waiting->kind == WaitKind::kInvalid);
  CHECK(ConditionReason(*s.update("default/short")->waiting) == "NotEnoughPods");
  CHECK(WaitReasonText(*s.update("default/short")->waiting) == "NotEnoughPods: 2/3 pods, minAvailable 3");
}

TEST_CASE("a job whose gang only waits for evictions to finish is not called unschedulable") {
  ClusterBuilder b;
  b.Node("n1", "cpu=8,memory=16Gi");
  b.Job("job", {.min = 2, .tasks = {{"worker", 3, "cpu=1"}}});
  TestSession s(b);
  s.Place("default/job-worker-0", TaskStatus::kPipelined);
  s.Place("default/job-worker-1", TaskStatus::kPipelined);
  s->Close();
  const JobStatusUpdate* update = s.update("default/job");
  CHECK((update == nullptr || !update->waiting));
}


// The default tiers of the spec (section 4) without the elastic plugin, for end-to-end cases
// through the allocate action.
const std::string kDefaultTiers = testing::DefaultTiersConfig("enqueue, allocate");

TEST_CASE("end to end: a gang binds whole when it fits, and not at all when it does not") {
  ClusterBuilder b;
  b.Node("n1", "cpu=4,memory=16Gi").Node("n2", "cpu=4,memory=16Gi");
  b.Job("fits", {.min = 2, .tasks = {{"worker", 2, "cpu=3"}}});
  b.Job("too-big", {.min = 3, .tasks = {{"worker", 3, "cpu=3"}}});
  testing::SessionOutcome out = testing::RunSession(b, kDefaultTiers);
  // fits: one 3-cpu pod per node; too-big would need a third node, so none of it binds.
  CHECK(out.BoundCount("default/fits") == 2);
  CHECK(out.BoundCount("default/too-big") == 0);
  CHECK(out.job_updates.at("default/fits").phase == PodGroupPhase::kRunning);
  CHECK(out.job_updates.at("default/too-big").reason() == "NotEnoughResources");
}

}  // namespace
}  // namespace lahar
