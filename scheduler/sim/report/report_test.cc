#include "scheduler/sim/report/report.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "absl/status/status.h"
#include "api/strings.h"
#include "scheduler/sim/report/events.h"

namespace lahar {
namespace {

size_t Count(std::string_view text, std::string_view needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

// Builders for events.jsonl lines, in the simulator's canonical units.
std::string Node(double t, std::string_view name, std::string_view allocatable) {
  return StrCat("{\"t\":", t, ",\"type\":\"node\",\"node\":\"", name,
                "\",\"change\":\"add\",\"allocatable\":", allocatable, "}\n");
}
std::string Submit(double t, std::string_view job, int min, int max,
                   std::string_view queue = "research") {
  return StrCat("{\"t\":", t, ",\"type\":\"submit\",\"job\":\"", job, "\",\"queue\":\"", queue,
                "\",\"min\":", min, ",\"max\":", max, "}\n");
}
std::string PodEvent(double t, std::string_view type, std::string_view pod, std::string_view job,
                     std::string_view requests) {
  return StrCat("{\"t\":", t, ",\"type\":\"", type, "\",\"pod\":\"", pod, "\",\"job\":\"", job,
                "\",\"node\":\"gpu-a\",\"requests\":", requests, "}\n");
}

std::string Evict(double t, std::string_view pod, std::string_view job, std::string_view reason) {
  return StrCat("{\"t\":", t, ",\"type\":\"evict\",\"pod\":\"", pod, "\",\"job\":\"", job,
                "\",\"node\":\"gpu-a\",\"reason\":\"", reason,
                "\",\"requests\":{\"nvidia.com/gpu\":1}}\n");
}

// The SVG element of the first mark of class `mark_class` ("ev-reclaim"), or "" if none.
std::string_view FirstMark(std::string_view html, std::string_view mark_class) {
  const size_t start = html.find(StrCat("<g class=\"mark ", mark_class, "\">"));
  if (start == std::string_view::npos) return {};
  return html.substr(start, html.find("</g>", start) - start);
}

// The evictions table, or "" if the page has none.
std::string_view EvictionTable(std::string_view html) {
  const size_t start = html.find("<table class=\"evictions\">");
  if (start == std::string_view::npos) return {};
  return html.substr(start, html.find("</table>", start) - start);
}

constexpr std::string_view kWorker = R"({"cpu":2000,"memory":17179869184,"nvidia.com/gpu":1})";

// One node with 8 GPUs; job default/train holds 4 of them from t=0 to t=50 of a 100s run.
//   gpu:    4 * 50 / (8 * 100)            = 25.0%
//   cpu:    4 * 2000 * 50 / (32000 * 100) = 12.5%
std::string HalfTimeEvents(std::string_view job = "default/train") {
  std::string events =
      Node(0, "gpu-a", R"({"cpu":32000,"memory":274877906944,"nvidia.com/gpu":8})");
  events += Submit(0, job, 4, 4);
  for (int i = 0; i < 4; ++i) {
    events += PodEvent(0, "bind", StrCat(job, "-worker-", i), job, kWorker);
  }
  events += StrCat("{\"t\":0,\"type\":\"job-start\",\"job\":\"", job, "\"}\n");
  events += "{\"t\":0,\"type\":\"session\",\"binds\":4,\"evicts\":0}\n";
  for (int i = 0; i < 4; ++i) {
    events += PodEvent(50, "pod-complete", StrCat(job, "-worker-", i), job, kWorker);
  }
  events += StrCat("{\"t\":50,\"type\":\"job-complete\",\"job\":\"", job, "\"}\n");
  return events;
}

std::string HalfTimeSummary(std::string_view job = "default/train") {
  return StrCat(R"({"scenario":"half-time","config":"default",)",
                R"("cluster":{"makespan":100,"jobs":1,"completedJobs":1,)",
                R"("jct":{"mean":50,"p50":50,"p95":50},"wait":{"mean":0,"p50":0,"p95":0},)",
                R"("utilization":{"cpu":0.125,"memory":0.25,"nvidia.com/gpu":0.25},)",
                R"("evictions":0,"sessions":1,"sessionMicros":{"p50":120,"p99":480}},)",
                R"("jobs":[{"job":")", job, R"(","queue":"research","submit":0,"start":0,)",
                R"("end":50,"jct":50,"wait":0,"min":4,"max":4,"evictions":0,"avgRunning":4}],)",
                R"("queues":[{"queue":"research","averageWait":0,)",
                R"("share":[[0,0.5,0.6],[50,0,0.6]]}]})");
}

std::string Render(const std::vector<ReportRun>& runs) {
  absl::StatusOr<std::string> html = RenderHtmlReport("Lahar simulation", runs);
  REQUIRE(html.ok());
  return *html;
}

TEST_CASE("a report is one self-contained HTML document with a chart per figure") {
  const std::string html = Render({{"elastic.conf", HalfTimeEvents(), HalfTimeSummary()}});
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(Count(html, "<html") == 1);
  CHECK(Count(html, "</html>") == 1);
  // utilization, running pods, queue share, JCT/wait distributions
  CHECK(Count(html, "<svg") == 4);
  CHECK(Count(html, "</svg>") == 4);
  // Nothing to fetch: no scripts, no stylesheets or fonts, no URLs at all.
  CHECK(Count(html, "<script") == 0);
  CHECK(Count(html, "<link") == 0);
  CHECK(Count(html, "http://") == 0);
  CHECK(Count(html, "https://") == 0);
  CHECK(Count(html, "src=") == 0);
  CHECK(Count(html, "url(") == 0);
  CHECK(Count(html, "@import") == 0);
  CHECK(html.find("elastic.conf") != std::string::npos);
}

TEST_CASE("events.jsonl read from its file gives the page read from memory; a missing file is an error") {
  const std::string path =
      (std::filesystem::temp_directory_path() / StrCat("lahar-report-test-", getpid(), ".jsonl")).string();
  {
    std::ofstream out(path);
    out << HalfTimeEvents();
  }
  ReportRun from_file{.label = "elastic.conf", .summary_json = HalfTimeSummary(), .events_path = path};
  CHECK(Render({from_file}) == Render({{"elastic.conf", HalfTimeEvents(), HalfTimeSummary()}}));
  std::remove(path.c_str());
  absl::StatusOr<std::string> missing = RenderHtmlReport("Lahar simulation", {from_file});
  REQUIRE_FALSE(missing.ok());
  CHECK(std::string(missing.status().message()).find(path) != std::string::npos);
}

TEST_CASE("events taken in pieces as lahar-sim writes them give the page read from memory") {
  // Lines the report draws nothing from count by their time: a waiting event after the last
  // completion moves the end of every chart.
  const std::string events =
      HalfTimeEvents() + "{\"t\":120,\"type\":\"session\",\"binds\":0,\"evicts\":0}\n" +
      "{\"t\":150.5,\"type\":\"waiting\",\"job\":\"default/other\",\"kind\":\"no-fit\",\"reason\":\"x\"}\n";
  for (size_t piece : {size_t{1}, size_t{7}, events.size()}) {
    auto as_written = std::make_shared<report_internal::EventsInPieces>();
    for (size_t at = 0; at < events.size(); at += piece) {
      REQUIRE(as_written->Write(std::string_view(events).substr(at, piece)).ok());
    }
    ReportRun taken{.label = "elastic.conf", .summary_json = HalfTimeSummary(), .events_as_written = as_written};
    CHECK(Render({taken}) == Render({{"elastic.conf", events, HalfTimeSummary()}}));
  }
  CHECK(Render({{"elastic.conf", events, HalfTimeSummary()}}) != Render({{"elastic.conf", HalfTimeEvents(), HalfTimeSummary()}}));
}

// Everything the report draws from an analysis, compared exactly (doubles bit for bit).
void CheckSameAnalysis(const report_internal::EventAnalysis& a, const report_internal::EventAnalysis& b) {
  CHECK(a.events == b.events);
  CHECK(a.last_t == b.last_t);
  REQUIRE(a.resources.size() == b.resources.size());
  for (size_t r = 0; r < a.resources.size(); ++r) {
    INFO(a.resources[r].name);
    CHECK(a.resources[r].name == b.resources[r].name);
    CHECK(a.resources[r].used_integral == b.resources[r].used_integral);
    CHECK(a.resources[r].allocatable_integral == b.resources[r].allocatable_integral);
    CHECK(a.resources[r].ever_requested == b.resources[r].ever_requested);
    REQUIRE(a.resources[r].fraction.size() == b.resources[r].fraction.size());
    for (size_t i = 0; i < a.resources[r].fraction.size(); ++i) {
      CHECK(a.resources[r].fraction[i].t == b.resources[r].fraction[i].t);
      CHECK(a.resources[r].fraction[i].v == b.resources[r].fraction[i].v);
    }
  }
  REQUIRE(a.jobs.size() == b.jobs.size());
  for (size_t j = 0; j < a.jobs.size(); ++j) {
    CHECK(a.jobs[j].name == b.jobs[j].name);
    CHECK(a.jobs[j].queue == b.jobs[j].queue);
    CHECK(a.jobs[j].pod_seconds == b.jobs[j].pod_seconds);
    CHECK(a.jobs[j].peak == b.jobs[j].peak);
  }
  REQUIRE(a.evictions.size() == b.evictions.size());
  for (size_t e = 0; e < a.evictions.size(); ++e) {
    CHECK(a.evictions[e].t == b.evictions[e].t);
    CHECK(a.evictions[e].pod == b.evictions[e].pod);
    CHECK(a.evictions[e].reason == b.evictions[e].reason);
  }
}

TEST_CASE("lines as lahar-sim writes them and lines written otherwise read alike") {
  // Written lines are read by a scanner of the simulator's own form; anything else (escapes,
  // exponents, nulls, repeated keys, spaces, negative or long numbers) by the full parse. Both
  // must make the same doubles: fractional times and amounts compared bit for bit.
  std::string events = Node(0, "gpu-a", R"({"cpu":64000,"memory":549755813888,"nvidia.com/gpu":8,"pods":110})");
  events += R"({"t":0.1,"type":"node","node":"gpu-b","change":"add","allocatable":{"cpu":0.3,"nvidia.com/gpu":8}})" "\n";
  events += Submit(0.2, "default/a", 1, 2);
  events += R"({"t":0.7,"type":"submit","job":"default/b","queue":null,"min":1,"max":2})" "\n";
  for (int i = 0; i < 40; ++i) {
    const double t = 1.0 + i * 0.123;
    events += PodEvent(t, "bind", StrCat("default/a-", i), "default/a", R"({"cpu":0.1,"nvidia.com/gpu":0.2})");
  }
  events += R"({"t":7.0,"type":"bind","pod":"default/b\u002d0","job":"default/b","requests":{"cpu":1e3}})" "\n";
  events += R"({"t":7.25,"type":"bind","pod":"default/b-1","job":"default/b","pod":"x","requests":{"cpu":-1.5}})" "\n";
  events += R"({"t":7.5, "type":"bind","pod":"default/b-2","job":"default/b","requests":{"cpu":12345678901234567}})" "\n";
  events += R"({"t":8.0,"type":"bind","pod":"default/b-3","job":"default/b","requests":{"cpu":0.30000000000000004}})" "\n";
  events += Evict(9.875, "default/a-3", "default/a", "preempted-for default/b");
  events += R"({"t":10,"type":"evict","pod":"default/a-4","job":"default/a","reason":null,"requests":{"cpu":0.1}})" "\n";
  events += R"({"t":10.5,"type":"pod-complete","pod":"default/a-5","job":"default/a","extra":{"x":[1]}})" "\n";
  events += R"({"t":11,"type":"node","node":"gpu-b","change":"cordon"})" "\n";
  events += R"({"t":11.5,"type":"node","node":"gpu-b","change":"remove"})"  "\n";
  events += R"({"t":12.0625,"type":"job-complete","job":"default/a"})" "\t\n";
  events += "{\"t\":13.1,\"type\":\"session\",\"binds\":0,\"evicts\":0}\n";

  absl::StatusOr<report_internal::EventAnalysis> parsed = report_internal::ReadEvents(events, 20);
  REQUIRE(parsed.ok());
  report_internal::EventsInPieces pieces;
  REQUIRE(pieces.Write(events).ok());
  absl::StatusOr<report_internal::EventAnalysis> written = pieces.Finish(20);
  REQUIRE(written.ok());
  CheckSameAnalysis(*parsed, *written);
  CHECK(parsed->evictions.size() == 2);
  CHECK(parsed->jobs.size() == 2);
}

TEST_CASE("utilization is rebuilt from node allocatable and pod requests") {
  const std::string html = Render({{"elastic.conf", HalfTimeEvents(), HalfTimeSummary()}});
  // 4 of 8 GPUs for 50 of 100 seconds: 25.0%; 4 x 2 of 32 cores for half the time: 12.5%.
  CHECK(html.find("nvidia.com/gpu (mean 25.0%)") != std::string::npos);
  CHECK(html.find("cpu (mean 12.5%)") != std::string::npos);
  // The cluster table prints the simulator's own figures, and times for people.
  CHECK(html.find("<th>mean JCT</th><td class=\"num\">50s</td>") != std::string::npos);
  CHECK(html.find("<th>makespan</th><td class=\"num\">1m 40s</td>") != std::string::npos);
}

TEST_CASE("a node removed half way halves the capacity-weighted denominator") {
  // Two 4-GPU nodes; b leaves at t=50; 4 GPUs in use throughout, run ends at t=100.
  //   used 4 * 100 = 400 GPU-s; allocatable 8 * 50 + 4 * 50 = 600 GPU-s -> 66.7%
  std::string events = Node(0, "a", R"({"nvidia.com/gpu":4})");
  events += Node(0, "b", R"({"nvidia.com/gpu":4})");
  events += PodEvent(0, "bind", "default/j-0", "default/j", R"({"nvidia.com/gpu":4})");
  events += R"({"t":50,"type":"node","node":"b","change":"remove"})" "\n";
  events += R"({"t":60,"type":"node","node":"a","change":"cordon"})" "\n";
  const std::string html = Render({{"x", events, R"({"cluster":{"makespan":100}})"}});
  CHECK(html.find("nvidia.com/gpu (mean 66.7%)") != std::string::npos);
}

TEST_CASE("an evicted and rebound pod is counted once") {
  // Pod holds 2 of 4 GPUs 0..10 and 20..40 of a 40s run: 2 * 30 / (4 * 40) = 37.5%.
  std::string events = Node(0, "a", R"({"nvidia.com/gpu":4})");
  const std::string_view two = R"({"nvidia.com/gpu":2})";
  events += PodEvent(0, "bind", "default/j-0", "default/j", two);
  events += PodEvent(10, "evict", "default/j-0", "default/j", two);
  events += PodEvent(20, "bind", "default/j-0", "default/j", two);
  events += PodEvent(40, "pod-complete", "default/j-0", "default/j", two);
  const std::string html = Render({{"x", events, "{}"}});
  CHECK(html.find("nvidia.com/gpu (mean 37.5%)") != std::string::npos);
}

TEST_CASE("strings from the inputs are HTML-escaped") {
  const std::string html =
      Render({{"a&b.conf", HalfTimeEvents("<b>"), HalfTimeSummary("<b>")}});
  CHECK(html.find("&lt;b&gt;") != std::string::npos);
  CHECK(html.find("<b>") == std::string::npos);
  CHECK(html.find("a&amp;b.conf") != std::string::npos);
  CHECK(html.find("a&b.conf") == std::string::npos);
}

TEST_CASE("a bad events.jsonl line is an InvalidArgument naming the line") {
  const std::string summary = HalfTimeSummary();
  struct Case {
    std::string events;
    std::string_view expected;
  };
  const Case cases[] = {
      {Submit(0, "a/b", 1, 1) + "\n{not json\n", "events.jsonl line 3: not valid JSON"},
      {Submit(0, "a/b", 1, 1) + "[1,2]\n", "events.jsonl line 2: not a JSON object"},
      {R"({"type":"submit","job":"a/b"})", "events.jsonl line 1: \"t\" must be a number"},
      {Submit(5, "a/b", 1, 1) + Submit(4, "a/c", 1, 1), "events.jsonl line 2: \"t\" goes back"},
      {R"({"t":1,"type":"bind","job":"a/b","requests":{}})", "events.jsonl line 1: bind: \"pod\""},
      {R"({"t":1,"type":"bind","pod":"a/b-0","job":"a/b","requests":{"cpu":"4"}})",
       "line 1: bind: \"requests.cpu\" must be a number"},
      {R"({"t":1,"type":"node","node":"n","change":"explode"})", "line 1: node: \"change\""},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> html = RenderHtmlReport("r", {{"bad.conf", c.events, summary}});
    INFO(c.events);
    REQUIRE_FALSE(html.ok());
    CHECK(html.status().code() == absl::StatusCode::kInvalidArgument);
    const std::string message(html.status().message());
    INFO(message);
    CHECK(message.rfind("bad.conf: ", 0) == 0);
    CHECK(message.find(c.expected) != std::string::npos);
  }
}

TEST_CASE("empty and malformed inputs give a page or an error, never a crash") {
  // Empty events and an empty summary object: a page with four empty charts.
  const std::string html = Render({{"empty.conf", "", "{}"}});
  CHECK(Count(html, "<svg") == 4);
  CHECK(html.find("no node or bind events") != std::string::npos);
  // Blank lines and CRLF endings are tolerated.
  Render({{"crlf", "\r\n" + Submit(0, "a/b", 1, 1) + "\r\n\n", "{}"}});

  CHECK(RenderHtmlReport("r", {}).status().code() == absl::StatusCode::kInvalidArgument);
  for (std::string_view summary : {"", "[]", "{\"jobs\":{}}", "{\"cluster\":{\"makespan\":\"1h\"}}",
                                   "{\"queues\":[{\"share\":[[1,2]]}]}", "{\"jobs\":[3]}"}) {
    absl::StatusOr<std::string> result =
        RenderHtmlReport("r", {{"s", "", std::string(summary)}});
    INFO(summary);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(result.status().message()).find("summary.json") != std::string::npos);
  }
  // Nulls are "not applicable", not errors.
  Render({{"nulls", "",
           R"({"cluster":{"makespan":null},"jobs":[{"job":"a/b","start":null,"jct":null}]})"}});
}

TEST_CASE("measured jobs get a throughput chart, and the cluster's GPU goodput a row") {
  std::string summary = HalfTimeSummary();
  summary.replace(summary.find(R"("evictions":0,"sessions")"), 0, R"("gpuHours":2,"goodput":0.875,)");
  summary.replace(summary.find(R"("avgRunning":4})"), std::string(R"("avgRunning":4})").size(),
                  R"("avgRunning":4,"gpuHours":2,"goodput":0.875,"reported":"4=40",)"
                  R"("throughput":[[0,40],[50,0]]})");
  const std::string html = Render({{"goodput.conf", HalfTimeEvents(), summary}});
  CHECK(Count(html, "<svg") == 5);
  CHECK(html.find("Throughput per measured job") != std::string::npos);
  CHECK(html.find("default/train (peak 4 workers), goodput 87.5%") != std::string::npos);
  CHECK(html.find("<th>GPU goodput</th>") != std::string::npos);
  // Without measured jobs: the four charts, no goodput row.
  const std::string plain = Render({{"plain.conf", HalfTimeEvents(), HalfTimeSummary()}});
  CHECK(Count(plain, "<svg") == 4);
  CHECK(plain.find("GPU goodput") == std::string::npos);
  // A malformed series is an error naming the field.
  std::string bad = summary;
  bad.replace(bad.find("[[0,40],[50,0]]"), std::string("[[0,40],[50,0]]").size(), "[[0]]");
  absl::StatusOr<std::string> result = RenderHtmlReport("r", {{"s", "", bad}});
  REQUIRE_FALSE(result.ok());
  CHECK(std::string(result.status().message()).find("jobs[0]: \"throughput[0]\" must be [t, rate] (two numbers)") != std::string::npos);
}

TEST_CASE("with a topology, whole free domains per tier get a chart over time") {
  std::string summary = HalfTimeSummary();
  summary.replace(summary.find(R"("evictions":0,"sessions")"), 0,
                  R"("freeDomains":{"1":1.5},"freeDomainSeries":{"1":[[0,2],[50,1]],"2":[[0,1],[50,0]]},)");
  const std::string html = Render({{"topology.conf", HalfTimeEvents(), summary}});
  CHECK(Count(html, "<svg") == 5);
  CHECK(html.find("Whole free domains per tier") != std::string::npos);
  CHECK(html.find("tier 2") != std::string::npos);
  CHECK(Render({{"plain.conf", HalfTimeEvents(), HalfTimeSummary()}}).find("Whole free domains") == std::string::npos);
  // A malformed series is an error naming the field.
  std::string bad = summary;
  bad.replace(bad.find("[50,1]"), 6, "[50]");
  absl::StatusOr<std::string> result = RenderHtmlReport("r", {{"bad", HalfTimeEvents(), bad}});
  REQUIRE_FALSE(result.ok());
  CHECK(std::string(result.status().message()).find("freeDomainSeries.1[1]") != std::string::npos);
}

TEST_CASE("each queue's waiting time is shown by reason kind, the longest first") {
  const std::string summary = R"({"cluster":{},"jobs":[],"queues":[{"queue":"team-a","averageWait":10,)"
                              R"("waitByKind":{"no-fit":60,"queue-limit":3600},"share":[]}]})";
  const std::string html = Render({{"why", "", summary}});
  CHECK(html.find("<th>waiting time by reason</th>") != std::string::npos);
  CHECK(html.find("<td class=\"waits\">queue-limit 1h 00m, no-fit 1m 00s</td>") != std::string::npos);
  absl::StatusOr<std::string> bad =
      RenderHtmlReport("r", {{"s", "", R"({"queues":[{"queue":"q","waitByKind":{"no-fit":"long"}}]})"}});
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("\"waitByKind\".no-fit must be a number") != std::string::npos);
}

TEST_CASE("compare puts every configuration in the page") {
  const std::string html = Render({{"gang.conf", HalfTimeEvents(), HalfTimeSummary()},
                                   {"elastic.conf", HalfTimeEvents(), HalfTimeSummary()}});
  CHECK(html.find("<th>gang.conf</th><th>elastic.conf</th>") != std::string::npos);
  CHECK(Count(html, "<svg") == 8);
  CHECK(Count(html, "<figcaption>gang.conf</figcaption>") == 4);
  CHECK(Count(html, "<figcaption>elastic.conf</figcaption>") == 4);
}

TEST_CASE("large runs stay small: series are downsampled") {
  // 100k events: one 1000-GPU node, 50k pods bound and completed one after another.
  std::string events = Node(0, "a", R"({"nvidia.com/gpu":1000})");
  const std::string_view one = R"({"nvidia.com/gpu":1})";
  for (int i = 0; i < 50000; ++i) {
    const std::string pod = StrCat("default/j", i % 40, "-w-", i);
    const std::string job = StrCat("default/j", i % 40);
    events += PodEvent(i, "bind", pod, job, one);
    events += PodEvent(i + 0.5, "pod-complete", pod, job, one);
  }
  const std::string html = Render({{"big", events, "{}"}});
  // 12 job lines + 1 resource line of at most ~2000 path commands each, and the rest.
  CHECK(html.size() < 600 * 1024);
  CHECK(html.find("the 12 of 40 jobs with the most running pods") != std::string::npos);
  // One GPU of 1000 half the time: 0.05%.
  CHECK(html.find("nvidia.com/gpu (mean 0.1%)") != std::string::npos);
}

TEST_CASE("durations read as people write them") {
  CHECK(FormatHumanDuration(0) == "0s");
  CHECK(FormatHumanDuration(4.24) == "4.2s");
  CHECK(FormatHumanDuration(45) == "45s");
  CHECK(FormatHumanDuration(59.7) == "1m 00s");
  CHECK(FormatHumanDuration(725) == "12m 05s");
  CHECK(FormatHumanDuration(3599.7) == "1h 00m");
  CHECK(FormatHumanDuration(7380) == "2h 03m");
  CHECK(FormatHumanDuration(100000) == "1d 04h");
  CHECK(FormatHumanDuration(-90) == "-1m 30s");
  CHECK(FormatHumanDuration(1e300) == "1.16e+295d");  // absurd input, still no overflow
}

// Queue batch runs lab/batch on 4 GPUs and loses them one kind of eviction after another; queue
// prod's lab/urgent loses a pod when its node goes. The run ends at t=1000, so the report's
// 96 time buckets are 10.4s wide and every eviction time below has a bucket of its own.
std::string EvictionEvents() {
  std::string events = Node(0, "gpu-a", R"({"nvidia.com/gpu":8})");
  const std::string_view one = R"({"nvidia.com/gpu":1})";
  events += Submit(0, "lab/batch", 1, 4, "batch");
  for (int i = 0; i < 4; ++i) {
    events += PodEvent(0, "bind", StrCat("lab/batch-w-", i), "lab/batch", one);
  }
  events += Submit(100, "lab/urgent", 2, 2, "prod");
  events += Evict(100, "lab/batch-w-3", "lab/batch", "reclaimed-for lab/urgent");
  events += Evict(100, "lab/batch-w-2", "lab/batch", "reclaimed-for lab/urgent");
  events += PodEvent(100, "bind", "lab/urgent-w-0", "lab/urgent", one);
  events += PodEvent(100, "bind", "lab/urgent-w-1", "lab/urgent", one);
  events += Evict(400, "lab/batch-w-1", "lab/batch", "preempted-for lab/vip");
  events += Evict(700, "lab/batch-w-0", "lab/batch", "elastic-preempted-for lab/urgent");
  events += Evict(900, "lab/urgent-w-1", "lab/urgent", "node-removed gpu-a");
  return events;
}

constexpr std::string_view kEvictionSummary =
    R"({"cluster":{"makespan":1000,"evictions":5},"queues":[)"
    R"({"queue":"batch","share":[[0,0.5,0.5],[100,0.25,0.5],[400,0.125,0.5],[700,0,0.5]]},)"
    R"({"queue":"prod","share":[[100,0.25,0.5],[900,0.125,0.5]]}]})";

TEST_CASE("evictions are marked on their queue's share line, one shape per kind") {
  const std::string html = Render({{"x", EvictionEvents(), std::string(kEvictionSummary)}});
  // Two pods reclaimed at one instant share a mark; every other kind has one eviction.
  CHECK(Count(html, "<g class=\"mark ev-reclaim\">") == 1);
  CHECK(Count(html, "<g class=\"mark ev-preempt\">") == 1);
  CHECK(Count(html, "<g class=\"mark ev-elastic\">") == 1);
  CHECK(Count(html, "<g class=\"mark ev-other\">") == 1);
  // The shape tells the kind; the colour is the queue's line (batch first, prod second).
  const std::string_view reclaim = FirstMark(html, "ev-reclaim");
  CHECK(reclaim.find("<title>batch, 1m 40s: 2 pods reclaimed-for lab/urgent</title>") !=
        std::string_view::npos);
  CHECK(reclaim.find("<path d=") != std::string_view::npos);
  CHECK(reclaim.find("fill=\"#1f77b4\"") != std::string_view::npos);
  const std::string_view preempt = FirstMark(html, "ev-preempt");
  CHECK(preempt.find("6m 40s: 1 pod preempted-for lab/vip") != std::string_view::npos);
  CHECK(preempt.find("<rect") != std::string_view::npos);
  const std::string_view elastic = FirstMark(html, "ev-elastic");
  CHECK(elastic.find("elastic-preempted-for lab/urgent") != std::string_view::npos);
  CHECK(elastic.find("<circle") != std::string_view::npos);
  const std::string_view other = FirstMark(html, "ev-other");
  CHECK(other.find("<title>prod, 15m 00s: 1 pod node-removed gpu-a</title>") !=
        std::string_view::npos);
  CHECK(other.find("stroke=\"#ff7f0e\"") != std::string_view::npos);
  // x = left margin + t / horizon * plot width = 64 + 100 / 1000 * 558 = 119.8; the triangle
  // spans 4.5 either side of it.
  CHECK(reclaim.find("<path d=\"M115.3 ") != std::string_view::npos);
  // One legend entry per kind, with its count.
  CHECK(html.find(">evicted: reclaim (2)</text>") != std::string::npos);
  CHECK(html.find(">evicted: other (1)</text>") != std::string::npos);
}

TEST_CASE("the evictions table lists time, victim, queue, kind and reason") {
  const std::string html = Render({{"x", EvictionEvents(), std::string(kEvictionSummary)}});
  const std::string_view table = EvictionTable(html);
  REQUIRE(!table.empty());
  CHECK(html.find("<p>5 evictions: <span class=\"ev-reclaim\">\u25BC</span> 2 reclaim, "
                  "<span class=\"ev-preempt\">\u25A0</span> 1 preempt, "
                  "<span class=\"ev-elastic\">\u25CF</span> 1 elastic, "
                  "<span class=\"ev-other\">\u2715</span> 1 other.") != std::string::npos);
  CHECK(table.find("<tr><td class=\"num\">1m 40s</td><td>lab/batch</td><td>batch</td>"
                   "<td class=\"num\">2</td><td>lab/batch-w-3, lab/batch-w-2</td>"
                   "<td class=\"ev-reclaim\">\u25BC reclaim</td>"
                   "<td>reclaimed-for lab/urgent</td></tr>") != std::string_view::npos);
  CHECK(table.find("<td>lab/batch-w-1</td><td class=\"ev-preempt\">\u25A0 preempt</td>"
                   "<td>preempted-for lab/vip</td>") != std::string_view::npos);
  CHECK(table.find("<td class=\"ev-elastic\">\u25CF elastic</td>"
                   "<td>elastic-preempted-for lab/urgent</td>") != std::string_view::npos);
  CHECK(table.find("<tr><td class=\"num\">15m 00s</td><td>lab/urgent</td><td>prod</td>") !=
        std::string_view::npos);
  // In time order, the header and a row per (time, job, reason).
  CHECK(Count(table, "<tr>") == 5);
  CHECK(table.find("reclaimed-for") < table.find("preempted-for lab/vip"));
  CHECK(html.find("more rows") == std::string::npos);

  // A comparison has a table per run.
  const std::string both = Render({{"a", EvictionEvents(), std::string(kEvictionSummary)},
                                   {"b", EvictionEvents(), std::string(kEvictionSummary)}});
  CHECK(Count(both, "<table class=\"evictions\">") == 2);
}

TEST_CASE("an evicted job without a submit event takes its queue from summary.json") {
  std::string events = Evict(10, "lab/old-w-0", "lab/old", "preempted-for lab/vip");
  const std::string html = Render(
      {{"x", events,
        R"({"cluster":{"makespan":100},"jobs":[{"job":"lab/old","queue":"legacy"}],)"
        R"("queues":[{"queue":"legacy","share":[[0,0.5,0.5]]}]})"}});
  CHECK(EvictionTable(html).find("<td>lab/old</td><td>legacy</td>") != std::string_view::npos);
  CHECK(FirstMark(html, "ev-preempt").find("<title>legacy, 10s: 1 pod preempted-for lab/vip") !=
        std::string_view::npos);
}

TEST_CASE("a run without evictions says so and marks nothing") {
  const std::string html = Render({{"x", HalfTimeEvents(), HalfTimeSummary()}});
  CHECK(html.find("<h2>Evictions</h2>") != std::string::npos);
  CHECK(html.find("No evictions.") != std::string::npos);
  CHECK(EvictionTable(html).empty());
  CHECK(Count(html, "class=\"mark") == 0);
  CHECK(html.find("evicted:") == std::string::npos);
}

TEST_CASE("ten thousand evictions make a bounded table and bounded marks") {
  // 1000 sessions 10s apart each evict 10 pods of one job: job s % 20 (queue a or b), reason
  // s % 3. A (job, reason) pair comes back every 60 sessions = 600s, later than the 10000s / 96
  // = 104s a row spans, so every session is a row of its own: 1000 rows of 10 evictions.
  const char* verbs[] = {"reclaimed-for", "preempted-for", "elastic-preempted-for"};
  std::string events;
  for (int j = 0; j < 20; ++j) events += Submit(0, StrCat("ns/j", j), 1, 10, j % 2 ? "b" : "a");
  for (int s = 0; s < 1000; ++s) {
    const std::string job = StrCat("ns/j", s % 20);
    for (int p = 0; p < 10; ++p) {
      events += Evict(s * 10, StrCat(job, "-w-", s, "-", p), job, StrCat(verbs[s % 3], " ns/w"));
    }
  }
  const std::string html = Render(
      {{"big", events,
        R"({"cluster":{"makespan":10000},"queues":[{"queue":"a","share":[[0,0.5,0.5]]},)"
        R"({"queue":"b","share":[[0,0.25,0.5]]}]})"}});
  CHECK(html.find("<p>10,000 evictions: ") != std::string::npos);
  // The first 200 rows and a line for the rest: 800 rows of 10 evictions.
  CHECK(Count(EvictionTable(html), "<tr>") == 1 + 200);
  CHECK(html.find("800 more rows (8,000 evictions) are not shown") != std::string::npos);
  // A row names a few pods and counts the rest.
  CHECK(html.find("<td>ns/j0-w-0-0, ns/j0-w-0-1, ns/j0-w-0-2 and 7 more</td>") !=
        std::string::npos);
  // One mark per queue, time bucket and kind: the (queue, kind) pairs come round every 6
  // sessions = 60s, so every 104s bucket has all of them: 2 * 96 * 3 marks.
  size_t marks = 0;
  for (std::string_view kind : {"ev-reclaim", "ev-preempt", "ev-elastic"}) {
    marks += Count(html, StrCat("<g class=\"mark ", kind, "\">"));
  }
  CHECK(marks == 2 * 96 * 3);
  CHECK(html.size() < 300 * 1024);
}

// ---------------------------------------------------------------------------------------------
// Manual check, hidden from the default run:
//   build-report/tests/report_test "[.sample]"  -> /tmp/report-sample.html and
//   /tmp/report-compare.html, to open in a browser or screenshot with headless chromium.

struct SampleJob {
  std::string name, queue;
  double submit;
  int min, max;
  double duration;
};

// A small deterministic two-queue GPU cluster: jobs start at min, grow while GPUs are free, and
// (when `elastic`) lose their extra workers to later jobs. Not a scheduler, just plausible data.
ReportRun SampleRun(std::string_view label, bool elastic) {
  std::vector<SampleJob> jobs;
  for (int i = 0; i < 16; ++i) {
    jobs.push_back({StrCat(i % 3 == 0 ? "vision" : "nlp", "/train-", i),
                    i % 3 == 0 ? "vision" : "research", i * 600.0, 2 + i % 3, 4 + (i % 4) * 2,
                    3600.0 + (i % 5) * 900});
  }
  constexpr int kGpus = 32;
  std::string events;
  for (int n = 0; n < 4; ++n) {
    events += Node(0, StrCat("gpu-", n),
                   R"({"cpu":64000,"memory":549755813888,"nvidia.com/gpu":8})");
  }
  std::string summary_jobs;
  struct Running {
    int job;
    int pods;
    double start, remaining_work;
  };
  std::vector<Running> running;
  std::vector<int> waiting;
  std::vector<double> starts(jobs.size(), -1), ends(jobs.size(), -1);
  std::vector<int> evictions(jobs.size(), 0);
  size_t next = 0;
  int free = kGpus;
  const std::string worker = R"({"cpu":6000,"memory":34359738368,"nvidia.com/gpu":1})";
  auto bind = [&](double t, int job, int index) {
    const std::string& name = jobs[job].name;
    events += PodEvent(t, "bind", StrCat(name, "-worker-", index), name, worker);
  };
  for (double t = 0; t < 40000 && (next < jobs.size() || !running.empty() || !waiting.empty());
       t += 60) {
    while (next < jobs.size() && jobs[next].submit <= t) {
      events += Submit(t, jobs[next].name, jobs[next].min, jobs[next].max);
      waiting.push_back(static_cast<int>(next++));
    }
    // Progress and completion.
    for (size_t r = 0; r < running.size();) {
      running[r].remaining_work -= 60.0 * running[r].pods / jobs[running[r].job].min;
      if (running[r].remaining_work <= 0) {
        const int job = running[r].job;
        for (int p = 0; p < running[r].pods; ++p) {
          events += PodEvent(t, "pod-complete", StrCat(jobs[job].name, "-worker-", p),
                             jobs[job].name, worker);
        }
        events += StrCat("{\"t\":", t, ",\"type\":\"job-complete\",\"job\":\"", jobs[job].name,
                         "\"}\n");
        free += running[r].pods;
        ends[job] = t;
        running.erase(running.begin() + static_cast<long>(r));
      } else {
        ++r;
      }
    }
    // Elastic shrink: give waiting jobs their minimum from other jobs' extra workers.
    if (elastic && !waiting.empty()) {
      int need = jobs[waiting.front()].min - free;
      for (Running& r : running) {
        while (need > 0 && r.pods > jobs[r.job].min) {
          --r.pods;
          events += StrCat("{\"t\":", t, ",\"type\":\"evict\",\"pod\":\"", jobs[r.job].name,
                           "-worker-", r.pods, "\",\"job\":\"", jobs[r.job].name,
                           "\",\"node\":\"gpu-0\",\"reason\":\"elastic-preempted-for ",
                           jobs[waiting.front()].name, "\",\"requests\":", worker, "}\n");
          ++evictions[r.job];
          ++free;
          --need;
        }
      }
    }
    // Gang start at min, in submit order.
    while (!waiting.empty() && jobs[waiting.front()].min <= free) {
      const int job = waiting.front();
      waiting.erase(waiting.begin());
      for (int p = 0; p < jobs[job].min; ++p) bind(t, job, p);
      events += StrCat("{\"t\":", t, ",\"type\":\"job-start\",\"job\":\"", jobs[job].name, "\"}\n");
      free -= jobs[job].min;
      starts[job] = t;
      running.push_back({job, jobs[job].min, t, jobs[job].duration});
    }
    // Grow into free GPUs.
    for (Running& r : running) {
      while (free > 0 && r.pods < jobs[r.job].max && (elastic || waiting.empty())) {
        bind(t, r.job, r.pods++);
        --free;
      }
    }
  }
  double makespan = 0, jct_sum = 0, wait_sum = 0;
  int completed = 0;
  std::string jobs_json;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const bool done = ends[j] >= 0;
    if (done) {
      makespan = std::max(makespan, ends[j]);
      jct_sum += ends[j] - jobs[j].submit;
      wait_sum += starts[j] - jobs[j].submit;
      ++completed;
    }
    auto or_null = [](double v) { return v < 0 ? std::string("null") : StrCat(v); };
    StrAppend(&jobs_json, j ? "," : "", "{\"job\":\"", jobs[j].name, "\",\"queue\":\"",
              jobs[j].queue, "\",\"submit\":", jobs[j].submit, ",\"start\":", or_null(starts[j]),
              ",\"end\":", or_null(ends[j]),
              ",\"jct\":", done ? StrCat(ends[j] - jobs[j].submit) : "null",
              ",\"wait\":", starts[j] >= 0 ? StrCat(starts[j] - jobs[j].submit) : "null",
              ",\"min\":", jobs[j].min, ",\"max\":", jobs[j].max,
              ",\"evictions\":", evictions[j], ",\"avgRunning\":", jobs[j].min + 0.5, "}");
  }
  std::string share_research, share_vision;
  for (int t = 0; t <= makespan; t += 600) {
    const double wave = (t / 600) % 7 / 10.0;
    StrAppend(&share_research, t ? "," : "", "[", t, ",", 0.3 + wave * (elastic ? 0.6 : 0.4),
              ",0.6]");
    StrAppend(&share_vision, t ? "," : "", "[", t, ",", 0.35 - wave * 0.3, ",0.4]");
  }
  const std::string summary = StrCat(
      R"({"scenario":"two-departments","config":")", label, R"(","cluster":{"makespan":)",
      makespan, R"(,"jobs":)", jobs.size(), R"(,"completedJobs":)", completed,
      R"(,"jct":{"mean":)", jct_sum / completed, R"(,"p50":5400,"p95":9000},"wait":{"mean":)",
      wait_sum / completed, R"(,"p50":600,"p95":3000},"utilization":{"cpu":0.41,"memory":0.3,)",
      R"("nvidia.com/gpu":)", elastic ? 0.93 : 0.78, R"(},"evictions":)", elastic ? 12 : 0,
      R"(,"sessions":)", makespan, R"(,"sessionMicros":{"p50":850,"p99":4200}},"jobs":[)",
      jobs_json, R"(],"queues":[{"queue":"research","averageWait":900,"share":[)",
      share_research, R"(]},{"queue":"vision","averageWait":1300,"share":[)", share_vision,
      "]}]}");
  return {std::string(label), events, summary};
}

TEST_CASE("sample reports for a look in a browser", "[.sample]") {
  for (const auto& [path, runs] :
       std::vector<std::pair<std::string, std::vector<ReportRun>>>{
           {"/tmp/report-sample.html", {SampleRun("elastic.conf", true)}},
           {"/tmp/report-compare.html",
            {SampleRun("gang.conf", false), SampleRun("elastic.conf", true)}}}) {
    const std::string html = Render(runs);
    std::ofstream(path) << html;
    std::printf("wrote %s (%zu bytes)\n", path.c_str(), html.size());
  }
}

}  // namespace
}  // namespace lahar
