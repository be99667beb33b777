// The daemon's /ui and /debug/queues at issue 18's scale: 1,000 queues and 50,000 waiting jobs
// (one pod each, none fits). Prints the CPU time of one page (median of 20) and of the
// WaitBoard's update after a session, against the session itself measured in the same run.
//   build-release/bin/ui_bench [--queues 1000] [--jobs 50000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "api/strings.h"
#include "cache/cluster_cache.h"
#include "scheduler/builtins.h"
#include "scheduler/daemon/wait_board.h"
#include "scheduler/framework/config.h"
#include "scheduler/framework/cycle.h"

namespace lahar {
namespace {

double CpuMillis() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

template <typename Fn>
double MedianMillis(int runs, Fn fn) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const double start = CpuMillis();
    fn();
    times.push_back(CpuMillis() - start);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int Main(int argc, char** argv) {
  int queues = 1000, jobs = 50000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--queues") == 0) queues = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--jobs") == 0) jobs = std::atoi(argv[i + 1]);
  }
  ClusterCache cache(CacheOptions{{"lahar"}, "default"});
  Node node;
  node.meta.name = "node-0";
  node.allocatable.Set(kCpu, 1000);
  node.allocatable.Set(kPods, 110);
  node.capacity = node.allocatable;
  cache.UpsertNode(std::move(node));
  for (int q = 0; q < queues; ++q) {
    Queue queue;
    queue.meta.name = StrCat("queue-", q);
    queue.deserved.Set(kCpu, 1000);
    cache.UpsertQueue(std::move(queue));
  }
  for (int j = 0; j < jobs; ++j) {
    PodGroup pg;
    pg.meta.name = StrCat("job-", j);
    pg.meta.namespace_ = "bench";
    pg.meta.uid = pg.meta.name;
    pg.queue = StrCat("queue-", j % queues);
    pg.phase = PodGroupPhase::kInqueue;
    Pod pod;
    pod.meta.name = StrCat(pg.meta.name, "-0");
    pod.meta.namespace_ = "bench";
    pod.meta.uid = pod.meta.name;
    pod.meta.annotations[kGroupNameAnnotation] = pg.meta.name;
    pod.scheduler_name = "lahar";
    pod.requests.Set(kCpu, 2000);
    cache.UpsertPod(std::move(pod));
    cache.UpsertPodGroup(std::move(pg));
  }
  absl::StatusOr<SchedulerConfig> config = ParseSchedulerConfig(DefaultSchedulerConfigYaml(), BuiltinRegistry());
  if (!config.ok()) return 1;
  const ClusterSnapshot snapshot = cache.Snapshot(0);
  double session_start = CpuMillis();
  absl::StatusOr<CycleResult> result = RunSchedulingCycle(snapshot, *config, BuiltinRegistry());
  const double session = CpuMillis() - session_start;
  if (!result.ok()) return 1;
  WaitBoard board([&snapshot] { return snapshot; });
  const double update = MedianMillis(5, [&] { board.Update(snapshot, *result, 0); });
  size_t bytes = 0;
  const double page = MedianMillis(20, [&] { bytes = board.Page({"GET", "/ui", ""}).body.size(); });
  const double tree = MedianMillis(20, [&] { board.Queues({"GET", "/debug/queues", ""}); });
  std::printf("%d queues, %d waiting jobs: session %.1f ms CPU; WaitBoard update %.1f ms (%.2fx the session); "
              "/ui %.1f ms, %zu bytes (target 100 ms); /debug/queues %.1f ms\n",
              queues, jobs, session, update, update / session, page, bytes, tree);
  return 0;
}

}  // namespace
}  // namespace lahar

int main(int argc, char** argv) { return lahar::Main(argc, argv); }
