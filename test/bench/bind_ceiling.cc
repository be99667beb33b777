// The binding ceiling of hack/bench-daemon.sh, and that benchmark's helpers, all on Lahar's own
// Kubernetes client (cache/kube/client.h) and writer (scheduler/daemon/kube_writer.h):
//
//   bind_ceiling bind    --namespace NS       the ceiling: lists the nodes and the namespace's
//                                             unbound pods (limit/continue), then only posts
//                                             bindings, round-robin over the nodes, from
//                                             --workers threads. No scheduling at all.
//   bind_ceiling nodes   --count N            creates kwok nodes PREFIX-0..N-1 (annotation
//                        [--prefix bench-node] kwok.x-k8s.io/node: fake, label
//                        [--cpu 32 --memory 256Gi --pods 110]  kubernetes.io/hostname), waits
//                                             until all are Ready
//   bind_ceiling create  --namespace NS --gangs G --size S [--scheduler NAME] [--podgroups]
//                                             creates the namespace, G PodGroups (minMember S;
//                                             with --podgroups) and G*S pods (cpu 1, memory 1Gi;
//                                             annotation scheduling.k8s.io/group-name with
//                                             --podgroups), in parallel
//   bind_ceiling clean   --namespace NS       deletes the namespace's pods (grace 0) and
//                                             PodGroups, waits until no pod is left
//   bind_ceiling measure --namespace NS --expect N [--timeout 900] [--log FILE]
//                        [--on-done SHELL-CMD] [--out FILE] -- CMD ARGS...
//                                             watches the namespace's bound pods
//                                             (fieldSelector spec.nodeName!=), starts CMD, and
//                                             times from its start to the first bound pod and
//                                             to N bound pods; runs --on-done (CMD still
//                                             running), stops CMD (TERM, then KILL after 15 s),
//                                             prints one JSON object. CMD's output goes to
//                                             --log, each line prefixed with the seconds since
//                                             its start. --cpu-of NAME=PID
//                                             (repeatable) adds the CPU seconds that process
//                                             used until all were bound
//
// Common flags: --kubeconfig PATH (default $KUBECONFIG), --qps Q (5000), --burst B (10000),
// --workers W (16: concurrent requests).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "api/strings.h"
#include "cache/kube/client.h"
#include "cache/kube/kubeconfig.h"
#include "rapidjson/document.h"
#include "scheduler/daemon/kube_writer.h"

extern char** environ;

namespace lahar {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

constexpr char kUsage[] = R"(Usage: bind_ceiling MODE [flags]   (see the top of test/bench/bind_ceiling.cc)
  bind    --namespace NS
  nodes   --count N [--prefix bench-node] [--cpu 32] [--memory 256Gi] [--pods 110]
  create  --namespace NS --gangs G --size S [--scheduler NAME] [--podgroups]
  clean   --namespace NS
  measure --namespace NS --expect N [--timeout SECONDS] [--log FILE] [--on-done SHELL-CMD]
          [--out FILE] [--cpu-of NAME=PID]... -- CMD ARGS...
Common: --kubeconfig PATH, --qps Q (5000), --burst B (10000), --workers W (16)
)";

struct Options {
  std::string mode;
  std::string kubeconfig;
  double qps = 5000;
  int burst = 10000;
  int workers = 16;
  std::string namespace_;
  int count = 0;
  std::string prefix = "bench-node";
  std::string cpu = "32";
  std::string memory = "256Gi";
  std::string pods = "110";
  int gangs = 0;
  int size = 10;
  std::string scheduler = "default-scheduler";
  bool podgroups = false;
  int expect = 0;
  double timeout = 900;
  std::string log_file;
  std::string on_done;
  std::string out;
  std::vector<std::pair<std::string, pid_t>> cpu_of;  // --cpu-of NAME=PID
  std::vector<std::string> command;
};

std::string Message(const absl::StatusOr<HttpResult>& r) {
  return r.ok() ? r->Describe() : std::string(r.status().message());
}

