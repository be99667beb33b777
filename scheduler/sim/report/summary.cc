#include "scheduler/sim/report/summary.h"

#include "absl/status/status.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "scheduler/sim/report/json_fields.h"

namespace lahar::report_internal {
namespace {

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
  ASSIGN_OR_RETURN(out->goodput, OptionalNumber(cluster, "goodput"));
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

// Field `key` of `object` (absent: nothing), an array of samples [t, v1, ..., vN] in time order
// (`sample` says so in errors), appended as steps to the N `series`.
absl::Status ReadSteps(const rapidjson::Value& object, const char* key, std::string_view sample_shape,
                       std::initializer_list<std::vector<Point>*> series) {
  const rapidjson::Value* samples = Member(object, key);
  if (samples == nullptr) return absl::OkStatus();
  const std::string_view shape = sample_shape.substr(0, sample_shape.find(" ("));
  if (!samples->IsArray()) return FieldError(key, StrCat("an array of ", shape));
  const auto width = static_cast<rapidjson::SizeType>(series.size() + 1);
  double last_t = 0;
  for (rapidjson::SizeType i = 0; i < samples->Size(); ++i) {
    const rapidjson::Value& sample = (*samples)[i];
    bool numbers = sample.IsArray() && sample.Size() == width;
    for (rapidjson::SizeType c = 0; numbers && c < width; ++c) numbers = sample[c].IsNumber();
    if (!numbers) return FieldError(StrCat(key, "[", i, "]"), sample_shape);
    const double t = sample[0].GetDouble();
    if (i > 0 && t < last_t) return FieldError(StrCat(key, "[", i, "]"), "in time order");
    last_t = t;
    rapidjson::SizeType c = 1;
    for (std::vector<Point>* steps : series) AppendStep(steps, t, sample[c++].GetDouble());
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
  ASSIGN_OR_RETURN(out.gpu_hours, OptionalNumber(job, "gpuHours"));
  ASSIGN_OR_RETURN(out.goodput, OptionalNumber(job, "goodput"));
  RETURN_IF_ERROR(ReadSteps(job, "throughput", "[t, rate] (two numbers)", {&out.throughput}));
  return out;
}

absl::StatusOr<QueueSummary> ReadQueue(const rapidjson::Value& queue) {
  if (!queue.IsObject()) return absl::InvalidArgumentError("must be an object");
  QueueSummary out;
  ASSIGN_OR_RETURN(out.queue, OptionalString(queue, "queue"));
  ASSIGN_OR_RETURN(out.average_wait, OptionalNumber(queue, "averageWait"));
  if (queue.HasMember("waitByKind")) {
    const rapidjson::Value& by_kind = queue["waitByKind"];
    if (!by_kind.IsObject()) return absl::InvalidArgumentError("\"waitByKind\" must be an object of seconds per kind");
    for (const auto& kind : by_kind.GetObject()) {
      if (!kind.value.IsNumber()) {
        return absl::InvalidArgumentError(StrCat("\"waitByKind\".", kind.name.GetString(), " must be a number"));
      }
      out.wait_by_kind.emplace_back(kind.name.GetString(), kind.value.GetDouble());
    }
  }
  RETURN_IF_ERROR(ReadSteps(queue, "share", "[t, allocated, deserved] (three numbers)",
                            {&out.allocated, &out.deserved}));
  return out;
}

}  // namespace

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
  if (const rapidjson::Value* cluster = Member(document, "cluster")) {
    if (const rapidjson::Value* tiers = Member(*cluster, "freeDomainSeries")) {
      if (!tiers->IsObject()) return error("cluster: \"freeDomainSeries\" must be an object of series per tier");
      for (const auto& tier : tiers->GetObject()) {
        const std::string name(tier.name.GetString(), tier.name.GetStringLength());
        auto& [label, points] = out.free_domains.emplace_back(name, std::vector<Point>());
        absl::Status status = ReadSteps(*tiers, name.c_str(), "[t, count] (two numbers)", {&points});
        // ReadSteps names the field within the tier's object: "1[3]" -> "freeDomainSeries.1[3]".
        if (!status.ok()) return error(StrCat("cluster: \"freeDomainSeries.", status.message().substr(1)));
      }
    }
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

}  // namespace lahar::report_internal
