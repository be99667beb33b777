#include "scheduler/sim/summary_table.h"

#include <algorithm>
#include <set>
#include <cmath>

#include "api/strings.h"

namespace lahar {

std::string HumanSeconds(double seconds) {
  if (seconds < 60) return StrFormat("%.1fs", seconds);
  auto s = static_cast<int64_t>(std::llround(seconds));
  int64_t days = s / 86400, hours = s / 3600 % 24, minutes = s / 60 % 60;
  if (days > 0) return StrFormat("%lldd%02lldh", static_cast<long long>(days), static_cast<long long>(hours));
  if (hours > 0) return StrFormat("%lldh%02lldm", static_cast<long long>(hours), static_cast<long long>(minutes));
  return StrFormat("%lldm%02llds", static_cast<long long>(minutes), static_cast<long long>(s % 60));
}

std::string FormatSummaryTable(std::string_view scenario, const std::vector<SimRun>& runs) {
  std::vector<std::string> resources;
  for (const SimRun& run : runs) {
    for (const auto& [name, value] : run.figures.utilization) {
      if (std::find(resources.begin(), resources.end(), name) == resources.end()) resources.push_back(name);
    }
  }
  std::sort(resources.begin(), resources.end());
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  auto row = [&](std::string name, auto cell) {
    std::vector<std::string> cells;
    for (const SimRun& run : runs) cells.push_back(cell(run.figures));
    rows.emplace_back(std::move(name), std::move(cells));
  };
  row("jobs completed", [](const SimFigures& f) { return StrCat(f.completed_jobs, "/", f.jobs); });
  row("makespan", [](const SimFigures& f) { return HumanSeconds(f.makespan); });
  // No completed (started) job: no JCT (wait) to speak of, rather than a misleading 0.0s.
  if (std::any_of(runs.begin(), runs.end(), [](const SimRun& run) { return run.figures.never_started > 0; })) {
    row("never started", [](const SimFigures& f) {
      if (f.never_started == 0) return std::string("0");
      if (f.most_common_reason.empty()) return StrCat(f.never_started);
      return StrCat(f.never_started, " (", f.most_common_reason.substr(0, f.most_common_reason.find(':')), ")");
    });
  }
  row("mean JCT", [](const SimFigures& f) { return f.completed_jobs > 0 ? HumanSeconds(f.jct_mean) : "-"; });
  row("p95 JCT", [](const SimFigures& f) { return f.completed_jobs > 0 ? HumanSeconds(f.jct_p95) : "-"; });
  row("mean wait", [](const SimFigures& f) { return f.started_jobs > 0 ? HumanSeconds(f.wait_mean) : "-"; });
  row("p95 wait", [](const SimFigures& f) { return f.started_jobs > 0 ? HumanSeconds(f.wait_p95) : "-"; });
  for (const std::string& r : resources) {
    row(StrCat(r, " utilization"), [&](const SimFigures& f) { return StrFormat("%.1f%%", 100 * f.Utilization(r)); });
  }
  if (std::any_of(runs.begin(), runs.end(), [](const SimRun& run) { return run.figures.gpu_hours > 0; })) {
    row("GPU goodput", [](const SimFigures& f) { return StrFormat("%.1f%%", 100 * f.goodput); });
  }
  std::set<int32_t> tiers;
  for (const SimRun& run : runs) {
    for (const auto& [tier, mean] : run.figures.free_domains) tiers.insert(tier);
  }
  for (int32_t tier : tiers) {
    row(StrCat("whole free tier-", tier, " domains"), [tier](const SimFigures& f) {
      for (const auto& [t, mean] : f.free_domains) {
        if (t == tier) return StrFormat("%.2f", mean);
      }
      return std::string("-");
    });
  }
  row("binds", [](const SimFigures& f) { return StrCat(f.binds); });
  row("evictions", [](const SimFigures& f) { return StrCat(f.evictions); });
  row("sessions", [](const SimFigures& f) { return StrCat(f.sessions); });
  row("session p50 / p99", [](const SimFigures& f) {
    return StrFormat("%.0fus / %.0fus", f.session_p50_micros, f.session_p99_micros);
  });

  size_t name_width = 8;
  for (const auto& [name, cells] : rows) name_width = std::max(name_width, name.size());
  std::vector<size_t> widths;
  for (const SimRun& run : runs) widths.push_back(std::max<size_t>(run.label.size(), 10));
  for (const auto& [name, cells] : rows) {
    for (size_t i = 0; i < cells.size(); ++i) widths[i] = std::max(widths[i], cells[i].size());
  }
  std::string out = StrCat("scenario ", scenario, "\n");
  auto line = [&](const std::string& name, const std::vector<std::string>& cells) {
    out += name;
    out.append(name_width - name.size() + 2, ' ');
    for (size_t i = 0; i < cells.size(); ++i) {
      out.append(widths[i] - cells[i].size(), ' ');
      out += cells[i];
      out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  };
  std::vector<std::string> header;
  for (const SimRun& run : runs) header.push_back(run.label);
  line("", header);
  for (const auto& [name, cells] : rows) line(name, cells);
  // The reason most jobs that never started share, in full (too long for a cell).
  for (const SimRun& run : runs) {
    if (run.figures.most_common_reason.empty()) continue;
    StrAppend(&out, "never started", runs.size() > 1 ? StrCat(" (", run.label, ")") : "", ", most often: ",
              run.figures.most_common_reason, "\n");
  }
  return out;
}

}  // namespace lahar
