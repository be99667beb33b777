#include "scheduler/sim/report/charts.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "api/strings.h"
#include "scheduler/sim/report/evictions.h"
#include "scheduler/sim/report/format.h"
#include "scheduler/sim/report/series.h"

namespace lahar::report_internal {
namespace {

// A chart path of more points than this is unreadable and only makes the page heavy.
constexpr size_t kMaxPointsPerSeries = 1000;
// More lines than this cannot be told apart by colour.
constexpr size_t kMaxChartedJobs = 12;
constexpr size_t kMaxChartedQueues = 12;

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

// Every chart but the distributions runs over simulated time.
Chart TimeChart(std::string title, std::string y_label, double x_max) {
  Chart chart;
  chart.title = std::move(title);
  chart.x_label = "simulated time";
  chart.y_label = std::move(y_label);
  chart.x_max = x_max;
  return chart;
}

}  // namespace

Chart UtilizationChart(const RunData& run, double x_max) {
  Chart chart = TimeChart("Utilization per resource", "in use (% of allocatable)", x_max);
  chart.note = "requests of bound pods / allocatable of present nodes";
  chart.y_axis = Axis::kPercent;
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
  Chart chart = TimeChart("Running workers per job", "running pods", x_max);
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

bool HasThroughput(const RunData& run) {
  return std::any_of(run.summary.job_rows.begin(), run.summary.job_rows.end(),
                     [](const JobSummary& job) { return !job.throughput.empty(); });
}

bool HasFreeDomains(const RunData& run) { return !run.summary.free_domains.empty(); }

Chart FreeDomainsChart(const RunData& run, double x_max) {
  Chart chart = TimeChart("Whole free domains per tier", "HyperNodes with no pod", x_max);
  chart.empty_text = "no topology";
  for (size_t i = 0; i < run.summary.free_domains.size(); ++i) {
    const auto& [tier, points] = run.summary.free_domains[i];
    Series series;
    series.name = StrCat("tier ", tier);
    series.colour = Colour(i);
    series.extend_to_end = true;
    series.points = DownsampleSteps(points, run.horizon, kMaxPointsPerSeries);
    chart.series.push_back(std::move(series));
  }
  return chart;
}

Chart ThroughputChart(const RunData& run, double x_max) {
  Chart chart = TimeChart("Throughput per measured job", "throughput (as reported)", x_max);
  chart.empty_text = "no job with throughput scaling";
  std::vector<const JobSummary*> jobs;
  for (const JobSummary& job : run.summary.job_rows) {
    if (!job.throughput.empty()) jobs.push_back(&job);
  }
  if (jobs.size() > kMaxChartedJobs) {
    chart.note = StrCat("the first ", kMaxChartedJobs, " of ", jobs.size(), " measured jobs");
    jobs.resize(kMaxChartedJobs);
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    Series series;
    series.name = jobs[i]->job;
    for (const JobTrack& track : run.events.jobs) {
      if (track.name == jobs[i]->job && track.peak > 0) StrAppend(&series.name, " (peak ", track.peak, " workers)");
    }
    if (jobs[i]->goodput) StrAppend(&series.name, ", goodput ", FormatPercent(*jobs[i]->goodput));
    series.colour = Colour(i);
    series.extend_to_end = jobs[i]->throughput.back().v > 0;
    series.points = DownsampleSteps(jobs[i]->throughput, run.horizon, kMaxPointsPerSeries);
    chart.series.push_back(std::move(series));
  }
  return chart;
}

Chart QueueShareChart(const RunData& run, double x_max) {
  Chart chart = TimeChart("Queue share against deserved", "share of the cluster (%)", x_max);
  chart.note = "solid: allocated share, dashed: deserved share";
  chart.y_axis = Axis::kPercent;
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
  std::vector<QueueLine> lines;
  for (size_t i = 0; i < queues.size(); ++i) {
    lines.push_back({queues[i]->queue, chart.series.size()});
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
  MarkEvictions(run, lines, &chart);
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

}  // namespace lahar::report_internal
