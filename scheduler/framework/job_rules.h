// A job's rules, in one place (spec section 2): admitted, the tasks that complete its min, min
// placed (ready), starving, its elastic workers (the surplus above min) and its fulfillment.
// Shared by the plugins (gang, elastic), every action, the simulator and the daemon, so that
// "placed last", "evicted first", "reclaimable at admission" and "starving" agree. Part of the
// framework because plugins and actions both build on it (neither may depend on the other).
//
// Definitions, for a job with min m:
// - max = the job's pods that have not failed (its owner's replicas);
// - ready = placed pods plus succeeded ones (what gang readiness counts);
// - fulfillment = (ready - m) / (max - m), exactly 1 when max <= m. Kept as a fraction so that
//   equal scores compare equal (2/4 == 3/6) and ties fall to the stated tie-breaks;
// - the master: when the job's tasks have different task priorities, every task of the highest
//   priority; when they are all equal, the first task in task order (the lowest index, rank 0);
// - elastic workers: placed tasks taken in reverse task order (highest index first), skipping the
//   master and any task whose role would fall below its minTaskMember, at most ready - m of them.
//   The walk stops at a task placed in the running session (Allocated / Binding): a pod being
//   bound now is never a victim, nor is anything before it in task order.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_ELASTIC_WORKERS_H_
#define LAHAR_SCHEDULER_FRAMEWORK_ELASTIC_WORKERS_H_

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "api/cluster_info.h"
#include "api/wait_reason.h"
#include "scheduler/framework/session.h"

namespace lahar {

// The requests of the job's placed and pipelined tasks: what it holds or is promised on nodes.
Resources PlacedAndPipelinedRequests(const Session& session, const JobInfo& job);
inline Resources HeldRequests(const Session& session, const JobInfo& job) {
  // Pipelined tasks are made by the session, and few: most jobs hold their placed requests.
  return job.Count(TaskStatus::kPipelined) == 0 ? job.allocated : PlacedAndPipelinedRequests(session, job);
}

// Whether allocate, backfill and the evicting actions consider the job at all: it names an
// existing queue and has been admitted (Inqueue, or Running / Unknown after that). Inline: every
// action's pass over the live jobs asks it first.
inline bool IsAdmitted(const JobInfo& job) {
  return job.queue != kNoId && (job.phase == PodGroupPhase::kInqueue || job.phase == PodGroupPhase::kRunning ||
                                job.phase == PodGroupPhase::kUnknown);
}

// The pending tasks of `job` that, placed together, bring it to its min, in session task order:
// enough pods for min_available and for every role's minTaskMember, skipping pods of roles whose
// minimum is met while other roles still need theirs. Placed, pipelined and succeeded tasks
// count as had. Empty when the job already has its min; shorter than needed when the job has
// too few pending pods (the gang plugin declares such jobs invalid).
// The result is the session's memo: valid until the job's tasks next change (copy it to keep it).
const std::vector<TaskId>& TasksToReachMin(const Session& session, const JobInfo& job);
// A hash of what decides where those tasks fit (constraint class, requests, limits: their
// TaskInfo::shape where numbered), in order: jobs with equal hashes need the same room.
uint64_t MinShapesHash(const Session& session, const JobInfo& job);

// What admitting the job asks of the cluster: its minResources minus what it already holds. A
// PodGroup without minResources asks for the requests of the pods that would complete its min.
Resources AdmissionRequest(const Session& session, const JobInfo& job);

// <0 when `a` is less fulfilled than `b`, 0 when equal.
inline int CompareFulfillment(const Fulfillment& a, const Fulfillment& b) {
  const int64_t l = a.numerator * b.denominator;  // counts of pods: no overflow
  const int64_t r = b.numerator * a.denominator;
  return l < r ? -1 : (l > r ? 1 : 0);
}

// The job's tasks that satisfy `keep`, in task order.
template <typename Keep>
std::vector<TaskId> TasksInOrder(const Session& session, const JobInfo& job, Keep keep) {
  std::vector<TaskId> out;
  for (TaskId t : job.tasks) {
    if (keep(session.task(t))) out.push_back(t);
  }
  std::sort(out.begin(), out.end(), [&](TaskId a, TaskId b) {
    return session.TaskOrderLess(session.task(a), session.task(b));
  });
  return out;
}

// True for the master task(s) of the job (see the definitions above).
class MasterTasks {
 public:
  MasterTasks(const Session& session, const JobInfo& job) {
    int32_t highest = INT32_MIN;
    int32_t lowest = INT32_MAX;
    for (TaskId t : job.tasks) {
      highest = std::max(highest, session.task(t).task_priority);
      lowest = std::min(lowest, session.task(t).task_priority);
    }
    if (job.tasks.empty()) return;
    if (highest != lowest) {
      by_priority_ = true;
      highest_ = highest;
      return;
    }
    rank0_ = job.tasks.front();
    for (TaskId t : job.tasks) {
      if (session.TaskOrderLess(session.task(t), session.task(rank0_))) rank0_ = t;
    }
  }
  bool Contains(const TaskInfo& task) const {
    return by_priority_ ? task.task_priority == highest_ : task.id == rank0_;
  }

