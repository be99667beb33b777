// Scheduling cycles over a cache that parks jobs alike (ClusterCache::ParkJobs), as the simulator
// runs its sessions and the benchmarks repeat them: one rule for when a session that stopped for
// parked jobs runs again, and with which.
#ifndef LAHAR_SCHEDULER_SIM_CYCLE_RUNNER_H_
#define LAHAR_SCHEDULER_SIM_CYCLE_RUNNER_H_

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "api/cluster_info.h"
#include "cache/cluster_cache.h"
#include "scheduler/framework/config.h"
#include "scheduler/framework/cycle.h"
#include "scheduler/framework/registry.h"
#include "scheduler/framework/wait_memo.h"

namespace lahar {

class CycleRunner {
 public:
  // `class_reruns`: how often a session stopped for parked classes runs again with only those
  // classes back before it runs over every job. Any count gives the same decisions.
  explicit CycleRunner(int class_reruns = 3) : class_reruns_(class_reruns) {}

  // One session at `now`: over the jobs not parked when some are, else over every job. A run
  // that stops for parked classes runs again with them laid out; the result's timings are every
  // run's. Each snapshot is laid over the one the last cycle of its layout handed back.
  // `laid`, when set, is called once the first snapshot is laid out, before its cycle runs.
  absl::StatusOr<CycleResult> Run(ClusterCache& cache, Millis now, const SchedulerConfig& config,
                                  const Registry& registry, WaitMemo* memo,
                                  const std::function<void()>& laid = nullptr);

  // The cluster as the last cycle over every job left it.
  const ClusterSnapshot& last_every_job() const { return spent_; }
  // Sessions that left parked jobs out, and those of them that ran again with parked jobs back.
  int64_t parked_sessions() const { return parked_sessions_; }
  int64_t rerun_sessions() const { return rerun_sessions_; }

 private:
  int class_reruns_;
  ClusterSnapshot spent_;         // the last cycle's over every job, whose storage the next reuses
  ClusterSnapshot spent_parked_;  // the same, of the layout that leaves parked jobs out
  int64_t parked_sessions_ = 0, rerun_sessions_ = 0;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_SIM_CYCLE_RUNNER_H_
