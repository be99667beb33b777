// Session benchmark (issue 2): 5,000 nodes and 5,000 gangs of 10 pods (mixed CPU and GPU
// requests, 4 queues) placed by one session of the default configuration.
//
// Reports pods placed per second, and, as a baseline measured in the same run on the same
// machine, a bare first-fit loop over the same nodes and pods with no framework at all: the
// ratio says what the framework's ordering, plugins and transactions cost.
//
//   build-release/bin/session_bench [--nodes N] [--gangs N] [--repeat N] [--config FILE]
//                                   [--starving N | --backlog N | --pending N]
//
// With --starving N (issue 10): every node full of running gangs of one queue that borrowed the
// whole cluster, and N starving gangs of three other queues, each needing one node's worth: one
// session of the default configuration, where reclaim takes back one whole gang per starving job
// (N plans, N evictions of 4 pods). The baseline in the same run is the same session without
// the evicting actions (enqueue, allocate, backfill), which only finds that nothing fits.
#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "api/log.h"
#include "api/strings.h"
#include "cache/cluster_cache.h"
#include "scheduler/builtins.h"
#include "scheduler/framework/config.h"
#include "scheduler/framework/cycle.h"
#include "scheduler/sim/cycle_runner.h"

// Timed regions toggle callgrind's collection, so `valgrind --tool=callgrind --collect-atstart=no`
// counts the timed sessions only (building the cluster is not what is measured).
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define LAHAR_TIMED_REGION() CALLGRIND_TOGGLE_COLLECT
#else
#define LAHAR_TIMED_REGION()
#endif

namespace lahar {
namespace {

// A fixed linear congruential generator: the same cluster on every run and machine.
class Lcg {
 public:
  uint32_t Next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state_ >> 33);
  }
  int Uniform(int lo, int hi) { return lo + static_cast<int>(Next() % static_cast<uint32_t>(hi - lo + 1)); }

 private:
  uint64_t state_ = 42;
};

Resources Make(int64_t cpu_milli, int64_t memory_gi, int64_t gpus) {
  Resources r;
  r.Set(kCpu, cpu_milli);
  r.Set(kMemory, memory_gi << 30);
  if (gpus > 0) r.Set(kNvidiaGpu, gpus);
  return r;
}

// Node node-<i> with `allocatable` and 110 pod slots.
void AddNode(ClusterCache& cache, int i, const Resources& allocatable) {
  Node node;
  node.meta.name = StrFormat("node-%05d", i);
  node.meta.labels[kHostnameLabel] = node.meta.name;
  node.allocatable = allocatable;
  node.allocatable.Set(kPods, 110);
  node.capacity = node.allocatable;
  cache.UpsertNode(std::move(node));
}

void AddQueues(ClusterCache& cache, int count) {
  for (int q = 0; q < count; ++q) {
    Queue queue;
    queue.meta.name = StrCat("queue-", q);
    cache.UpsertQueue(std::move(queue));
  }
}

// Gang bench/<name> of `pods` pods of `request` in `queue`: running on `node` since `start`, or
// waiting in phase `waiting` (admitted) when `node` is empty.
void AddGang(ClusterCache& cache, const std::string& name, const std::string& queue, int pods,
             const Resources& request, const std::string& node, int64_t start = 0,
             PodGroupPhase waiting = PodGroupPhase::kInqueue) {
  PodGroup pg;
  pg.meta.name = name;
  pg.meta.namespace_ = "bench";
  pg.meta.uid = name;
  pg.min_member = pods;
  pg.queue = queue;
  pg.phase = node.empty() ? waiting : PodGroupPhase::kRunning;
  pg.meta.creation_timestamp = start;
  for (int p = 0; p < pods; ++p) {
    Pod pod;
    pod.meta.name = StrFormat("%s-worker-%d", name.c_str(), p);
    pod.meta.namespace_ = "bench";
    pod.meta.uid = pod.meta.name;
    pod.meta.annotations[kGroupNameAnnotation] = name;
    pod.scheduler_name = "lahar";
    pod.requests = request;
    pod.limits = request;
    pod.node_name = node;
    if (!node.empty()) {
      pod.phase = PodPhase::kRunning;
      pod.start_time_ms = start;
    }
    pg.min_resources += request;
    cache.UpsertPod(std::move(pod));
  }
  cache.UpsertPodGroup(std::move(pg));
}

