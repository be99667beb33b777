// A job's state, why it waits and what would let it start (spec 7): what `lahar-sim explain`,
// the daemon's /debug/explain and `kubectl lahar why` show. The reason is the one the
// scheduling session gave (never recomputed here); the remedies are read off the cluster the
// session saw.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_EXPLAIN_H_
#define LAHAR_SCHEDULER_FRAMEWORK_EXPLAIN_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/cluster_info.h"
#include "api/wait_reason.h"
#include "scheduler/framework/cycle.h"

namespace lahar {

struct JobExplanation {
  std::string job;    // namespace/name
  std::string queue;
  std::string phase{};  // the PodGroup phase
  int32_t min = 0, placed = 0, pending = 0;
  // While it waits: the reason's kind, words (WaitReasonText) and PodGroup condition reason.
  bool waiting = false;
  std::string kind{}, reason{}, condition_reason{};
  // What would let it start, e.g. "2 jobs of queue b hold 12 nvidia.com/gpu beyond their
  // deserved share and are reclaimable".
  std::vector<std::string> remedies{};
};

// `queues` are the session's queue figures (CycleResult::queues, for deserved shares).
JobExplanation ExplainJob(const ClusterSnapshot& cluster, const std::vector<CycleResult::QueueState>& queues,
                          const JobInfo& job, const std::optional<WaitReason>& reason);

// Lines for a terminal: the job, its state, its reason and what would let it start.
std::string FormatExplanation(const JobExplanation& explanation);

// The explanation as JSON (the daemon's /debug/explain), and read back (kubectl lahar why).
std::string ExplanationJson(const JobExplanation& explanation);
absl::StatusOr<JobExplanation> ParseExplanationJson(std::string_view json);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_EXPLAIN_H_
