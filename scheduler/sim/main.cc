// lahar-sim: runs Lahar's scheduler on a simulated cluster (spec section 6).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <chrono>
#include <unistd.h>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "api/decode.h"
#include "api/log.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "api/version.h"
#include "scheduler/builtins.h"
#include "scheduler/framework/volcano.h"
#include "scheduler/sim/report/events.h"
#include "scheduler/sim/report/report.h"
#include "scheduler/sim/scenario.h"
#include "scheduler/sim/simulator.h"
#include "scheduler/sim/summary_table.h"

namespace lahar {
namespace {

// Writes events.jsonl and hands the same bytes to the report's reader, so that the run's
// report is drawn without reading a long run's file back. The first error of the reader is
// kept for the report to return.
class EventsTee : public std::streambuf {
 public:
  EventsTee(std::ostream& file, report_internal::EventsInPieces& report) : file_(file), report_(report) {}
  const absl::Status& report_status() const { return report_status_; }

 protected:
  std::streamsize xsputn(const char* bytes, std::streamsize count) override {
    if (report_status_.ok()) report_status_ = report_.Write({bytes, static_cast<size_t>(count)});
    return file_.write(bytes, count) ? count : 0;
  }
  int overflow(int c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    const char byte = traits_type::to_char_type(c);
    return xsputn(&byte, 1) == 1 ? c : traits_type::eof();
  }
  int sync() override { return file_.flush() ? 0 : -1; }

 private:
  std::ostream& file_;
  report_internal::EventsInPieces& report_;
  absl::Status report_status_;
};

constexpr char kUsage[] = R"(Usage:
  lahar-sim run FILE [--config CONF] [--out DIR] [--until DURATION] [--no-skip] [-v LEVEL]
  lahar-sim compare FILE --config A.conf --config B.conf [...] [--out DIR] [--until DURATION]
  lahar-sim explain FILE JOB [--at DURATION] [--config CONF]
  lahar-sim plugins

Runs Lahar's scheduler (the same actions, plugins and configuration as lahar-scheduler) on a
simulated cluster in simulated time, and reports what happened.

FILE is a scenario (nodes, queues, jobs, events) or a snapshot of a live cluster (the output of
`kubectl get nodes,pods,podgroups,queues,priorityclasses -A -o yaml`); lahar-sim tells them
apart by content.

Options:
  --config CONF     volcano-scheduler.conf to use (a ConfigMap holding one works too). Without
                    it: the scenario's own `scheduler:` block, else the default configuration.
                    `compare` takes it two or more times.
  --out DIR         write events.jsonl, summary.json and report.html to DIR (compare: one
                    folder per configuration and one report.html side by side).
  --until DURATION  stop at this simulated time (e.g. 8h, 1h30m, 3600).
  --at DURATION     explain: the simulated time to explain the job at (as --until).
  --no-skip         try every waiting job in every session, even when nothing it depends on
                    changed since it last failed (for checking: events are identical, only the
                    run is slower).
  -v LEVEL          log verbosity on stderr (0 quiet, 1 info, 2 every decision).
  --version         print the version and exit.
  -h, --help        this text.

`explain` runs FILE up to --at (default: until nothing more can happen) and says what JOB
(namespace/name; a bare name means namespace default) is doing then: why it waits (spec 7)
and what would let it start.

`plugins` prints, as Markdown, every Volcano action and plugin with whether Lahar has it, the
arguments each takes, and Volcano's enable flags (the README's compatibility table).
)";

struct Flags {
  std::string command;
  std::string file;
  std::vector<std::string> configs;
  std::string out;
  std::string job;  // explain
  Millis until = -1;
  bool no_skip = false;
};

absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags flags;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string_view name) -> absl::StatusOr<std::string> {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) return arg.substr(eq + 1);
      if (i + 1 >= argc) return absl::InvalidArgumentError(StrCat(name, " needs a value"));
      return std::string(argv[++i]);
    };
    auto is = [&](std::string_view name) { return arg == name || arg.rfind(StrCat(name, "="), 0) == 0; };
    if (arg == "-h" || arg == "--help" || arg == "help") {
      flags.command = "help";
      return flags;
    } else if (arg == "--version" || arg == "version") {
      flags.command = "version";
      return flags;
    } else if (is("--config")) {
      ASSIGN_OR_RETURN(std::string v, value("--config"));
      flags.configs.push_back(v);
    } else if (is("--out")) {
      ASSIGN_OR_RETURN(flags.out, value("--out"));
    } else if (is("--until") || is("--at")) {
      const std::string name = arg.substr(0, arg.find('='));
      ASSIGN_OR_RETURN(std::string v, value(name));
      auto d = ParseDuration(v);
      if (!d.ok()) return absl::InvalidArgumentError(StrCat(name, ": ", d.status().message()));
      flags.until = *d;
    } else if (arg == "--no-skip") {
      flags.no_skip = true;
    } else if (is("-v") || is("--v") || is("--log-level")) {
      ASSIGN_OR_RETURN(std::string v, value("-v"));
      int level;
      if (!absl::SimpleAtoi(v, &level) || level < 0) return absl::InvalidArgumentError(StrCat("-v: bad level \"", v, "\""));
      SetLogVerbosity(level);
    } else if (!arg.empty() && arg[0] == '-') {
      return absl::InvalidArgumentError(StrCat("unknown flag ", arg, " (see --help)"));
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.empty()) return absl::InvalidArgumentError("missing command: run, compare or plugins (see --help)");
  flags.command = positional[0];
  if (flags.command == "plugins" && positional.size() == 1) return flags;
  if (flags.command != "run" && flags.command != "compare" && flags.command != "plugins" && flags.command != "explain") {
    return absl::InvalidArgumentError(
        StrCat("unknown command \"", flags.command, "\" (want run, compare, explain or plugins)"));
  }
  if (flags.command == "explain") {
    if (positional.size() != 3) return absl::InvalidArgumentError("explain takes a FILE and a JOB (namespace/name)");
    flags.job = positional[2].find('/') == std::string::npos ? StrCat("default/", positional[2]) : positional[2];
    if (flags.configs.size() > 1) return absl::InvalidArgumentError("explain takes at most one --config");
    positional.pop_back();
  }
  if (positional.size() != 2) return absl::InvalidArgumentError(StrCat(flags.command, " takes exactly one FILE"));
  flags.file = positional[1];
  if (flags.command == "run" && flags.configs.size() > 1) {
    return absl::InvalidArgumentError("run takes at most one --config (use compare for several)");
  }
  if (flags.command == "compare" && flags.configs.size() < 2) {
    return absl::InvalidArgumentError("compare needs at least two --config files");
  }
  return flags;
}

// Reads a volcano-scheduler.conf, or the first data entry of a ConfigMap that holds one.
// Keys the configuration sets that Lahar accepts without acting on them (Volcano's).
void PrintWarnings(const SchedulerConfig& config, std::string_view where) {
  for (const std::string& warning : config.warnings) std::cerr << "warning: " << where << ": " << warning << "\n";
}

absl::StatusOr<SchedulerConfig> LoadConfigFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  auto docs = ParseYamlDocuments(text);
  if (docs.ok() && docs->size() == 1 && (*docs)[0].IsMap() && (*docs)[0]["kind"].IsDefined() &&
      (*docs)[0]["kind"].IsScalar() && (*docs)[0]["kind"].Scalar() == "ConfigMap") {
    const YAML::Node data = (*docs)[0]["data"];
    if (!data.IsMap() || data.size() == 0) return absl::InvalidArgumentError(StrCat(path, ": ConfigMap has no data"));
    text = data.begin()->second.Scalar();
  }
  auto config = ParseSchedulerConfig(text, BuiltinRegistry());
  if (!config.ok()) return Annotate(config.status(), path);
  PrintWarnings(*config, path);
  return config;
}

std::string Label(const std::string& path, std::map<std::string, int>& used) {
  std::string label = std::filesystem::path(path).filename().string();
  if (label.empty()) label = "config";
  int n = ++used[label];
  return n == 1 ? label : StrCat(label, "-", n);
}

absl::Status WriteFile(const std::filesystem::path& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(StrCat("cannot write ", path.string()));
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out) return absl::DataLossError(StrCat("error writing ", path.string()));
  return absl::OkStatus();
}