void BuildCluster(ClusterCache& cache, int nodes, int gangs) {
  Lcg rng;
  for (int i = 0; i < nodes; ++i) AddNode(cache, i, i % 2 == 0 ? Make(64000, 512, 8) : Make(64000, 256, 0));
  AddQueues(cache, 4);
  for (int g = 0; g < gangs; ++g) {
    bool gpu = g % 10 < 3;  // 30% GPU gangs
    Resources request = gpu ? Make(4000, 32, 1) : Make(1000 * rng.Uniform(2, 4), rng.Uniform(4, 16), 0);
    AddGang(cache, StrFormat("gang-%05d", g), StrCat("queue-", g % 4), 10, request, "");
  }
}

// Nodes of 64 cpu and 8 GPUs, each full with one running gang of queue-0 (4 pods of 16 cpu and
// 2 GPUs), and `starving` gangs of the same shape in queue-1..3, admitted and waiting.
void BuildStarvingCluster(ClusterCache& cache, int nodes, int starving) {
  AddQueues(cache, 4);
  const Resources request = Make(16000, 64, 2);
  for (int i = 0; i < nodes; ++i) {
    AddNode(cache, i, Make(64000, 512, 8));
    AddGang(cache, StrFormat("running-%05d", i), "queue-0", 4, request, StrFormat("node-%05d", i), i);
  }
  for (int g = 0; g < starving; ++g) AddGang(cache, StrFormat("starving-%05d", g), StrCat("queue-", 1 + g % 3), 4, request, "");
}

// The default configuration without its evicting actions.
std::string NoEvictionsConfig() {
  auto config = ParseSchedulerConfig(DefaultSchedulerConfigYaml(), BuiltinRegistry());
  config->actions = {"enqueue", "allocate", "backfill"};
  return config->ToYaml();
}

// One session of `config_text` over the cache, best of `repeat`: seconds and the cycle's result.
std::pair<double, CycleResult> BestSession(const ClusterCache& cache, std::string_view config_text, int repeat) {
  auto config = ParseSchedulerConfig(config_text, BuiltinRegistry());
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", std::string(config.status().message()).c_str());
    std::exit(1);
  }
  double best = 1e9;
  CycleResult last;
  for (int r = 0; r < repeat; ++r) {
    ClusterSnapshot snapshot = cache.Snapshot(1'000'000);
    auto start = std::chrono::steady_clock::now();
    auto result = RunSchedulingCycle(std::move(snapshot), *config, BuiltinRegistry());
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!result.ok()) {
      std::fprintf(stderr, "%s\n", std::string(result.status().message()).c_str());
      std::exit(1);
    }
    last = *std::move(result);
  }
  return {best, std::move(last)};
}

int StarvingMain(int nodes, int starving, int repeat, const std::string& config_text) {
  if (std::getenv("LAHAR_BENCH_V") != nullptr) SetLogVerbosity(std::atoi(std::getenv("LAHAR_BENCH_V")));
  ClusterCache cache;
  BuildStarvingCluster(cache, nodes, starving);
  auto [session, result] = BestSession(cache, config_text, repeat);
  auto [baseline, unused] = BestSession(cache, NoEvictionsConfig(), repeat);
  std::printf("cluster: %d nodes full of running gangs of queue-0, %d starving gangs in queue-1..3\n", nodes,
              starving);
  std::printf("session:   %.1f ms, %zu pods evicted for the starving gangs (best of %d)\n", session * 1e3,
              result.evicts.size(), repeat);
  std::printf("baseline:  %.1f ms without the evicting actions (enqueue, allocate, backfill)\n", baseline * 1e3);
  std::printf("ratio:     %.2fx the baseline session\n", session / baseline);
  return 0;
}

// With --backlog N (issue 12): every node holds a running gang of queue-0 that leaves 16 cpu
// free, and N admitted gangs of queue-0 wait whose pods (32 cpu) fit no node, and which nothing
// may be evicted for (same queue, same priority). A first session learns that; then one new job
// that fits arrives, and the second session is timed: with the sessions' memory (WaitMemo) it
// costs what changed, without it (the baseline, same run) it re-examines the whole backlog.
// Builds the cluster of a second-session benchmark, and the job that arrives before it.
struct SecondSessionCluster {
  std::function<void(ClusterCache&)> build;
  std::function<void(ClusterCache&)> arrive;
};

