// The page: the parts the other files of this folder build, put in order and styled.
#include "scheduler/sim/report/report.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/sim/report/charts.h"
#include "scheduler/sim/report/evictions.h"
#include "scheduler/sim/report/format.h"
#include "scheduler/sim/report/run.h"
#include "scheduler/sim/report/svg_chart.h"
#include "scheduler/sim/report/tables.h"

namespace lahar {
namespace report_internal {
namespace {

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
svg.chart .mark { stroke: #fff; stroke-width: 1; }
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

// A part per run; in a comparison each folds under its label, the first one open.
void AppendPerRun(std::string* out, const std::vector<RunData>& runs,
                  std::string (*part)(const RunData&)) {
  const bool compare = runs.size() > 1;
  for (const RunData& run : runs) {
    if (compare) {
      StrAppend(out, "<details", &run == &runs.front() ? " open" : "", "><summary>",
                Escape(run.label), "</summary>\n");
    }
    *out += part(run);
    if (compare) *out += "</details>\n";
  }
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
    if (std::any_of(runs.begin(), runs.end(), HasThroughput)) {
      out += "<h2>Throughput per measured job</h2>\n";
      AppendChartRow(&out, runs, ThroughputChart, horizon, /*share_y=*/true);
    }
    if (std::any_of(runs.begin(), runs.end(), HasFreeDomains)) {
      out += "<h2>Whole free domains per tier</h2>\n";
      AppendChartRow(&out, runs, FreeDomainsChart, horizon, /*share_y=*/true);
    }
  } else {
    out += "<h2>Charts</h2>\n<div class=\"grid2\">\n";
    for (ChartBuilder build : builders) {
      const double x_max = build == DistributionChart ? distribution_max : horizon;
      StrAppend(&out, "<figure>", RenderChart(build(runs.front(), x_max)), "</figure>\n");
    }
    if (HasThroughput(runs.front())) {
      StrAppend(&out, "<figure>", RenderChart(ThroughputChart(runs.front(), horizon)), "</figure>\n");
    }
    if (HasFreeDomains(runs.front())) {
      StrAppend(&out, "<figure>", RenderChart(FreeDomainsChart(runs.front(), horizon)), "</figure>\n");
    }
    out += "</div>\n";
  }

  out += "<h2>Evictions</h2>\n";
  AppendPerRun(&out, runs, [](const RunData& run) {
    return StrCat("<div class=\"scroll\">", EvictionSection(run), "</div>\n");
  });
  out += "<h2>Queues and jobs</h2>\n";
  AppendPerRun(&out, runs, [](const RunData& run) {
    return StrCat(QueueTable(run), "<div class=\"scroll\">", JobTable(run), "</div>\n");
  });

  out +=
      "<footer>Utilization, running pods and evictions are rebuilt from events.jsonl: a pod "
      "holds its requests from its bind to its eviction or completion (termination grace "
      "periods are not in the file). Series longer than 1000 points are shown as time-weighted "
      "bucket means. Other figures come from summary.json.</footer>\n</body>\n</html>\n";
  return out;
}

}  // namespace
}  // namespace report_internal

absl::StatusOr<std::string> RenderHtmlReport(std::string_view title,
                                             const std::vector<ReportRun>& runs) {
  if (runs.empty()) return absl::InvalidArgumentError("report: no runs to render");
  std::vector<report_internal::RunData> data;
  data.reserve(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    ASSIGN_OR_RETURN(report_internal::RunData run, report_internal::ReadRun(runs[i], i));
    data.push_back(std::move(run));
  }
  return report_internal::RenderPage(title, data);
}

}  // namespace lahar
