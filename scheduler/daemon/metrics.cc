#include "scheduler/daemon/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <utility>

#include "api/log.h"
#include "api/strings.h"

namespace lahar {
namespace metrics_internal {
namespace {

// A misuse of the registry is a programming error: say what and stop.
[[noreturn]] void Fatal(const std::string& message) {
  { LAHAR_ERROR("metrics") << message; }
  std::abort();
}

bool ValidName(std::string_view name, bool allow_colon) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || (allow_colon && c == ':');
  });
}

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
  }
  return "untyped";
}

// Integers print as integers ("3", not "3e+00" or "3.000000"); the rest round-trip exactly.
void AppendValue(std::string* out, double value) {
  if (std::isnan(value)) {
    out->append("NaN");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "+Inf" : "-Inf");
  } else if (value == std::trunc(value) && std::abs(value) < 1e15) {
    StrAppend(out, static_cast<int64_t>(value));
  } else {
    StrAppend(out, value);
  }
}

// HELP text escapes backslash and newline; label values also escape the double quote.
void AppendEscaped(std::string* out, std::string_view text, bool quote) {
  for (char c : text) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else if (quote && c == '"') {
      out->append("\\\"");
    } else {
      out->push_back(c);
    }
  }
}

}  // namespace

Family::Family(MetricType type, std::string name, std::string help,
               std::vector<std::string> label_names)
    : type_(type), name_(std::move(name)), help_(std::move(help)),
      label_names_(std::move(label_names)) {
  if (!ValidName(name_, /*allow_colon=*/true)) Fatal(StrCat("invalid metric name \"", name_, "\""));
  std::set<std::string_view> seen;
  for (const std::string& label : label_names_) {
    if (!ValidName(label, /*allow_colon=*/false) || label.starts_with("__") ||
        (type_ == MetricType::kHistogram && label == "le") || !seen.insert(label).second) {
      Fatal(StrCat("metric ", name_, ": invalid or repeated label name \"", label, "\""));
    }
  }
}

void Family::CheckLabels(const LabelValues& labels) const {
  if (labels.size() != label_names_.size()) {
    Fatal(StrCat("metric ", name_, " has ", label_names_.size(), " labels, got ", labels.size(),
                 " values"));
  }
}

void Family::Render(std::string* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (EmptyLocked()) return;
  StrAppend(out, "# HELP ", name_, ' ');
  AppendEscaped(out, help_, /*quote=*/false);
  StrAppend(out, "\n# TYPE ", name_, ' ', TypeName(type_), '\n');
  RenderSeriesLocked(out);
}

void Family::AppendSample(std::string* out, std::string_view suffix, const LabelValues& labels,
                          std::string_view extra, double value) const {
  StrAppend(out, name_, suffix);
  if (!labels.empty() || !extra.empty()) {
    out->push_back('{');
    for (size_t i = 0; i < labels.size(); ++i) {
      StrAppend(out, i > 0 ? "," : "", label_names_[i], "=\"");
      AppendEscaped(out, labels[i], /*quote=*/true);
      out->push_back('"');
    }
    if (!extra.empty()) StrAppend(out, labels.empty() ? "" : ",", extra);
    out->push_back('}');
  }
  out->push_back(' ');
  AppendValue(out, value);
  out->push_back('\n');
}

ScalarFamily::ScalarFamily(MetricType type, std::string name, std::string help,
                           std::vector<std::string> label_names)
    : Family(type, std::move(name), std::move(help), std::move(label_names)) {
  // A family without labels has exactly one series: show it at 0 before the first update.
  if (this->label_names().empty()) values_[{}] = 0;
}

double ScalarFamily::Value(const LabelValues& labels) const {
  CheckLabels(labels);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = values_.find(labels);
  return it == values_.end() ? 0 : it->second;
}

void ScalarFamily::RenderSeriesLocked(std::string* out) const {
  for (const auto& [labels, value] : values_) AppendSample(out, "", labels, "", value);
}

}  // namespace metrics_internal

using metrics_internal::MetricType;

CounterFamily::CounterFamily(std::string name, std::string help,
                             std::vector<std::string> label_names)
    : ScalarFamily(MetricType::kCounter, std::move(name), std::move(help),
                   std::move(label_names)) {}

