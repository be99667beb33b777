// The kinds of hook a plugin registers with a session (Session::Add*Fn), and how their votes read.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_HOOKS_H_
#define LAHAR_SCHEDULER_FRAMEWORK_HOOKS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "api/cluster_info.h"
#include "api/wait_reason.h"
#include "scheduler/framework/placement.h"

namespace lahar {

// Votes of the pipelined / enqueueable hooks.
inline constexpr int kPermit = 1;
inline constexpr int kAbstain = 0;
inline constexpr int kReject = -1;

using JobCompareFn = std::function<int(const JobInfo&, const JobInfo&)>;  // <0: left first
using QueueCompareFn = std::function<int(const QueueInfo&, const QueueInfo&)>;
using TaskCompareFn = std::function<int(const TaskInfo&, const TaskInfo&)>;
using PredicateFn = std::function<FitResult(const TaskInfo&, const NodeInfo&)>;
using NodeScoreFn = std::function<double(const TaskInfo&, const NodeInfo&)>;
using JobTestFn = std::function<bool(const JobInfo&)>;
using JobVoteFn = std::function<int(const JobInfo&)>;
using JobCountFn = std::function<int32_t(const JobInfo&)>;
using JobValidFn = std::function<std::optional<WaitReason>(const JobInfo&)>;  // why, if invalid
using QueueTestFn = std::function<bool(const QueueInfo&)>;
// Per queue: whether it would be Overused once every queue q's own jobs held `growth[q]` more.
using QueueGrowthTestFn = std::function<std::vector<bool>(const std::vector<Resources>& growth)>;
using AllocatableFn = std::function<bool(const QueueInfo&, const TaskInfo&)>;
// Why the cluster cannot take a job being admitted (kind `admission`), or nullopt when it can;
// `need` is what admitting it asks (AdmissionRequest).
using ClusterAdmissionFn = std::function<std::optional<WaitReason>(const JobInfo& job, const Resources& need)>;
// Which queue rule a QueueLimitFn explains: admitting the job (the JobEnqueueable vote),
// placing `request` more of it (Allocatable), or its queue being Overused.
enum class QueueCheck { kAdmit, kAllocate, kOverused };
// Why the job's queue refused it under `check` (kind `queue-limit`), or nullopt when the
// plugin's rule passes; the plugin that refused explains with the same rule it voted by.
using QueueLimitFn = std::function<std::optional<WaitReason>(QueueCheck check, const JobInfo& job, const Resources& request)>;
using JobEnqueuedFn = std::function<void(const JobInfo& job, const Resources& need)>;
// Whether a hook that judges admission answers for this job from its admission facts alone:
// its queue, priority, phase, minResources and the request admission judges (AdmissionRequest).
// Two jobs it says so of, alike in those facts, get the same answer in the same session state
// (Session::state_version), so enqueue judges the second by the first. Unset: every job is
// judged on its own.
using AdmissionFactsFn = std::function<bool(const JobInfo&)>;
// Whether a job-order hook compares this job equal to every job of its priority that it says so
// of, while both wait holding nothing. Jobs that every hook ties keep the session's own order
// among them (creation time, then arrival, then key), which the simulator's parked jobs follow
// (ClusterCache::ParkJobs). Unset: the hook may tell any two jobs apart.
using JobOrderTiesFn = std::function<bool(const JobInfo&)>;
// Returns the subset of `candidates` the plugin allows to be evicted for `preemptor`.
using VictimsFn =
    std::function<std::vector<TaskId>(const TaskInfo& preemptor, const std::vector<TaskId>& candidates)>;

// Network-topology placement (spec 3.3): the domains (node sets) where a job's min may be placed
// whole, in the order to try them. A hook answers for jobs it has an opinion on.
struct DomainCandidates {
  // The next domain to try (sorted node ids), or nullptr when there is none left. Lazy, so that
  // a job placed in its first domain costs one lookup, not a pass over every domain. The
  // domains it walks must not change between calls (no placements outside the tries).
  std::function<const std::vector<NodeId>*()> next = []() -> const std::vector<NodeId>* { return nullptr; };
  bool anywhere_after = false;                       // none holds it: place it anywhere (soft)
  bool confine = false;  // hard: the job's later pods stay in the domain that took its min
  // Why the job waits when no domain holds it (hard); called only then.
  std::function<WaitReason()> none_fits;
};
// `for_eviction`: the domains where evictions could make room (not only those with room now).
using JobDomainsFn = std::function<std::optional<DomainCandidates>(const JobInfo& job, bool for_eviction)>;

// Called when a task starts (allocate, pipeline) or stops (evict, discard) taking resources,
// so plugins like drf and proportion keep their shares current within the session.
struct EventHandler {
  std::function<void(const TaskInfo&)> on_allocate;
  std::function<void(const TaskInfo&)> on_deallocate;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_HOOKS_H_
