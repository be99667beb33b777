#include "scheduler/sim/report/report.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/status/status.h"
#include "api/strings.h"

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
std::string Submit(double t, std::string_view job, int min, int max) {
  return StrCat("{\"t\":", t, ",\"type\":\"submit\",\"job\":\"", job,
                "\",\"queue\":\"research\",\"min\":", min, ",\"max\":", max, "}\n");
}
std::string PodEvent(double t, std::string_view type, std::string_view pod, std::string_view job,
                     std::string_view requests) {
  return StrCat("{\"t\":", t, ",\"type\":\"", type, "\",\"pod\":\"", pod, "\",\"job\":\"", job,
                "\",\"node\":\"gpu-a\",\"requests\":", requests, "}\n");
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
                           "\",\"node\":\"gpu-0\",\"reason\":\"elastic-preempted\",\"requests\":",
                           worker, "}\n");
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
