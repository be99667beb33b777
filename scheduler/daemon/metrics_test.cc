#include "scheduler/daemon/metrics.h"

#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace lahar {
namespace {

TEST_CASE("a labelled counter renders sorted series") {
  MetricsRegistry registry;
  CounterFamily& attempts = registry.Counter("lahar_schedule_attempts_total",
                                             "Scheduling attempts by result.", {"result"});
  attempts.Add({"scheduled"}, 3);
  attempts.Add({"error"});
  attempts.Add({"scheduled"}, 0.5);
  attempts.Add({"error"}, -1);  // ignored: counters never go down
  CHECK(attempts.Value({"scheduled"}) == 3.5);
  CHECK(attempts.Value({"unschedulable"}) == 0);
  CHECK(registry.Render() ==
        "# HELP lahar_schedule_attempts_total Scheduling attempts by result.\n"
        "# TYPE lahar_schedule_attempts_total counter\n"
        "lahar_schedule_attempts_total{result=\"error\"} 1\n"
        "lahar_schedule_attempts_total{result=\"scheduled\"} 3.5\n");
}

TEST_CASE("families render sorted by name; unlabelled ones start at 0, empty ones are omitted") {
  MetricsRegistry registry;
  registry.Gauge("lahar_b", "B.");
  registry.Counter("lahar_a_total", "A.");
  registry.Counter("lahar_c_total", "C.", {"reason"});  // no series yet
  CHECK(registry.Render() ==
        "# HELP lahar_a_total A.\n"
        "# TYPE lahar_a_total counter\n"
        "lahar_a_total 0\n"
        "# HELP lahar_b B.\n"
        "# TYPE lahar_b gauge\n"
        "lahar_b 0\n");
}

TEST_CASE("registering a name again returns the same family") {
  MetricsRegistry registry;
  CounterFamily& first = registry.Counter("lahar_x_total", "X.", {"a"});
  CounterFamily& second = registry.Counter("lahar_x_total", "Other help.", {"a"});
  CHECK(&first == &second);
  HistogramFamily& h1 = registry.Histogram("lahar_h", "H.", {}, {1, 2});
  CHECK(&h1 == &registry.Histogram("lahar_h", "H.", {}, {1, 2}));
}

TEST_CASE("a gauge family is set, added to and cleared") {
  MetricsRegistry registry;
  GaugeFamily& allocated = registry.Gauge("lahar_queue_allocated", "Allocated resources.",
                                          {"queue", "resource"});
  allocated.Set({"research", "nvidia.com/gpu"}, 8);
  allocated.Set({"default", "cpu"}, 1.25);
  allocated.Add({"research", "nvidia.com/gpu"}, -2);  // 8 - 2
  CHECK(allocated.Value({"research", "nvidia.com/gpu"}) == 6);
  CHECK(registry.Render() ==
        "# HELP lahar_queue_allocated Allocated resources.\n"
        "# TYPE lahar_queue_allocated gauge\n"
        "lahar_queue_allocated{queue=\"default\",resource=\"cpu\"} 1.25\n"
        "lahar_queue_allocated{queue=\"research\",resource=\"nvidia.com/gpu\"} 6\n");

  // The "default" queue was deleted: after Clear only what is set again remains.
  allocated.Clear();
  CHECK(allocated.Value({"default", "cpu"}) == 0);
  allocated.Set({"research", "nvidia.com/gpu"}, 4);
  CHECK(registry.Render() ==
        "# HELP lahar_queue_allocated Allocated resources.\n"
        "# TYPE lahar_queue_allocated gauge\n"
        "lahar_queue_allocated{queue=\"research\",resource=\"nvidia.com/gpu\"} 4\n");
}

TEST_CASE("a histogram renders cumulative buckets, sum and count") {
  MetricsRegistry registry;
  HistogramFamily& duration = registry.Histogram(
      "lahar_action_duration_seconds", "Action duration.", {"action"}, {0.1, 1, 10});
  for (double v : {0.05, 0.1, 0.5, 3.0, 30.0}) duration.Observe({"allocate"}, v);
  duration.Observe({"enqueue"}, 2);
  CHECK(duration.Count({"allocate"}) == 5);
  CHECK(duration.Sum({"allocate"}) == Approx(33.65));  // 0.05 + 0.1 + 0.5 + 3 + 30
  CHECK(duration.Count({"backfill"}) == 0);
  // allocate: <=0.1 holds 0.05 and 0.1 (le is inclusive), <=1 adds 0.5, <=10 adds 3, +Inf adds 30.
  CHECK(registry.Render() ==
        "# HELP lahar_action_duration_seconds Action duration.\n"
        "# TYPE lahar_action_duration_seconds histogram\n"
        "lahar_action_duration_seconds_bucket{action=\"allocate\",le=\"0.1\"} 2\n"
        "lahar_action_duration_seconds_bucket{action=\"allocate\",le=\"1\"} 3\n"
        "lahar_action_duration_seconds_bucket{action=\"allocate\",le=\"10\"} 4\n"
        "lahar_action_duration_seconds_bucket{action=\"allocate\",le=\"+Inf\"} 5\n"
        "lahar_action_duration_seconds_sum{action=\"allocate\"} 33.65\n"
        "lahar_action_duration_seconds_count{action=\"allocate\"} 5\n"
        "lahar_action_duration_seconds_bucket{action=\"enqueue\",le=\"0.1\"} 0\n"
        "lahar_action_duration_seconds_bucket{action=\"enqueue\",le=\"1\"} 0\n"
        "lahar_action_duration_seconds_bucket{action=\"enqueue\",le=\"10\"} 1\n"
        "lahar_action_duration_seconds_bucket{action=\"enqueue\",le=\"+Inf\"} 1\n"
        "lahar_action_duration_seconds_sum{action=\"enqueue\"} 2\n"
        "lahar_action_duration_seconds_count{action=\"enqueue\"} 1\n");
}

TEST_CASE("an unlabelled histogram renders before any observation") {
  MetricsRegistry registry;
  registry.Histogram("lahar_e2e_scheduling_latency_seconds", "Latency.", {},
                     ExponentialBuckets(0.5, 2, 2));  // 0.5, 1
  CHECK(registry.Render() ==
        "# HELP lahar_e2e_scheduling_latency_seconds Latency.\n"
        "# TYPE lahar_e2e_scheduling_latency_seconds histogram\n"
        "lahar_e2e_scheduling_latency_seconds_bucket{le=\"0.5\"} 0\n"
        "lahar_e2e_scheduling_latency_seconds_bucket{le=\"1\"} 0\n"
        "lahar_e2e_scheduling_latency_seconds_bucket{le=\"+Inf\"} 0\n"
        "lahar_e2e_scheduling_latency_seconds_sum 0\n"
        "lahar_e2e_scheduling_latency_seconds_count 0\n");
}

TEST_CASE("label values and help text are escaped") {
  MetricsRegistry registry;
  registry.Gauge("lahar_job_fulfillment", "Fulfillment \\ of\njobs \"quoted\".",
                 {"namespace", "job"})
      .Set({"ns", "a\\b\"c\nd"}, 0.5);
  CHECK(registry.Render() ==
        "# HELP lahar_job_fulfillment Fulfillment \\\\ of\\njobs \"quoted\".\n"
        "# TYPE lahar_job_fulfillment gauge\n"
        "lahar_job_fulfillment{namespace=\"ns\",job=\"a\\\\b\\\"c\\nd\"} 0.5\n");
}

TEST_CASE("values print as integers where they are, and as Prometheus special values") {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  MetricsRegistry registry;
  GaugeFamily& g = registry.Gauge("g", "G.", {"k"});
  g.Set({"a"}, 1e6);
  g.Set({"b"}, -3);
  g.Set({"c"}, 0.1);
  g.Set({"d"}, kInf);
  g.Set({"e"}, -kInf);
  g.Set({"f"}, std::numeric_limits<double>::quiet_NaN());
  g.Set({"g"}, 1e300);
  CHECK(registry.Render() ==
        "# HELP g G.\n"
        "# TYPE g gauge\n"
        "g{k=\"a\"} 1000000\n"
        "g{k=\"b\"} -3\n"
        "g{k=\"c\"} 0.1\n"
        "g{k=\"d\"} +Inf\n"
        "g{k=\"e\"} -Inf\n"
        "g{k=\"f\"} NaN\n"
        "g{k=\"g\"} 1e+300\n");
}

TEST_CASE("concurrent updates from several threads all count") {
  MetricsRegistry registry;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20'000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&registry, t] {
      // Every thread registers too: all must get the same families.
      CounterFamily& c = registry.Counter("lahar_ops_total", "Ops.", {"kind"});
      HistogramFamily& h = registry.Histogram("lahar_op_seconds", "Op time.", {}, {1});
      for (int i = 0; i < kPerThread; ++i) {
        c.Add({"shared"});
        c.Add({t % 2 == 0 ? "even" : "odd"}, 2);
        h.Observe({}, 0.5);
        if (i % 5000 == 0) registry.Render();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CounterFamily& c = registry.Counter("lahar_ops_total", "Ops.", {"kind"});
  CHECK(c.Value({"shared"}) == kThreads * kPerThread);
  CHECK(c.Value({"even"}) == 2 * 2 * kPerThread);  // threads 0 and 2, 2 per op
  CHECK(c.Value({"odd"}) == 2 * 2 * kPerThread);
  CHECK(registry.Histogram("lahar_op_seconds", "Op time.", {}, {1}).Count({}) ==
        kThreads * kPerThread);
}

}  // namespace
}  // namespace lahar
