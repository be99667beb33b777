// A small thread-safe Prometheus metrics registry, rendered in the text exposition format 0.0.4.
//
//   MetricsRegistry registry;
//   CounterFamily& attempts = registry.Counter("lahar_schedule_attempts_total",
//                                              "Scheduling attempts by result.", {"result"});
//   attempts.Add({"scheduled"});
//   std::string text = registry.Render();
//
// Families live as long as the registry and never move, so callers keep the references.
// Using a family with the wrong number of label values is a programming error and aborts.
#ifndef LAHAR_SCHEDULER_DAEMON_METRICS_H_
#define LAHAR_SCHEDULER_DAEMON_METRICS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"

namespace lahar {

// One value per label name of the family, in the family's label order.
using LabelValues = std::vector<std::string>;

inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

namespace metrics_internal {

enum class MetricType { kCounter, kGauge, kHistogram };

// What every family shares: identity, the label check and the HELP/TYPE header. Each family has
// its own mutex, so updates to different families never contend.
class Family {
 public:
  Family(MetricType type, std::string name, std::string help, std::vector<std::string> label_names);
  virtual ~Family() = default;
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  MetricType type() const { return type_; }
  const std::string& name() const { return name_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Appends HELP, TYPE and every series sorted by label values; nothing if there is no series.
  void Render(std::string* out) const;

 protected:
  // Aborts unless `labels` has one value per label name.
  void CheckLabels(const LabelValues& labels) const;
  // Appends `name_suffix{k="v",...,extra} value\n`; `extra` is an already formatted pair or "".
  void AppendSample(std::string* out, std::string_view suffix, const LabelValues& labels,
                    std::string_view extra, double value) const;
  virtual bool EmptyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) = 0;
  virtual void RenderSeriesLocked(std::string* out) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) = 0;

  mutable std::mutex mu_;

 private:
  const MetricType type_;
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
};

// Counters and gauges: one double per series.
class ScalarFamily : public Family {
 public:
  ScalarFamily(MetricType type, std::string name, std::string help,
               std::vector<std::string> label_names);
  // The series' value; 0 for a series never touched.
  double Value(const LabelValues& labels) const;

 protected:
  bool EmptyLocked() const override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return values_.empty(); }
  void RenderSeriesLocked(std::string* out) const override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::map<LabelValues, double> values_ ABSL_GUARDED_BY(mu_);
};

}  // namespace metrics_internal

class CounterFamily : public metrics_internal::ScalarFamily {
 public:
  CounterFamily(std::string name, std::string help, std::vector<std::string> label_names);
  // Counters only go up: a negative or NaN delta is logged and ignored.
  void Add(const LabelValues& labels, double delta = 1);
};

class GaugeFamily : public metrics_internal::ScalarFamily {
 public:
  GaugeFamily(std::string name, std::string help, std::vector<std::string> label_names);
  void Set(const LabelValues& labels, double value);
  void Add(const LabelValues& labels, double delta = 1);
  // Drops every series, e.g. before re-setting per-queue gauges so deleted queues disappear.
  void Clear();
};

class HistogramFamily : public metrics_internal::Family {
 public:
  // `bucket_upper_bounds` must be finite and strictly increasing; "+Inf" is implicit.
  HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                  std::vector<double> bucket_upper_bounds);
  void Observe(const LabelValues& labels, double value);
  const std::vector<double>& bucket_upper_bounds() const { return bounds_; }
  // Number and sum of the series' observations; 0 for a series never touched.
  uint64_t Count(const LabelValues& labels) const;
  double Sum(const LabelValues& labels) const;

 private:
  struct Series {
    std::vector<uint64_t> buckets;  // per bucket, not cumulative; the last one is +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  bool EmptyLocked() const override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return series_.empty(); }
  void RenderSeriesLocked(std::string* out) const override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::vector<double> bounds_;
  std::map<LabelValues, Series> series_ ABSL_GUARDED_BY(mu_);
};

// `count` bounds start, start*factor, start*factor^2, ... (Prometheus' ExponentialBuckets).
std::vector<double> ExponentialBuckets(double start, double factor, int count);

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // Registers a family, or returns the one already registered under `name` if its type, labels
  // (and buckets) match; a mismatch or an invalid name aborts.
  CounterFamily& Counter(std::string name, std::string help,
                         std::vector<std::string> label_names = {});
  GaugeFamily& Gauge(std::string name, std::string help, std::vector<std::string> label_names = {});
  HistogramFamily& Histogram(std::string name, std::string help,
                             std::vector<std::string> label_names,
                             std::vector<double> bucket_upper_bounds);

  // Every family sorted by name, in the text exposition format (kPrometheusContentType).
  std::string Render() const;

 private:
  // Adds `family`, or returns the equal family already registered under its name.
  metrics_internal::Family& Register(std::unique_ptr<metrics_internal::Family> family);

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<metrics_internal::Family>, std::less<>> families_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_DAEMON_METRICS_H_
