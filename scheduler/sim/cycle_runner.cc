#include "scheduler/sim/cycle_runner.h"

#include <algorithm>
#include <string>
#include <utility>

#include "api/status_macros.h"

namespace lahar {

absl::StatusOr<CycleResult> CycleRunner::Run(ClusterCache& cache, Millis now, const SchedulerConfig& config,
                                             const Registry& registry, WaitMemo* memo,
                                             const std::function<void()>& laid) {
  auto run = [&](bool first) -> absl::StatusOr<CycleResult> {
    const bool parked = cache.AnyParked();
    ClusterSnapshot& spent = parked ? spent_parked_ : spent_;
    ClusterSnapshot snapshot = parked ? cache.Snapshot(now, std::move(spent), ClusterCache::Layout::kLeaveOutParked)
                                      : cache.Snapshot(now, std::move(spent));
    if (first && laid) laid();
    return RunSchedulingCycle(std::move(snapshot), config, registry, memo, &spent);
  };
  if (cache.AnyParked()) ++parked_sessions_;
  ASSIGN_OR_RETURN(CycleResult result, run(/*first=*/true));
  // A stopped session runs again with the classes it needed laid out; a few times at most, as
  // each run may find more, and then over every job (which never stops).
  if (result.needs_parked_jobs()) ++rerun_sessions_;
  for (int rerun = 0; result.needs_parked_jobs(); ++rerun) {
    const CycleResult stopped = std::move(result);
    if (rerun < class_reruns_) {
      cache.UnparkClasses(stopped.parked_classes_needed);
    } else {
      cache.UnparkAll();
    }
    ASSIGN_OR_RETURN(result, run(/*first=*/false));
    // The session's time is every run's: the stopped ones' actions count in theirs.
    result.duration_micros += stopped.duration_micros;
    for (const std::pair<std::string, int64_t>& action : stopped.action_micros) {
      auto same = std::find_if(result.action_micros.begin(), result.action_micros.end(),
                               [&action](const auto& entry) { return entry.first == action.first; });
      if (same != result.action_micros.end()) same->second += action.second;
    }
  }
  return result;
}

}  // namespace lahar
