#include "scheduler/framework/order_key.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "api/strings.h"
#include "scheduler/builtins.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"
#include "test/testing/cluster_builder.h"

namespace lahar {
namespace {

using testing::ClusterBuilder;

OrderKey Integers(std::vector<int64_t> values, bool higher_first = false) {
  OrderKey key;
  for (int64_t v : values) key.AddInteger(v, higher_first);
  return key;
}

TEST_CASE("order key: parts compare in turn, each as its hook does") {
  CHECK(Compare(Integers({1, 9}), Integers({2, 0})) < 0);  // the first part decides
  CHECK(Compare(Integers({1, 9}), Integers({1, 8})) > 0);
  CHECK(Compare(Integers({1, 9}), Integers({1, 9})) == 0);
  CHECK(Compare(Integers({5}, /*higher_first=*/true), Integers({3}, true)) < 0);

  auto ratio = [](int64_t numerator, int64_t denominator) {
    OrderKey key;
    key.AddRatio(numerator, denominator);
    return key;
  };
  CHECK(Compare(ratio(2, 4), ratio(3, 6)) == 0);  // by cross products, as CompareFulfillment
  CHECK(Compare(ratio(1, 4), ratio(1, 3)) < 0);
  CHECK(Compare(ratio(-1, 4), ratio(0, 3)) < 0);

  // After Swap, parts stand for hooks asked (r, l): the order of those parts is reversed.
  auto swapped = [](int64_t first, int64_t second) {
    OrderKey key;
    key.AddInteger(first);
    key.Swap();
    key.AddInteger(second);
    return key;
  };
  CHECK(Compare(swapped(1, 5), swapped(1, 3)) < 0);
  CHECK(Compare(swapped(0, 3), swapped(1, 5)) < 0);

  // A number compares by `==` and then `<` (or `>`), as the hooks test it, NaN included.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto number = [](double v, bool higher_first) {
    OrderKey key;
    key.AddNumber(v, higher_first);
    return key;
  };
  auto lower_first_hook = [](double l, double r) { return l == r ? 0 : (l < r ? -1 : 1); };
  auto higher_first_hook = [](double l, double r) { return l != r ? (l > r ? -1 : 1) : 0; };
  for (double l : {0.5, 1.0, nan}) {
    for (double r : {0.5, 1.0, nan}) {
      CAPTURE(l, r);
      CHECK(Compare(number(l, false), number(r, false)) == lower_first_hook(l, r));
      CHECK(Compare(number(l, true), number(r, true)) == higher_first_hook(l, r));
    }
  }
}

TEST_CASE("order key: a key with more parts than it holds says it is incomplete") {
  OrderKey key;
  for (int i = 0; i < 16; ++i) key.AddInteger(i);
  CHECK(key.complete());
  key.AddInteger(16);
  CHECK_FALSE(key.complete());
  key.Clear();
  CHECK(key.complete());
}

// Every plugin with an elastic or job order: priority, gang, drf, sla and elastic.
constexpr std::string_view kOrderConfig = R"(
actions: "allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: sla
    arguments:
      sla-waiting-time: 10m
- plugins:
  - name: drf
  - name: elastic
)";

// Jobs of every kind the orders tell apart: priorities, fulfillments equal as fractions and
// not, pods of different shapes, shares, measured gains, overdue or not, creation order.
ClusterBuilder VariedJobs() {
  ClusterBuilder b;
  b.PriorityClass("high", 100).PriorityClass("low", 1);
  for (int n = 0; n < 4; ++n) b.Node(StrCat("n", n), "cpu=64,memory=256Gi,nvidia.com/gpu=8");
  struct Kind {
    std::string name;
    int min, tasks, running;
    std::string request, priority_class;
    std::optional<std::string> throughput;
  };
  const std::vector<Kind> kinds = {
      {"quarter", 1, 5, 2, "cpu=1,nvidia.com/gpu=1", "", std::nullopt},
      {"two-of-four", 1, 5, 3, "cpu=1", "", std::nullopt},
      {"three-of-six", 1, 7, 4, "cpu=1", "", std::nullopt},
      {"gpu2", 1, 3, 2, "cpu=2,nvidia.com/gpu=2", "high", std::nullopt},
      {"gpu2-low", 1, 3, 2, "cpu=2,nvidia.com/gpu=2", "low", std::nullopt},
      {"cpu8", 2, 4, 3, "cpu=8,memory=1Gi", "", std::nullopt},
      {"cpu8-twin", 2, 4, 3, "cpu=8,memory=1Gi", "", std::nullopt},
      {"cpu8-triplet", 2, 4, 3, "cpu=8,memory=1Gi", "", std::nullopt},
      {"cpu8-quad", 2, 4, 3, "cpu=8,memory=1Gi", "", std::nullopt},
      {"mem16", 1, 3, 2, "cpu=4,memory=16Gi", "", std::nullopt},
      {"mem16-twin", 1, 3, 2, "cpu=4,memory=16Gi", "", std::nullopt},
      {"flat", 1, 4, 3, "cpu=1,nvidia.com/gpu=1", "", "1=10,2=20,3=20.5"},
      {"steady", 1, 4, 3, "cpu=1,nvidia.com/gpu=1", "", "1=10,2=15,3=20"},
      {"wide", 1, 9, 8, "cpu=2,nvidia.com/gpu=1", "high", "1=10,2=19,4=35,8=60"},
      {"not-ready", 3, 5, 2, "cpu=1", "", std::nullopt},
      // Fulfilled alike (max <= min counts as 1) and asking alike: the gang order decides.
      {"gang-short", 3, 3, 2, "cpu=1,memory=2Gi", "", std::nullopt},
      {"full", 1, 3, 3, "cpu=1,memory=2Gi", "", std::nullopt},
  };
  int node = 0;
  for (const Kind& kind : kinds) {
    b.Job(kind.name, {.min = kind.min, .tasks = {{"w", kind.tasks, kind.request}},
                      .priority_class = kind.priority_class, .phase = PodGroupPhase::kRunning,
                      .throughput = kind.throughput});
    b.RunningRange(kind.name, "w", 0, kind.running - 1, StrCat("n", node++ % 4));
  }
  return b;
}