// Times the second of two sessions over `cluster`, between which its job arrives, with and
// without the sessions' memory: (seconds with, binds, per-action figures with, seconds without,
// per-action figures without).
int SecondSessionMain(const SecondSessionCluster& cluster, int repeat, const std::string& config_text,
                      const std::string& describe) {
  if (std::getenv("LAHAR_BENCH_V") != nullptr) SetLogVerbosity(std::atoi(std::getenv("LAHAR_BENCH_V")));
  auto config = ParseSchedulerConfig(config_text, BuiltinRegistry());
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", std::string(config.status().message()).c_str());
    return 1;
  }
  auto second_session = [&](bool memo_enabled) {
    double best = 1e9;
    size_t binds = 0;
    std::string per_action;
    for (int r = 0; r < repeat; ++r) {
      ClusterCache cache;
      cluster.build(cache);
      WaitMemo memo(memo_enabled);
      memo.set_parks_jobs(true);  // as the simulator does; without the memory nothing is parked
      // Sessions as the simulator runs them (CycleRunner). The timed part starts once the first
      // snapshot is laid (`start`, and callgrind's count with the memory).
      CycleRunner cycles;
      auto run_session = [&](Millis now, std::chrono::steady_clock::time_point* start) {
        return cycles.Run(cache, now, *config, BuiltinRegistry(), &memo, [&] {
          if (start == nullptr) return;
          *start = std::chrono::steady_clock::now();
          if (memo_enabled) LAHAR_TIMED_REGION();
        });
      };
      // As the simulator and the daemon do: take the reasons and phases a session gave, and park
      // the jobs it says may be.
      auto apply = [&](const CycleResult& result) {
        for (const CycleResult::JobUpdate& u : result.job_updates) {
          if (u.waiting) cache.NoteWaitReported(u.job, *u.waiting);
          const PodGroup* group = cache.FindPodGroup(u.job);
          if (group != nullptr && group->phase != u.phase) (void)cache.SetPodGroupPhase(u.job, u.phase);
        }
        for (const CycleResult::Parkable& p : result.parkable) cache.ParkJobs(p.representative, p.members);
      };
      auto first = run_session(1'000'000, nullptr);
      if (!first.ok()) std::exit(1);
      apply(*first);
      if (cache.AnyParked()) {
        // A session with the parked jobs left out, in which nothing happened (most are): the
        // timed one is laid over what it handed back, as in a simulation.
        auto steady = run_session(1'000'500, nullptr);
        if (!steady.ok()) std::exit(1);
        apply(*steady);
      }
      cluster.arrive(cache);
      std::chrono::steady_clock::time_point start;
      auto result = run_session(1'001'000, &start);
      if (memo_enabled) LAHAR_TIMED_REGION();
      const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!result.ok()) std::exit(1);
      if (took < best) {
        per_action.clear();
        for (const auto& [action, micros] : result->action_micros) per_action += StrFormat(" %s %.1f", action.c_str(), micros / 1e3);
      }
      best = std::min(best, took);
      binds = result->binds.size();
    }
    return std::make_tuple(best, binds, per_action);
  };
  auto [with_memo, binds, with_actions] = second_session(true);
  auto [without_memo, unused, without_actions] = second_session(false);
  std::printf("cluster: %s\n", describe.c_str());
  std::printf("session:   %.1f ms, %zu pods bound (best of %d)\n", with_memo * 1e3, binds, repeat);
  std::printf("baseline:  %.1f ms, the same session without the sessions' memory\n", without_memo * 1e3);
  std::printf("ratio:     %.2fx the baseline session\n", with_memo / without_memo);
  std::printf("actions (ms), session: %s\n", with_actions.c_str());
  std::printf("actions (ms), baseline:%s\n", without_actions.c_str());
  return 0;
}

int BacklogMain(int nodes, int backlog, int repeat, const std::string& config_text) {
  SecondSessionCluster cluster;
  cluster.build = [&](ClusterCache& cache) {
    AddQueues(cache, 1);
    for (int i = 0; i < nodes; ++i) {
      AddNode(cache, i, Make(64000, 512, 8));
      AddGang(cache, StrFormat("running-%05d", i), "queue-0", 3, Make(16000, 64, 2), StrFormat("node-%05d", i));
    }
    for (int g = 0; g < backlog; ++g) AddGang(cache, StrFormat("waiting-%05d", g), "queue-0", 4, Make(32000, 64, 2), "");
  };
  cluster.arrive = [](ClusterCache& cache) { AddGang(cache, "new", "queue-0", 1, Make(8000, 16, 0), ""); };
  return SecondSessionMain(cluster, repeat, config_text,
                           StrFormat("%d nodes with 16 cpu free each, %d waiting gangs that fit nowhere, 1 new job "
                                     "that fits", nodes, backlog));
}

