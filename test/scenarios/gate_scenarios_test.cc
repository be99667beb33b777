// The scheduling-gate scenarios of test/scenarios/gates (spec 3, predicates; 6.1, ungate
// events), run through lahar-sim's simulation with the default configuration: a gated job binds
// nothing and nothing is evicted for it until an ungate event, and then it starts at once.
#include <catch2/catch.hpp>

#include <string>

#include "test/scenarios/scenario_run.h"

namespace lahar {
namespace {

using testing::RunScenario;
using testing::ScenarioOutcome;

constexpr Millis kTwoHours = 2 * 3600 * 1000;

TEST_CASE("a gated gang waits with room to spare and starts in the session of its ungate event") {
  ScenarioOutcome o = RunScenario("gates/gated_gang_starts_after_ungate.yaml", kTwoHours);
  REQUIRE(o.ungates["default/gated"] == std::vector<double>{300});
  const double ungated = o.ungates["default/gated"].front();
  // Every pod of the gang binds, none before its gate went.
  REQUIRE(o.binds["default/gated"].size() == 4);
  for (double t : o.binds["default/gated"]) CHECK(t >= ungated);
  REQUIRE(o.start.count("default/gated") == 1);
  CHECK(o.start["default/gated"] == ungated);  // sessions run every second, at 300 first
  // The job submitted after it was not held up, and nothing was evicted.
  CHECK(o.start["default/other"] == 20);
  CHECK(o.evictions.empty());
  CHECK(o.events == RunScenario("gates/gated_gang_starts_after_ungate.yaml", kTwoHours).events);
}

TEST_CASE("nothing is preempted for a gang with a gated pod; once ungated it preempts one gang") {
  ScenarioOutcome o = RunScenario("gates/no_preemption_while_gated.yaml", kTwoHours);
  REQUIRE(o.ungates["default/high"] == std::vector<double>{600});
  REQUIRE(!o.evictions.empty());
  for (const auto& e : o.evictions) {
    CHECK(e.t >= 600);  // never while the gate was there, though the cluster was full from 4s
    CHECK(e.reason == "preempted-for default/high");
  }
  CHECK(o.evictions.size() == 2);  // one whole low gang
  CHECK(o.evictions[0].job == o.evictions[1].job);
  REQUIRE(o.start.count("default/high") == 1);
  CHECK(o.start["default/high"] >= 600);
  CHECK(o.start["default/high"] <= 601);
  for (double t : o.binds["default/high"]) CHECK(t >= 600);
}

}  // namespace
}  // namespace lahar
