// lahar-scheduler: the Lahar daemon (spec section 5).
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "api/duration.h"
#include "api/log.h"
#include "api/strings.h"
#include "api/version.h"
#include "scheduler/daemon/daemon.h"

namespace lahar {
namespace {

constexpr char kUsage[] = R"(Usage: lahar-scheduler [flags]

Schedules pods whose spec.schedulerName is one of --scheduler-name: gangs (Volcano PodGroups),
queues, elastic workers. Speaks scheduling.volcano.sh/v1beta1 and volcano-scheduler.conf.

Flags:
  --kubeconfig PATH              kubeconfig (token or client certificate); default: in-cluster
                                 service account, else $KUBECONFIG
  --master URL                   apiserver URL; overrides the kubeconfig's server
  --insecure-skip-tls-verify     do not verify the apiserver's certificate
  --scheduler-name NAME          schedule pods of this schedulerName (repeatable; default lahar)
  --scheduler-conf PATH          volcano-scheduler.conf; reloaded when it changes (default: built in)
  --schedule-period DURATION     time between sessions (default 1s)
  --default-queue NAME           queue of jobs that name none (default default)
  --kube-api-qps N               client request rate (default 50)
  --kube-api-burst N             client request burst (default 100)
  --leader-elect BOOL            run leader election on a Lease (default true)
  --leader-elect-namespace NS    namespace of the Lease (default kube-system)
  --leader-elect-resource-name N name of the Lease (default lahar)
  --leader-elect-lease-duration DURATION  (default 15s)
  --leader-elect-renew-deadline DURATION  (default 10s)
  --leader-elect-retry-period DURATION    (default 2s)
  --bind-workers N               concurrent binding requests (default 16)
  --listen-address ADDR          /metrics, /healthz, /readyz, /debug/snapshot (default :8080)
  -v, --log-level N              verbosity: 0 warnings, 1 info, 2 every decision (default 0)
  --version                      print the version and exit
  -h, --help                     this text
)";

std::atomic<bool> g_stop{false};

int Fail(const std::string& message, int code) {
  std::cerr << "lahar-scheduler: " << message << "\n";
  return code;
}

bool ParseBool(std::string_view text, bool& out) {
  if (text == "true" || text == "1" || text == "True" || text == "TRUE") return out = true, true;
  if (text == "false" || text == "0" || text == "False" || text == "FALSE") return out = false, true;
  return false;
}

std::string DefaultIdentity() {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') std::snprintf(host, sizeof(host), "localhost");
  // The pid and start time keep two instances on one machine apart.
  return StrCat(host, "_", StrFormat("%x%x", static_cast<unsigned>(getpid()),
                                     static_cast<unsigned>(absl::ToUnixMicros(absl::Now()) & 0xffffff)));
}

int Main(int argc, char** argv) {
  DaemonOptions options;
  options.leader.identity = DefaultIdentity();
  std::string kubeconfig, master;
  bool insecure = false;
  bool names_given = false;
  double qps = 50;
  int burst = 100;
  int verbosity = 0;

  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (arg == "--version") {
      std::cout << "lahar-scheduler " << LaharVersion() << "\n";
      return 0;
    }
    if (arg.size() < 2 || arg[0] != '-') return Fail(StrCat("unexpected argument \"", arg, "\" (see --help)"), 2);
    std::string name = arg, value;
    bool has_value = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    if (name.rfind("--", 0) != 0 && name != "-v") return Fail(StrCat("unknown flag ", name, " (see --help)"), 2);
    auto take = [&]() -> bool {
      if (has_value) return true;
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    auto bool_flag = [&](bool& out) -> bool {
      if (!has_value) return out = true, true;  // a bare boolean flag means true
      return ParseBool(value, out);
    };
    auto duration_flag = [&](std::chrono::milliseconds& out) -> bool {
      if (!take()) return false;
      absl::StatusOr<Millis> ms = ParseDuration(value);
      if (!ms.ok()) return false;
      out = std::chrono::milliseconds(*ms);
      return true;
    };
    bool ok = true;
    if (name == "--kubeconfig") {
      ok = take() && (kubeconfig = value, true);
    } else if (name == "--master") {
      ok = take() && (master = value, true);
    } else if (name == "--insecure-skip-tls-verify") {
      ok = bool_flag(insecure);
    } else if (name == "--scheduler-name") {
      ok = take() && !value.empty();
      if (ok) {
        if (!names_given) options.scheduler_names.clear();
        names_given = true;
        options.scheduler_names.insert(value);
      }
    } else if (name == "--scheduler-conf") {
      ok = take() && (options.scheduler_conf = value, true);
    } else if (name == "--schedule-period") {
      ok = duration_flag(options.schedule_period) && options.schedule_period.count() > 0;
    } else if (name == "--default-queue") {
      ok = take() && !value.empty() && (options.default_queue = value, true);
    } else if (name == "--kube-api-qps") {
      ok = take() && absl::SimpleAtod(value, &qps) && qps >= 0;
    } else if (name == "--kube-api-burst") {
      ok = take() && absl::SimpleAtoi(value, &burst) && burst > 0;
    } else if (name == "--leader-elect") {
      ok = bool_flag(options.leader_elect);
    } else if (name == "--leader-elect-namespace") {
      ok = take() && !value.empty() && (options.leader.namespace_ = value, true);
    } else if (name == "--leader-elect-resource-name") {
      ok = take() && !value.empty() && (options.leader.name = value, true);
    } else if (name == "--leader-elect-lease-duration") {
      ok = duration_flag(options.leader.lease_duration);
    } else if (name == "--leader-elect-renew-deadline") {
      ok = duration_flag(options.leader.renew_deadline);
    } else if (name == "--leader-elect-retry-period") {
      ok = duration_flag(options.leader.retry_period) && options.leader.retry_period.count() > 0;
    } else if (name == "--bind-workers") {
      ok = take() && absl::SimpleAtoi(value, &options.bind_workers) && options.bind_workers > 0 &&
           options.bind_workers <= 256;
    } else if (name == "--listen-address") {
      ok = take() && (options.listen_address = value, true);
    } else if (name == "-v" || name == "--v" || name == "--log-level") {
      ok = take() && absl::SimpleAtoi(value, &verbosity) && verbosity >= 0;
    } else {
      return Fail(StrCat("unknown flag ", name, " (see --help)"), 2);
    }
    if (!ok) return Fail(StrCat("bad value for ", name, value.empty() ? "" : StrCat(": \"", value, "\"")), 2);
  }
  if (options.leader.renew_deadline >= options.leader.lease_duration) {
    return Fail("--leader-elect-renew-deadline must be shorter than --leader-elect-lease-duration", 2);
  }
  SetLogVerbosity(verbosity);

  absl::StatusOr<ClientConfig> client;
  if (kubeconfig.empty()) {
    if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0' && master.empty()) kubeconfig = env;
  }
  if (!kubeconfig.empty()) {
    client = LoadKubeconfig(kubeconfig);
  } else if (!master.empty()) {
    client = ClientConfig{};
  } else {
    client = InClusterConfig();
  }
  if (!client.ok()) return Fail(std::string(client.status().message()), 1);
  if (!master.empty()) {
    absl::Status parsed = ParseServerUrl(master, *client);
    if (!parsed.ok()) return Fail(StrCat("--master: ", parsed.message()), 2);
  }
  if (insecure) client->insecure_skip_tls_verify = true;
  client->qps = qps;
  client->burst = burst;
  options.client = *std::move(client);

  absl::StatusOr<std::unique_ptr<SchedulerDaemon>> daemon = SchedulerDaemon::Create(std::move(options));
  if (!daemon.ok()) return Fail(std::string(daemon.status().message()), 1);

  // Signals are taken by a thread of their own (sigwait), so no handler runs inside the daemon.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  std::thread signal_thread([signals] {
    int received = 0;
    sigwait(&signals, &received);
    LAHAR_WARN("daemon") << "received signal " << received << ", shutting down";
    g_stop.store(true);
  });
  signal_thread.detach();

  absl::Status status = (*daemon)->Run(g_stop);
  if (!status.ok()) return Fail(std::string(status.message()), 1);
  return 0;
}

}  // namespace
}  // namespace lahar

int main(int argc, char** argv) { return lahar::Main(argc, argv); }