// With --pending N: the Philly trace's backlog. Every node of 8 GPUs is full with a running job
// of one of 15 queues; N jobs of 1 to 8 GPUs wait in those queues unadmitted (the cluster has no
// room), named in no order of their arrival. A first session refuses them all; then one more
// such job arrives, and the second session is timed.
int PendingMain(int nodes, int pending, int repeat, const std::string& config_text) {
  constexpr int kQueues = 15;
  auto add_pending = [](ClusterCache& cache, int g, Lcg& rng) {
    const int gpus = 1 << rng.Uniform(0, 3);
    AddGang(cache, StrFormat("pending-%06u-%d", rng.Next() % 1000000, g), StrCat("queue-", g % kQueues), 1,
            Make(6000 * gpus, 48 * gpus, gpus), "", g, PodGroupPhase::kPending);
  };
  SecondSessionCluster cluster;
  cluster.build = [&](ClusterCache& cache) {
    AddQueues(cache, kQueues);
    for (int i = 0; i < nodes; ++i) {
      AddNode(cache, i, Make(64000, 512, 8));
      AddGang(cache, StrFormat("running-%05d", i), StrCat("queue-", i % kQueues), 1, Make(48000, 384, 8),
              StrFormat("node-%05d", i));
    }
    Lcg rng;
    for (int g = 0; g < pending; ++g) add_pending(cache, g, rng);
  };
  cluster.arrive = [&](ClusterCache& cache) {
    Lcg rng;
    for (int g = 0; g <= pending; ++g) rng.Next();  // a name of its own
    add_pending(cache, pending, rng);
  };
  return SecondSessionMain(cluster, repeat, config_text,
                           StrFormat("%d full nodes of 8 GPUs, %d jobs of %d queues waiting unadmitted, 1 more "
                                     "arrives", nodes, pending, kQueues));
}

