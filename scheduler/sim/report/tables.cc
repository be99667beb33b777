#include "scheduler/sim/report/tables.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/strings.h"
#include "scheduler/sim/report/format.h"

namespace lahar::report_internal {
namespace {

constexpr size_t kMaxJobRows = 200;

struct FigureRow {
  std::string label;  // HTML
  std::vector<std::optional<double>> values;
  std::string (*format)(double) = nullptr;
  int better = 0;  // -1: lower is better, +1: higher is better, 0: neither
};

std::string OrNone(const std::optional<double>& value, std::string (*format)(double)) {
  return value ? format(*value) : kNone;
}

}  // namespace

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
  if (std::any_of(runs.begin(), runs.end(), [](const RunData& run) { return run.summary.goodput.has_value(); })) {
    add("GPU goodput", FormatPercent, +1, [](const Summary& s) { return s.goodput; });
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

std::string QueueTable(const RunData& run) {
  if (run.summary.queues.empty()) return "";
  std::string out =
      "<table class=\"queues\">\n<thead><tr><th>queue</th><th>average wait</th>"
      "<th>final allocated share</th><th>final deserved share</th><th>waiting time by reason</th></tr></thead>\n<tbody>\n";
  for (const QueueSummary& queue : run.summary.queues) {
    // Most waiting first: what held the queue's jobs back (spec 7).
    std::vector<std::pair<std::string, double>> by_kind = queue.wait_by_kind;
    std::stable_sort(by_kind.begin(), by_kind.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string waits;
    for (const auto& [kind, seconds] : by_kind) StrAppend(&waits, waits.empty() ? "" : ", ", Escape(kind), " ", HumanDuration(seconds));
    StrAppend(&out, "<tr><td>", Escape(queue.queue), "</td><td class=\"num\">",
              OrNone(queue.average_wait, HumanDuration), "</td><td class=\"num\">",
              queue.allocated.empty() ? kNone : FormatPercent(queue.allocated.back().v),
              "</td><td class=\"num\">",
              queue.deserved.empty() ? kNone : FormatPercent(queue.deserved.back().v),
              "</td><td class=\"waits\">", waits.empty() ? kNone : waits, "</td></tr>\n");
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

}  // namespace lahar::report_internal