 private:
  bool by_priority_ = false;
  int32_t highest_ = 0;
  TaskId rank0_ = kNoId;
};

// Per role with a minTaskMember (TaskInfo::role_index): a count, or a minimum.
using PerRole = absl::InlinedVector<int32_t, 4>;

// The job's tasks (of `tasks`, the snapshot's) whose status passes `counts`, per role with a
// minTaskMember.
template <typename Pred>
PerRole CountPerRole(const JobInfo& job, const std::vector<TaskInfo>& tasks, Pred counts) {
  PerRole out(job.min_task_member.size(), 0);
  if (out.empty()) return out;
  for (TaskId id : job.tasks) {
    const TaskInfo& task = tasks[id];
    if (task.role_index != kNoRoleMinimum && counts(task.status)) ++out[task.role_index];
  }
  return out;
}

// Ready tasks (placed or succeeded) per role with a minTaskMember.
inline PerRole ReadyPerRole(const Session& session, const JobInfo& job, bool count_pipelined) {
  return CountPerRole(job, session.cluster().tasks, [count_pipelined](TaskStatus s) {
    return IsPlaced(s) || s == TaskStatus::kSucceeded || (count_pipelined && s == TaskStatus::kPipelined);
  });
}

// Whether `count` reaches every role's minTaskMember.
inline bool EveryRoleReachesMin(const JobInfo& job, const PerRole& count) {
  size_t i = 0;
  for (const auto& [role, min] : job.min_task_member) {
    if (count[i++] < min) return false;
  }
  return true;
}

// The job's elastic workers in eviction order (highest index first); see the definitions above.
// Kept per session while the job's tasks keep their states: every victim order asks for them;
// and from one session to the next (WaitMemo::JobWorkers) while the job is as laid out. The
// answer is the session's memo: valid until the job's tasks next change (copy it to keep it).
const std::vector<TaskId>& ElasticWorkers(const Session& session, const JobInfo& job);
// The key WaitMemo carries the job's elastic workers under, while no task of it moved in the
// session; nullopt otherwise, or for a job no cache made (no version).
std::optional<uint64_t> CarriedWorkersKey(const Session& session, const JobInfo& job);

// Requests of the job's elastic workers that sit on schedulable nodes: what taking them back
// would free for other jobs. Admission (enqueue) counts these as reclaimable. Kept with the
// job's workers in the session's memo: admission's headroom and the elastic vote both sum them.
const Resources& ElasticWorkerRequests(const Session& session, const JobInfo& job);

// The same over every job.
inline Resources ElasticWorkerRequests(const Session& session) {
  Resources sum;
  for (JobId id : session.LiveJobs()) sum += ElasticWorkerRequests(session, session.job(id));  // the others hold nothing
  return sum;
}

// TasksToReachMin, or null when the job does not have enough pending pods to reach its min (it
// cannot be helped now). The session's memo: it holds until the job's tasks change, so a caller
// that changes them while reading it keeps a copy.
const std::vector<TaskId>* UnplacedMinTasks(const Session& session, const JobInfo& job);

// Enough ready tasks (placed or succeeded) for the job's min, roles aside: what MinPlaced asks
// first, a count cheap enough to pass over a backlog with.
inline bool MinReadyByCount(const JobInfo& job) { return job.ReadyCount() >= job.min_available; }
// The job lacks no task of its min, seen from its counts alone: ready and pipelined tasks reach
// min_available, and no role has a minimum of its own, or every task is ready or pipelined and
// every role has its minimum of tasks (TasksToReachMin is then empty).
inline bool MinHadByCount(const JobInfo& job) {
  const int32_t had = job.ReadyCount() + job.Count(TaskStatus::kPipelined);
  if (had < job.min_available) return false;
  return job.min_task_member.empty() ||
         (job.roles_have_min_tasks && had == static_cast<int32_t>(job.tasks.size()));
}

// The job's min is placed: enough ready tasks overall and per role, and the job-ready hooks
// (gang) agree. Pipelined tasks do not count: they are promises, not pods.
inline bool MinPlaced(const Session& session, const JobInfo& job) {
  if (!MinReadyByCount(job)) return false;
  if (!job.min_task_member.empty() && !EveryRoleReachesMin(job, ReadyPerRole(session, job, /*count_pipelined=*/false))) {
    return false;
  }
  return session.JobReady(job);
}

// What each queue's jobs hold, by job priority: the room `preempt` could make in a queue for a
// job of higher priority, which enqueue and proportion count at admission (spec 3).
class HoldingsByPriority {
 public:
  explicit HoldingsByPriority(const Session& session);
  // The session's, as it is now: made once per session state (proportion at its opening and
  // enqueue after it most often read the same state).
  static std::shared_ptr<const HoldingsByPriority> Of(const Session& session);
  // What the jobs of `queue` with a priority below `priority` hold.
  const Resources& Below(QueueId queue, int32_t priority) const;

