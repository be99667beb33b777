#include "scheduler/sim/report/events.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "scheduler/sim/report/json_fields.h"

namespace lahar::report_internal {

using Amounts = absl::InlinedVector<std::pair<int, double>, 4>;  // (resource id, amount)

// Rebuilds the series event by event.
class EventReader {
 public:
  // Reads one line; `line_number` is 1-based and only used in errors.
  absl::Status ReadLine(int64_t line_number, std::string_view line);
  // The same for a line as lahar-sim writes it, `{"t":...,"type":"...",...}`: one of a type
  // the report draws nothing from (waiting, session: most of a long run's lines) is taken by
  // its time alone, without parsing the rest.
  absl::Status ReadWrittenLine(int64_t line_number, std::string_view line);
  // Closes every series at `end` (the run's horizon) and hands the result over.
  EventAnalysis Finish(double end);
  double last_t() const { return analysis_.last_t; }

 private:
  struct BoundPod {
    int job;
    Amounts requests;
  };

  // The types Apply reads anything of.
  static bool Draws(std::string_view type);
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

absl::Status EventReader::ReadWrittenLine(int64_t line_number, std::string_view line) {
  constexpr std::string_view kTime = "{\"t\":";
  constexpr std::string_view kType = ",\"type\":\"";
  if (!line.starts_with(kTime)) return ReadLine(line_number, line);
  const size_t type_at = line.find(kType);
  if (type_at == std::string_view::npos) return ReadLine(line_number, line);
  const size_t type_begin = type_at + kType.size();
  const size_t type_end = line.find('"', type_begin);
  if (type_end == std::string_view::npos || Draws(line.substr(type_begin, type_end - type_begin))) {
    return ReadLine(line_number, line);
  }
  // The time parsed as the whole line's parse would parse it.
  const std::string_view number = line.substr(kTime.size(), type_at - kTime.size());
  rapidjson::Document time;
  time.Parse(number.data(), number.size());
  if (time.HasParseError() || !time.IsNumber() || time.GetDouble() < analysis_.last_t) return ReadLine(line_number, line);
  analysis_.last_t = time.GetDouble();
  ++analysis_.events;
  return absl::OkStatus();
}

bool EventReader::Draws(std::string_view type) {
  return type == "bind" || type == "evict" || type == "pod-complete" || type == "node" || type == "submit" ||
         type == "job-start" || type == "job-complete";
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
    ASSIGN_OR_RETURN(std::string_view job, RequiredString(event, "job"));
    // The requests recorded at bind are what the pod holds; an evicted pod's grace period is
    // not in the file, so its resources count as freed at the eviction.
    RETURN_IF_ERROR(ReadAmounts(event, "requests", /*required=*/false).status());
    if (type == "evict") {
      ASSIGN_OR_RETURN(std::string reason, OptionalString(event, "reason"));
      analysis_.evictions.push_back({t, JobId(job), std::string(pod), std::move(reason)});
    }
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
  } else if (type == "submit") {
    ASSIGN_OR_RETURN(std::string_view job, RequiredString(event, "job"));
    ASSIGN_OR_RETURN(std::string queue, OptionalString(event, "queue"));
    analysis_.jobs[JobId(job)].queue = std::move(queue);
  } else if (type == "job-start" || type == "job-complete") {
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
  analysis_.end = end;
  return std::move(analysis_);
}

EventsInPieces::EventsInPieces() : reader_(std::make_unique<EventReader>()) {}
EventsInPieces::~EventsInPieces() = default;

absl::Status EventsInPieces::Write(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      partial_.append(bytes);
      return absl::OkStatus();
    }
    std::string_view line = bytes.substr(0, newline);
    bytes.remove_prefix(newline + 1);
    if (!partial_.empty()) {
      partial_.append(line);
      line = partial_;
    }
    absl::Status status = reader_->ReadWrittenLine(++line_number_, line);
    partial_.clear();
    RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

absl::StatusOr<EventAnalysis> EventsInPieces::Finish(double run_end) {
  if (!partial_.empty()) {
    RETURN_IF_ERROR(reader_->ReadLine(++line_number_, partial_));
    partial_.clear();
  }
  return reader_->Finish(std::max(reader_->last_t(), run_end));
}

absl::StatusOr<EventAnalysis> ReadEvents(std::string_view events_jsonl, double run_end) {
  EventReader reader;
  std::string_view text = events_jsonl;
  int64_t line_number = 0;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    RETURN_IF_ERROR(reader.ReadLine(++line_number, line));
  }
  return reader.Finish(std::max(reader.last_t(), run_end));
}

absl::StatusOr<EventAnalysis> ReadEventsFile(const std::string& path, double run_end) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(StrCat("cannot read ", path));
  EventReader reader;
  std::string line;
  int64_t line_number = 0;
  while (std::getline(in, line)) RETURN_IF_ERROR(reader.ReadLine(++line_number, line));
  if (in.bad()) return absl::DataLossError(StrCat("reading ", path, " failed after line ", line_number));
  return reader.Finish(std::max(reader.last_t(), run_end));
}

}  // namespace lahar::report_internal
