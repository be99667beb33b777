// The why-is-my-job-waiting scenarios (spec 7), one per reason kind, run through lahar-sim's
// simulation: each asserts the kind and the figures of the job's `waiting` events and of its
// summary.json entry, and that a reason is written when it changes, not every session.
#include <catch2/catch.hpp>

#include <string>

#include "api/strings.h"
#include "rapidjson/document.h"
#include "scheduler/framework/config.h"
#include "test/scenarios/scenario_run.h"

namespace lahar {
namespace {

using testing::RunScenario;
using testing::ScenarioOutcome;
using testing::ScenarioWaiting;

constexpr Millis kThreeHours = 3 * 3600 * 1000;

rapidjson::Document Summary(const ScenarioOutcome& o) {
  rapidjson::Document doc;
  doc.Parse(o.summary.c_str());
  REQUIRE(!doc.HasParseError());
  return doc;
}

const rapidjson::Value& JobEntry(const rapidjson::Document& summary, const std::string& job) {
  for (const auto& entry : summary["jobs"].GetArray()) {
    if (entry["job"].GetString() == job) return entry;
  }
  FAIL("no summary entry for " << job);
  return summary;
}

double QueueWait(const rapidjson::Document& summary, const std::string& queue, const char* kind) {
  for (const auto& entry : summary["queues"].GetArray()) {
    if (entry["queue"].GetString() != queue) continue;
    return entry["waitByKind"].HasMember(kind) ? entry["waitByKind"][kind].GetDouble() : 0;
  }
  return -1;
}

TEST_CASE("queue-limit: a job held by its queue's capability says so with the figures, once") {
  ScenarioOutcome o = RunScenario("why/queue_limit.yaml", kThreeHours);
  const std::vector<ScenarioWaiting>& waits = o.waiting["default/second"];
  // One event, though the job waited for an hour of one-second sessions.
  REQUIRE(waits.size() == 1);
  CHECK(waits[0].t == 10);
  CHECK(waits[0].kind == "queue-limit");
  CHECK(waits[0].reason == "queue team-a: capability nvidia.com/gpu 8, allocated 8, needs 8");
  CHECK(o.waiting.count("default/first") == 0);
  REQUIRE(o.start.count("default/second") == 1);
  CHECK(o.start["default/second"] == o.end["default/first"]);
  const rapidjson::Document summary = Summary(o);
  // It started: no reason in its entry, and its hour of waiting counted under queue-limit.
  CHECK_FALSE(JobEntry(summary, "default/second").HasMember("reason"));
  CHECK(QueueWait(summary, "team-a", "queue-limit") == Approx(o.start["default/second"] - 10));
  CHECK(summary["cluster"]["neverStarted"].ObjectEmpty());
}

TEST_CASE("admission: a job the cluster cannot take yet is not admitted, with what it lacks") {
  ScenarioOutcome o = RunScenario("why/admission.yaml", kThreeHours);
  REQUIRE(o.waiting["default/later"].size() == 1);
  CHECK(o.waiting["default/later"][0].kind == "admission");
  CHECK(o.waiting["default/later"][0].reason == "cluster: free nvidia.com/gpu 2, needs 4");
  CHECK(o.start["default/later"] == o.end["default/holder"]);
}

TEST_CASE("no-fit: a pod no node can hold never starts, and the summary says why") {
  ScenarioOutcome o = RunScenario("why/no_fit.yaml", kThreeHours);
  const std::string reason = "1/1 pods unschedulable: 2 nodes have too little nvidia.com/gpu, 1 has taint dedicated=infra";
  REQUIRE(o.waiting["default/huge"].size() == 1);
  CHECK(o.waiting["default/huge"][0].kind == "no-fit");
  CHECK(o.waiting["default/huge"][0].reason == reason);
  CHECK(o.start.count("default/huge") == 0);
  const rapidjson::Document summary = Summary(o);
  const rapidjson::Value& huge = JobEntry(summary, "default/huge");
  CHECK(huge["reason"].GetString() == reason);
  CHECK(huge["reasonKind"].GetString() == std::string("no-fit"));
  CHECK(huge["start"].IsNull());
  const rapidjson::Value& never = summary["cluster"]["neverStarted"];
  CHECK(never.MemberCount() == 1);
  CHECK(never["no-fit"].GetInt() == 1);
}

TEST_CASE("gated: a gang kept back by its scheduling gates names them until they go") {
  ScenarioOutcome o = RunScenario("gates/gated_gang_starts_after_ungate.yaml", kThreeHours);
  REQUIRE(!o.waiting["default/gated"].empty());
  const ScenarioWaiting& first = o.waiting["default/gated"].front();
  CHECK(first.kind == "gated");
  CHECK(first.reason.find("scheduling gates: ") != std::string::npos);
  for (const ScenarioWaiting& w : o.waiting["default/gated"]) CHECK(w.t < o.ungates["default/gated"].front());
}

TEST_CASE("waiting-for-victims: a preemptor names the job whose pods terminate for it") {
  ScenarioOutcome o = RunScenario("quotas/priority_preempts_one_job.yaml", kThreeHours);
  REQUIRE(!o.evictions.empty());
  const std::string victim = o.evictions.front().job;
  bool named = false;
  for (const ScenarioWaiting& w : o.waiting["default/high"]) {
    if (w.kind != "waiting-for-victims") continue;
    CHECK(w.reason == "2 pods of " + victim + " are terminating for it");
    CHECK(w.t == o.evictions.front().t);
    named = true;
  }
  CHECK(named);
}

TEST_CASE("queue-closed and not-leaf-queue: the queue at fault is named, and both never start") {
  ScenarioOutcome o = RunScenario("why/closed_and_not_leaf.yaml", kThreeHours);
  REQUIRE(o.waiting["default/in-closed"].size() == 1);
  CHECK(o.waiting["default/in-closed"][0].kind == "queue-closed");
  CHECK(o.waiting["default/in-closed"][0].reason == "queue closed is closed");
  REQUIRE(o.waiting["default/in-dept"].size() == 1);
  CHECK(o.waiting["default/in-dept"][0].kind == "not-leaf-queue");
  CHECK(o.waiting["default/in-dept"][0].reason.find("queue dept has child queues") == 0);
  CHECK(o.start.count("default/fine") == 1);
  const rapidjson::Document summary = Summary(o);
  CHECK(summary["cluster"]["neverStarted"]["queue-closed"].GetInt() == 1);
  CHECK(summary["cluster"]["neverStarted"]["not-leaf-queue"].GetInt() == 1);
}

TEST_CASE("topology: a hard job that no leaf holds names the most free one, and never starts") {
  const std::string config = StrCat(DefaultSchedulerConfigYaml(), "  - name: network-topology-aware\n");
  ScenarioOutcome o = testing::RunScenarioText(testing::ScenarioText("why/topology.yaml"), config, kThreeHours);
  CHECK(o.start.count("default/leafy") == 1);
  const std::string wide = "needs 24 nvidia.com/gpu within one tier-1 hypernode; the largest is leaf-0 with 16";
  REQUIRE(!o.waiting["default/wide"].empty());
  CHECK(o.waiting["default/wide"][0].kind == "topology");
  CHECK(o.waiting["default/wide"].back().reason == wide);
  const rapidjson::Document summary = Summary(o);
  CHECK(JobEntry(summary, "default/wide")["reason"].GetString() == wide);
  CHECK(summary["cluster"]["neverStarted"]["topology"].GetInt() == 1);
  CHECK(summary["cluster"]["neverStarted"].MemberCount() == 1);
}

}  // namespace
}  // namespace lahar
