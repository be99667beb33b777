#include "scheduler/daemon/wait_board.h"

#include <algorithm>
#include <set>

#include "absl/strings/numbers.h"
#include "api/json_writer.h"
#include "api/quantity.h"
#include "api/strings.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace lahar {
namespace {

// The value of `key` in a query string, percent-decoded ("job=default%2Fa" -> "default/a").
std::string QueryValue(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) != key || eq == std::string_view::npos) continue;
    std::string out;
    for (size_t i = eq + 1; i < pair.size(); ++i) {
      if (pair[i] == '%' && i + 2 < pair.size()) {
        int value = 0;
        if (absl::SimpleHexAtoi(ToAbsl(pair.substr(i + 1, 2)), &value)) {
          out.push_back(static_cast<char>(value));
          i += 2;
          continue;
        }
      }
      out.push_back(pair[i] == '+' ? ' ' : pair[i]);
    }
    return out;
  }
  return "";
}

HttpResponse JsonError(int status, std::string_view message) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  StringField(w, "error", message);
  w.EndObject();
  return {status, "application/json", std::string(buffer.GetString(), buffer.GetSize())};
}

Resources Positive(Resources r) {
  r.ClampNegativeToZero();
  return r;
}

std::string Quantity(const Resources& r, ResourceId id) { return FormatQuantity(r.Get(id), ResourceUnit(id)); }

}  // namespace

void WaitBoard::Update(const ClusterSnapshot& snapshot, const CycleResult& result, Millis now) {
  std::map<std::string, const CycleResult::JobUpdate*, std::less<>> updates;
  for (const CycleResult::JobUpdate& u : result.job_updates) {
    if (u.waiting) updates[u.job] = &u;
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, Waiting> waiting;
  for (const JobInfo& job : snapshot.jobs) {
    const std::string key = job.key();
    auto update = updates.find(key);
    auto old = waiting_.find(key);
    const bool had = old != waiting_.end();
    if (update != updates.end()) {
      const WaitReason& reason = *update->second->waiting;
      if (had && old->second.reason == reason) {
        waiting.emplace(key, std::move(old->second));  // its words are made once per change
      } else {
        waiting.emplace(key, Waiting{job.queue != kNoId ? snapshot.queues[job.queue].name : "", reason,
                                     WaitReasonText(reason)});
      }
    } else if (had && job.PlacedCount() < job.min_available && job.Count(TaskStatus::kPending) > 0) {
      // No word from this session: it keeps its reason while it still lacks its min.
      waiting.emplace(key, std::move(old->second));
    }
  }
  waiting_ = std::move(waiting);
  queue_figures_ = result.queues;

  std::map<std::string, const CycleResult::QueueState*> figures;
  for (const CycleResult::QueueState& q : queue_figures_) figures[q.queue] = &q;
  queues_.clear();
  // Tree order: each top-level queue, then its children depth first.
  std::vector<QueueId> stack;
  for (auto it = snapshot.queues.rbegin(); it != snapshot.queues.rend(); ++it) {
    if (it->parent == kNoId) stack.push_back(it->id);
  }
  while (!stack.empty()) {
    const QueueInfo& q = snapshot.queues[stack.back()];
    stack.pop_back();
    QueueRow row{q.name, q.parent != kNoId ? snapshot.queues[q.parent].name : "", q.weight};
    for (QueueId p = q.parent; p != kNoId && row.depth < 64; p = snapshot.queues[p].parent) ++row.depth;
    auto f = figures.find(q.name);
    if (f != figures.end()) {
      row.allocated = f->second->allocated;
      row.has_deserved = f->second->deserved.has_value();
      if (row.has_deserved) row.deserved = *f->second->deserved;
    }
    queues_.push_back(std::move(row));
    for (auto child = q.children.rbegin(); child != q.children.rend(); ++child) stack.push_back(*child);
  }
  std::map<std::string, size_t> row_of;
  for (size_t i = 0; i < queues_.size(); ++i) row_of[queues_[i].name] = i;
  for (const auto& [job, w] : waiting_) {
    auto row = row_of.find(w.queue);
    if (row != row_of.end()) ++queues_[row->second].waiting_by_kind[std::string(WaitKindName(w.reason.kind))];
  }

  for (const CycleResult::Evict& e : result.evicts) evictions_.push_back({now, e.pod, e.job, e.reason});
  while (evictions_.size() > kEvictionsKept) evictions_.pop_front();
}

HttpResponse WaitBoard::Explain(const HttpRequest& request) const {
  const std::string key = QueryValue(request.query, "job");
  if (key.empty()) return JsonError(400, "ask for a job: /debug/explain?job=NAMESPACE/NAME");
  const ClusterSnapshot snapshot = snapshot_now_();
  const JobInfo* job = nullptr;
  for (const JobInfo& j : snapshot.jobs) {
    if (j.key() == key) job = &j;
  }
  if (job == nullptr) return JsonError(404, StrCat("no job ", key, " (PodGroups are named namespace/name)"));
  JobExplanation e;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto w = waiting_.find(key);
    e = ExplainJob(snapshot, queue_figures_, *job, w != waiting_.end() ? std::optional(w->second.reason) : std::nullopt);
  }
  return {200, "application/json", ExplanationJson(e)};
}

