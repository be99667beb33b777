#include "scheduler/sim/summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "api/json_writer.h"
#include "api/strings.h"

#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace lahar {
namespace {

double Seconds(Millis ms) { return static_cast<double>(ms) / 1000.0; }

}  // namespace

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  // Nearest rank: the smallest value with at least p of the values at or below it.
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  rank = std::clamp<size_t>(rank, 1, values.size());
  return values[rank - 1];
}

double Mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

std::string BuildSummaryJson(const RunRecord& record, SimFigures& f) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  f.jobs = static_cast<int>(record.jobs.size());
  std::vector<double> jcts, waits;
  Millis makespan = 0;
  std::map<std::string, std::vector<double>> queue_waits;
  for (const JobRecord* job_record : record.jobs) {
    const JobRecord& job = *job_record;
    if (job.completed) {
      ++f.completed_jobs;
      jcts.push_back(Seconds(job.end - job.submit));
      makespan = std::max(makespan, job.end);
    }
    if (job.started && job.submitted) {
      ++f.started_jobs;
      waits.push_back(Seconds(job.start - job.submit));
      queue_waits[job.queue].push_back(Seconds(job.start - job.submit));
    }
  }
  if (f.completed_jobs < f.jobs) makespan = record.end;
  f.makespan = Seconds(makespan);
  f.end_time = Seconds(record.end);
  f.jct_mean = Mean(jcts);
  f.jct_p50 = Percentile(jcts, 0.5);
  f.jct_p95 = Percentile(jcts, 0.95);
  f.wait_mean = Mean(waits);
  f.wait_p50 = Percentile(waits, 0.5);
  f.wait_p95 = Percentile(waits, 0.95);
  for (size_t i = 0; i < record.allocatable_integral.size(); ++i) {
    if (record.allocatable_integral[i] <= 0 || i == kPods) continue;
    f.utilization.emplace_back(ResourceName(static_cast<ResourceId>(i)), record.used_integral[i] / record.allocatable_integral[i]);
  }
  std::sort(f.utilization.begin(), f.utilization.end());
  f.evictions = record.evictions;
  f.sessions = record.sessions;
  f.skipped_runs = record.skipped_runs;
  f.tried_runs = record.tried_runs;
  f.parked_sessions = record.parked_sessions;
  f.rerun_sessions = record.rerun_sessions;
  f.binds = record.binds;
  double gpu_ms = 0, useful_gpu_ms = 0;
  for (const JobRecord* job_record : record.jobs) {
    const JobRecord& job = *job_record;
    gpu_ms += job.gpu_ms;
    useful_gpu_ms += job.useful_gpu_ms;
  }
  f.gpu_hours = gpu_ms / 3.6e6;
  f.goodput = gpu_ms > 0 ? useful_gpu_ms / gpu_ms : 0;
  // Jobs that never started, by the kind of their last reason, and the reason most share.
  std::map<std::string, int> reason_counts;
  std::map<std::string, std::array<double, kWaitKindCount>> queue_wait_by_kind;
  for (const JobRecord* job_record : record.jobs) {
    const JobRecord& job = *job_record;
    if (!job.submitted) continue;
    auto& by_kind = queue_wait_by_kind[job.queue];
    for (int k = 0; k < kWaitKindCount; ++k) by_kind[k] += job.wait_ms_by_kind[k];
    if (job.started) continue;
    ++f.never_started;
    ++f.never_started_by_kind[job.reason ? std::string(WaitKindName(job.reason->kind)) : "unexplained"];
    if (job.reason) ++reason_counts[StrCat(WaitKindName(job.reason->kind), ": ", WaitReasonText(*job.reason))];
  }
  int most = 0;
  for (const auto& [text, count] : reason_counts) {
    if (count <= most) continue;
    most = count;
    f.most_common_reason = text;
  }
  f.stalled = record.stalled && f.never_started > 0;
  for (const auto& [tier, ms] : record.free_domain_ms) {
    f.free_domains.emplace_back(tier, record.end > 0 ? ms / static_cast<double>(record.end) : 0.0);
  }
  f.session_p50_micros = Percentile(record.session_micros, 0.5);
  f.session_p99_micros = Percentile(record.session_micros, 0.99);

  auto nullable = [&](bool present, double value) {
    if (present) {
      w.Double(value);
    } else {
      w.Null();
    }
  };
  // {"mean": ..., "p50": ...}: an object of named figures.
  auto figures = [&w](std::initializer_list<std::pair<const char*, double>> named) {
    w.StartObject();
    for (const auto& [name, value] : named) {
      w.Key(name);
      w.Double(value);
    }
    w.EndObject();
  };
  w.StartObject();
  StringField(w, "scenario", record.scenario);
  StringField(w, "config", record.config_label);
  w.Key("cluster");
  w.StartObject();
  w.Key("makespan");
  w.Double(f.makespan);
  IntField(w, "jobs", f.jobs);
  IntField(w, "completedJobs", f.completed_jobs);
  w.Key("jct");
  figures({{"mean", f.jct_mean}, {"p50", f.jct_p50}, {"p95", f.jct_p95}});
  w.Key("wait");
  figures({{"mean", f.wait_mean}, {"p50", f.wait_p50}, {"p95", f.wait_p95}});
  w.Key("utilization");
  w.StartObject();
  for (const auto& [name, value] : f.utilization) {
    WriteString(w, name);
    w.Double(value);
  }
  w.EndObject();
  if (gpu_ms > 0) {
    w.Key("gpuHours");
    w.Double(f.gpu_hours);
    w.Key("goodput");
    w.Double(f.goodput);
  }
  if (!f.free_domains.empty()) {
    w.Key("freeDomains");  // per tier: whole free HyperNodes, time-averaged
    w.StartObject();
    for (const auto& [tier, mean] : f.free_domains) {
      WriteString(w, StrCat(tier));
      w.Double(mean);
    }
    w.EndObject();
    w.Key("freeDomainSeries");  // per tier: [t, whole free HyperNodes] at each change
    w.StartObject();
    for (const auto& [tier, series] : record.free_domains) {
      WriteString(w, StrCat(tier));
      w.StartArray();
      for (const auto& [t, count] : series) {
        w.StartArray();
        w.Double(t);
        w.Int(count);
        w.EndArray();
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.Key("neverStarted");
  w.StartObject();
  for (const auto& [kind, count] : f.never_started_by_kind) {
    WriteString(w, kind);
    w.Int(count);
  }
  w.EndObject();
  IntField(w, "evictions", f.evictions);
  IntField(w, "binds", f.binds);
  IntField(w, "sessions", f.sessions);
  w.Key("sessionMicros");
  figures({{"p50", f.session_p50_micros}, {"p99", f.session_p99_micros}});
  // Wall time per action over the sessions it ran in, so users see which action costs what.
  w.Key("actionMicros");
  w.StartObject();
  for (const auto& [action, micros] : record.action_micros) {
    WriteString(w, action);
    figures({{"p50", Percentile(micros, 0.5)},
             {"p99", Percentile(micros, 0.99)},
             {"total", std::accumulate(micros.begin(), micros.end(), 0.0)}});
  }
  w.EndObject();
  w.EndObject();

  // Jobs not yet submitted when the run ended (a run --until part of a long trace) did not exist
  // in it: they are counted in cluster.jobs but not listed, so the file stays small.
  w.Key("jobs");
  w.StartArray();
  for (const JobRecord* job_record : record.jobs) {
    const JobRecord& job = *job_record;
    if (!job.submitted) continue;
    w.StartObject();
    StringField(w, "job", job.key);
    StringField(w, "queue", job.queue);
    w.Key("submit");
    w.Double(Seconds(job.submit));
    w.Key("start");
    nullable(job.started, Seconds(job.start));
    w.Key("end");
    nullable(job.completed, Seconds(job.end));
    w.Key("jct");
    nullable(job.completed, Seconds(job.end - job.submit));
    w.Key("wait");
    nullable(job.started, Seconds(job.start - job.submit));
    IntField(w, "min", job.min);
    IntField(w, "max", job.max);
    IntField(w, "evictions", job.evictions);
    if (job.tier) IntField(w, "tier", *job.tier);
    if (!job.started && job.reason) {
      StringField(w, "reason", WaitReasonText(*job.reason));
      StringField(w, "reasonKind", WaitKindName(job.reason->kind));
    }
    w.Key("avgRunning");
    Millis span = (job.completed ? job.end : record.end) - job.start;
    w.Double(job.started && span > 0 ? job.running_integral / static_cast<double>(span) : 0.0);
    if (job.gpu_ms > 0) {
      w.Key("gpuHours");
      w.Double(job.gpu_ms / 3.6e6);
      w.Key("goodput");
      w.Double(job.useful_gpu_ms / job.gpu_ms);
    }
    if (job.measured) {
      StringField(w, "reported", job.reported);
      w.Key("throughput");
      w.StartArray();
      for (const auto& [t, rate] : job.throughput_series) {
        w.StartArray();
        w.Double(t);
        w.Double(rate);
        w.EndArray();
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();

  w.Key("queues");
  w.StartArray();
  std::set<std::string> queue_names;
  for (const JobRecord* job : record.jobs) queue_names.insert(job->queue);
  for (const auto& [name, series] : record.queue_shares) queue_names.insert(name);
  for (const std::string& name : queue_names) {
    w.StartObject();
    StringField(w, "queue", name);
    w.Key("averageWait");
    auto waits_it = queue_waits.find(name);
    nullable(waits_it != queue_waits.end(), waits_it != queue_waits.end() ? Mean(waits_it->second) : 0);
    // Seconds its jobs waited, per kind of reason (kinds no job waited for left out).
    w.Key("waitByKind");
    w.StartObject();
    auto by_kind = queue_wait_by_kind.find(name);
    for (int k = 0; by_kind != queue_wait_by_kind.end() && k < kWaitKindCount; ++k) {
      if (by_kind->second[k] <= 0) continue;
      WriteString(w, WaitKindName(static_cast<WaitKind>(k)));
      w.Double(Seconds(static_cast<Millis>(by_kind->second[k])));
    }
    w.EndObject();
    w.Key("share");
    w.StartArray();
    auto series = record.queue_shares.find(name);
    if (series != record.queue_shares.end()) {
      for (const ShareSample& s : series->second) {
        w.StartArray();
        w.Double(s.t);
        w.Double(s.allocated);
        w.Double(s.deserved);
        w.EndArray();
      }
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}


}  // namespace lahar
