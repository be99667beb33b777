#include "scheduler/sim/report/report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"

namespace lahar {
namespace {

// A chart path of more points than this is unreadable and only makes the page heavy.
constexpr size_t kMaxPointsPerSeries = 1000;
// More lines than this cannot be told apart by colour.
constexpr size_t kMaxChartedJobs = 12;
constexpr size_t kMaxChartedQueues = 12;
constexpr size_t kMaxJobRows = 200;

// Tableau 10 plus two dark tones: distinct on white and in greyscale print.
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                    "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                    "#bcbd22", "#17becf", "#393b79", "#637939"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

const char* Colour(size_t i) { return kPalette[i % kPaletteSize]; }

// ---------------------------------------------------------------------------------------------
// Text helpers.

void AppendEscaped(std::string* out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '&': out->append("&amp;"); break;
      case '<': out->append("&lt;"); break;
      case '>': out->append("&gt;"); break;
      case '"': out->append("&quot;"); break;
      case '\'': out->append("&#39;"); break;
      default: out->push_back(c);
    }
  }
}

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  AppendEscaped(&out, text);
  return out;
}

// Cuts `text` to at most `max_bytes` without splitting a UTF-8 sequence, marking the cut.
std::string Truncate(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t end = max_bytes - 1;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return StrCat(text.substr(0, end), "\u2026");
}

// Compact duration for axis ticks, where a zero unit is noise: "0", "30s", "1h", "1h 30m".
std::string TickDuration(double seconds, double step) {
  if (seconds == 0) return "0";
  if (step < 1) return StrFormat("%.1fs", seconds);
  if (seconds >= 1e9) return StrFormat("%.3gd", seconds / 86400);  // beyond int64 rounding
  int64_t total = std::llround(seconds);
  const int64_t days = total / 86400, hours = total / 3600 % 24, minutes = total / 60 % 60,
                secs = total % 60;
  std::string out;
  auto part = [&](int64_t value, const char* unit) {
    if (value == 0) return;
    if (!out.empty()) out.push_back(' ');
    StrAppend(&out, value, unit);
  };
  part(days, "d");
  part(hours, "h");
  part(minutes, "m");
  part(secs, "s");
  return out;
}

std::string FormatPercent(double fraction) { return StrFormat("%.1f%%", fraction * 100); }

