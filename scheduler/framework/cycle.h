// One scheduling cycle: open a session on a snapshot, run the configured actions, close it,
// and hand back what it decided in terms of object names (for the simulator and the daemon).
#ifndef LAHAR_SCHEDULER_FRAMEWORK_CYCLE_H_
#define LAHAR_SCHEDULER_FRAMEWORK_CYCLE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/cluster_info.h"
#include "api/wait_reason.h"
#include "scheduler/framework/config.h"
#include "scheduler/framework/registry.h"
#include "scheduler/framework/wait_memo.h"

namespace lahar {

struct CycleResult {
  struct Bind {
    std::string pod;  // namespace/name
    std::string job;
    std::string node;
  };
  struct Evict {
    std::string pod;
    std::string job;
    std::string node;
    std::string reason;
  };
  struct JobUpdate {
    std::string job;
    PodGroupPhase phase;
    // Why the job waits, when it does (spec 7): one object for the parked jobs told it alike.
    std::shared_ptr<const WaitReason> waiting;
    bool scaled;
    // The PodGroup condition's reason and message for `waiting`; empty when it does not wait.
    std::string_view reason() const { return waiting ? ConditionReason(*waiting) : std::string_view(); }
    std::string message() const { return waiting ? WaitReasonText(*waiting) : std::string(); }
  };
  std::vector<Bind> binds;
  std::vector<Evict> evicts;
  std::vector<JobUpdate> job_updates;
  // Per queue (by name): resources its jobs hold and its deserved share, when a plugin
  // (proportion) computed one.
  struct QueueState {
    std::string queue;
    Resources allocated;
    std::optional<Resources> deserved;
  };
  std::vector<QueueState> queues;
  // The session stopped (Session::NeedParkedClass): nothing else here holds but its timings and
  // the classes it needs. Its owner runs it again over a snapshot with those parked classes laid
  // out (ClusterCache::UnparkClasses), or, after a few such runs, with every job
  // (ClusterCache::UnparkAll).
  std::vector<int32_t> parked_classes_needed;  // sorted
  bool needs_parked_jobs() const { return !parked_classes_needed.empty(); }
  // Waiting jobs the owner may park (ClusterCache::ParkJobs), by the snapshot's job ids: each
  // was refused as `representative` was, for what they share alone. Only when the memo says the
  // owner parks jobs (WaitMemo::parks_jobs).
  struct Parkable {
    JobId representative;
    std::vector<JobId> members;
  };
  std::vector<Parkable> parkable;
  // Wall time of the session and of each action (not part of any deterministic output).
  std::vector<std::pair<std::string, int64_t>> action_micros;
  int64_t duration_micros = 0;  // wall time of the session (not part of any deterministic output)
};

// `memo`, when given, carries what one session learns about waiting work to the next (see
// WaitMemo); the caller keeps it between cycles with the same configuration. `spent`, when
// given, receives the snapshot the session worked on, for ClusterCache::Snapshot to reuse.
absl::StatusOr<CycleResult> RunSchedulingCycle(ClusterSnapshot snapshot, const SchedulerConfig& config,
                                               const Registry& registry, WaitMemo* memo = nullptr,
                                               ClusterSnapshot* spent = nullptr);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_CYCLE_H_