HttpResponse WaitBoard::Queues(const HttpRequest&) const {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  std::lock_guard<std::mutex> lock(mu_);
  w.StartObject();
  w.Key("queues");
  w.StartArray();
  for (const QueueRow& q : queues_) {
    w.StartObject();
    StringField(w, "queue", q.name);
    StringField(w, "parent", q.parent);
    IntField(w, "depth", q.depth);
    IntField(w, "weight", q.weight);
    ResourcesField(w, "allocated", q.allocated);
    if (q.has_deserved) {
      ResourcesField(w, "deserved", q.deserved);
      ResourcesField(w, "borrowed", Positive(q.allocated - q.deserved));
      ResourcesField(w, "lent", Positive(q.deserved - q.allocated));
    }
    w.Key("waiting");
    w.StartObject();
    for (const auto& [kind, count] : q.waiting_by_kind) IntField(w, kind, count);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return {200, "application/json", std::string(buffer.GetString(), buffer.GetSize())};
}

HttpResponse WaitBoard::Page(const HttpRequest& request) const {
  size_t page = 0;
  if (!absl::SimpleAtoi(ToAbsl(QueryValue(request.query, "page")), &page)) page = 0;
  std::lock_guard<std::mutex> lock(mu_);
  // The resources any queue deserves or holds, by id.
  std::set<ResourceId> resources;
  for (const QueueRow& q : queues_) {
    for (const auto& [id, amount] : q.deserved.NonZero()) {
      if (id != kPods) resources.insert(id);
    }
    for (const auto& [id, amount] : q.allocated.NonZero()) {
      if (id != kPods) resources.insert(id);
    }
  }
  std::string html = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="5">
<title>Lahar: queues and waiting jobs</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f0f0f0}td.name,td.reason,td.job{text-align:left}
td.reason{max-width:60em}
</style></head><body>
<h1>Lahar</h1>
<h2>Queues</h2>
<table id="queues"><thead><tr><th>queue</th><th>weight</th><th>waiting jobs</th>)";
  for (ResourceId id : resources) {
    const std::string name = HtmlEscape(ResourceName(id));
    StrAppend(&html, "<th>", name, " deserved</th><th>", name, " allocated</th><th>", name, " borrowed</th><th>", name,
              " lent</th>");
  }
  html += "</tr></thead><tbody>\n";
  for (const QueueRow& q : queues_) {
    int waiting = 0;
    std::string kinds;
    for (const auto& [kind, count] : q.waiting_by_kind) {
      waiting += count;
      StrAppend(&kinds, kinds.empty() ? "" : ", ", count, " ", kind);
    }
    StrAppend(&html, "<tr data-queue=\"", HtmlEscape(q.name), "\"><td class=\"name\" style=\"padding-left:",
              0.5 + 1.5 * q.depth, "em\">", HtmlEscape(q.name), "</td><td>", q.weight, "</td><td title=\"",
              HtmlEscape(kinds), "\">", waiting, "</td>");
    const Resources borrowed = Positive(q.allocated - q.deserved), lent = Positive(q.deserved - q.allocated);
    for (ResourceId id : resources) {
      if (q.has_deserved) {
        StrAppend(&html, "<td>", Quantity(q.deserved, id), "</td><td>", Quantity(q.allocated, id), "</td><td>",
                  Quantity(borrowed, id), "</td><td>", Quantity(lent, id), "</td>");
      } else {
        StrAppend(&html, "<td>-</td><td>", Quantity(q.allocated, id), "</td><td>-</td><td>-</td>");
      }
    }
    html += "</tr>\n";
  }
  html += "</tbody></table>\n";

  const size_t pages = std::max<size_t>(1, (waiting_.size() + kJobsPerPage - 1) / kJobsPerPage);
  page = std::min(page, pages - 1);
  StrAppend(&html, "<h2>Waiting jobs (", waiting_.size(), ")</h2>\n");
  if (pages > 1) {
    StrAppend(&html, "<p>page ", page + 1, " of ", pages, page > 0 ? StrCat(" <a href=\"?page=", page - 1, "\">previous</a>") : "",
              page + 1 < pages ? StrCat(" <a href=\"?page=", page + 1, "\">next</a>") : "", "</p>\n");
  }
  html += "<table id=\"waiting\"><thead><tr><th>job</th><th>queue</th><th>kind</th><th>reason</th></tr></thead><tbody>\n";
  auto it = waiting_.begin();
  std::advance(it, std::min(waiting_.size(), page * kJobsPerPage));
  for (size_t n = 0; it != waiting_.end() && n < kJobsPerPage; ++it, ++n) {
    StrAppend(&html, "<tr data-job=\"", HtmlEscape(it->first), "\"><td class=\"job\">", HtmlEscape(it->first),
              "</td><td class=\"name\">", HtmlEscape(it->second.queue), "</td><td class=\"name\">",
              WaitKindName(it->second.reason.kind), "</td><td class=\"reason\">", HtmlEscape(it->second.text),
              "</td></tr>\n");
  }
  html += "</tbody></table>\n<h2>Recent evictions</h2>\n";
  html += "<table id=\"evictions\"><thead><tr><th>pod</th><th>job</th><th>reason</th></tr></thead><tbody>\n";
  for (auto e = evictions_.rbegin(); e != evictions_.rend(); ++e) {
    StrAppend(&html, "<tr><td class=\"job\">", HtmlEscape(e->pod), "</td><td class=\"job\">", HtmlEscape(e->job),
              "</td><td class=\"reason\">", HtmlEscape(e->reason), "</td></tr>\n");
  }
  html += "</tbody></table>\n</body></html>\n";
  return {200, "text/html; charset=utf-8", std::move(html)};
}

}  // namespace lahar