// Integers with thousands separators, which keep large counts readable at a glance.
std::string FormatCount(double value) {
  std::string digits = StrFormat("%.0f", std::fabs(value));
  std::string out = value < 0 && std::llround(value) != 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string FormatMicros(double micros) {
  if (micros >= 10000) return StrFormat("%.1f ms", micros / 1000);
  return StrFormat("%.0f &micro;s", micros);
}

std::string FormatDecimal(double value) { return StrFormat("%.2f", value); }

// Escaped for HTML like every other formatter here, so all of them can be used alike.
std::string HumanDuration(double seconds) { return Escape(FormatHumanDuration(seconds)); }

constexpr const char* kNone = "&mdash;";

// ---------------------------------------------------------------------------------------------
// JSON field access. Errors name the field; callers add the file and line.

absl::Status FieldError(std::string_view field, std::string_view expected) {
  return absl::InvalidArgumentError(StrCat("\"", field, "\" must be ", expected));
}

// nullptr when `key` is absent or null: the simulator writes null for "not applicable".
const rapidjson::Value* Member(const rapidjson::Value& object, const char* key) {
  auto it = object.FindMember(key);
  if (it == object.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

absl::StatusOr<std::string_view> RequiredString(const rapidjson::Value& object, const char* key) {
  const rapidjson::Value* value = Member(object, key);
  if (value == nullptr || !value->IsString()) return FieldError(key, "a string");
  return std::string_view(value->GetString(), value->GetStringLength());
}

absl::StatusOr<std::string> OptionalString(const rapidjson::Value& object, const char* key) {
  const rapidjson::Value* value = Member(object, key);
  if (value == nullptr) return std::string();
  if (!value->IsString()) return FieldError(key, "a string");
  return std::string(value->GetString(), value->GetStringLength());
}

absl::StatusOr<std::optional<double>> OptionalNumber(const rapidjson::Value& object,
                                                     const char* key) {
  const rapidjson::Value* value = Member(object, key);
  if (value == nullptr) return std::optional<double>();
  if (!value->IsNumber()) return FieldError(key, "a number or null");
  return std::optional<double>(value->GetDouble());
}

// ---------------------------------------------------------------------------------------------
// Time series.

struct Point {
  double t;
  double v;
};

// Appends a step to a step series: several changes at one instant keep only the last value,
// and a change to the same value adds nothing.
void AppendStep(std::vector<Point>* series, double t, double v) {
  if (!series->empty() && series->back().t == t) {
    series->back().v = v;
    if (series->size() >= 2 && (*series)[series->size() - 2].v == v) series->pop_back();
    return;
  }
  if (!series->empty() && series->back().v == v) return;
  series->push_back({t, v});
}

// Reduces a step series (value `points[i].v` holds from `points[i].t` to the next point, the
// last one until `end`) to at most `max_points` equal time buckets holding the time-weighted
// mean of each bucket. Means keep the area under the curve (pod-seconds, used capacity) right,
// which is what the reader compares; a min/max envelope would exaggerate short spikes.
// Linear in points + buckets.
std::vector<Point> DownsampleSteps(const std::vector<Point>& points, double end,
                                   size_t max_points) {
  if (points.size() <= max_points) return points;
  const double start = points.front().t;
  if (end <= start) return {points.back()};
  const double width = (end - start) / static_cast<double>(max_points);
  std::vector<double> area(max_points, 0.0);
  size_t bucket = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    double at = points[i].t;
    const double segment_end = i + 1 < points.size() ? std::min(points[i + 1].t, end) : end;
    while (at < segment_end) {
      const bool last = bucket + 1 == max_points;
      const double bucket_end = last ? end : start + static_cast<double>(bucket + 1) * width;
      if (bucket_end <= at && !last) {
        ++bucket;
        continue;
      }
      const double take = std::min(segment_end, bucket_end) - at;
      area[bucket] += points[i].v * take;
      at += take;
      if (at >= bucket_end && !last) ++bucket;
    }
  }
  std::vector<Point> out;
  out.reserve(max_points);
  for (size_t b = 0; b < max_points; ++b) {
    const double bucket_start = start + static_cast<double>(b) * width;
    const double bucket_width = b + 1 == max_points ? end - bucket_start : width;
    AppendStep(&out, bucket_start, bucket_width > 0 ? area[b] / bucket_width : 0);
  }
  return out;
}

// Empirical CDF as a step series: (x, fraction of values <= x), at most `max_points` steps.
std::vector<Point> Cdf(std::vector<double> values, size_t max_points) {
  std::vector<Point> out;
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  out.push_back({std::min(0.0, values.front()), 0});
  const size_t steps = std::min(n, max_points);
  for (size_t k = 1; k <= steps; ++k) {
    // The k-th of `steps` quantiles; with steps == n this is every value.
    const size_t index = (k * n + steps - 1) / steps - 1;
    AppendStep(&out, values[index], static_cast<double>(index + 1) / static_cast<double>(n));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// events.jsonl: utilization per resource and running pods per job, rebuilt event by event.

using Amounts = absl::InlinedVector<std::pair<int, double>, 4>;  // (resource id, amount)

struct ResourceTrack {
  std::string name;
  double allocatable = 0;
  double used = 0;
  double last_t = 0;
  // Integrals over time; their ratio is the capacity-weighted mean utilization, which stays
  // right when nodes join or leave (a plain mean of the fraction would not).
  double used_integral = 0;
  double allocatable_integral = 0;
  bool ever_allocatable = false;
  bool ever_requested = false;
  std::vector<Point> fraction;  // used / allocatable, a step series
};

struct JobTrack {
  std::string name;
  int running = 0;
  int peak = 0;
  double last_t = 0;
  double pod_seconds = 0;
  std::vector<Point> running_series;
};

struct EventAnalysis {
  int64_t events = 0;
  double last_t = 0;
  std::vector<ResourceTrack> resources;  // indexed by resource id
  std::vector<JobTrack> jobs;            // indexed by job id, in order of first appearance
};

class EventReader {
 public:
  // Reads one line; `line_number` is 1-based and only used in errors.
  absl::Status ReadLine(int64_t line_number, std::string_view line);
  // Closes every series at `end` (the run's horizon) and hands the result over.
  EventAnalysis Finish(double end);
  double last_t() const { return analysis_.last_t; }

 private:
  struct BoundPod {
    int job;
    Amounts requests;
  };

  absl::Status Apply(double t, std::string_view type, const rapidjson::Value& event);
  absl::StatusOr<Amounts> ReadAmounts(const rapidjson::Value& event, const char* key,
                                      bool required);
  int ResourceId(std::string_view name);
  int JobId(std::string_view name);
  void ChangeResource(int resource, double t, double allocatable_delta, double used_delta);
  void ChangeRunning(int job, double t, int delta);
  void ReleasePod(std::string_view pod, double t);

  EventAnalysis analysis_;
  absl::flat_hash_map<std::string, int> resource_ids_;
  absl::flat_hash_map<std::string, int> job_ids_;
  absl::flat_hash_map<std::string, BoundPod> bound_pods_;
  absl::flat_hash_map<std::string, Amounts> nodes_;  // allocatable of each present node
};

absl::Status EventReader::ReadLine(int64_t line_number, std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.remove_suffix(1);
  }
  if (line.find_first_not_of(" \t") == std::string_view::npos) return absl::OkStatus();
  auto error = [&](std::string_view message) {
    return absl::InvalidArgumentError(StrCat("events.jsonl line ", line_number, ": ", message));
  };
  // A fresh document per line: a reused one keeps every earlier line's values in its pool.
  // Typical lines fit the stack buffer, so most lines allocate nothing for their values.
  char buffer[4096];
  rapidjson::MemoryPoolAllocator<> allocator(buffer, sizeof(buffer));
  rapidjson::Document document(&allocator);
  document.Parse(line.data(), line.size());
  if (document.HasParseError()) {
    return error(StrCat("not valid JSON: ", GetParseError_En(document.GetParseError()),
                        " (at column ", document.GetErrorOffset() + 1, ")"));
  }
  if (!document.IsObject()) return error("not a JSON object");
  const rapidjson::Value* t = Member(document, "t");
  if (t == nullptr || !t->IsNumber()) return error("\"t\" must be a number (seconds)");
  const double time = t->GetDouble();
  if (time < analysis_.last_t) {
    return error(StrFormat("\"t\" goes back in time (%g after %g); events must be in time order",
                           time, analysis_.last_t));
  }
  absl::StatusOr<std::string_view> type = RequiredString(document, "type");
  if (!type.ok()) return error(FromAbsl(type.status().message()));
  analysis_.last_t = time;
  ++analysis_.events;
  absl::Status status = Apply(time, *type, document);
  if (!status.ok()) return error(StrCat(*type, ": ", status.message()));
  return absl::OkStatus();
}

absl::Status EventReader::Apply(double t, std::string_view type, const rapidjson::Value& event) {
  if (type == "bind") {
    ASSIGN_OR_RETURN(std::string_view pod, RequiredString(event, "pod"));
    ASSIGN_OR_RETURN(std::string_view job, RequiredString(event, "job"));
    ASSIGN_OR_RETURN(Amounts requests, ReadAmounts(event, "requests", /*required=*/true));
    // A second bind without an eviction in between would double-count the pod.
    ReleasePod(pod, t);
    const int job_id = JobId(job);
    for (const auto& [resource, amount] : requests) {
      analysis_.resources[resource].ever_requested = true;
      ChangeResource(resource, t, 0, amount);
    }
    ChangeRunning(job_id, t, +1);
    bound_pods_.insert_or_assign(std::string(pod), BoundPod{job_id, std::move(requests)});
  } else if (type == "evict" || type == "pod-complete") {
    ASSIGN_OR_RETURN(std::string_view pod, RequiredString(event, "pod"));
    RETURN_IF_ERROR(RequiredString(event, "job").status());
    // The requests recorded at bind are what the pod holds; an evicted pod's grace period is
    // not in the file, so its resources count as freed at the eviction.
    RETURN_IF_ERROR(ReadAmounts(event, "requests", /*required=*/false).status());
    ReleasePod(pod, t);
  } else if (type == "node") {
    ASSIGN_OR_RETURN(std::string_view node, RequiredString(event, "node"));
    ASSIGN_OR_RETURN(std::string_view change, RequiredString(event, "change"));
    if (change == "add") {
      ASSIGN_OR_RETURN(Amounts allocatable, ReadAmounts(event, "allocatable", true));
      auto [it, inserted] = nodes_.try_emplace(std::string(node));
      for (const auto& [resource, amount] : it->second) ChangeResource(resource, t, -amount, 0);
      for (const auto& [resource, amount] : allocatable) {
        analysis_.resources[resource].ever_allocatable = true;
        ChangeResource(resource, t, amount, 0);
      }
      it->second = std::move(allocatable);
    } else if (change == "remove") {
      auto it = nodes_.find(ToAbsl(node));
      if (it != nodes_.end()) {
        for (const auto& [resource, amount] : it->second) ChangeResource(resource, t, -amount, 0);
        nodes_.erase(it);
      }
    } else if (change != "cordon" && change != "uncordon") {
      // A cordoned node keeps its capacity and its pods, so it stays in the denominator.
      return FieldError("change", "one of add, remove, cordon, uncordon");
    }
  } else if (type == "submit" || type == "job-start" || type == "job-complete") {
    ASSIGN_OR_RETURN(std::string_view job, RequiredString(event, "job"));
    JobId(job);
  }
  // Other types (session, and any the simulator adds later) carry nothing the charts draw;
  // skipping them keeps old reports readable by newer code and the other way round.
  return absl::OkStatus();
}

absl::StatusOr<Amounts> EventReader::ReadAmounts(const rapidjson::Value& event, const char* key,
                                                 bool required) {
  Amounts amounts;
  const rapidjson::Value* object = Member(event, key);
  if (object == nullptr) {
    if (required) return FieldError(key, "an object of resource amounts");
    return amounts;
  }
  if (!object->IsObject()) return FieldError(key, "an object of resource amounts");
  for (const auto& member : object->GetObject()) {
    if (!member.value.IsNumber()) {
      return FieldError(StrCat(key, ".", member.name.GetString()), "a number");
    }
    const std::string_view name(member.name.GetString(), member.name.GetStringLength());
    amounts.emplace_back(ResourceId(name), member.value.GetDouble());
  }
  return amounts;
}

int EventReader::ResourceId(std::string_view name) {
  auto [it, inserted] =
      resource_ids_.try_emplace(std::string(name), static_cast<int>(resource_ids_.size()));
  if (inserted) {
    analysis_.resources.emplace_back();
    analysis_.resources.back().name = std::string(name);
  }
  return it->second;
}

int EventReader::JobId(std::string_view name) {
  auto [it, inserted] = job_ids_.try_emplace(std::string(name), static_cast<int>(job_ids_.size()));
  if (inserted) {
    analysis_.jobs.emplace_back();
    analysis_.jobs.back().name = std::string(name);
  }
  return it->second;
}

void EventReader::ChangeResource(int resource, double t, double allocatable_delta,
                                 double used_delta) {
  ResourceTrack& track = analysis_.resources[resource];
  track.used_integral += track.used * (t - track.last_t);
  track.allocatable_integral += track.allocatable * (t - track.last_t);
  track.last_t = t;
  track.allocatable += allocatable_delta;
  track.used += used_delta;
  AppendStep(&track.fraction, t, track.allocatable > 0 ? track.used / track.allocatable : 0);
}

void EventReader::ChangeRunning(int job, double t, int delta) {
  JobTrack& track = analysis_.jobs[job];
  track.pod_seconds += track.running * (t - track.last_t);
  track.last_t = t;
  track.running += delta;
  track.peak = std::max(track.peak, track.running);
  AppendStep(&track.running_series, t, track.running);
}

void EventReader::ReleasePod(std::string_view pod, double t) {
  // A pod this file never bound (bound before the simulation's output began) holds nothing
  // the report counted, so releasing it must not drive usage below zero.
  auto it = bound_pods_.find(ToAbsl(pod));
  if (it == bound_pods_.end()) return;
  for (const auto& [resource, amount] : it->second.requests) {
    ChangeResource(resource, t, 0, -amount);
  }
  ChangeRunning(it->second.job, t, -1);
  bound_pods_.erase(it);
}

EventAnalysis EventReader::Finish(double end) {
  for (int r = 0; r < static_cast<int>(analysis_.resources.size()); ++r) {
    ResourceTrack& track = analysis_.resources[r];
    track.used_integral += track.used * (end - track.last_t);
    track.allocatable_integral += track.allocatable * (end - track.last_t);
    track.last_t = end;
    if (track.fraction.empty() || track.fraction.front().t > 0) {
      track.fraction.insert(track.fraction.begin(), Point{0, 0});
    }
  }
  for (JobTrack& job : analysis_.jobs) {
    job.pod_seconds += job.running * (end - job.last_t);
    job.last_t = end;
  }
  return std::move(analysis_);
}

// ---------------------------------------------------------------------------------------------
// summary.json.

struct Distribution {
  std::optional<double> mean, p50, p95;
};

struct JobSummary {
  std::string job, queue;
  std::optional<double> submit, start, end, jct, wait, min, max, evictions, avg_running;
};

struct QueueSummary {
  std::string queue;
  std::optional<double> average_wait;
  std::vector<Point> allocated, deserved;
};

struct Summary {
  std::string scenario, config;
  std::optional<double> makespan, jobs, completed_jobs, evictions, sessions, session_p50,
      session_p99;
  Distribution jct, wait;
  std::vector<std::pair<std::string, double>> utilization;  // in file order
  std::vector<JobSummary> job_rows;
  std::vector<QueueSummary> queues;
};

absl::Status ReadDistribution(const rapidjson::Value& cluster, const char* key,
                              Distribution* out) {
  const rapidjson::Value* value = Member(cluster, key);
  if (value == nullptr) return absl::OkStatus();
  if (!value->IsObject()) return FieldError(key, "an object");
  ASSIGN_OR_RETURN(out->mean, OptionalNumber(*value, "mean"));
  ASSIGN_OR_RETURN(out->p50, OptionalNumber(*value, "p50"));
  ASSIGN_OR_RETURN(out->p95, OptionalNumber(*value, "p95"));
  return absl::OkStatus();
}

absl::Status ReadCluster(const rapidjson::Value& cluster, Summary* out) {
  ASSIGN_OR_RETURN(out->makespan, OptionalNumber(cluster, "makespan"));
  ASSIGN_OR_RETURN(out->jobs, OptionalNumber(cluster, "jobs"));
  ASSIGN_OR_RETURN(out->completed_jobs, OptionalNumber(cluster, "completedJobs"));
  ASSIGN_OR_RETURN(out->evictions, OptionalNumber(cluster, "evictions"));
  ASSIGN_OR_RETURN(out->sessions, OptionalNumber(cluster, "sessions"));
  RETURN_IF_ERROR(ReadDistribution(cluster, "jct", &out->jct));
  RETURN_IF_ERROR(ReadDistribution(cluster, "wait", &out->wait));
  if (const rapidjson::Value* micros = Member(cluster, "sessionMicros")) {
    if (!micros->IsObject()) return FieldError("sessionMicros", "an object");
    ASSIGN_OR_RETURN(out->session_p50, OptionalNumber(*micros, "p50"));
    ASSIGN_OR_RETURN(out->session_p99, OptionalNumber(*micros, "p99"));
  }
  if (const rapidjson::Value* utilization = Member(cluster, "utilization")) {
    if (!utilization->IsObject()) return FieldError("utilization", "an object");
    for (const auto& member : utilization->GetObject()) {
      if (!member.value.IsNumber()) {
        return FieldError(StrCat("utilization.", member.name.GetString()), "a number");
      }
      out->utilization.emplace_back(
          std::string(member.name.GetString(), member.name.GetStringLength()),
          member.value.GetDouble());
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<JobSummary> ReadJob(const rapidjson::Value& job) {
  if (!job.IsObject()) return absl::InvalidArgumentError("must be an object");
  JobSummary out;
  ASSIGN_OR_RETURN(out.job, OptionalString(job, "job"));
  ASSIGN_OR_RETURN(out.queue, OptionalString(job, "queue"));
  ASSIGN_OR_RETURN(out.submit, OptionalNumber(job, "submit"));
  ASSIGN_OR_RETURN(out.start, OptionalNumber(job, "start"));
  ASSIGN_OR_RETURN(out.end, OptionalNumber(job, "end"));
  ASSIGN_OR_RETURN(out.jct, OptionalNumber(job, "jct"));
  ASSIGN_OR_RETURN(out.wait, OptionalNumber(job, "wait"));
  ASSIGN_OR_RETURN(out.min, OptionalNumber(job, "min"));
  ASSIGN_OR_RETURN(out.max, OptionalNumber(job, "max"));
  ASSIGN_OR_RETURN(out.evictions, OptionalNumber(job, "evictions"));
  ASSIGN_OR_RETURN(out.avg_running, OptionalNumber(job, "avgRunning"));
  return out;
}

absl::StatusOr<QueueSummary> ReadQueue(const rapidjson::Value& queue) {
  if (!queue.IsObject()) return absl::InvalidArgumentError("must be an object");
  QueueSummary out;
  ASSIGN_OR_RETURN(out.queue, OptionalString(queue, "queue"));
  ASSIGN_OR_RETURN(out.average_wait, OptionalNumber(queue, "averageWait"));
  const rapidjson::Value* share = Member(queue, "share");
  if (share == nullptr) return out;
  if (!share->IsArray()) return FieldError("share", "an array of [t, allocated, deserved]");
  for (rapidjson::SizeType i = 0; i < share->Size(); ++i) {
    const rapidjson::Value& sample = (*share)[i];
    if (!sample.IsArray() || sample.Size() != 3 || !sample[0].IsNumber() ||
        !sample[1].IsNumber() || !sample[2].IsNumber()) {
      return FieldError(StrCat("share[", i, "]"), "[t, allocated, deserved] (three numbers)");
    }
    const double t = sample[0].GetDouble();
    if (!out.allocated.empty() && t < out.allocated.back().t) {
      return FieldError(StrCat("share[", i, "]"), "in time order");
    }
    AppendStep(&out.allocated, t, sample[1].GetDouble());
    AppendStep(&out.deserved, t, sample[2].GetDouble());
  }
  return out;
}

absl::StatusOr<Summary> ReadSummary(std::string_view text) {
  auto error = [](std::string_view message) {
    return absl::InvalidArgumentError(StrCat("summary.json: ", message));
  };
  rapidjson::Document document;
  document.Parse(text.data(), text.size());
  if (document.HasParseError()) {
    return error(StrCat("not valid JSON: ", GetParseError_En(document.GetParseError()),
                        " (at offset ", document.GetErrorOffset(), ")"));
  }
  if (!document.IsObject()) return error("not a JSON object");
  Summary out;
  auto scenario = OptionalString(document, "scenario");
  if (!scenario.ok()) return error(FromAbsl(scenario.status().message()));
  out.scenario = *std::move(scenario);
  auto config = OptionalString(document, "config");
  if (!config.ok()) return error(FromAbsl(config.status().message()));
  out.config = *std::move(config);
  if (const rapidjson::Value* cluster = Member(document, "cluster")) {
    if (!cluster->IsObject()) return error("\"cluster\" must be an object");
    absl::Status status = ReadCluster(*cluster, &out);
    if (!status.ok()) return error(StrCat("cluster: ", status.message()));
  }
  if (const rapidjson::Value* jobs = Member(document, "jobs")) {
    if (!jobs->IsArray()) return error("\"jobs\" must be an array");
    out.job_rows.reserve(jobs->Size());
    for (rapidjson::SizeType i = 0; i < jobs->Size(); ++i) {
      absl::StatusOr<JobSummary> job = ReadJob((*jobs)[i]);
      if (!job.ok()) return error(StrCat("jobs[", i, "]: ", job.status().message()));
      out.job_rows.push_back(*std::move(job));
    }
  }
  if (const rapidjson::Value* queues = Member(document, "queues")) {
    if (!queues->IsArray()) return error("\"queues\" must be an array");
    for (rapidjson::SizeType i = 0; i < queues->Size(); ++i) {
      absl::StatusOr<QueueSummary> queue = ReadQueue((*queues)[i]);
      if (!queue.ok()) return error(StrCat("queues[", i, "]: ", queue.status().message()));
      out.queues.push_back(*std::move(queue));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// One run, read.

struct RunData {
  std::string label;
  Summary summary;
  EventAnalysis events;
  double horizon = 0;  // end of the time axis: the last event or the makespan, whichever later
};

absl::StatusOr<RunData> ReadRun(const ReportRun& run, size_t index) {
  RunData out;
  out.label = run.label.empty() ? StrCat("run ", index + 1) : run.label;
  ASSIGN_OR_RETURN(out.summary, ReadSummary(run.summary_json));
  EventReader reader;
  std::string_view text = run.events_jsonl;
  int64_t line_number = 0;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    RETURN_IF_ERROR(reader.ReadLine(++line_number, line));
  }
  out.horizon = std::max(reader.last_t(), out.summary.makespan.value_or(0));
  out.events = reader.Finish(out.horizon);
  return out;
}

// Resources worth a line: some node offers them and some pod asks for them. cpu and memory
// first, as everyone reads them first; the rest by name.
std::vector<const ResourceTrack*> ChartedResources(const EventAnalysis& events) {
  std::vector<const ResourceTrack*> out;
  for (const ResourceTrack& track : events.resources) {
    if (track.ever_allocatable && track.ever_requested) out.push_back(&track);
  }
  auto rank = [](const std::string& name) { return name == "cpu" ? 0 : name == "memory" ? 1 : 2; };
  std::sort(out.begin(), out.end(), [&](const ResourceTrack* a, const ResourceTrack* b) {
    return std::pair(rank(a->name), a->name) < std::pair(rank(b->name), b->name);
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// SVG charts.

enum class Axis { kTime, kPercent, kCount };

struct Series {
  std::string name;  // plain text; escaped when rendered
  const char* colour = "#000";
  bool dashed = false;
  bool in_legend = true;
  bool extend_to_end = true;  // hold the last value to the right edge
  std::vector<Point> points;
};

// Every text field is plain text: the renderer escapes it.
struct Chart {
  std::string title;
  std::string note;
  std::string x_label, y_label;
  Axis x_axis = Axis::kTime;
  Axis y_axis = Axis::kCount;
  double x_max = 1;
  double y_max = 0;  // 0: fitted to the data
  std::string empty_text = "no data";
  std::vector<Series> series;
};

double DataMax(const Chart& chart) {
  double max = 0;
  for (const Series& series : chart.series) {
    for (const Point& point : series.points) max = std::max(max, point.v);
  }
  return max;
}

// 1, 2 or 5 times a power of ten, giving about `target` intervals over `range`.
double NiceStep(double range, double target) {
  const double raw = range / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double normalized = raw / magnitude;
  const double nice = normalized <= 1 ? 1 : normalized <= 2 ? 2 : normalized <= 5 ? 5 : 10;
  return nice * magnitude;
}

// Steps people count time in, so ticks land on "30m" or "2h" rather than "1h 23m".
double TimeStep(double range) {
  static constexpr double kSteps[] = {1,     2,     5,     10,     15,     30,     60,
                                      120,   300,   600,   900,    1800,   3600,   7200,
                                      10800, 21600, 43200, 86400,  172800, 604800, 1209600};
  if (range < 5) return NiceStep(range, 5);
  for (double step : kSteps) {
    if (range / step <= 8) return step;
  }
  return NiceStep(range / 86400, 6) * 86400;
}

std::string Coord(double value) { return StrFormat("%.1f", value); }

std::string RenderChart(const Chart& chart) {
  constexpr double kWidth = 640, kLeft = 64, kRight = 18, kTop = 46, kPlotHeight = 210;
  constexpr double kLegendRow = 17;
  constexpr size_t kLegendColumns = 2;
  constexpr size_t kLegendChars = 44;
  const double plot_width = kWidth - kLeft - kRight;
  const double plot_bottom = kTop + kPlotHeight;

  std::vector<const Series*> legend;
  bool has_data = false;
  for (const Series& series : chart.series) {
    if (series.in_legend) legend.push_back(&series);
    if (!series.points.empty()) has_data = true;
  }
  const size_t legend_rows = (legend.size() + kLegendColumns - 1) / kLegendColumns;
  const double legend_top = plot_bottom + 52;
  const double height = legend_top + static_cast<double>(legend_rows) * kLegendRow + 6;

  const double x_max = chart.x_max > 0 ? chart.x_max : 1;
  double y_max = chart.y_max;
  double y_step;
  if (chart.y_axis == Axis::kPercent) {
    if (y_max <= 0) y_max = 1;
    y_step = NiceStep(y_max, 5);
  } else {
    if (y_max <= 0) y_max = DataMax(chart);
    if (y_max <= 0) y_max = 1;
    y_step = NiceStep(y_max, 5);
    if (chart.y_axis == Axis::kCount) y_step = std::max(1.0, std::round(y_step));
  }
  y_max = std::ceil(y_max / y_step - 1e-9) * y_step;
  const double x_step = chart.x_axis == Axis::kTime ? TimeStep(x_max) : NiceStep(x_max, 6);

  auto sx = [&](double t) { return kLeft + std::clamp(t / x_max, 0.0, 1.0) * plot_width; };
  auto sy = [&](double v) { return plot_bottom - std::clamp(v / y_max, 0.0, 1.0) * kPlotHeight; };
  auto y_tick = [&](double v) {
    if (chart.y_axis == Axis::kPercent) {
      return y_step < 0.01 ? StrFormat("%.1f%%", v * 100) : StrFormat("%.0f%%", v * 100);
    }
    return y_step < 1 ? StrFormat("%g", v) : FormatCount(v);
  };

  std::string out;
  StrAppend(&out, "<svg class=\"chart\" viewBox=\"0 0 ", kWidth, " ", Coord(height),
            "\" role=\"img\" aria-label=\"", Escape(chart.title), "\">\n");
  StrAppend(&out, "<text class=\"ct\" x=\"", kLeft, "\" y=\"18\">", Escape(chart.title),
            "</text>\n");
  if (!chart.note.empty()) {
    StrAppend(&out, "<text class=\"cn\" x=\"", kLeft, "\" y=\"35\">", Escape(chart.note),
              "</text>\n");
  }

  // Grid and tick labels.
  out += "<g class=\"grid\">";
  const int y_ticks = static_cast<int>(std::llround(y_max / y_step));
  for (int i = 0; i <= y_ticks; ++i) {
    const double y = sy(i * y_step);
    StrAppend(&out, "<line x1=\"", kLeft, "\" x2=\"", kLeft + plot_width, "\" y1=\"", Coord(y),
              "\" y2=\"", Coord(y), "\"/>");
  }
  const int x_ticks = static_cast<int>(std::floor(x_max / x_step + 1e-9));
  for (int i = 0; i <= x_ticks; ++i) {
    const double x = sx(i * x_step);
    StrAppend(&out, "<line x1=\"", Coord(x), "\" x2=\"", Coord(x), "\" y1=\"", kTop, "\" y2=\"",
              plot_bottom, "\"/>");
  }
  out += "</g>\n<g class=\"tick\">";
  for (int i = 0; i <= y_ticks; ++i) {
    StrAppend(&out, "<text x=\"", kLeft - 6, "\" y=\"", Coord(sy(i * y_step) + 4),
              "\" text-anchor=\"end\">", y_tick(i * y_step), "</text>");
  }
  for (int i = 0; i <= x_ticks; ++i) {
    const double value = i * x_step;
    const std::string label = chart.x_axis == Axis::kTime ? TickDuration(value, x_step)
                                                          : StrFormat("%g", value);
    // A label at the right edge would be cut by the viewBox; it ends at its tick instead.
    const bool at_edge = sx(value) > kLeft + plot_width - 16;
    StrAppend(&out, "<text x=\"", Coord(sx(value)), "\" y=\"", plot_bottom + 16,
              "\" text-anchor=\"", at_edge ? "end" : "middle", "\">", Escape(label), "</text>");
  }
  out += "</g>\n";
  StrAppend(&out, "<path class=\"axis\" d=\"M", kLeft, " ", kTop, "V", plot_bottom, "H",
            kLeft + plot_width, "\"/>\n");
  StrAppend(&out, "<text class=\"al\" x=\"", Coord(kLeft + plot_width / 2), "\" y=\"",
            plot_bottom + 36, "\" text-anchor=\"middle\">", Escape(chart.x_label), "</text>\n");
  StrAppend(&out, "<text class=\"al\" transform=\"translate(16 ", Coord(kTop + kPlotHeight / 2),
            ") rotate(-90)\" text-anchor=\"middle\">", Escape(chart.y_label), "</text>\n");

  if (!has_data) {
    StrAppend(&out, "<text class=\"empty\" x=\"", Coord(kLeft + plot_width / 2), "\" y=\"",
              Coord(kTop + kPlotHeight / 2), "\" text-anchor=\"middle\">",
              Escape(chart.empty_text), "</text>\n");
  }

  // Series as step paths; coordinates in tenths so that unchanged moves can be dropped.
  for (const Series& series : chart.series) {
    if (series.points.empty()) continue;
    StrAppend(&out, "<path class=\"line\" stroke=\"", series.colour, "\"",
              series.dashed ? " stroke-dasharray=\"6 4\"" : "", " d=\"");
    int64_t last_x = 0, last_y = 0;
    for (size_t i = 0; i < series.points.size(); ++i) {
      const int64_t x = std::llround(sx(series.points[i].t) * 10);
      const int64_t y = std::llround(sy(series.points[i].v) * 10);
      if (i == 0) {
        StrAppend(&out, "M", Coord(x / 10.0), " ", Coord(y / 10.0));
      } else {
        if (x != last_x) StrAppend(&out, "H", Coord(x / 10.0));
        if (y != last_y) StrAppend(&out, "V", Coord(y / 10.0));
      }
      last_x = x;
      last_y = y;
    }
    if (series.extend_to_end) {
      const int64_t x = std::llround(sx(x_max) * 10);
      if (x != last_x) StrAppend(&out, "H", Coord(x / 10.0));
    }
    out += "\"/>\n";
  }

  // Legend below the plot, in columns; long names are cut and kept whole in a tooltip.
  const double column_width = plot_width / kLegendColumns;
  for (size_t i = 0; i < legend.size(); ++i) {
    const double x = kLeft + static_cast<double>(i % kLegendColumns) * column_width;
    const double y = legend_top + static_cast<double>(i / kLegendColumns) * kLegendRow;
    StrAppend(&out, "<g class=\"legend\"><title>", Escape(legend[i]->name), "</title><line x1=\"",
              Coord(x), "\" x2=\"", Coord(x + 22), "\" y1=\"", Coord(y - 4), "\" y2=\"",
              Coord(y - 4), "\" stroke=\"", legend[i]->colour, "\"",
              legend[i]->dashed ? " stroke-dasharray=\"6 4\"" : "", "/><text x=\"",
              Coord(x + 28), "\" y=\"", Coord(y), "\">",
              Escape(Truncate(legend[i]->name, kLegendChars)), "</text></g>\n");
  }
  out += "</svg>\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
// The four charts of a run. `x_max` is shared by every run of a comparison, so the same
// instant sits at the same place in every column.

Chart UtilizationChart(const RunData& run, double x_max) {
  Chart chart;
  chart.title = "Utilization per resource";
  chart.note = "requests of bound pods / allocatable of present nodes";
  chart.x_label = "simulated time";
  chart.y_label = "in use (% of allocatable)";
  chart.y_axis = Axis::kPercent;
  chart.x_max = x_max;
  chart.empty_text = "no node or bind events";
  const std::vector<const ResourceTrack*> resources = ChartedResources(run.events);
  for (size_t i = 0; i < resources.size(); ++i) {
    const ResourceTrack& track = *resources[i];
    Series series;
    const double mean =
        track.allocatable_integral > 0 ? track.used_integral / track.allocatable_integral : 0;
    series.name = StrCat(track.name, " (mean ", FormatPercent(mean), ")");
    series.colour = Colour(i);
    series.points = DownsampleSteps(track.fraction, run.horizon, kMaxPointsPerSeries);
    chart.series.push_back(std::move(series));
  }
  return chart;
}

Chart RunningPodsChart(const RunData& run, double x_max) {
  Chart chart;
  chart.title = "Running workers per job";
  chart.x_label = "simulated time";
  chart.y_label = "running pods";
  chart.x_max = x_max;
  chart.empty_text = "no pod was bound";
  std::vector<const JobTrack*> jobs;
  for (const JobTrack& job : run.events.jobs) {
    if (job.peak > 0) jobs.push_back(&job);
  }
  if (jobs.size() > kMaxChartedJobs) {
    chart.note = StrCat("the ", kMaxChartedJobs, " of ", jobs.size(),
                        " jobs with the most running pods (peak, then pod-time)");
    std::partial_sort(jobs.begin(), jobs.begin() + kMaxChartedJobs, jobs.end(),
                      [](const JobTrack* a, const JobTrack* b) {
                        if (a->peak != b->peak) return a->peak > b->peak;
                        if (a->pod_seconds != b->pod_seconds) {
                          return a->pod_seconds > b->pod_seconds;
                        }
                        return a->name < b->name;
                      });
    jobs.resize(kMaxChartedJobs);
    // Back to order of appearance, which is submit order: easier to follow than rank order.
    std::sort(jobs.begin(), jobs.end());
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    Series series;
    series.name = jobs[i]->name;
    series.colour = Colour(i);
    // A finished job's line stops where it dropped to zero rather than cluttering the axis.
    series.extend_to_end = jobs[i]->running > 0;
    series.points = DownsampleSteps(jobs[i]->running_series, run.horizon, kMaxPointsPerSeries);
    chart.series.push_back(std::move(series));
  }
  return chart;
}

Chart QueueShareChart(const RunData& run, double x_max) {
  Chart chart;
  chart.title = "Queue share against deserved";
  chart.note = "solid: allocated share, dashed: deserved share";
  chart.x_label = "simulated time";
  chart.y_label = "share of the cluster (%)";
  chart.y_axis = Axis::kPercent;
  chart.x_max = x_max;
  chart.empty_text = "no queue shares in summary.json";
  std::vector<const QueueSummary*> queues;
  for (const QueueSummary& queue : run.summary.queues) {
    if (!queue.allocated.empty()) queues.push_back(&queue);
  }
  if (queues.size() > kMaxChartedQueues) {
    auto peak = [](const QueueSummary* q) {
      double max = 0;
      for (const Point& p : q->allocated) max = std::max(max, p.v);
      return max;
    };
    std::stable_sort(queues.begin(), queues.end(),
                     [&](const QueueSummary* a, const QueueSummary* b) {
                       return peak(a) > peak(b);
                     });
    queues.resize(kMaxChartedQueues);
    chart.note = StrCat(chart.note, "; the ", kMaxChartedQueues, " of ", run.summary.queues.size(),
                        " queues with the highest share");
  }
  double max_share = 0;
  for (size_t i = 0; i < queues.size(); ++i) {
    Series allocated;
    allocated.name = queues[i]->queue;
    allocated.colour = Colour(i);
    allocated.points = DownsampleSteps(queues[i]->allocated, run.horizon, kMaxPointsPerSeries);
    Series deserved;
    deserved.name = StrCat(queues[i]->queue, " deserved");
    deserved.colour = Colour(i);
    deserved.dashed = true;
    deserved.in_legend = false;
    deserved.points = DownsampleSteps(queues[i]->deserved, run.horizon, kMaxPointsPerSeries);
    chart.series.push_back(std::move(allocated));
    chart.series.push_back(std::move(deserved));
  }
  max_share = DataMax(chart);
  // Shares are fractions; zoom in when every queue stays small, but never past 100%.
  chart.y_max = max_share > 0 ? std::min(1.0, max_share * 1.1) : 1;
  if (max_share > 1) chart.y_max = max_share;
  return chart;
}

Chart DistributionChart(const RunData& run, double x_max) {
  Chart chart;
  chart.title = "JCT and wait distributions";
  chart.x_label = "duration";
  chart.y_label = "jobs at or below (%)";
  chart.y_axis = Axis::kPercent;
  chart.x_max = x_max;
  chart.empty_text = "no finished jobs";
  std::vector<double> jct, wait;
  for (const JobSummary& job : run.summary.job_rows) {
    if (job.jct) jct.push_back(*job.jct);
    if (job.wait) wait.push_back(*job.wait);
  }
  chart.note = StrCat("cumulative; ", jct.size(), " of ", run.summary.job_rows.size(),
                      " jobs finished, ", wait.size(), " started");
  Series jct_series;
  jct_series.name = StrCat("job completion time (", jct.size(), " jobs)");
  jct_series.colour = Colour(0);
  jct_series.points = Cdf(std::move(jct), kMaxPointsPerSeries);
  Series wait_series;
  wait_series.name = StrCat("wait, submit to start (", wait.size(), " jobs)");
  wait_series.colour = Colour(1);
  wait_series.points = Cdf(std::move(wait), kMaxPointsPerSeries);
  chart.series.push_back(std::move(jct_series));
  chart.series.push_back(std::move(wait_series));
  return chart;
}

double DistributionMax(const RunData& run) {
  double max = 0;
  for (const JobSummary& job : run.summary.job_rows) {
    max = std::max({max, job.jct.value_or(0), job.wait.value_or(0)});
  }
  // A margin keeps the last step to 100% off the plot's right edge, where it would hide.
  return max * 1.05;
}

// ---------------------------------------------------------------------------------------------
// Tables.

struct FigureRow {
  std::string label;  // HTML
  std::vector<std::optional<double>> values;
  std::string (*format)(double) = nullptr;
  int better = 0;  // -1: lower is better, +1: higher is better, 0: neither
};

std::string FiguresTable(const std::vector<RunData>& runs) {
  std::vector<FigureRow> rows;
  auto add = [&](std::string label, std::string (*format)(double), int better, auto get) {
    FigureRow row{std::move(label), {}, format, better};
    for (const RunData& run : runs) row.values.push_back(get(run.summary));
    rows.push_back(std::move(row));
  };
  add("makespan", HumanDuration, -1, [](const Summary& s) { return s.makespan; });
  add("jobs", FormatCount, 0, [](const Summary& s) { return s.jobs; });
  add("completed jobs", FormatCount, +1, [](const Summary& s) { return s.completed_jobs; });
  add("mean JCT", HumanDuration, -1, [](const Summary& s) { return s.jct.mean; });
  add("p50 JCT", HumanDuration, -1, [](const Summary& s) { return s.jct.p50; });
  add("p95 JCT", HumanDuration, -1, [](const Summary& s) { return s.jct.p95; });
  add("mean wait", HumanDuration, -1, [](const Summary& s) { return s.wait.mean; });
  add("p95 wait", HumanDuration, -1, [](const Summary& s) { return s.wait.p95; });
  // One row per resource any run reports, in order of first appearance.
  std::vector<std::string> resources;
  for (const RunData& run : runs) {
    for (const auto& [name, value] : run.summary.utilization) {
      if (std::find(resources.begin(), resources.end(), name) == resources.end()) {
        resources.push_back(name);
      }
    }
  }
  for (const std::string& resource : resources) {
    add(StrCat("utilization ", Escape(resource)), FormatPercent, +1,
        [&](const Summary& s) -> std::optional<double> {
          for (const auto& [name, value] : s.utilization) {
            if (name == resource) return value;
          }
          return std::nullopt;
        });
  }
  add("evictions", FormatCount, -1, [](const Summary& s) { return s.evictions; });
  add("sessions", FormatCount, 0, [](const Summary& s) { return s.sessions; });
  add("session p50", FormatMicros, -1, [](const Summary& s) { return s.session_p50; });
  add("session p99", FormatMicros, -1, [](const Summary& s) { return s.session_p99; });

  std::string out = "<table class=\"figures\">\n<thead><tr><th></th>";
  for (const RunData& run : runs) StrAppend(&out, "<th>", Escape(run.label), "</th>");
  out += "</tr></thead>\n<tbody>\n";
  for (const FigureRow& row : rows) {
    // The best value is marked only where there is a choice to see: several runs, differing.
    std::optional<double> best;
    bool differ = false;
    for (const std::optional<double>& value : row.values) {
      if (!value) continue;
      if (best && *best != *value) differ = true;
      if (!best || (row.better < 0 ? *value < *best : *value > *best)) best = value;
    }
    StrAppend(&out, "<tr><th>", row.label, "</th>");
    for (const std::optional<double>& value : row.values) {
      if (!value) {
        StrAppend(&out, "<td class=\"num\">", kNone, "</td>");
        continue;
      }
      const bool mark = row.better != 0 && differ && runs.size() > 1 && *value == *best;
      StrAppend(&out, "<td class=\"num", mark ? " best" : "", "\">", row.format(*value), "</td>");
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  if (runs.size() > 1) out += "<p class=\"hint\">Highlighted: the best value of a row.</p>\n";
  return out;
}

std::string OrNone(const std::optional<double>& value, std::string (*format)(double)) {
  return value ? format(*value) : kNone;
}

std::string QueueTable(const RunData& run) {
  if (run.summary.queues.empty()) return "";
  std::string out =
      "<table class=\"queues\">\n<thead><tr><th>queue</th><th>average wait</th>"
      "<th>final allocated share</th><th>final deserved share</th></tr></thead>\n<tbody>\n";
  for (const QueueSummary& queue : run.summary.queues) {
    StrAppend(&out, "<tr><td>", Escape(queue.queue), "</td><td class=\"num\">",
              OrNone(queue.average_wait, HumanDuration), "</td><td class=\"num\">",
              queue.allocated.empty() ? kNone : FormatPercent(queue.allocated.back().v),
              "</td><td class=\"num\">",
              queue.deserved.empty() ? kNone : FormatPercent(queue.deserved.back().v),
              "</td></tr>\n");
  }
  out += "</tbody></table>\n";
  return out;
}

std::string JobTable(const RunData& run) {
  const std::vector<JobSummary>& jobs = run.summary.job_rows;
  if (jobs.empty()) return "<p class=\"hint\">summary.json lists no jobs.</p>\n";
  std::vector<const JobSummary*> order;
  order.reserve(jobs.size());
  for (const JobSummary& job : jobs) order.push_back(&job);
  auto by_submit = [](const JobSummary* a, const JobSummary* b) {
    const double sa = a->submit.value_or(INFINITY), sb = b->submit.value_or(INFINITY);
    if (sa != sb) return sa < sb;
    return a->job < b->job;
  };
  const size_t shown = std::min(order.size(), kMaxJobRows);
  std::partial_sort(order.begin(), order.begin() + shown, order.end(), by_submit);
  std::string out;
  if (shown < order.size()) {
    StrAppend(&out, "<p class=\"hint\">The first ", shown, " of ", FormatCount(order.size()),
              " jobs by submit time; summary.json has them all.</p>\n");
  }
  out +=
      "<table class=\"jobs\">\n<thead><tr><th>job</th><th>queue</th><th>submit</th>"
      "<th>start</th><th>end</th><th>JCT</th><th>wait</th><th>min</th><th>max</th>"
      "<th>evictions</th><th>avg running</th></tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < shown; ++i) {
    const JobSummary& job = *order[i];
    StrAppend(&out, "<tr><td>", Escape(job.job), "</td><td>", Escape(job.queue), "</td>");
    for (const auto* value : {&job.submit, &job.start, &job.end, &job.jct, &job.wait}) {
      StrAppend(&out, "<td class=\"num\">", OrNone(*value, HumanDuration), "</td>");
    }
    for (const auto* value : {&job.min, &job.max, &job.evictions}) {
      StrAppend(&out, "<td class=\"num\">", OrNone(*value, FormatCount), "</td>");
    }
    StrAppend(&out, "<td class=\"num\">", OrNone(job.avg_running, FormatDecimal),
              "</td></tr>\n");
  }
  out += "</tbody></table>\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
// The page.

constexpr const char* kStyle = R"css(
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif;
       margin: 24px auto; max-width: 1400px; padding: 0 20px; color: #1b1f24; background: #fff; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 10px; padding-bottom: 4px;
     border-bottom: 1px solid #d8dee4; }
h3 { font-size: 15px; margin: 18px 0 8px; }
.sub, .hint { color: #57606a; font-size: 13px; }
.grid2 { display: grid; gap: 16px 24px;
         grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); }
figure { margin: 0; min-width: 0; }
figcaption { font-weight: 600; font-size: 14px; margin-bottom: 2px; }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart text { font-family: inherit; font-size: 11px; fill: #1b1f24; }
svg.chart .ct { font-size: 14px; font-weight: 600; }
svg.chart .cn, svg.chart .empty { fill: #57606a; }
svg.chart .al { font-size: 12px; fill: #3d444d; }
svg.chart .grid line { stroke: #e6e9ed; stroke-width: 1; }
svg.chart .axis { stroke: #8c959f; fill: none; stroke-width: 1; }
svg.chart .line { fill: none; stroke-width: 1.8; stroke-linejoin: round; }
svg.chart .legend line { stroke-width: 2.5; }
table { border-collapse: collapse; font-size: 13px; margin: 4px 0 12px; }
th, td { padding: 3px 10px; border-bottom: 1px solid #e6e9ed; text-align: left;
         white-space: nowrap; }
thead th { background: #f3f5f7; position: sticky; top: 0; }
tbody th { font-weight: 500; color: #3d444d; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.best { font-weight: 700; background: #e8f4ea; }
.scroll { overflow-x: auto; }
details { margin: 8px 0 16px; }
summary { cursor: pointer; font-weight: 600; }
footer { margin-top: 32px; color: #57606a; font-size: 12px; }
)css";

using ChartBuilder = Chart (*)(const RunData&, double);

void AppendChartRow(std::string* out, const std::vector<RunData>& runs, ChartBuilder build,
                    double x_max, bool share_y) {
  std::vector<Chart> charts;
  for (const RunData& run : runs) charts.push_back(build(run, x_max));
  if (share_y) {
    double y_max = 0;
    for (const Chart& chart : charts) {
      y_max = std::max(y_max, chart.y_max > 0 ? chart.y_max : DataMax(chart));
    }
    for (Chart& chart : charts) chart.y_max = y_max;
  }
  *out += "<div class=\"grid2\">\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    StrAppend(out, "<figure><figcaption>", Escape(runs[i].label), "</figcaption>\n",
              RenderChart(charts[i]), "</figure>\n");
  }
  *out += "</div>\n";
}

std::string RenderPage(std::string_view title, const std::vector<RunData>& runs) {
  double horizon = 0, distribution_max = 0;
  int64_t events = 0;
  for (const RunData& run : runs) {
    horizon = std::max(horizon, run.horizon);
    distribution_max = std::max(distribution_max, DistributionMax(run));
    events += run.events.events;
  }
  const bool compare = runs.size() > 1;

  std::string out;
  out.reserve(64 * 1024);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // The page must load nothing: a policy that forbids every fetch enforces it in the browser.
  out +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  StrAppend(&out, "<title>", Escape(title), "</title>\n<style>", kStyle, "</style>\n</head>\n");
  StrAppend(&out, "<body>\n<h1>", Escape(title), "</h1>\n<p class=\"sub\">");
  const std::string& scenario = runs.front().summary.scenario;
  if (!scenario.empty()) {
    StrAppend(&out, "scenario <strong>", Escape(scenario), "</strong> &middot; ");
  }
  if (compare) {
    StrAppend(&out, runs.size(), " configurations &middot; ");
  } else {
    StrAppend(&out, "configuration <strong>", Escape(runs.front().label), "</strong> &middot; ");
  }
  StrAppend(&out, "simulated ", HumanDuration(horizon), " &middot; ", FormatCount(events),
            " events</p>\n");

  StrAppend(&out, "<h2>", compare ? "Comparison" : "Cluster", "</h2>\n<div class=\"scroll\">",
            FiguresTable(runs), "</div>\n");

  const ChartBuilder builders[] = {UtilizationChart, RunningPodsChart, QueueShareChart,
                                   DistributionChart};
  if (compare) {
    // One row per chart, the configurations side by side on the same axes.
    const char* headings[] = {"Utilization over time", "Running workers per job",
                              "Queue share against deserved", "JCT and wait distributions"};
    for (size_t i = 0; i < 4; ++i) {
      StrAppend(&out, "<h2>", headings[i], "</h2>\n");
      const bool is_distribution = builders[i] == DistributionChart;
      AppendChartRow(&out, runs, builders[i], is_distribution ? distribution_max : horizon,
                     /*share_y=*/builders[i] == RunningPodsChart || builders[i] == QueueShareChart);
    }
  } else {
    out += "<h2>Charts</h2>\n<div class=\"grid2\">\n";
    for (ChartBuilder build : builders) {
      const double x_max = build == DistributionChart ? distribution_max : horizon;
      StrAppend(&out, "<figure>", RenderChart(build(runs.front(), x_max)), "</figure>\n");
    }
    out += "</div>\n";
  }

  out += "<h2>Queues and jobs</h2>\n";
  for (const RunData& run : runs) {
    if (compare) {
      StrAppend(&out, "<details", &run == &runs.front() ? " open" : "", "><summary>",
                Escape(run.label), "</summary>\n");
    }
    StrAppend(&out, QueueTable(run), "<div class=\"scroll\">", JobTable(run), "</div>\n");
    if (compare) out += "</details>\n";
  }

  out +=
      "<footer>Utilization and running pods are rebuilt from events.jsonl: a pod holds its "
      "requests from its bind to its eviction or completion (termination grace periods are not "
      "in the file). Series longer than 1000 points are shown as time-weighted bucket means. "
      "Other figures come from summary.json.</footer>\n</body>\n</html>\n";
  return out;
}

}  // namespace

std::string FormatHumanDuration(double seconds) {
  if (std::isnan(seconds)) return "-";
  if (seconds < 0) return StrCat("-", FormatHumanDuration(-seconds));
  if (seconds == 0) return "0s";
  if (seconds < 9.95) return StrFormat("%.1fs", seconds);
  if (seconds < 59.5) return StrFormat("%.0fs", seconds);
  // Past ~30 years only the magnitude matters, and llround would overflow further out.
  if (seconds >= 1e9) return StrFormat("%.3gd", seconds / 86400);
  // Round once at the precision printed, so 3599.7s reads "1h 00m", never "59m 60s".
  if (const int64_t total = std::llround(seconds); total < 3600) {
    return StrFormat("%lldm %02llds", static_cast<long long>(total / 60),
                     static_cast<long long>(total % 60));
  }
  if (const int64_t minutes = std::llround(seconds / 60); minutes < 24 * 60) {
    return StrFormat("%lldh %02lldm", static_cast<long long>(minutes / 60),
                     static_cast<long long>(minutes % 60));
  }
  const int64_t hours = std::llround(seconds / 3600);
  return StrFormat("%lldd %02lldh", static_cast<long long>(hours / 24),
                   static_cast<long long>(hours % 24));
}

absl::StatusOr<std::string> RenderHtmlReport(std::string_view title,
                                             const std::vector<ReportRun>& runs) {
  if (runs.empty()) return absl::InvalidArgumentError("report: no runs to render");
  std::vector<RunData> data;
  data.reserve(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    absl::StatusOr<RunData> run = ReadRun(runs[i], i);
    if (!run.ok()) {
      const std::string label = runs[i].label.empty() ? StrCat("run ", i + 1) : runs[i].label;
      return absl::Status(run.status().code(), StrCat(label, ": ", run.status().message()));
    }
    data.push_back(*std::move(run));
  }
  return RenderPage(title, data);
}

}  // namespace lahar