void CounterFamily::Add(const LabelValues& labels, double delta) {
  CheckLabels(labels);
  if (!(delta >= 0)) {
    // Not fatal: deltas may be computed (e.g. from a clock), and a metric must not stop the
    // scheduler.
    LAHAR_ERROR("metrics") << "counter " << name() << ": ignoring negative or NaN delta " << delta;
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  values_[labels] += delta;
}

GaugeFamily::GaugeFamily(std::string name, std::string help, std::vector<std::string> label_names)
    : ScalarFamily(MetricType::kGauge, std::move(name), std::move(help), std::move(label_names)) {}

void GaugeFamily::Set(const LabelValues& labels, double value) {
  CheckLabels(labels);
  std::lock_guard<std::mutex> lock(mu_);
  values_[labels] = value;
}

void GaugeFamily::Add(const LabelValues& labels, double delta) {
  CheckLabels(labels);
  std::lock_guard<std::mutex> lock(mu_);
  values_[labels] += delta;
}

void GaugeFamily::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  values_.clear();
}

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<std::string> label_names,
                                 std::vector<double> bucket_upper_bounds)
    : Family(MetricType::kHistogram, std::move(name), std::move(help), std::move(label_names)),
      bounds_(std::move(bucket_upper_bounds)) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (!std::isfinite(bounds_[i]) || (i > 0 && bounds_[i] <= bounds_[i - 1])) {
      metrics_internal::Fatal(
          StrCat("histogram ", this->name(), ": bucket bounds must be finite and increasing"));
    }
  }
  if (this->label_names().empty()) series_[{}].buckets.assign(bounds_.size() + 1, 0);
}

void HistogramFamily::Observe(const LabelValues& labels, double value) {
  CheckLabels(labels);
  // Prometheus buckets are "less than or equal": the first bound >= value counts it (NaN: +Inf).
  const size_t bucket =
      std::isnan(value) ? bounds_.size()
                        : std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  std::lock_guard<std::mutex> lock(mu_);
  Series& series = series_[labels];
  if (series.buckets.empty()) series.buckets.assign(bounds_.size() + 1, 0);
  ++series.buckets[bucket];
  series.sum += value;
  ++series.count;
}

uint64_t HistogramFamily::Count(const LabelValues& labels) const {
  CheckLabels(labels);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.count;
}

double HistogramFamily::Sum(const LabelValues& labels) const {
  CheckLabels(labels);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.sum;
}

void HistogramFamily::RenderSeriesLocked(std::string* out) const {
  std::string le;
  for (const auto& [labels, series] : series_) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
      cumulative += series.buckets[i];
      le = "le=\"";
      metrics_internal::AppendValue(&le, i < bounds_.size() ? bounds_[i] : INFINITY);
      le.push_back('"');
      AppendSample(out, "_bucket", labels, le, static_cast<double>(cumulative));
    }
    AppendSample(out, "_sum", labels, "", series.sum);
    AppendSample(out, "_count", labels, "", static_cast<double>(series.count));
  }
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> bounds;
  for (int i = 0; i < count; ++i) bounds.push_back(start * std::pow(factor, i));
  return bounds;
}

metrics_internal::Family& MetricsRegistry::Register(
    std::unique_ptr<metrics_internal::Family> family) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = families_.try_emplace(family->name(), nullptr);
  if (inserted) {
    it->second = std::move(family);
    return *it->second;
  }
  const metrics_internal::Family& existing = *it->second;
  bool same = existing.type() == family->type() && existing.label_names() == family->label_names();
  if (same && family->type() == MetricType::kHistogram) {
    same = static_cast<const HistogramFamily&>(existing).bucket_upper_bounds() ==
           static_cast<const HistogramFamily&>(*family).bucket_upper_bounds();
  }
  if (!same) {
    metrics_internal::Fatal(StrCat("metric ", family->name(),
                                   " registered twice with a different type, labels or buckets"));
  }
  return *it->second;
}

CounterFamily& MetricsRegistry::Counter(std::string name, std::string help,
                                        std::vector<std::string> label_names) {
  return static_cast<CounterFamily&>(Register(
      std::make_unique<CounterFamily>(std::move(name), std::move(help), std::move(label_names))));
}

GaugeFamily& MetricsRegistry::Gauge(std::string name, std::string help,
                                    std::vector<std::string> label_names) {
  return static_cast<GaugeFamily&>(Register(
      std::make_unique<GaugeFamily>(std::move(name), std::move(help), std::move(label_names))));
}

HistogramFamily& MetricsRegistry::Histogram(std::string name, std::string help,
                                            std::vector<std::string> label_names,
                                            std::vector<double> bucket_upper_bounds) {
  return static_cast<HistogramFamily&>(Register(std::make_unique<HistogramFamily>(
      std::move(name), std::move(help), std::move(label_names), std::move(bucket_upper_bounds))));
}

std::string MetricsRegistry::Render() const {
  std::string out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, family] : families_) family->Render(&out);
  return out;
}

}  // namespace lahar