 private:
  // Per queue, by ascending priority: each priority its jobs hold something at, with what the
  // jobs below it hold; last, INT32_MAX with what all hold.
  std::vector<std::vector<std::pair<int32_t, Resources>>> per_queue_;
};

// Why no job of `queue` can be scheduled (spec 2.1), or nullopt: it is broken (a parent that
// does not exist, a cycle) or it has child queues (jobs go to leaf queues only).
std::optional<WaitReason> QueueUnusable(const QueueInfo& queue);
// QueueUnusable says nothing: asked of every job of a backlog, without making a reason.
inline bool QueueUsable(const QueueInfo& queue) { return queue.broken.empty() && queue.IsLeaf(); }

// A job the elastic actions serve: valid, in a known queue, and admitted (Inqueue or Running).
inline bool ElasticEligible(const Session& session, const JobInfo& job) {
  if (job.queue == kNoId) return false;
  const QueueInfo& queue = session.queue(job.queue);
  if (!queue.IsLeaf() || !queue.broken.empty()) return false;
  if (job.phase != PodGroupPhase::kInqueue && job.phase != PodGroupPhase::kRunning) return false;
  return session.JobValid(job);
}

// Sorts `jobs` in job order (Session::JobOrderLess, a total order). With the sessions' memory,
// the order the list named `list` had in the last session is checked first: when the jobs it
// held are still in that order (n comparisons), only the jobs new to it are sorted and merged in,
// instead of sorting all (n log n comparisons of every plugin's job order). Jobs without a
// PodGroup (no creation order of their own) are always sorted whole.
void SortInJobOrder(const Session& session, std::string_view list, std::vector<JobId>& jobs);

// An admitted job a session may leave out while it waits as jobs alike it do (ClusterCache::
// ParkJobs, allocate's jobs that fit nowhere): Inqueue with every task pending, each needing room
// and ungated, a PodGroup without network topology, throughput reports, role minimums or a
// deadline of its own (Session::HasOwnDeadline).
bool ParkableWhileAdmitted(const Session& session, const JobInfo& job);
// Whether two such jobs are alike in everything a session reads of a waiting admitted job: its
// queue, priority, min, minResources and preemptability, and its pods' shapes (requests,
// constraints) and priorities, one by one.
bool AdmittedAlike(const Session& session, const JobInfo& a, const JobInfo& b);

// Starving jobs, by id: eligible jobs whose min is not covered by ready and pipelined tasks and
// that have the pending pods to reach it (a new Inqueue job, a running job whose min was raised
// or which lost a pod). A job whose missing pods are all best-effort is not starving: it needs
// no room, and backfill places it.
const std::vector<JobId>& StarvingJobIds(const Session& session);
// The same, in job order (JobOrderLess): the order the evicting actions serve them in.
std::vector<JobId> StarvingJobs(const Session& session);
// Per job id: the class of a starving job that a plan for it could share with others, else -1.
// Jobs of one class have the same queue, priority and unplaced min (MinShapesHash), and no
// network domain to stay in: in one state, a plan fails for one as for the others (the evicting
// actions' failures are kept by what a class shares, VictimOrderCache::FailsAlike).
const std::vector<int32_t>& StarvingClassOf(const Session& session);

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_ELASTIC_WORKERS_H_