TEST_CASE("order key: the plugins' keys order elastic victims exactly as their hooks do") {
  ClusterBuilder b = VariedJobs();
  // Created 10 minutes (the SLA) before now, at 3590 s, or earlier: overdue. Each pair of jobs
  // alike in the orders before it is told apart by one order: the SLA's (cpu8-twin is overdue,
  // cpu8 not; mem16 is overdue longer than mem16-twin), drf's (two-of-four holds less than
  // three-of-six), the creation time (cpu8-quad) or the arrival order (cpu8-triplet).
  const std::map<std::string, int64_t> created = {
      {"default/cpu8-twin", 300}, {"default/mem16", 400},  {"default/mem16-twin", 500},
      {"default/quarter", 100},   {"default/gpu2", 200},   {"default/cpu8-quad", 3591},
      {"default/three-of-six", 3590}, {"default/two-of-four", 3590}};
  ClusterSnapshot snapshot = b.Snapshot(/*now=*/3600 * 1000);
  for (JobInfo& job : snapshot.jobs) {
    auto it = created.find(job.key());
    job.creation_timestamp = it != created.end() ? it->second : 3590;
  }
  auto config = ParseSchedulerConfig(kOrderConfig, BuiltinRegistry());
  REQUIRE(config.ok());
  auto opened = Session::Open(std::move(snapshot), *config, BuiltinRegistry());
  REQUIRE(opened.ok());
  Session& session = **opened;
  REQUIRE(session.ElasticVictimOrderKeyed());

  auto check_all_pairs = [&session] {
    std::vector<OrderKey> keys(session.jobs().size());
    for (const JobInfo& job : session.jobs()) {
      session.ElasticVictimKey(job, keys[job.id]);
      REQUIRE(keys[job.id].complete());
    }
    int decided = 0;
    for (const JobInfo& l : session.jobs()) {
      for (const JobInfo& r : session.jobs()) {
        CAPTURE(l.key(), r.key());
        const bool by_hooks = session.ElasticVictimOrderLess(l, r);
        CHECK((Compare(keys[l.id], keys[r.id]) < 0) == by_hooks);
        decided += by_hooks ? 1 : 0;
      }
    }
    // A strict total order: of each pair of distinct jobs exactly one comes first.
    const int n = static_cast<int>(session.jobs().size());
    CHECK(decided == n * (n - 1) / 2);
  };
  check_all_pairs();

  // Workers taken (as the ranking takes them): the keys made again follow the hooks.
  Statement statement(session);
  for (std::string_view name : {"two-of-four", "flat", "wide", "cpu8"}) {
    const JobInfo& job = session.job(session.cluster().FindJob(StrCat("default/", name)));
    for (TaskId t : job.tasks) {
      if (IsPlaced(session.task(t).status)) {
        statement.Evict(t, "test");
        break;
      }
    }
  }
  check_all_pairs();
  statement.Discard();
}

TEST_CASE("order key: a job order hook without a key leaves the elastic victim order unkeyed") {
  Registry registry;
  REQUIRE(RegisterBuiltinActions(registry).ok());
  REQUIRE(RegisterBuiltinPlugins(registry).ok());
  class UnkeyedOrder : public Plugin {
   public:
    std::string_view Name() const override { return "test-unkeyed-order"; }
    void OnSessionOpen(Session& session) override {
      session.AddJobOrderFn([](const JobInfo& l, const JobInfo& r) { return l.id > r.id ? -1 : (l.id < r.id ? 1 : 0); });
    }
  };
  REQUIRE(registry
              .RegisterPlugin("test-unkeyed-order", [](const Arguments&) -> absl::StatusOr<std::unique_ptr<Plugin>> {
                return std::make_unique<UnkeyedOrder>();
              }, {})
              .ok());
  ClusterBuilder b = VariedJobs();
  auto keyed = [&](std::string_view yaml) {
    auto config = ParseSchedulerConfig(yaml, registry);
    REQUIRE(config.ok());
    auto session = Session::Open(b.Snapshot(), *config, registry);
    REQUIRE(session.ok());
    return (*session)->ElasticVictimOrderKeyed();
  };
  CHECK(keyed("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: elastic\n"));
  CHECK_FALSE(keyed("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: test-unkeyed-order\n  - name: elastic\n"));
}

}  // namespace
}  // namespace lahar