// The baseline: first fit over a flat array, no ordering, no plugins, no transactions.
int64_t FirstFit(const ClusterSnapshot& snapshot) {
  std::vector<Resources> free;
  for (const NodeInfo& n : snapshot.nodes) free.push_back(n.allocatable - n.used);
  int64_t placed = 0;
  size_t cursor = 0;
  for (const TaskInfo& task : snapshot.tasks) {
    for (size_t k = 0; k < free.size(); ++k) {
      size_t i = (cursor + k) % free.size();
      if (task.request.FitsIn(free[i])) {
        free[i] -= task.request;
        cursor = i;
        ++placed;
        break;
      }
    }
  }
  return placed;
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// With --topology N (issue 16): `nodes` nodes of 8 GPUs in three tiers of HyperNodes (leaves of
// 8 nodes, spines of 8 leaves, one tier-3 domain per 8 spines) and N admitted gangs of 8 pods x
// 4 GPUs, each with networkTopology hard at tier 1, placed by the default configuration plus
// network-topology-aware. The baseline is the same session over the same gangs without the
// constraint, the HyperNodes or the plugin.
int TopologyMain(int nodes, int gangs, int repeat) {
  auto build = [&](bool topology) {
    ClusterCache cache;
    for (int i = 0; i < nodes; ++i) AddNode(cache, i, Make(64000, 512, 8));
    AddQueues(cache, 4);
    if (topology) {
      // Tier t groups the members below it by 8: HyperNode <prefix><i> holds members 8i..8i+7
      // (names zero-padded to `width` digits).
      struct Names {
        const char* prefix;
        int width;
        std::string operator()(int i) const { return StrFormat("%s%0*d", prefix, width, i); }
      };
      auto add_tier = [&](int32_t tier, Names name, int members, HyperNodeMember::Type type, Names member_name) {
        const int count = (members + 7) / 8;
        for (int i = 0; i < count; ++i) {
          HyperNode hn;
          hn.meta.name = name(i);
          hn.tier = tier;
          for (int m = 8 * i; m < std::min(members, 8 * i + 8); ++m) {
            HyperNodeMember& member = hn.members.emplace_back();
            member.type = type;
            member.exact_name = member_name(m);
          }
          cache.UpsertHyperNode(std::move(hn));
        }
        return count;
      };
      const Names node{"node-", 5}, leaf{"leaf-", 4}, spine{"spine-", 3}, core{"core-", 2};
      const int leaves = add_tier(1, leaf, nodes, HyperNodeMember::Type::kNode, node);
      const int spines = add_tier(2, spine, leaves, HyperNodeMember::Type::kHyperNode, leaf);
      add_tier(3, core, spines, HyperNodeMember::Type::kHyperNode, spine);
    }
    for (int g = 0; g < gangs; ++g) {
      const std::string name = StrFormat("gang-%05d", g);
      AddGang(cache, name, StrCat("queue-", g % 4), 8, Make(4000, 32, 4), "");
      if (topology) {
        PodGroup pg = *cache.FindPodGroup(StrCat("bench/", name));
        pg.network_topology = NetworkTopology{.hard = true, .highest_tier_allowed = 1, .highest_tier_name = "", .invalid = ""};
        cache.UpsertPodGroup(std::move(pg));
      }
    }
    return cache;
  };
  const std::string with_plugin = StrCat(DefaultSchedulerConfigYaml(), "  - name: network-topology-aware\n");
  ClusterCache topology_cache = build(true);
  ClusterCache plain_cache = build(false);
  auto [session, result] = BestSession(topology_cache, with_plugin, repeat);
  auto [baseline, plain] = BestSession(plain_cache, DefaultSchedulerConfigYaml(), repeat);
  std::printf("cluster: %d nodes of 8 GPUs in 3 tiers of HyperNodes (8 nodes per leaf), %d hard tier-1 gangs of 8 x 4 GPUs\n",
              nodes, gangs);
  std::printf("session:   %.1f ms, %zu pods bound (best of %d)\n", session * 1e3, result.binds.size(), repeat);
  std::printf("baseline:  %.1f ms, %zu pods bound, without topology\n", baseline * 1e3, plain.binds.size());
  std::printf("ratio:     %.2fx the session without topology\n", session / baseline);
  return result.binds.size() == static_cast<size_t>(gangs) * 8 ? 0 : 2;
}

int Main(int argc, char** argv) {
  int nodes = 5000, gangs = 5000, repeat = 3, starving = 0, backlog = 0, pending = 0, topology = 0;
  std::string config_text(DefaultSchedulerConfigYaml());
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--config")) {  // another configuration, e.g. without reclaim
      std::ifstream in(argv[i + 1]);
      std::stringstream text;
      text << in.rdbuf();
      config_text = text.str();
    }
    if (!std::strcmp(argv[i], "--nodes")) nodes = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--gangs")) gangs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--repeat")) repeat = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--starving")) starving = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--backlog")) backlog = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--pending")) pending = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--topology")) topology = std::atoi(argv[i + 1]);
  }
  if (topology > 0) return TopologyMain(nodes, topology, repeat);
  if (backlog > 0) return BacklogMain(nodes, backlog, repeat, config_text);
  if (pending > 0) return PendingMain(nodes, pending, repeat, config_text);
  if (starving > 0) return StarvingMain(nodes, starving, repeat, config_text);
  ClusterCache cache;
  BuildCluster(cache, nodes, gangs);
  auto config = ParseSchedulerConfig(config_text, BuiltinRegistry());
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", std::string(config.status().message()).c_str());
    return 1;
  }
  double best_session = 1e9, best_snapshot = 1e9, best_baseline = 1e9;
  size_t placed = 0;
  int64_t baseline_placed = 0;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    ClusterSnapshot snapshot = cache.Snapshot(0);
    best_snapshot = std::min(best_snapshot, Since(t0));
    ClusterSnapshot copy = snapshot;
    auto t1 = std::chrono::steady_clock::now();
    baseline_placed = FirstFit(copy);
    best_baseline = std::min(best_baseline, Since(t1));
    auto t2 = std::chrono::steady_clock::now();
    auto result = RunSchedulingCycle(std::move(snapshot), *config, BuiltinRegistry());
    best_session = std::min(best_session, Since(t2));
    if (!result.ok()) {
      std::fprintf(stderr, "%s\n", std::string(result.status().message()).c_str());
      return 1;
    }
    placed = result->binds.size();
  }
  int64_t pods = static_cast<int64_t>(gangs) * 10;
  std::printf("cluster: %d nodes, %d gangs x 10 pods = %lld pods, 4 queues, default configuration\n", nodes,
              gangs, static_cast<long long>(pods));
  std::printf("session:   placed %zu pods in %.3f s = %.0f pods/s (best of %d)\n", placed, best_session,
              static_cast<double>(placed) / best_session, repeat);
  std::printf("snapshot:  built in %.3f s\n", best_snapshot);
  std::printf("baseline:  bare first-fit placed %lld pods in %.3f s = %.0f pods/s\n",
              static_cast<long long>(baseline_placed), best_baseline,
              static_cast<double>(baseline_placed) / best_baseline);
  std::printf("ratio:     session takes %.2fx the time of the bare first-fit loop per pod\n",
              (best_session / static_cast<double>(placed)) / (best_baseline / static_cast<double>(baseline_placed)));
  return placed == static_cast<size_t>(pods) ? 0 : 2;
}

}  // namespace
}  // namespace lahar

int main(int argc, char** argv) { return lahar::Main(argc, argv); }
