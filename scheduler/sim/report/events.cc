#include "scheduler/sim/report/events.h"

#include <algorithm>
#include <fstream>
#include <optional>
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

  // What Apply reads of an event; the strings and names point into its line or document.
  struct Fields {
    using NamedAmounts = absl::InlinedVector<std::pair<std::string_view, double>, 4>;
    std::string_view pod, job, node, change, queue, reason;  // empty when absent
    NamedAmounts requests, allocatable;
  };

  // The types Apply reads anything of.
  static bool Draws(std::string_view type);
  // The fields of a `type` event from its document, or what is wrong with them.
  static absl::StatusOr<Fields> FieldsOf(std::string_view type, const rapidjson::Value& event);
  // The same from a line exactly as lahar-sim writes it (see ScanWrittenLine); nullopt for
  // anything else, which the document's reading takes (and names the error of).
  static std::optional<Fields> FieldsOfWrittenLine(std::string_view type, std::string_view line, double& t);
  void Apply(double t, std::string_view type, const Fields& event);
  Amounts ResourceIds(const Fields::NamedAmounts& amounts);
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
  absl::StatusOr<Fields> fields = FieldsOf(*type, document);
  if (!fields.ok()) return error(StrCat(*type, ": ", fields.status().message()));
  Apply(time, *type, *fields);
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
  if (type_end == std::string_view::npos) return ReadLine(line_number, line);
  const std::string_view type = line.substr(type_begin, type_end - type_begin);
  if (Draws(type)) {
    double t = 0;
    std::optional<Fields> fields = FieldsOfWrittenLine(type, line, t);
    if (!fields || t < analysis_.last_t) return ReadLine(line_number, line);
    analysis_.last_t = t;
    ++analysis_.events;
    Apply(t, type, *fields);
    return absl::OkStatus();
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

namespace {

// An object of resource amounts, by name, in the document's order.
absl::Status ReadNamedAmounts(const rapidjson::Value& event, const char* key, bool required,
                              absl::InlinedVector<std::pair<std::string_view, double>, 4>& amounts) {
  const rapidjson::Value* object = Member(event, key);
  if (object == nullptr) {
    if (required) return FieldError(key, "an object of resource amounts");
    return absl::OkStatus();
  }
  if (!object->IsObject()) return FieldError(key, "an object of resource amounts");
  for (const auto& member : object->GetObject()) {
    if (!member.value.IsNumber()) {
      return FieldError(StrCat(key, ".", member.name.GetString()), "a number");
    }
    amounts.emplace_back(std::string_view(member.name.GetString(), member.name.GetStringLength()),
                         member.value.GetDouble());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string_view> OptionalView(const rapidjson::Value& event, const char* key) {
  const rapidjson::Value* value = Member(event, key);
  if (value == nullptr) return std::string_view();
  if (!value->IsString()) return FieldError(key, "a string");
  return std::string_view(value->GetString(), value->GetStringLength());
}

// Reads one JSON object as lahar-sim writes its events: strings without escapes, numbers
// without sign or exponent of at most 15 digits, and objects of such numbers. Anything else
// (null, true, arrays, escapes, exponents, a repeated key) stops it, and the line is parsed in
// full instead. Its numbers are the doubles rapidjson makes of them: the digits as an integer,
// divided by the power of ten of the fraction, both exact below 2^53 and 1e22.
class WrittenLineScanner {
 public:
  explicit WrittenLineScanner(std::string_view line) : line_(line) {}

  bool Eat(char c) {
    if (at_ >= line_.size() || line_[at_] != c) return false;
    ++at_;
    return true;
  }
  bool AtEnd() const { return at_ == line_.size(); }
  char Peek() const { return at_ < line_.size() ? line_[at_] : '\0'; }

  std::optional<std::string_view> String() {
    if (!Eat('"')) return std::nullopt;
    const size_t begin = at_;
    for (; at_ < line_.size(); ++at_) {
      const auto c = static_cast<unsigned char>(line_[at_]);
      if (c == '"') return line_.substr(begin, at_++ - begin);
      if (c == '\\' || c < 0x20) return std::nullopt;
    }
    return std::nullopt;
  }

  std::optional<double> Number() {
    static constexpr double kPowersOfTen[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                              1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    auto digit = [this] { return at_ < line_.size() && line_[at_] >= '0' && line_[at_] <= '9'; };
    if (!digit()) return std::nullopt;
    if (line_[at_] == '0' && at_ + 1 < line_.size() && line_[at_ + 1] >= '0' && line_[at_ + 1] <= '9') {
      return std::nullopt;  // a leading zero: not JSON
    }
    uint64_t digits = 0;
    int count = 0;
    int fraction = 0;
    for (; digit(); ++at_, ++count) digits = digits * 10 + static_cast<uint64_t>(line_[at_] - '0');
    if (Eat('.')) {
      if (!digit()) return std::nullopt;
      for (; digit(); ++at_, ++count, ++fraction) digits = digits * 10 + static_cast<uint64_t>(line_[at_] - '0');
    }
    if (count > 15 || Peek() == 'e' || Peek() == 'E') return std::nullopt;
    const auto value = static_cast<double>(digits);
    return fraction == 0 ? value : value / kPowersOfTen[fraction];
  }

 private:
  std::string_view line_;
  size_t at_ = 0;
};

}  // namespace

absl::StatusOr<EventReader::Fields> EventReader::FieldsOf(std::string_view type, const rapidjson::Value& event) {
  Fields fields;
  if (type == "bind") {
    ASSIGN_OR_RETURN(fields.pod, RequiredString(event, "pod"));
    ASSIGN_OR_RETURN(fields.job, RequiredString(event, "job"));
    RETURN_IF_ERROR(ReadNamedAmounts(event, "requests", /*required=*/true, fields.requests));
  } else if (type == "evict" || type == "pod-complete") {
    ASSIGN_OR_RETURN(fields.pod, RequiredString(event, "pod"));
    ASSIGN_OR_RETURN(fields.job, RequiredString(event, "job"));
    RETURN_IF_ERROR(ReadNamedAmounts(event, "requests", /*required=*/false, fields.requests));
    if (type == "evict") {
      ASSIGN_OR_RETURN(fields.reason, OptionalView(event, "reason"));
    }
  } else if (type == "node") {
    ASSIGN_OR_RETURN(fields.node, RequiredString(event, "node"));
    ASSIGN_OR_RETURN(fields.change, RequiredString(event, "change"));
    if (fields.change == "add") {
      RETURN_IF_ERROR(ReadNamedAmounts(event, "allocatable", /*required=*/true, fields.allocatable));
    } else if (fields.change != "remove" && fields.change != "cordon" && fields.change != "uncordon") {
      // A cordoned node keeps its capacity and its pods, so it stays in the denominator.
      return FieldError("change", "one of add, remove, cordon, uncordon");
    }
  } else if (type == "submit") {
    ASSIGN_OR_RETURN(fields.job, RequiredString(event, "job"));
    ASSIGN_OR_RETURN(fields.queue, OptionalView(event, "queue"));
  } else if (type == "job-start" || type == "job-complete") {
    ASSIGN_OR_RETURN(fields.job, RequiredString(event, "job"));
  }
  // Other types (session, and any the simulator adds later) carry nothing the charts draw;
  // skipping them keeps old reports readable by newer code and the other way round.
  return fields;
}

std::optional<EventReader::Fields> EventReader::FieldsOfWrittenLine(std::string_view type, std::string_view line,
                                                                    double& t) {
  WrittenLineScanner scan(line);
  Fields fields;
  // The keys read, each at most once (a document reads a repeated key's first value).
  enum Key : uint32_t { kT = 1, kType = 2, kPod = 4, kJob = 8, kNode = 16, kChange = 32, kQueue = 64,
                        kReason = 128, kRequests = 256, kAllocatable = 512 };
  uint32_t seen = 0;
  auto amounts = [&scan](Fields::NamedAmounts& into) {
    if (!scan.Eat('{')) return false;
    if (scan.Eat('}')) return true;
    do {
      std::optional<std::string_view> name = scan.String();
      if (!name || !scan.Eat(':')) return false;
      std::optional<double> amount = scan.Number();
      if (!amount) return false;
      into.emplace_back(*name, *amount);
    } while (scan.Eat(','));
    return scan.Eat('}');
  };
  if (!scan.Eat('{')) return std::nullopt;
  do {
    std::optional<std::string_view> key = scan.String();
    if (!key || !scan.Eat(':')) return std::nullopt;
    struct Known {
      std::string_view name;
      Key key;
      std::string_view* string;
      Fields::NamedAmounts* amounts;
    };
    const Known known[] = {{"pod", kPod, &fields.pod, nullptr},          {"job", kJob, &fields.job, nullptr},
                           {"node", kNode, &fields.node, nullptr},       {"change", kChange, &fields.change, nullptr},
                           {"queue", kQueue, &fields.queue, nullptr},    {"reason", kReason, &fields.reason, nullptr},
                           {"requests", kRequests, nullptr, &fields.requests},
                           {"allocatable", kAllocatable, nullptr, &fields.allocatable}};
    if (*key == "t" || *key == "type") {
      const Key which = *key == "t" ? kT : kType;
      if (seen & which) return std::nullopt;
      seen |= which;
      if (which == kT) {
        std::optional<double> number = scan.Number();
        if (!number) return std::nullopt;
        t = *number;
      } else {
        std::optional<std::string_view> written = scan.String();
        if (!written || *written != type) return std::nullopt;
      }
      continue;
    }
    const Known* field = nullptr;
    for (const Known& k : known) {
      if (k.name == *key) field = &k;
    }
    if (field != nullptr) {
      if (seen & field->key) return std::nullopt;
      seen |= field->key;
      if (field->string != nullptr) {
        std::optional<std::string_view> value = scan.String();
        if (!value) return std::nullopt;
        *field->string = *value;
      } else if (!amounts(*field->amounts)) {
        return std::nullopt;
      }
      continue;
    }
    // A field Apply does not read: a string or a number (as the submit's min and max).
    if (scan.Peek() == '"' ? !scan.String() : !scan.Number()) return std::nullopt;
  } while (scan.Eat(','));
  if (!scan.Eat('}')) return std::nullopt;
  while (scan.Eat(' ') || scan.Eat('\t') || scan.Eat('\r')) {
  }
  if (!scan.AtEnd() || !(seen & kT) || !(seen & kType)) return std::nullopt;
  // What FieldsOf requires, present: else the document's reading names what is wrong.
  auto has = [seen](uint32_t keys) { return (seen & keys) == keys; };
  if (type == "bind") return has(kPod | kJob | kRequests) ? std::optional<Fields>(std::move(fields)) : std::nullopt;
  if (type == "evict" || type == "pod-complete") {
    return has(kPod | kJob) ? std::optional<Fields>(std::move(fields)) : std::nullopt;
  }
  if (type == "node") {
    if (!has(kNode | kChange)) return std::nullopt;
    if (fields.change == "add") return has(kAllocatable) ? std::optional<Fields>(std::move(fields)) : std::nullopt;
    const bool known_change = fields.change == "remove" || fields.change == "cordon" || fields.change == "uncordon";
    return known_change ? std::optional<Fields>(std::move(fields)) : std::nullopt;
  }
  return has(kJob) ? std::optional<Fields>(std::move(fields)) : std::nullopt;  // submit, job-start, job-complete
}

void EventReader::Apply(double t, std::string_view type, const Fields& event) {
  if (type == "bind") {
    Amounts requests = ResourceIds(event.requests);
    // A second bind without an eviction in between would double-count the pod.
    ReleasePod(event.pod, t);
    const int job_id = JobId(event.job);
    for (const auto& [resource, amount] : requests) {
      analysis_.resources[resource].ever_requested = true;
      ChangeResource(resource, t, 0, amount);
    }
    ChangeRunning(job_id, t, +1);
    bound_pods_.insert_or_assign(std::string(event.pod), BoundPod{job_id, std::move(requests)});
  } else if (type == "evict" || type == "pod-complete") {
    // The requests recorded at bind are what the pod holds; an evicted pod's grace period is
    // not in the file, so its resources count as freed at the eviction. Their names are
    // resources of the file all the same.
    ResourceIds(event.requests);
    if (type == "evict") {
      analysis_.evictions.push_back({t, JobId(event.job), std::string(event.pod), std::string(event.reason)});
    }
    ReleasePod(event.pod, t);
  } else if (type == "node") {
    if (event.change == "add") {
      Amounts allocatable = ResourceIds(event.allocatable);
      auto [it, inserted] = nodes_.try_emplace(std::string(event.node));
      for (const auto& [resource, amount] : it->second) ChangeResource(resource, t, -amount, 0);
      for (const auto& [resource, amount] : allocatable) {
        analysis_.resources[resource].ever_allocatable = true;
        ChangeResource(resource, t, amount, 0);
      }
      it->second = std::move(allocatable);
    } else if (event.change == "remove") {
      auto it = nodes_.find(ToAbsl(event.node));
      if (it != nodes_.end()) {
        for (const auto& [resource, amount] : it->second) ChangeResource(resource, t, -amount, 0);
        nodes_.erase(it);
      }
    }
  } else if (type == "submit") {
    analysis_.jobs[JobId(event.job)].queue = std::string(event.queue);
  } else if (type == "job-start" || type == "job-complete") {
    JobId(event.job);
  }
}

Amounts EventReader::ResourceIds(const Fields::NamedAmounts& amounts) {
  Amounts ids;
  for (const auto& [name, amount] : amounts) ids.emplace_back(ResourceId(name), amount);
  return ids;
}

int EventReader::ResourceId(std::string_view name) {
  if (auto known = resource_ids_.find(ToAbsl(name)); known != resource_ids_.end()) return known->second;
  auto [it, inserted] =
      resource_ids_.try_emplace(std::string(name), static_cast<int>(resource_ids_.size()));
  if (inserted) {
    analysis_.resources.emplace_back();
    analysis_.resources.back().name = std::string(name);
  }
  return it->second;
}

int EventReader::JobId(std::string_view name) {
  if (auto known = job_ids_.find(ToAbsl(name)); known != job_ids_.end()) return known->second;
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
