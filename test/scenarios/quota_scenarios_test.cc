// The quota scenarios of test/scenarios/quotas (spec 2.1, 3, 3.1), run through lahar-sim's
// simulation with the default configuration, each asserting who was evicted, for whom, and when
// the waiting job started.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

#include "test/scenarios/scenario_run.h"

namespace lahar {
namespace {

using Outcome = testing::ScenarioOutcome;

Outcome Run(const std::string& file, Millis until) { return testing::RunScenario("quotas/" + file, until); }

std::set<std::string> VictimJobs(const Outcome& o) {
  std::set<std::string> jobs;
  for (const auto& e : o.evictions) jobs.insert(e.job);
  return jobs;
}

TEST_CASE("a rigid borrower gives back whole gangs, exactly the reclaiming queue's share") {
  // a borrowed all 32 GPUs (4 gangs of 2x4); b (deserves 16) needs 2x8.
  Outcome o = Run("rigid_borrower_reclaimed.yaml", 2 * 3600 * 1000);
  REQUIRE(o.evictions.size() == 4);  // two gangs of two pods: 16 GPUs, no more
  for (const auto& e : o.evictions) {
    CHECK(e.reason == "reclaimed-for default/b1");
    CHECK(e.job.rfind("default/a", 0) == 0);
  }
  std::map<std::string, int> per_job;
  for (const auto& e : o.evictions) ++per_job[e.job];
  for (const auto& [job, pods] : per_job) CHECK(pods == 2);  // taken whole
  REQUIRE(o.start.count("default/b1") == 1);
  CHECK(o.start["default/b1"] <= 61);
  CHECK(o.events == Run("rigid_borrower_reclaimed.yaml", 2 * 3600 * 1000).events);
}

TEST_CASE("reclaim is refused when the waiting job's min exceeds its queue's deserved share") {
  // b deserves 16 GPUs; its job needs 24: nothing is evicted, it waits for a to finish.
  Outcome o = Run("reclaim_refused_above_deserved.yaml", 2 * 3600 * 1000);
  CHECK(o.evictions.empty());
  CHECK(o.start.count("default/b1") == 0);
}

TEST_CASE("a queue with reclaimable: false keeps what it borrowed") {
  Outcome o = Run("not_reclaimable.yaml", 2 * 3600 * 1000);
  CHECK(o.evictions.empty());
  CHECK(o.start.count("default/b1") == 0);
}

TEST_CASE("elastic workers go before any rigid job, and never below their job's min") {
  // a: two rigid gangs (16 GPUs) and an elastic job at 4 pods (16 GPUs); b needs 2x4.
  Outcome o = Run("elastic_workers_first.yaml", 2 * 3600 * 1000);
  REQUIRE(!o.evictions.empty());
  for (const auto& e : o.evictions) {
    CHECK(e.job == "default/ae");
    CHECK(e.pod != "default/ae-w-0");  // the master stays
  }
  CHECK(o.evictions.size() == 2);
  REQUIRE(o.start.count("default/b1") == 1);
  CHECK(o.start["default/b1"] <= 301);
}

TEST_CASE("a higher priority preempts exactly one whole job of its queue; equal priority never does") {
  Outcome o = Run("priority_preempts_one_job.yaml", 2 * 3600 * 1000);
  REQUIRE(o.evictions.size() == 2);
  for (const auto& e : o.evictions) CHECK(e.reason == "preempted-for default/high");
  CHECK(VictimJobs(o).size() == 1);
  CHECK(VictimJobs(o).count("default/low4") == 1);  // the most recently started
  REQUIRE(o.start.count("default/high") == 1);
  CHECK(o.start["default/high"] <= 61);
  CHECK((o.start.count("default/same") == 0 || o.start["default/same"] > 3600));
}

TEST_CASE("nothing is evicted for a job that could not fit even then") {
  Outcome o = Run("no_eviction_for_nothing.yaml", 2 * 3600 * 1000);
  CHECK(o.evictions.empty());
}

TEST_CASE("a queue tree: a sibling team and another department each take back exactly their share") {
  // research (vision, nlp) and product split 64 GPUs; vision borrowed all of them. nlp takes its
  // 16 from its sibling; product takes its 32 from research, which keeps its own 32.
  Outcome o = Run("queue_tree.yaml", 2 * 3600 * 1000);
  int for_nlp = 0, for_product = 0;
  for (const auto& e : o.evictions) {
    CHECK(e.job.rfind("default/v", 0) == 0);  // only vision borrowed
    if (e.reason == "reclaimed-for default/n1") ++for_nlp;
    if (e.reason == "reclaimed-for default/p1") ++for_product;
  }
  CHECK(for_nlp == 2);
  CHECK(for_product == 4);
  CHECK(o.evictions.size() == 6);
  CHECK(o.start["default/n1"] <= 101);
  CHECK(o.start["default/p1"] <= 201);
}

}  // namespace
}  // namespace lahar