// "\r<label>: 3d04h simulated, 1200/82247 jobs done, 9.1 sim-h/s, ~41s left" on the terminal.
// The rate is over the last report's interval (`last`), since a trace's quiet stretches pass fast.
void PrintProgress(const std::string& label, const SimProgress& p, SimProgress& last) {
  const double simulated = static_cast<double>(p.now) / 1000.0;
  const double interval = p.wall_seconds - last.wall_seconds;
  const double rate = interval > 0 ? static_cast<double>(p.now - last.now) / 1000.0 / interval : 0;
  last = p;
  std::string left = "?";
  if (p.until > 0 && rate > 0) {
    left = HumanSeconds(std::max(0.0, (static_cast<double>(p.until) / 1000.0 - simulated) / rate));
  } else if (p.jobs_done > 0) {
    left = HumanSeconds(p.wall_seconds * (p.jobs - p.jobs_done) / p.jobs_done);
  }
  std::cerr << "\r\033[K"
            << StrFormat("%s: %s simulated, %d/%d jobs done, %.1f sim-h/s, ~%s left", label.c_str(),
                         HumanSeconds(simulated).c_str(), p.jobs_done, p.jobs, rate / 3600, left.c_str())
            << std::flush;
}

absl::Status Main(const Flags& flags) {
  ASSIGN_OR_RETURN(SimInput input, LoadSimInputFile(flags.file));
  std::vector<std::pair<std::string, SchedulerConfig>> configs;
  std::map<std::string, int> labels;
  if (flags.configs.empty()) {
    if (input.scheduler) {
      auto config = ParseSchedulerConfigNode(*input.scheduler, BuiltinRegistry());
      if (!config.ok()) return Annotate(config.status(), StrCat(flags.file, ": scheduler"));
      PrintWarnings(*config, StrCat(flags.file, ": scheduler"));
      configs.emplace_back("scenario", std::move(*config));
    } else {
      ASSIGN_OR_RETURN(SchedulerConfig config, ParseSchedulerConfig(DefaultSchedulerConfigYaml(), BuiltinRegistry()));
      configs.emplace_back("default", std::move(config));
    }
  } else {
    for (const std::string& path : flags.configs) {
      ASSIGN_OR_RETURN(SchedulerConfig config, LoadConfigFile(path));
      configs.emplace_back(Label(path, labels), std::move(config));
    }
  }

  std::vector<SimRun> runs;
  std::vector<std::filesystem::path> run_dirs;  // with --out: where each run's files go
  std::vector<std::shared_ptr<report_internal::EventsInPieces>> events_as_written;  // per run
  const bool terminal = isatty(STDERR_FILENO) != 0;
  const bool write_out = !flags.out.empty() && flags.command != "explain";
  for (const auto& [label, config] : configs) {
    SimOptions options;
    // events.jsonl is written as the run goes (a long trace makes hundreds of MB of it), and
    // read by the report as it is.
    std::ofstream events_file;
    auto events_read = std::make_shared<report_internal::EventsInPieces>();
    EventsTee tee(events_file, *events_read);
    std::ostream events_out(&tee);
    options.keep_events = false;
    if (write_out) {
      const std::filesystem::path out(flags.out);
      const std::filesystem::path dir = flags.command == "compare" ? out / label : out;
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec) return absl::PermissionDeniedError(StrCat("cannot create ", dir.string(), ": ", ec.message()));
      events_file.open(dir / "events.jsonl", std::ios::binary | std::ios::trunc);
      if (!events_file) return absl::PermissionDeniedError(StrCat("cannot write ", (dir / "events.jsonl").string()));
      options.events_out = &events_out;
      run_dirs.push_back(dir);
    }
    options.until = flags.until;
    options.skip_unchanged = !flags.no_skip;
    options.config_label = label;
    options.explain_job = flags.job;
    SimProgress last;
    const std::string& name = label;  // clang before 16 cannot capture a structured binding
    if (terminal) options.progress = [&name, &last](const SimProgress& p) { PrintProgress(name, p, last); };
    const auto started = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(SimRun run, RunSimulation(input, config, BuiltinRegistry(), options));
    if (write_out) {
      events_file.close();
      if (!events_file) return absl::DataLossError(StrCat("writing ", (run_dirs.back() / "events.jsonl").string(), " failed"));
      RETURN_IF_ERROR(tee.report_status());
      events_as_written.push_back(std::move(events_read));
    }
    if (flags.command == "explain") {
      if (terminal) std::cerr << "\r\033[K";
      if (!run.explanation) {
        return absl::NotFoundError(StrCat("no job ", flags.job, " in ", flags.file,
                                          " (jobs are named namespace/name, as in events.jsonl)"));
      }
      std::cout << StrFormat("at %s: ", HumanSeconds(run.figures.end_time).c_str()) << FormatExplanation(*run.explanation);
      return absl::OkStatus();
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (terminal) std::cerr << "\r\033[K";  // clear the progress line
    // One line per run, whatever stderr is: how much was simulated, how fast.
    std::cerr << StrFormat("lahar-sim: %s: %s simulated in %.1fs (%.0fx real time), %d/%d jobs completed, %lld sessions, "
                           "%lld of %lld evicting runs skipped as unchanged, %lld sessions judged parked jobs by "
                           "their class (%lld of them run again with parked jobs back)\n",
                           label.c_str(), HumanSeconds(run.figures.end_time).c_str(), wall,
                           wall > 0 ? run.figures.end_time / wall : 0.0, run.figures.completed_jobs, run.figures.jobs,
                           static_cast<long long>(run.figures.sessions),
                           static_cast<long long>(run.figures.skipped_runs),
                           static_cast<long long>(run.figures.skipped_runs + run.figures.tried_runs),
                           static_cast<long long>(run.figures.parked_sessions),
                           static_cast<long long>(run.figures.rerun_sessions));
    if (run.figures.stalled) {
      // Nothing left to happen could start them: say why they wait, per kind (spec 7).
      std::string kinds;
      for (const auto& [kind, count] : run.figures.never_started_by_kind) StrAppend(&kinds, kinds.empty() ? "" : ", ", kind, " ", count);
      std::cerr << StrFormat("lahar-sim: %s: stopped with %d %s that can never start (nothing left can change): %s\n",
                             label.c_str(), run.figures.never_started, run.figures.never_started == 1 ? "job" : "jobs",
                             kinds.c_str());
      if (!run.figures.most_common_reason.empty()) {
        std::cerr << "lahar-sim: " << label << ": most common reason: " << run.figures.most_common_reason << "\n";
      }
    }
    runs.push_back(std::move(run));
  }
  std::cout << FormatSummaryTable(input.name, runs);

  if (write_out) {
    std::filesystem::path out(flags.out);
    std::vector<ReportRun> report_runs;
    for (size_t i = 0; i < runs.size(); ++i) {
      SimRun& run = runs[i];
      RETURN_IF_ERROR(WriteFile(run_dirs[i] / "summary.json", run.summary_json));
      report_runs.push_back({.label = run.label, .summary_json = std::move(run.summary_json),
                             .events_as_written = events_as_written[i]});
    }
    ASSIGN_OR_RETURN(std::string html, RenderHtmlReport(input.name, report_runs));
    RETURN_IF_ERROR(WriteFile(out / "report.html", html));
    std::cout << "wrote " << (out / "report.html").string() << "\n";
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace lahar

int main(int argc, char** argv) {
  auto flags = lahar::ParseFlags(argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "lahar-sim: %s\n", std::string(flags.status().message()).c_str());
    return 2;
  }
  if (flags->command == "version") {
    std::cout << "lahar-sim " << lahar::LaharVersion() << "\n";
    return 0;
  }
  if (flags->command == "help") {
    std::fputs(lahar::kUsage, stdout);
    return 0;
  }
  if (flags->command == "plugins") {
    std::fputs(lahar::VolcanoCompatibilityTable(lahar::BuiltinRegistry()).c_str(), stdout);
    return 0;
  }
  absl::Status status = lahar::Main(*flags);
  if (!status.ok()) {
    std::string message(status.message());
    for (char& c : message) {
      if (c == '\n') c = ' ';
    }
    std::fprintf(stderr, "lahar-sim: %s\n", message.c_str());
    return 1;
  }
  return 0;
}
