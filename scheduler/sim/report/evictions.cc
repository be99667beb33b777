#include "scheduler/sim/report/evictions.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

#include "api/strings.h"
#include "scheduler/sim/report/format.h"

namespace lahar::report_internal {
namespace {

// Marks and rows group the evictions within one such slice of the run: a mark is then about
// as wide as a slice of the chart, and a run has at most this many rows per job and reason.
constexpr int kTimeBuckets = 96;
constexpr size_t kMaxEvictionRows = 200;
constexpr size_t kPodsNamedPerRow = 3;

enum class EvictionKind { kReclaim, kPreempt, kElastic, kOther };
constexpr int kKindCount = 4;

struct KindStyle {
  const char* name;
  const char* css_class;
  MarkShape shape;
  const char* glyph;  // the mark's shape as text, for the table
};

// Indexed by EvictionKind.
constexpr KindStyle kKindStyles[kKindCount] = {
    {"reclaim", "ev-reclaim", MarkShape::kTriangleDown, "\u25BC"},
    {"preempt", "ev-preempt", MarkShape::kSquare, "\u25A0"},
    {"elastic", "ev-elastic", MarkShape::kCircle, "\u25CF"},
    {"other", "ev-other", MarkShape::kCross, "\u2715"},
};

// The reason's first word names the action that evicted (spec 3.1); anything else, such as
// "node-removed <node>", is another kind.
EvictionKind KindOf(std::string_view reason) {
  const std::string_view verb = reason.substr(0, reason.find(' '));
  if (verb == "reclaimed-for") return EvictionKind::kReclaim;
  if (verb == "preempted-for") return EvictionKind::kPreempt;
  if (verb == "elastic-preempted-for") return EvictionKind::kElastic;
  return EvictionKind::kOther;
}

const KindStyle& StyleOf(EvictionKind kind) { return kKindStyles[static_cast<int>(kind)]; }

int TimeBucket(double t, double horizon) {
  if (horizon <= 0) return 0;
  return std::clamp(static_cast<int>(t / horizon * kTimeBuckets), 0, kTimeBuckets - 1);
}

// Evictions that share a mark or a row.
struct Group {
  int64_t count = 0;
  double first_t = 0, last_t = 0;
  std::string_view reason;  // the first eviction's
  bool mixed_reasons = false;
  std::vector<std::string_view> pods;  // the first few

  void Add(const Eviction& eviction) {
    if (count == 0) {
      first_t = eviction.t;
      reason = eviction.reason;
    } else if (eviction.reason != reason) {
      mixed_reasons = true;
    }
    ++count;
    last_t = eviction.t;
    if (pods.size() < kPodsNamedPerRow) pods.push_back(eviction.pod);
  }

