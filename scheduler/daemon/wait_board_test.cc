// The daemon's view of why jobs wait (spec 7): /debug/explain, /debug/queues and /ui give the
// reason the session gave, in the same words as everywhere, and stay usable with many jobs.
#include "scheduler/daemon/wait_board.h"

#include <catch2/catch.hpp>

#include "api/strings.h"
#include "rapidjson/document.h"
#include "scheduler/builtins.h"
#include "test/testing/cluster_builder.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;
using testing::RunSession;
using testing::SessionOutcome;

// A queue capped at 4 cpu holding 4; its second job waits for the cap.
ClusterBuilder CappedCluster() {
  ClusterBuilder b;
  b.Node("n1", "cpu=16,memory=64Gi");
  b.Queue("capped", 1, "cpu=4");
  b.Job("first", {.queue = "capped", .tasks = {{"worker", 1, "cpu=4"}}});
  b.Job("second", {.queue = "capped", .tasks = {{"worker", 1, "cpu=4"}}});
  b.Running("first-worker-0", "n1");
  return b;
}

rapidjson::Document Json(const HttpResponse& response) {
  rapidjson::Document doc;
  doc.Parse(response.body.c_str());
  REQUIRE(!doc.HasParseError());
  return doc;
}

TEST_CASE("debug/explain gives the session's reason, its condition reason and what would let the job start") {
  ClusterBuilder b = CappedCluster();
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  const std::string message = out.job_updates.at("default/second").message();
  WaitBoard board([&b] { return b.Snapshot(); });
  board.Update(b.Snapshot(), out.raw, 0);

  const HttpResponse explained = board.Explain({"GET", "/debug/explain", "job=default%2Fsecond"});
  REQUIRE(explained.status == 200);
  rapidjson::Document doc = Json(explained);
  CHECK(doc["waiting"].GetBool());
  CHECK(doc["kind"].GetString() == std::string("queue-limit"));
  CHECK(doc["reason"].GetString() == message);  // the same words as the PodGroup condition
  CHECK(message == "queue capped: capability cpu 4, allocated 4, needs 4");
  CHECK(doc["conditionReason"].GetString() == std::string("NotEnoughResources"));
  REQUIRE(doc["whatWouldLetItStart"].Size() >= 1);
  CHECK(doc["whatWouldLetItStart"][0].GetString() == std::string("queue capped's jobs free 4 cpu"));

  rapidjson::Document running = Json(board.Explain({"GET", "/debug/explain", "job=default/first"}));
  CHECK_FALSE(running["waiting"].GetBool());
  CHECK(board.Explain({"GET", "/debug/explain", "job=default/nope"}).status == 404);
  CHECK(board.Explain({"GET", "/debug/explain", ""}).status == 400);
}

TEST_CASE("debug/queues and ui show the queue tree and each waiting job with its reason") {
  ClusterBuilder b = CappedCluster();
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  WaitBoard board([&b] { return b.Snapshot(); });
  board.Update(b.Snapshot(), out.raw, 0);
  rapidjson::Document queues = Json(board.Queues({"GET", "/debug/queues", ""}));
  bool found = false;
  for (const auto& q : queues["queues"].GetArray()) {
    if (q["queue"].GetString() != std::string("capped")) continue;
    found = true;
    CHECK(q["allocated"]["cpu"].GetInt64() == 4000);
    CHECK(q["waiting"]["queue-limit"].GetInt() == 1);
  }
  CHECK(found);
  const std::string page = board.Page({"GET", "/ui", ""}).body;
  CHECK(page.find("<tr data-queue=\"capped\">") != std::string::npos);
  CHECK(page.find("<tr data-job=\"default/second\">") != std::string::npos);
  CHECK(page.find("queue capped: capability cpu 4, allocated 4, needs 4") != std::string::npos);
  CHECK(page.find("http-equiv=\"refresh\"") != std::string::npos);
}

TEST_CASE("the ui pages 50,000 waiting jobs rather than listing them all") {
  ClusterBuilder b;
  b.Node("n1", "cpu=1,memory=1Gi");
  for (int i = 0; i < 50000; ++i) b.Job(StrCat("j", i), {.tasks = {{"worker", 1, "cpu=2"}}});
  SessionOutcome out = RunSession(b, DefaultSchedulerConfigYaml());
  WaitBoard board([&b] { return b.Snapshot(); });
  board.Update(b.Snapshot(), out.raw, 0);
  const std::string first = board.Page({"GET", "/ui", ""}).body;
  CHECK(first.find("Waiting jobs (50000)") != std::string::npos);
  CHECK(first.find("page 1 of 250") != std::string::npos);
  CHECK(first.size() < 200 * 1024);
  const std::string last = board.Page({"GET", "/ui", "page=249"}).body;
  CHECK(last.find("page 250 of 250") != std::string::npos);
}

}  // namespace
}  // namespace lahar