// True when the request got a 2xx (or one of `also_ok`); the first few failures are printed.
bool Succeeded(const absl::StatusOr<HttpResult>& r, std::string_view what, std::initializer_list<int> also_ok = {}) {
  if (r.ok() && (r->ok() || std::find(also_ok.begin(), also_ok.end(), r->status) != also_ok.end())) return true;
  static std::atomic<int> reported{0};
  if (reported.fetch_add(1) < 10) std::cerr << "bind_ceiling: " << what << ": " << Message(r) << "\n";
  return false;
}

// Runs fn(i) for every i in [0, n) on `workers` threads; returns how many calls returned false.
int64_t ParallelFor(int64_t n, int workers, const std::function<bool(int64_t)>& fn) {
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> failed{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < std::min<int64_t>(std::max(1, workers), n); ++w) {
    threads.emplace_back([&] {
      for (int64_t i; (i = next.fetch_add(1)) < n;) {
        if (!fn(i)) failed.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return failed.load();
}

std::string StringAt(const rapidjson::Value& object, const char* key) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}
const rapidjson::Value* MemberAt(const rapidjson::Value& object, const char* key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(key);
  return it == object.MemberEnd() ? nullptr : &it->value;
}
std::string NameOf(const rapidjson::Value& object) {
  const rapidjson::Value* meta = MemberAt(object, "metadata");
  return meta == nullptr ? "" : StringAt(*meta, "name");
}

// Calls fn on every item of a list, page by page (limit/continue); returns its resourceVersion.
absl::StatusOr<std::string> ListAll(KubeClient& client, const std::string& path,
                                    const std::function<void(const rapidjson::Value&)>& fn, int page_size = 500) {
  std::string continue_token, version;
  const char separator = path.find('?') == std::string::npos ? '?' : '&';
  do {
    std::string target = StrCat(path, separator, "limit=", page_size);
    if (!continue_token.empty()) StrAppend(&target, "&continue=", UrlEncode(continue_token));
    absl::StatusOr<HttpResult> result = client.Request("GET", target);
    if (!result.ok()) return result.status();
    if (!result->ok()) return absl::UnavailableError(StrCat("GET ", target, ": ", result->Describe()));
    rapidjson::Document page;
    page.Parse(result->body.data(), result->body.size());
    const rapidjson::Value* items = MemberAt(page, "items");
    if (page.HasParseError() || items == nullptr || !items->IsArray()) {
      return absl::DataLossError(StrCat("GET ", target, ": the answer is not a list"));
    }
    for (const rapidjson::Value& item : items->GetArray()) fn(item);
    continue_token.clear();
    if (const rapidjson::Value* meta = MemberAt(page, "metadata")) {
      continue_token = StringAt(*meta, "continue");
      version = StringAt(*meta, "resourceVersion");
    }
  } while (!continue_token.empty());
  return version;
}

std::string PodsPath(const std::string& ns) { return StrCat("/api/v1/namespaces/", ns, "/pods"); }
std::string PodGroupsPath(const std::string& ns) {
  return StrCat("/apis/scheduling.volcano.sh/v1beta1/namespaces/", ns, "/podgroups");
}
const std::string kBoundSelector = StrCat("fieldSelector=", UrlEncode("spec.nodeName!="));
const std::string kUnboundSelector = StrCat("fieldSelector=", UrlEncode("spec.nodeName="));

// --- bind: the ceiling -------------------------------------------------------------------------

int Bind(KubeClient& client, const Options& o) {
  const auto start = Clock::now();
  std::vector<std::string> nodes, pods;
  absl::StatusOr<std::string> listed =
      ListAll(client, "/api/v1/nodes", [&](const rapidjson::Value& node) { nodes.push_back(NameOf(node)); });
  if (!listed.ok()) return std::cerr << "bind_ceiling: listing nodes: " << listed.status().message() << "\n", 1;
  listed = ListAll(client, StrCat(PodsPath(o.namespace_), "?", kUnboundSelector),
                   [&](const rapidjson::Value& pod) { pods.push_back(NameOf(pod)); });
  if (!listed.ok()) return std::cerr << "bind_ceiling: listing pods: " << listed.status().message() << "\n", 1;
  if (nodes.empty()) return std::cerr << "bind_ceiling: no nodes\n", 1;
  const double list_seconds = Since(start);
  const auto bind_start = Clock::now();
  int64_t failed = ParallelFor(static_cast<int64_t>(pods.size()), o.workers, [&](int64_t i) {
    const std::string& node = nodes[static_cast<size_t>(i) % nodes.size()];
    return Succeeded(BindPod(client, o.namespace_, pods[i], node), StrCat("binding ", pods[i], " to ", node));
  });
  const double bind_seconds = Since(bind_start);
  std::fprintf(stderr,
               "bind_ceiling: listed %zu nodes and %zu unbound pods in %.3f s; posted %zu bindings (%lld failed) "
               "from %d workers in %.3f s: %.0f bindings/s; %lld requests\n",
               nodes.size(), pods.size(), list_seconds, pods.size(), static_cast<long long>(failed), o.workers,
               bind_seconds, bind_seconds > 0 ? static_cast<double>(pods.size()) / bind_seconds : 0.0,
               static_cast<long long>(client.requests_sent()));
  return failed == 0 ? 0 : 1;
}

// --- nodes -------------------------------------------------------------------------------------

bool NodeReady(const rapidjson::Value& node) {
  const rapidjson::Value* status = MemberAt(node, "status");
  const rapidjson::Value* conditions = status == nullptr ? nullptr : MemberAt(*status, "conditions");
  if (conditions == nullptr || !conditions->IsArray()) return false;
  for (const rapidjson::Value& c : conditions->GetArray()) {
    if (StringAt(c, "type") == "Ready") return StringAt(c, "status") == "True";
  }
  return false;
}

int Nodes(KubeClient& client, const Options& o) {
  const auto start = Clock::now();
  const std::string resources =
      StrCat(R"({"cpu":")", o.cpu, R"(","memory":")", o.memory, R"(","pods":")", o.pods, R"("})");
  int64_t failed = ParallelFor(o.count, o.workers, [&](int64_t i) {
    std::string name = StrCat(o.prefix, "-", i);
    std::string body = StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
                              R"(","annotations":{"kwok.x-k8s.io/node":"fake"},"labels":{"kubernetes.io/hostname":")",
                              name, R"(","type":"kwok","lahar.sh/bench":")", o.prefix,
                              R"("}},"status":{"allocatable":)", resources, R"(,"capacity":)", resources, "}}");
    return Succeeded(client.Request("POST", "/api/v1/nodes", body), StrCat("creating node ", name), {409});
  });
  if (failed > 0) return std::cerr << "bind_ceiling: " << failed << " node(s) not created\n", 1;
  const std::string path = StrCat("/api/v1/nodes?labelSelector=", UrlEncode(StrCat("lahar.sh/bench=", o.prefix)));
  int ready = 0;
  while (Since(start) < 300) {
    ready = 0;
    absl::StatusOr<std::string> listed =
        ListAll(client, path, [&](const rapidjson::Value& node) { ready += NodeReady(node) ? 1 : 0; });
    if (!listed.ok()) std::cerr << "bind_ceiling: listing nodes: " << listed.status().message() << "\n";
    if (ready >= o.count) {
      std::fprintf(stderr, "bind_ceiling: %d nodes %s-* Ready after %.1f s\n", ready, o.prefix.c_str(), Since(start));
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::fprintf(stderr, "bind_ceiling: only %d of %d nodes Ready after 300 s\n", ready, o.count);
  return 1;
}

// --- create ------------------------------------------------------------------------------------

std::string GroupName(int64_t g) { return StrFormat("gang-%05lld", static_cast<long long>(g)); }

int Create(KubeClient& client, const Options& o) {
  const auto start = Clock::now();
  absl::StatusOr<HttpResult> ns = client.Request(
      "POST", "/api/v1/namespaces",
      StrCat(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")", o.namespace_, R"("}})"));
  if (!Succeeded(ns, StrCat("creating namespace ", o.namespace_), {409})) return 1;
  int64_t failed = 0;
  if (o.podgroups) {
    failed += ParallelFor(o.gangs, o.workers, [&](int64_t g) {
      std::string body = StrCat(R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":")",
                                GroupName(g), R"("},"spec":{"minMember":)", o.size, "}}");
      return Succeeded(client.Request("POST", PodGroupsPath(o.namespace_), body),
                       StrCat("creating PodGroup ", GroupName(g)));
    });
  }
  const double groups_seconds = Since(start);
  const std::string resources = R"({"cpu":"1","memory":"1Gi"})";
  const int64_t total = static_cast<int64_t>(o.gangs) * o.size;
  failed += ParallelFor(total, o.workers, [&](int64_t i) {
    const int64_t g = i / o.size;
    std::string name = StrCat(GroupName(g), "-", i % o.size);
    std::string annotations =
        o.podgroups ? StrCat(R"({"scheduling.k8s.io/group-name":")", GroupName(g), R"("})") : std::string("{}");
    std::string body =
        StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name, R"(","annotations":)", annotations,
               R"(},"spec":{"schedulerName":")", o.scheduler,
               R"(","terminationGracePeriodSeconds":0,"containers":[{"name":"main","image":"lahar.sh/bench:1",)",
               R"("resources":{"requests":)", resources, R"(,"limits":)", resources, "}}]}}");
    return Succeeded(client.Request("POST", PodsPath(o.namespace_), body), StrCat("creating pod ", name));
  });
  const double seconds = Since(start);
  std::fprintf(stderr,
               "bind_ceiling: namespace %s: %d PodGroups, %lld pods (schedulerName %s) created in %.1f s "
               "(%.0f pods/s)%s\n",
               o.namespace_.c_str(), o.podgroups ? o.gangs : 0, static_cast<long long>(total), o.scheduler.c_str(),
               seconds, static_cast<double>(total) / std::max(1e-9, seconds - groups_seconds),
               failed > 0 ? StrCat("; ", failed, " FAILED").c_str() : "");
  return failed == 0 ? 0 : 1;
}