  // Plain text: "1h 00m", or "1h 00m – 1h 04m" when the group spans time.
  std::string When() const {
    if (first_t == last_t) return FormatHumanDuration(first_t);
    return StrCat(FormatHumanDuration(first_t), " \u2013 ", FormatHumanDuration(last_t));
  }
};

// Plain text, e.g. "research, 1h 00m: 3 pods reclaimed-for default/urgent".
std::string MarkTooltip(std::string_view queue, EvictionKind kind, const Group& group) {
  std::string reason(group.reason);
  if (group.mixed_reasons) {
    reason = StrCat(StyleOf(kind).name, " for several jobs");
  } else if (reason.empty()) {
    reason = "evicted, no reason given";
  }
  return StrCat(queue, ", ", group.When(), ": ", group.count, group.count == 1 ? " pod " : " pods ",
                reason);
}

}  // namespace

void MarkEvictions(const RunData& run, const std::vector<QueueLine>& lines, Chart* chart) {
  std::map<std::string_view, size_t> line_of;  // queue -> index into `lines`
  for (size_t i = 0; i < lines.size(); ++i) {
    // A nameless line would collect the evictions of every job whose queue is unknown.
    if (!lines[i].queue.empty()) line_of.emplace(lines[i].queue, i);
  }
  // Keyed (line, time bucket, kind), which is also the order the marks are drawn in.
  std::map<std::tuple<size_t, int, int>, Group> groups;
  int64_t marked[kKindCount] = {};
  for (const Eviction& eviction : run.events.evictions) {
    auto line = line_of.find(run.events.jobs[eviction.job].queue);
    if (line == line_of.end()) continue;
    const int kind = static_cast<int>(KindOf(eviction.reason));
    groups[{line->second, TimeBucket(eviction.t, run.horizon), kind}].Add(eviction);
    ++marked[kind];
  }
  for (const auto& [key, group] : groups) {
    const auto [line, bucket, kind] = key;
    const Series& share = chart->series[lines[line].series];
    const KindStyle& style = kKindStyles[kind];
    chart->marks.push_back({group.first_t, ValueAt(share.points, group.first_t), style.shape,
                            share.colour, style.css_class,
                            MarkTooltip(lines[line].queue, static_cast<EvictionKind>(kind),
                                        group)});
  }
  for (int kind = 0; kind < kKindCount; ++kind) {
    if (marked[kind] == 0) continue;
    const KindStyle& style = kKindStyles[kind];
    chart->mark_keys.push_back(
        {style.shape, style.css_class,
         StrCat("evicted: ", style.name, " (", FormatCount(marked[kind]), ")")});
  }
}

std::string EvictionSection(const RunData& run) {
  const std::vector<Eviction>& evictions = run.events.evictions;
  if (evictions.empty()) return "<p class=\"hint\">No evictions.</p>\n";

  struct Row {
    int job;
    Group group;
  };
  // Rows in order of their first eviction, as the file is in time order.
  std::vector<Row> rows;
  std::map<std::tuple<int, int, std::string_view>, size_t> row_of;  // (bucket, job, reason)
  int64_t per_kind[kKindCount] = {};
  for (const Eviction& eviction : evictions) {
    ++per_kind[static_cast<int>(KindOf(eviction.reason))];
    auto [it, inserted] = row_of.try_emplace(
        {TimeBucket(eviction.t, run.horizon), eviction.job, eviction.reason}, rows.size());
    if (inserted) rows.push_back({eviction.job, Group()});
    rows[it->second].group.Add(eviction);
  }

  std::string out = StrCat("<p>", FormatCount(static_cast<double>(evictions.size())),
                           evictions.size() == 1 ? " eviction" : " evictions");
  const char* separator = ": ";
  for (int kind = 0; kind < kKindCount; ++kind) {
    if (per_kind[kind] == 0) continue;
    const KindStyle& style = kKindStyles[kind];
    StrAppend(&out, separator, "<span class=\"", style.css_class, "\">", style.glyph, "</span> ",
              FormatCount(per_kind[kind]), " ", style.name);
    separator = ", ";
  }
  StrAppend(&out, ". <span class=\"hint\">A row holds the evictions of one job for one reason "
                  "within ",
            HumanDuration(run.horizon / kTimeBuckets), " of each other.</span></p>\n");

  out +=
      "<table class=\"evictions\">\n<thead><tr><th>time</th><th>victim job</th><th>queue</th>"
      "<th>evictions</th><th>pods</th><th>kind</th><th>reason</th></tr></thead>\n<tbody>\n";
  const size_t shown = std::min(rows.size(), kMaxEvictionRows);
  for (size_t i = 0; i < shown; ++i) {
    const Group& group = rows[i].group;
    const JobTrack& job = run.events.jobs[rows[i].job];
    const KindStyle& style = StyleOf(KindOf(group.reason));
    std::string pods;
    for (std::string_view pod : group.pods) StrAppend(&pods, pods.empty() ? "" : ", ", Escape(pod));
    const int64_t unnamed = group.count - static_cast<int64_t>(group.pods.size());
    if (unnamed > 0) StrAppend(&pods, " and ", FormatCount(unnamed), " more");
    StrAppend(&out, "<tr><td class=\"num\">", Escape(group.When()), "</td><td>", Escape(job.name),
              "</td><td>", job.queue.empty() ? kNone : Escape(job.queue),
              "</td><td class=\"num\">", FormatCount(group.count), "</td><td>", pods,
              "</td><td class=\"", style.css_class, "\">", style.glyph, " ", style.name,
              "</td><td>", group.reason.empty() ? kNone : Escape(group.reason), "</td></tr>\n");
  }
  out += "</tbody></table>\n";
  if (shown < rows.size()) {
    int64_t hidden = 0;
    for (size_t i = shown; i < rows.size(); ++i) hidden += rows[i].group.count;
    StrAppend(&out, "<p class=\"hint\">", FormatCount(rows.size() - shown), " more rows (",
              FormatCount(hidden), " evictions) are not shown; events.jsonl has them all.</p>\n");
  }
  return out;
}

}  // namespace lahar::report_internal
