// kubectl-lahar: a kubectl plugin (spec 7). `kubectl lahar queues` prints the queue tree,
// `kubectl lahar why NAMESPACE/PODGROUP` why a job waits and what would let it start. Both read
// the daemon's /debug/queues and /debug/explain, through the apiserver's service proxy (the
// kubeconfig's credentials) or at --endpoint; with --snapshot FILE they run one session of the
// scheduler on a snapshot file instead and read the same answers from it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/quantity.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "cache/kube/client.h"
#include "cache/kube/kubeconfig.h"
#include "rapidjson/document.h"
#include "scheduler/builtins.h"
#include "scheduler/daemon/wait_board.h"
#include "scheduler/framework/explain.h"
#include "scheduler/sim/scenario.h"
#include "scheduler/sim/simulator.h"

namespace lahar {
namespace {

constexpr char kUsage[] = R"(Usage:
  kubectl lahar queues [SOURCE]
  kubectl lahar why NAMESPACE/PODGROUP [SOURCE]

queues  the queue tree: weight, waiting jobs per kind, and per resource what each queue is
        allocated of what it deserves.
why     why the job waits (spec 7) and what would let it start.

SOURCE (default: the daemon through the apiserver's service proxy, with the kubeconfig's
credentials):
  --kubeconfig PATH   kubeconfig (default $KUBECONFIG, else ~/.kube/config)
  --namespace NS      the daemon's namespace (default lahar-system)
  --service NAME:PORT the daemon's Service (default lahar-scheduler:8080)
  --endpoint URL      the daemon's HTTP address itself, e.g. http://127.0.0.1:8080
  --snapshot FILE     a snapshot file (kubectl get ... -o yaml, or the daemon's
                      /debug/snapshot): one session of the scheduler is run on it
  --config CONF       with --snapshot: the volcano-scheduler.conf (default configuration)
)";

struct Flags {
  std::string command, job;
  std::string kubeconfig, namespace_ = "lahar-system", service = "lahar-scheduler:8080";
  std::string endpoint, snapshot, config;
};

absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags f;
  std::vector<std::string> positional;
  std::map<std::string, std::string*> valued = {{"--kubeconfig", &f.kubeconfig}, {"--namespace", &f.namespace_},
                                                {"-n", &f.namespace_},          {"--service", &f.service},
                                                {"--endpoint", &f.endpoint},    {"--snapshot", &f.snapshot},
                                                {"--config", &f.config}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "help") {
      f.command = "help";
      return f;
    }
    const size_t eq = arg.find('=');
    auto flag = valued.find(arg.substr(0, eq));
    if (flag != valued.end()) {
      if (eq != std::string::npos) {
        *flag->second = arg.substr(eq + 1);
      } else if (i + 1 < argc) {
        *flag->second = argv[++i];
      } else {
        return absl::InvalidArgumentError(StrCat(arg, " needs a value"));
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return absl::InvalidArgumentError(StrCat("unknown flag ", arg, " (see --help)"));
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.empty()) return absl::InvalidArgumentError("missing command: queues or why (see --help)");
  f.command = positional[0];
  if (f.command == "queues" && positional.size() == 1) return f;
  if (f.command == "why" && positional.size() == 2) {
    f.job = positional[1];
    if (f.job.find('/') == std::string::npos) return absl::InvalidArgumentError("why takes NAMESPACE/PODGROUP");
    return f;
  }
  if (f.command != "queues" && f.command != "why") {
    return absl::InvalidArgumentError(StrCat("unknown command \"", f.command, "\" (want queues or why)"));
  }
  return absl::InvalidArgumentError(f.command == "why" ? "why takes one NAMESPACE/PODGROUP" : "queues takes no arguments");
}

// GET `path` (with query) from the daemon, directly or through the apiserver's service proxy.
absl::StatusOr<std::string> FetchFromDaemon(const Flags& f, const std::string& path) {
  ClientConfig config;
  std::string target = path;
  std::string address;
  if (!f.endpoint.empty()) {
    RETURN_IF_ERROR(ParseServerUrl(f.endpoint, config));
    address = f.endpoint;
  } else {
    std::string kubeconfig = f.kubeconfig;
    if (kubeconfig.empty()) {
      const char* env = std::getenv("KUBECONFIG");
      const char* home = std::getenv("HOME");
      kubeconfig = env != nullptr && *env != '\0' ? env : StrCat(home != nullptr ? home : "", "/.kube/config");
    }
    ASSIGN_OR_RETURN(config, LoadKubeconfig(kubeconfig));
    target = StrCat("/api/v1/namespaces/", f.namespace_, "/services/", f.service, "/proxy", path);
    address = StrCat(config.tls ? "https://" : "http://", config.host, ":", config.port, target.substr(0, target.find('?')));
  }
  RetryPolicy retry;
  retry.request_timeout = std::chrono::seconds(10);
  retry.max_attempts = 2;
  ASSIGN_OR_RETURN(std::unique_ptr<KubeClient> client, KubeClient::Create(config, retry));
  absl::StatusOr<HttpResult> result = client->Request("GET", target);
  if (!result.ok()) return absl::UnavailableError(StrCat("cannot reach the daemon at ", address, ": ", result.status().message()));
  if (result->status == 404 && !result->body.empty() && result->body[0] == '{') return result->body;  // an unknown job
  if (!result->ok()) return absl::UnavailableError(StrCat(address, " answered ", result->Describe()));
  return result->body;
}

// The same answers from one session of the scheduler on a snapshot file.
absl::StatusOr<std::string> AnswerFromSnapshot(const Flags& f, const HttpRequest& request) {
  ASSIGN_OR_RETURN(SimInput input, LoadSimInputFile(f.snapshot));
  if (!input.from_snapshot) {
    return absl::InvalidArgumentError(StrCat(f.snapshot, ": not a snapshot (kubectl get nodes,pods,podgroups,queues -A -o yaml)"));
  }
  std::string config_text(DefaultSchedulerConfigYaml());
  if (!f.config.empty()) {
    ASSIGN_OR_RETURN(config_text, ReadFile(f.config));
  }
  absl::StatusOr<SchedulerConfig> config = ParseSchedulerConfig(config_text, BuiltinRegistry());
  if (!config.ok()) return Annotate(config.status(), f.config.empty() ? "default configuration" : f.config);
  ClusterSnapshot last;
  WaitBoard board([&last] { return last; });
  SimOptions options;
  options.until = 0;  // the first session only: the cluster as the snapshot has it
  options.on_session = [&](const ClusterSnapshot& snapshot, const CycleResult& result, Millis now) {
    last = snapshot;
    board.Update(snapshot, result, now);
  };
  RETURN_IF_ERROR(RunSimulation(input, *config, BuiltinRegistry(), options).status());
  const HttpResponse response = request.path == "/debug/queues" ? board.Queues(request) : board.Explain(request);
  return response.body;
}

absl::StatusOr<std::string> Answer(const Flags& f, const std::string& path, const std::string& query) {
  if (!f.snapshot.empty()) return AnswerFromSnapshot(f, {"GET", path, query});
  return FetchFromDaemon(f, query.empty() ? path : StrCat(path, "?", query));
}

absl::Status Why(const Flags& f) {
  ASSIGN_OR_RETURN(std::string body, Answer(f, "/debug/explain", StrCat("job=", UrlEncode(f.job))));
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  if (!doc.HasParseError() && doc.IsObject() && doc.HasMember("error") && doc["error"].IsString()) {
    return absl::NotFoundError(doc["error"].GetString());
  }
  absl::StatusOr<JobExplanation> e = ParseExplanationJson(body);
  if (!e.ok()) return Annotate(e.status(), "the daemon's answer");
  std::cout << FormatExplanation(*e);
  return absl::OkStatus();
}

absl::Status Queues(const Flags& f) {
  ASSIGN_OR_RETURN(std::string body, Answer(f, "/debug/queues", ""));
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("queues") || !doc["queues"].IsArray()) {
    return absl::InvalidArgumentError("the daemon's /debug/queues answer is not a queue list");
  }
  std::vector<std::string> resources;
  for (const auto& q : doc["queues"].GetArray()) {
    for (const char* key : {"allocated", "deserved"}) {
      if (!q.HasMember(key)) continue;
      for (const auto& r : q[key].GetObject()) {
        if (std::find(resources.begin(), resources.end(), r.name.GetString()) == resources.end()) resources.emplace_back(r.name.GetString());
      }
    }
  }
  std::sort(resources.begin(), resources.end());
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"QUEUE", "WEIGHT", "WAITING"};
  for (const std::string& r : resources) header.push_back(StrCat(r, " ALLOCATED/DESERVED"));
  rows.push_back(header);
  for (const auto& q : doc["queues"].GetArray()) {
    std::vector<std::string> row;
    row.push_back(std::string(2 * static_cast<size_t>(q["depth"].GetInt()), ' ') + q["queue"].GetString());
    row.push_back(StrCat(q["weight"].GetInt()));
    std::string waiting;
    int total = 0;
    for (const auto& kind : q["waiting"].GetObject()) {
      total += kind.value.GetInt();
      StrAppend(&waiting, waiting.empty() ? "" : ", ", kind.value.GetInt(), " ", kind.name.GetString());
    }
    row.push_back(total == 0 ? "0" : StrCat(total, " (", waiting, ")"));
    for (const std::string& r : resources) {
      auto amount = [&](const char* key) -> std::string {
        if (!q.HasMember(key)) return "-";
        const auto& m = q[key];
        const int64_t v = m.HasMember(r.c_str()) ? m[r.c_str()].GetInt64() : 0;
        return FormatQuantity(v, ResourceUnit(InternResource(r)));
      };
      row.push_back(StrCat(amount("allocated"), "/", amount("deserved")));
    }
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths(header.size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(widths[i] - row[i].size() + 2, ' ');
    }
    std::cout << line << "\n";
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace lahar

int main(int argc, char** argv) {
  absl::StatusOr<lahar::Flags> flags = lahar::ParseFlags(argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "kubectl-lahar: %s\n", std::string(flags.status().message()).c_str());
    return 2;
  }
  if (flags->command == "help") {
    std::fputs(lahar::kUsage, stdout);
    return 0;
  }
  absl::Status status = flags->command == "why" ? lahar::Why(*flags) : lahar::Queues(*flags);
  if (!status.ok()) {
    std::fprintf(stderr, "kubectl-lahar: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