// --- clean -------------------------------------------------------------------------------------

int Clean(KubeClient& client, const Options& o) {
  const auto start = Clock::now();
  std::vector<std::string> pods;
  absl::StatusOr<std::string> listed =
      ListAll(client, PodsPath(o.namespace_), [&](const rapidjson::Value& pod) { pods.push_back(NameOf(pod)); });
  if (!listed.ok()) return std::cerr << "bind_ceiling: listing pods: " << listed.status().message() << "\n", 1;
  const std::string grace0 = R"({"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":0})";
  int64_t failed = ParallelFor(static_cast<int64_t>(pods.size()), o.workers, [&](int64_t i) {
    return Succeeded(client.Request("DELETE", StrCat(PodsPath(o.namespace_), "/", pods[i]), grace0),
                     StrCat("deleting pod ", pods[i]), {404});
  });
  absl::StatusOr<HttpResult> groups = client.Request("DELETE", PodGroupsPath(o.namespace_));
  Succeeded(groups, "deleting PodGroups", {404});
  while (Since(start) < 300) {
    size_t left = 0;
    listed = ListAll(client, PodsPath(o.namespace_), [&](const rapidjson::Value&) { ++left; });
    if (listed.ok() && left == 0) {
      std::fprintf(stderr, "bind_ceiling: namespace %s: %zu pods deleted in %.1f s%s\n", o.namespace_.c_str(),
                   pods.size(), Since(start), failed > 0 ? StrCat(" (", failed, " deletes failed)").c_str() : "");
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::fprintf(stderr, "bind_ceiling: namespace %s still has pods after 300 s\n", o.namespace_.c_str());
  return 1;
}

// --- measure -----------------------------------------------------------------------------------

// The set of bound pods of a namespace, kept by a list and then a watch (relisting whenever the
// watch ends), with the time each count was first reached.
class BoundWatch {
 public:
  BoundWatch(KubeClient& client, std::string ns, int expect) : client_(client), ns_(std::move(ns)), expect_(expect) {}

  absl::Status Start() {
    absl::Status listed = Relist();
    if (!listed.ok()) return listed;
    initial_ = Count();
    thread_ = std::thread([this] { Loop(); });
    return absl::OkStatus();
  }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  void SetOrigin(Clock::time_point origin) {
    std::lock_guard<std::mutex> lock(mu_);
    origin_ = origin;
  }
  size_t Count() {
    std::lock_guard<std::mutex> lock(mu_);
    return bound_.size();
  }
  size_t initial() const { return initial_; }
  // Seconds from the origin until `n` pods were bound; negative while fewer are.
  double SecondsTo(size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    if (n == 0 || n > reached_.size()) return -1;
    return std::chrono::duration<double>(reached_[n - 1] - origin_).count();
  }
  int relists() const { return relists_.load(); }

 private:
  void Add(const std::string& name) {
    if (name.empty()) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (bound_.insert(name).second) reached_.push_back(Clock::now());
  }

  absl::Status Relist() {
    absl::StatusOr<std::string> version =
        ListAll(client_, StrCat(PodsPath(ns_), "?", kBoundSelector), [&](const rapidjson::Value& pod) { Add(NameOf(pod)); });
    if (!version.ok()) return version.status();
    version_ = *version;
    return absl::OkStatus();
  }

  void Loop() {
    bool need_list = false;
    while (!stop_.load()) {
      if (need_list) {
        relists_.fetch_add(1);
        absl::Status listed = Relist();
        if (!listed.ok()) {
          std::cerr << "bind_ceiling: measure: relisting: " << listed.message() << "\n";
          std::this_thread::sleep_for(std::chrono::milliseconds(500));
          continue;
        }
      }
      need_list = true;
      bool gone = false;
      std::string target = StrCat(PodsPath(ns_), "?watch=1&", kBoundSelector, "&allowWatchBookmarks=true",
                                  "&timeoutSeconds=3600&resourceVersion=", UrlEncode(version_));
      absl::Status status = client_.Stream(
          target,
          [&](std::string_view line) {
            rapidjson::Document event;
            event.Parse(line.data(), line.size());
            if (event.HasParseError() || !event.IsObject()) return;
            const std::string type = StringAt(event, "type");
            const rapidjson::Value* object = MemberAt(event, "object");
            if (object == nullptr) return;
            if (type == "ERROR") {
              gone = true;
              return;
            }
            if (const rapidjson::Value* meta = MemberAt(*object, "metadata")) {
              std::string v = StringAt(*meta, "resourceVersion");
              if (!v.empty()) version_ = v;
            }
            if (type == "ADDED" || type == "MODIFIED") Add(NameOf(*object));
          },
          stop_, std::chrono::seconds(3700));
      if (stop_.load()) break;
      if (!status.ok() && !gone) {
        std::cerr << "bind_ceiling: measure: watch ended: " << status.message() << "; relisting\n";
      }
    }
  }

  KubeClient& client_;
  const std::string ns_;
  const int expect_;
  std::atomic<bool> stop_{false};
  std::atomic<int> relists_{0};
  std::thread thread_;
  std::string version_;  // watch thread only (after Start)
  size_t initial_ = 0;

  std::mutex mu_;
  std::unordered_set<std::string> bound_;
  std::vector<Clock::time_point> reached_;  // [i]: when i+1 pods were bound
  Clock::time_point origin_ = Clock::now();
};

// SIGINT / SIGTERM while measuring: stop the command under test, then end.
std::atomic<bool> g_interrupted{false};
void OnSignal(int) { g_interrupted.store(true); }

// CPU seconds (user + system) a process has used so far; negative if it cannot be read.
double CpuSeconds(pid_t pid) {
  FILE* f = std::fopen(StrCat("/proc/", pid, "/stat").c_str(), "r");
  if (f == nullptr) return -1;
  char buffer[4096];
  size_t n = std::fread(buffer, 1, sizeof(buffer) - 1, f);
  std::fclose(f);
  buffer[n] = '\0';
  const char* p = std::strrchr(buffer, ')');  // after the command name, which may hold spaces
  if (p == nullptr) return -1;
  unsigned long long utime = 0, stime = 0;
  // Fields 3.. after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt
  // cmajflt utime stime.
  if (std::sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2) return -1;
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Peak resident memory of a running process in MB (VmHWM); negative if it cannot be read.
double PeakMegabytes(pid_t pid) {
  FILE* f = std::fopen(StrCat("/proc/", pid, "/status").c_str(), "r");
  if (f == nullptr) return -1;
  char line[256];
  double mb = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    unsigned long long kb = 0;
    if (std::sscanf(line, "VmHWM: %llu kB", &kb) == 1) mb = static_cast<double>(kb) / 1024.0;
  }
  std::fclose(f);
  return mb;
}

std::string Number(double seconds) { return seconds < 0 ? "null" : StrFormat("%.3f", seconds); }

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return StrCat("exit code ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return StrCat("killed by signal ", WTERMSIG(status));
  return "unknown";
}

int Measure(KubeClient& client, const Options& o) {
  if (o.command.empty() || o.expect <= 0) return std::cerr << kUsage, 2;
  BoundWatch watch(client, o.namespace_, o.expect);
  absl::Status started = watch.Start();
  if (!started.ok()) return std::cerr << "bind_ceiling: measure: " << started.message() << "\n", 1;
  if (watch.initial() > 0) {
    std::cerr << "bind_ceiling: measure: warning: " << watch.initial() << " pods of " << o.namespace_
              << " are bound already\n";
  }
  // Let the watch connect (events after the list are not lost either way: it starts from the
  // list's resourceVersion; this only keeps the connection's setup out of the timings).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  // The command's output goes through a pipe to --log, every line prefixed with the seconds
  // since its start.
  int pipe_fds[2] = {-1, -1};
  FILE* log = nullptr;
  if (!o.log_file.empty()) {
    log = std::fopen(o.log_file.c_str(), "a");
    if (log == nullptr || pipe2(pipe_fds, O_CLOEXEC) != 0) {
      watch.Stop();
      return std::cerr << "bind_ceiling: measure: cannot open " << o.log_file << "\n", 1;
    }
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  }
  std::vector<char*> argv;
  for (const std::string& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  std::vector<double> cpu_before;
  for (const auto& [name, other] : o.cpu_of) cpu_before.push_back(CpuSeconds(other));
  const double self_before = CpuSeconds(getpid());
  const auto origin = Clock::now();
  watch.SetOrigin(origin);
  int spawned = posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    watch.Stop();
    if (log != nullptr) {
      std::fclose(log);
      close(pipe_fds[0]);
      close(pipe_fds[1]);
    }
    return std::cerr << "bind_ceiling: measure: cannot start " << argv[0] << ": " << std::strerror(spawned) << "\n", 1;
  }
  std::thread logger;
  if (log != nullptr) {
    close(pipe_fds[1]);
    logger = std::thread([log, fd = pipe_fds[0], origin] {
      FILE* in = fdopen(fd, "r");
      char* line = nullptr;
      size_t capacity = 0;
      ssize_t n;
      while ((n = getline(&line, &capacity, in)) > 0) {
        std::fprintf(log, "%8.3f %s%s", Since(origin), line, line[n - 1] == '\n' ? "" : "\n");
        std::fflush(log);
      }
      std::free(line);
      std::fclose(in);
      std::fclose(log);
    });
  }
  std::fprintf(stderr, "bind_ceiling: measure: started %s (pid %d); waiting for %d bound pods in %s\n", argv[0], pid,
               o.expect, o.namespace_.c_str());

  std::vector<std::pair<double, size_t>> timeline;  // every 0.5 s: (seconds, bound)
  double next_sample = 0, next_report = 5;
  bool exited = false;
  int exit_status = 0;
  struct rusage usage = {};
  double exited_at = -1;
  std::string outcome = "complete";
  while (true) {
    const double t = Since(origin);
    const size_t bound = watch.Count();
    if (t >= next_sample) {
      timeline.emplace_back(t, bound);
      next_sample += 0.5;
    }
    if (t >= next_report) {
      std::fprintf(stderr, "bind_ceiling: measure: %.0f s: %zu/%d bound\n", t, bound, o.expect);
      next_report += 5;
    }
    if (bound >= static_cast<size_t>(o.expect)) break;
    if (!exited && wait4(pid, &exit_status, WNOHANG, &usage) == pid) {
      exited = true;
      exited_at = t;
      std::fprintf(stderr, "bind_ceiling: measure: %s ended after %.1f s (%s) with %zu/%d bound\n", argv[0], t,
                   DescribeExit(exit_status).c_str(), bound, o.expect);
    }
    if (exited && t - exited_at > 10) {  // the watch may lag its last bindings a little
      outcome = "command ended";
      break;
    }
    if (t > o.timeout) {
      outcome = "timeout";
      break;
    }
    if (g_interrupted.load()) {
      outcome = "interrupted";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double total = Since(origin);
  timeline.emplace_back(total, watch.Count());
  // CPU used from the start until now (all bound), by the command and by --cpu-of processes.
  auto seconds = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
  const double command_cpu = exited ? seconds(usage.ru_utime) + seconds(usage.ru_stime) : CpuSeconds(pid);
  const double command_peak_mb = exited ? static_cast<double>(usage.ru_maxrss) / 1024.0 : PeakMegabytes(pid);
  std::string cpu = StrCat("{\"command\":", command_cpu < 0 ? "null" : StrFormat("%.2f", command_cpu));
  for (size_t i = 0; i < o.cpu_of.size(); ++i) {
    double after = CpuSeconds(o.cpu_of[i].second);
    StrAppend(&cpu, ",\"", o.cpu_of[i].first, "\":",
              after < 0 || cpu_before[i] < 0 ? "null" : StrFormat("%.2f", after - cpu_before[i]));
  }
  StrAppend(&cpu, ",\"measure\":", StrFormat("%.2f", CpuSeconds(getpid()) - self_before), "}");

  if (!o.on_done.empty() && outcome != "interrupted") {
    int rc = std::system(o.on_done.c_str());
    if (rc != 0) std::cerr << "bind_ceiling: measure: --on-done exited with " << rc << "\n";
  }
  if (!exited) {
    kill(pid, SIGTERM);
    for (int i = 0; i < 150 && !exited; ++i) {
      if (waitpid(pid, &exit_status, WNOHANG) == pid) exited = true;
      else std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!exited) {
      std::cerr << "bind_ceiling: measure: " << argv[0] << " still running 15 s after SIGTERM: SIGKILL\n";
      kill(pid, SIGKILL);
      waitpid(pid, &exit_status, 0);
    }
  }
  watch.Stop();
  if (logger.joinable()) logger.join();  // ends when the command's output closes

  const size_t bound = watch.Count();
  const size_t n = static_cast<size_t>(o.expect);
  const double first = watch.SecondsTo(1);
  const double all = watch.SecondsTo(n);
  const double rate = all > 0 ? static_cast<double>(n) / all : -1;
  const double rate_after_first = all > first && first >= 0 ? static_cast<double>(n) / (all - first) : -1;
  std::string json = StrCat(
      "{\"namespace\":\"", o.namespace_, "\",\"expected\":", o.expect, ",\"bound\":", bound,
      ",\"outcome\":\"", outcome, "\",\"seconds\":", Number(all), ",\"first_bind_seconds\":", Number(first),
      ",\"half_bound_seconds\":", Number(watch.SecondsTo((n + 1) / 2)),
      ",\"pods_per_second\":", rate < 0 ? "null" : StrFormat("%.1f", rate),
      ",\"pods_per_second_after_first_bind\":", rate_after_first < 0 ? "null" : StrFormat("%.1f", rate_after_first),
      ",\"command_exit\":\"", DescribeExit(exit_status), "\",\"watch_relists\":", watch.relists(), ",\"cpu_seconds\":", cpu,
      ",\"command_peak_mb\":", command_peak_mb < 0 ? "null" : StrFormat("%.0f", command_peak_mb),
      ",\"measured_seconds\":", StrFormat("%.3f", total), ",\"timeline\":[");
  for (size_t i = 0; i < timeline.size(); ++i) {
    StrAppend(&json, i ? "," : "", "[", StrFormat("%.2f", timeline[i].first), ",", timeline[i].second, "]");
  }
  StrAppend(&json, "]}");
  std::cout << json << std::endl;
  if (!o.out.empty()) {
    FILE* f = std::fopen(o.out.c_str(), "w");
    if (f != nullptr) {
      std::fprintf(f, "%s\n", json.c_str());
      std::fclose(f);
    }
  }
  return outcome == "complete" ? 0 : 1;
}

// --- flags -------------------------------------------------------------------------------------

int Main(int argc, char** argv) {
  Options o;
  if (argc < 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  o.mode = argv[1];
  if (const char* env = std::getenv("KUBECONFIG")) o.kubeconfig = env;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      for (++i; i < argc; ++i) o.command.push_back(argv[i]);
      break;
    }
    std::string value;
    bool has_value = false;
    if (size_t eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto take = [&]() -> const std::string& {
      if (!has_value) {
        if (i + 1 >= argc) {
          std::cerr << "bind_ceiling: " << arg << " needs a value\n";
          std::exit(2);
        }
        value = argv[++i];
      }
      return value;
    };
    auto number = [&](auto& out) {
      bool ok;
      if constexpr (std::is_same_v<std::decay_t<decltype(out)>, double>) {
        ok = absl::SimpleAtod(take(), &out);
      } else {
        ok = absl::SimpleAtoi(take(), &out);
      }
      if (!ok) {
        std::cerr << "bind_ceiling: bad value for " << arg << ": " << value << "\n";
        std::exit(2);
      }
    };
    if (arg == "--kubeconfig") o.kubeconfig = take();
    else if (arg == "--qps") number(o.qps);
    else if (arg == "--burst") number(o.burst);
    else if (arg == "--workers") number(o.workers);
    else if (arg == "--namespace" || arg == "-n") o.namespace_ = take();
    else if (arg == "--count") number(o.count);
    else if (arg == "--prefix") o.prefix = take();
    else if (arg == "--cpu") o.cpu = take();
    else if (arg == "--memory") o.memory = take();
    else if (arg == "--pods") o.pods = take();
    else if (arg == "--gangs") number(o.gangs);
    else if (arg == "--size") number(o.size);
    else if (arg == "--scheduler") o.scheduler = take();
    else if (arg == "--podgroups") o.podgroups = true;
    else if (arg == "--expect") number(o.expect);
    else if (arg == "--timeout") number(o.timeout);
    else if (arg == "--log") o.log_file = take();
    else if (arg == "--on-done") o.on_done = take();
    else if (arg == "--out") o.out = take();
    else if (arg == "--cpu-of") {
      const std::string& v = take();
      size_t eq = v.find('=');
      int pid = 0;
      if (eq == std::string::npos || !absl::SimpleAtoi(v.substr(eq + 1), &pid) || pid <= 0) {
        std::cerr << "bind_ceiling: --cpu-of wants NAME=PID, not " << v << "\n";
        return 2;
      }
      o.cpu_of.emplace_back(v.substr(0, eq), static_cast<pid_t>(pid));
    }
    else {
      std::cerr << "bind_ceiling: unknown flag " << arg << "\n" << kUsage;
      return 2;
    }
  }
  if (o.kubeconfig.empty()) return std::cerr << "bind_ceiling: --kubeconfig is required\n", 2;
  if (o.mode != "nodes" && o.namespace_.empty()) return std::cerr << "bind_ceiling: --namespace is required\n", 2;
  absl::StatusOr<ClientConfig> config = LoadKubeconfig(o.kubeconfig);
  if (!config.ok()) return std::cerr << "bind_ceiling: " << config.status().message() << "\n", 1;
  config->qps = o.qps;
  config->burst = o.burst;
  absl::StatusOr<std::unique_ptr<KubeClient>> client = KubeClient::Create(*std::move(config));
  if (!client.ok()) return std::cerr << "bind_ceiling: " << client.status().message() << "\n", 1;
  std::signal(SIGPIPE, SIG_IGN);
  if (o.mode == "bind") return Bind(**client, o);
  if (o.mode == "nodes") return o.count > 0 ? Nodes(**client, o) : (std::cerr << kUsage, 2);
  if (o.mode == "create") return o.gangs > 0 && o.size > 0 ? Create(**client, o) : (std::cerr << kUsage, 2);
  if (o.mode == "clean") return Clean(**client, o);
  if (o.mode == "measure") return Measure(**client, o);
  std::cerr << "bind_ceiling: unknown mode " << o.mode << "\n" << kUsage;
  return 2;
}

}  // namespace
}  // namespace lahar

int main(int argc, char** argv) { return lahar::Main(argc, argv); }
