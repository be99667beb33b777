#include "scheduler/framework/job_rules.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <tuple>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "api/state_hash.h"
#include "api/strings.h"
#include "scheduler/framework/wait_memo.h"

namespace lahar {

Resources AdmissionRequest(const Session& session, const JobInfo& job) {
  Resources need;
  if (job.min_resources.IsZero()) {
    for (TaskId id : TasksToReachMin(session, job)) need += session.task(id).request;
    return need;
  }
  need = job.min_resources;
  need -= job.allocated;
  need.ClampNegativeToZero();
  return need;
}

Resources PlacedAndPipelinedRequests(const Session& session, const JobInfo& job) {
  Resources held = job.allocated;  // the placed ones
  for (TaskId t : job.tasks) {
    const TaskInfo& task = session.task(t);
    if (task.status == TaskStatus::kPipelined) held += task.request;
  }
  return held;
}

namespace {

std::vector<TaskId> ComputeTasksToReachMin(const Session& session, const JobInfo& job) {
  auto counts = [](TaskStatus s) {
    return IsPlaced(s) || s == TaskStatus::kPipelined || s == TaskStatus::kSucceeded;
  };
  int32_t total_deficit = job.min_available - job.ReadyCount() - job.Count(TaskStatus::kPipelined);

  // Per role with a minimum (TaskInfo::role_index): how many more it needs.
  PerRole deficits;
  int32_t role_deficit = 0;
  if (!job.min_task_member.empty()) {
    for (const auto& [role, min] : job.min_task_member) deficits.push_back(min);
    for (TaskId id : job.tasks) {
      const TaskInfo& task = session.task(id);
      if (task.role_index != kNoRoleMinimum && counts(task.status)) --deficits[task.role_index];
    }
    for (int32_t& deficit : deficits) {
      deficit = std::max(deficit, 0);
      role_deficit += deficit;
    }
  }
  if (total_deficit <= 0 && role_deficit == 0) return {};

  std::vector<TaskId> pending;
  for (TaskId id : job.tasks) {
    if (session.task(id).status == TaskStatus::kPending) pending.push_back(id);
  }
  auto less = [&session](TaskId a, TaskId b) { return session.TaskOrderLess(session.task(a), session.task(b)); };
  if (deficits.empty()) {
    const size_t k = std::min(pending.size(), static_cast<size_t>(total_deficit));
    std::partial_sort(pending.begin(), pending.begin() + static_cast<ptrdiff_t>(k), pending.end(), less);
    pending.resize(k);
    return pending;
  }
  // A pod of a role still short of its minimum is always needed; any other pod only while the
  // job needs more pods than the roles' shortfalls add up to.
  std::sort(pending.begin(), pending.end(), less);
  std::vector<TaskId> needed;
  for (TaskId id : pending) {
    if (total_deficit <= 0 && role_deficit == 0) break;
    const int32_t role = session.task(id).role_index;
    if (role != kNoRoleMinimum && deficits[role] > 0) {
      --deficits[role];
      --role_deficit;
      --total_deficit;
      needed.push_back(id);
    } else if (total_deficit > role_deficit) {
      --total_deficit;
      needed.push_back(id);
    }
  }
  return needed;
}

// MinShapesHash of `tasks`: shape numbers, or the fields of a task a cache did not number.
uint64_t ShapesHashOf(const Session& session, const std::vector<TaskId>& tasks) {
  StateHash hash;
  for (TaskId t : tasks) {
    const TaskInfo& task = session.task(t);
    if (task.shape != kNoShape) {
      hash.Add(task.shape);
    } else {
      hash.Add(uint64_t{0x5e1f}).Add(task.constraint_class).Add(task.request).Add(task.limit);
    }
  }
  return hash.value();
}

// The sessions' memory of the job's min (WaitMemo::PendingJobMin) while every task of it is
// pending, else null (or without the memory, or a job no cache made: no version).
WaitMemo::PendingJobMin* CarriedMin(const Session& session, const JobInfo& job) {
  WaitMemo* memo = session.wait_memo();
  if (memo == nullptr || !memo->enabled() || job.version == 0 || job.tasks.empty() ||
      job.Count(TaskStatus::kPending) != static_cast<int32_t>(job.tasks.size())) {
    return nullptr;
  }
  return &memo->PendingJobMinOf(job.version);
}

// The job's entry of a per-job memo table, made when first asked.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline Session::Memos::PerVersion& MemoOfJob(const Session& session,
                                                                         Session::Memos::PerJob& table,
                                                                         const JobInfo& job) {
  return table.Of(job.id, session.cluster().jobs.size());
}

// ReachMinMemo when the job's tasks changed since its memo was made (or none was): out of line,
// so that the lookup most calls end with stays small.
ABSL_ATTRIBUTE_NOINLINE Session::Memos::PerVersion& ReachMinMemoAfresh(const Session& session, const JobInfo& job) {
  Session::Memos::PerVersion& memo = MemoOfJob(session, session.memos().reach_min, job);
  const uint64_t version = session.job_tasks_version(job.id);
  WaitMemo::PendingJobMin* carried = CarriedMin(session, job);
  if (carried != nullptr && carried->known) {
    std::vector<TaskId> ids;
    ids.reserve(carried->offsets.size());
    for (int32_t offset : carried->offsets) ids.push_back(job.tasks.front() + offset);
    memo = {version, std::move(ids), carried->shapes, std::nullopt};
    return memo;
  }
  memo = {version, ComputeTasksToReachMin(session, job), std::nullopt, std::nullopt};
  if (carried != nullptr) {  // kept whole: the shapes too, which later sessions' plans ask for
    carried->known = true;
    for (TaskId t : memo.ids) carried->offsets.push_back(t - job.tasks.front());
    memo.shapes = carried->shapes = ShapesHashOf(session, memo.ids);
  }
  return memo;
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline Session::Memos::PerVersion& ReachMinMemo(const Session& session,
                                                                            const JobInfo& job) {
  Session::Memos::PerVersion* memo = session.memos().reach_min.Find(job.id);
  if (memo != nullptr && memo->version == session.job_tasks_version(job.id)) return *memo;
  return ReachMinMemoAfresh(session, job);
}

std::vector<TaskId> ComputeElasticWorkers(const Session& session, const JobInfo& job) {
  int32_t surplus = job.ReadyCount() - job.min_available;
  if (surplus <= 0) return {};
  std::vector<TaskId> placed = TasksInOrder(session, job, [](const TaskInfo& t) { return IsPlaced(t.status); });
  MasterTasks master(session, job);
  // Per role with a minimum: how many more ready than it needs.
  PerRole slack = ReadyPerRole(session, job, /*count_pipelined=*/false);
  size_t i = 0;
  for (const auto& [role, min] : job.min_task_member) slack[i++] -= min;
  std::vector<TaskId> workers;
  for (auto it = placed.rbegin(); it != placed.rend() && surplus > 0; ++it) {
    const TaskInfo& task = session.task(*it);
    if (task.status == TaskStatus::kAllocated || task.status == TaskStatus::kBinding) break;
    if (master.Contains(task)) continue;
    if (task.role_index != kNoRoleMinimum) {
      if (slack[task.role_index] <= 0) continue;
      --slack[task.role_index];
    }
    workers.push_back(task.id);
    --surplus;
  }
  return workers;
}

}  // namespace

// The sessions' memory of the job's elastic workers (WaitMemo::JobWorkers) while its tasks are
// as the snapshot laid them out, else null (or without the memory, or a job no cache made).
WaitMemo::JobWorkers* CarriedWorkers(const Session& session, const JobInfo& job) {
  WaitMemo* memo = session.wait_memo();
  if (memo == nullptr || !memo->enabled()) return nullptr;
  const std::optional<uint64_t> key = CarriedWorkersKey(session, job);
  return key ? &memo->JobWorkersOf(*key) : nullptr;
}

std::optional<uint64_t> CarriedWorkersKey(const Session& session, const JobInfo& job) {
  // Version 0 of the job's tasks: none moved in this session (or every move was undone).
  if (job.version == 0 || job.tasks.empty() || session.job_tasks_version(job.id) != 0) return std::nullopt;
  // Its tasks' states then are as its objects and the node set say (a task on a node that is
  // gone has failed): hashing those versions stands for hashing the states.
  return StateHash().Add(uint64_t{0xe1a5}).Add(job.version).Add(session.cluster().node_set_version).value();
}

const std::vector<TaskId>& ElasticWorkers(const Session& session, const JobInfo& job) {
  // A job without surplus has none, which costs less to see than the memo (most live jobs of a
  // backlog: the passes over them ask every one).
  static const std::vector<TaskId>* const kNone = new std::vector<TaskId>();
  if (job.ReadyCount() <= job.min_available) return *kNone;
  Session::Memos::PerVersion& memo = MemoOfJob(session, session.memos().elastic_workers, job);
  const uint64_t version = session.job_tasks_version(job.id);
  if (memo.version == version) return memo.ids;
  WaitMemo::JobWorkers* carried = CarriedWorkers(session, job);
  if (carried != nullptr && carried->known) {
    std::vector<TaskId> ids;
    ids.reserve(carried->offsets.size());
    for (int32_t offset : carried->offsets) ids.push_back(job.tasks.front() + offset);
    memo = {version, std::move(ids), std::nullopt, std::nullopt};
    return memo.ids;
  }
  memo = {version, ComputeElasticWorkers(session, job), std::nullopt, std::nullopt};
  if (carried != nullptr) {
    carried->known = true;
    for (TaskId t : memo.ids) carried->offsets.push_back(t - job.tasks.front());
  }
  return memo.ids;
}

const Resources& ElasticWorkerRequests(const Session& session, const JobInfo& job) {
  static const Resources* const kNone = new Resources();
  const std::vector<TaskId>& workers = ElasticWorkers(session, job);  // the memo, made current
  if (workers.empty()) return *kNone;
  Session::Memos::PerVersion& memo = MemoOfJob(session, session.memos().elastic_workers, job);
  if (!memo.requests) {
    Resources sum;
    for (TaskId t : workers) {
      const TaskInfo& task = session.task(t);
      if (task.node != kNoId && session.node(task.node).schedulable) sum += task.request;
    }
    memo.requests = std::move(sum);
  }
  return *memo.requests;
}

const std::vector<TaskId>& TasksToReachMin(const Session& session, const JobInfo& job) {
  return ReachMinMemo(session, job).ids;
}

uint64_t MinShapesHash(const Session& session, const JobInfo& job) {
  Session::Memos::PerVersion& memo = ReachMinMemo(session, job);
  if (!memo.shapes) memo.shapes = ShapesHashOf(session, memo.ids);
  return *memo.shapes;
}

const std::vector<TaskId>* UnplacedMinTasks(const Session& session, const JobInfo& job) {
  const std::vector<TaskId>& tasks = TasksToReachMin(session, job);
  // Complete when, with these placed, the count and every role reach their minimum.
  if (job.ReadyCount() + job.Count(TaskStatus::kPipelined) + static_cast<int32_t>(tasks.size()) <
      job.min_available) {
    return nullptr;
  }
  if (!job.min_task_member.empty()) {
    PerRole have = ReadyPerRole(session, job, /*count_pipelined=*/true);
    for (TaskId t : tasks) {
      if (session.task(t).role_index != kNoRoleMinimum) ++have[session.task(t).role_index];
    }
    if (!EveryRoleReachesMin(job, have)) return nullptr;
  }
  return &tasks;
}

HoldingsByPriority::HoldingsByPriority(const Session& session) : per_queue_(session.cluster().queues.size()) {
  // First what each priority holds, found by a scan: a queue's jobs have few priorities.
  for (JobId id : session.LiveJobs()) {  // the others hold nothing
    const JobInfo& job = session.job(id);
    if (job.queue == kNoId || job.allocated.IsZero()) continue;
    std::vector<std::pair<int32_t, Resources>>& held = per_queue_[job.queue];
    auto it = std::find_if(held.begin(), held.end(), [&](const auto& step) { return step.first == job.priority; });
    if (it == held.end()) it = held.insert(held.end(), {job.priority, Resources()});
    it->second += job.allocated;
  }
  // Then, by ascending priority, what the priorities below each hold.
  for (std::vector<std::pair<int32_t, Resources>>& steps : per_queue_) {
    std::sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    Resources below;
    for (auto& [priority, amount] : steps) {
      Resources held = std::move(amount);
      amount = below;
      below += held;
    }
    steps.emplace_back(INT32_MAX, std::move(below));  // below any priority above the highest held
  }
}

std::shared_ptr<const HoldingsByPriority> HoldingsByPriority::Of(const Session& session) {
  Session::Memos& memos = session.memos();
  if (memos.holdings_by_priority == nullptr || memos.holdings_by_priority_version != session.state_version()) {
    memos.holdings_by_priority = std::make_shared<const HoldingsByPriority>(session);
    memos.holdings_by_priority_version = session.state_version();
  }
  return memos.holdings_by_priority;
}

const Resources& HoldingsByPriority::Below(QueueId queue, int32_t priority) const {
  const std::vector<std::pair<int32_t, Resources>>& steps = per_queue_[queue];
  // The first step at or above `priority` holds the sum of every priority below it.
  // Never the end: the last step is at INT32_MAX.
  return std::lower_bound(steps.begin(), steps.end(), priority,
                          [](const std::pair<int32_t, Resources>& step, int32_t p) { return step.first < p; })
      ->second;
}

std::optional<WaitReason> QueueUnusable(const QueueInfo& queue) {
  if (QueueUsable(queue)) return std::nullopt;
  if (!queue.broken.empty()) return WaitReason{.kind = WaitKind::kInvalid, .subject = "QueueUnusable", .detail = queue.broken};
  if (!queue.IsLeaf()) return WaitReason{.kind = WaitKind::kNotLeafQueue, .subject = queue.name};
  return std::nullopt;
}

namespace {

// `jobs` in job order from the order `remembered` (creation orders) gave them in the last session,
// when it still holds for those of them it lists: those stay in it, the others are sorted and
// merged in. False, and `jobs` as it was, when it no longer holds or a job has no creation order
// of its own.
// Finds a job by its creation order (a strictly increasing arrival counter): a table indexed by
// the order when the orders are about as many as the jobs (waiting jobs arrived close together),
// else a hash map.
class ByCreationOrder {
 public:
  // False when two jobs share an order or one has none of its own.
  bool Fill(const Session& session, const std::vector<JobId>& jobs) {
    int64_t low = INT64_MAX;
    int64_t high = INT64_MIN;
    for (JobId j : jobs) {
      const JobInfo& job = session.job(j);
      if (!job.has_pod_group) return false;
      low = std::min(low, job.creation_order);
      high = std::max(high, job.creation_order);
    }
    dense_ = !jobs.empty() && high - low < 4 * static_cast<int64_t>(jobs.size()) + 64;
    if (dense_) {
      low_ = low;
      table_.assign(static_cast<size_t>(high - low + 1), kNoId);
    } else {
      map_.reserve(jobs.size());
    }
    for (JobId j : jobs) {
      const int64_t order = session.job(j).creation_order;
      if (dense_) {
        JobId& slot = table_[static_cast<size_t>(order - low_)];
        if (slot != kNoId) return false;
        slot = j;
      } else if (!map_.emplace(order, j).second) {
        return false;
      }
    }
    left_ = jobs.size();
    return true;
  }
  // The job of `order` not taken yet, taken; kNoId when there is none.
  JobId Take(int64_t order) {
    JobId found = kNoId;
    if (dense_) {
      if (order < low_ || order - low_ >= static_cast<int64_t>(table_.size())) return kNoId;
      std::swap(found, table_[static_cast<size_t>(order - low_)]);
    } else if (auto it = map_.find(order); it != map_.end()) {
      found = it->second;
      map_.erase(it);
    }
    if (found != kNoId) --left_;
    return found;
  }
  // The jobs not taken, in no particular order.
  std::vector<JobId> Left() const {
    std::vector<JobId> left;
    left.reserve(left_);
    if (dense_) {
      for (JobId j : table_) {
        if (j != kNoId) left.push_back(j);
      }
    } else {
      for (const auto& [order, j] : map_) left.push_back(j);
    }
    return left;
  }

 private:
  bool dense_ = false;
  int64_t low_ = 0;
  std::vector<JobId> table_;
  absl::flat_hash_map<int64_t, JobId> map_;
  size_t left_ = 0;
};

// `jobs` in job order from the order `remembered` (creation orders) gave them in the last session,
// when it still holds for those of them it lists: those stay in it, the others are sorted and
// merged in. False, and `jobs` as it was, when it no longer holds or a job has no creation order
// of its own.
template <typename Less>
bool MergeIntoRemembered(const Session& session, const std::vector<int64_t>& remembered, Less less,
                         std::vector<JobId>& jobs) {
  ByCreationOrder by_creation;
  if (!by_creation.Fill(session, jobs)) return false;
  std::vector<JobId> kept;  // the jobs the last session listed too, in its order
  kept.reserve(jobs.size());
  for (int64_t order : remembered) {
    if (const JobId j = by_creation.Take(order); j != kNoId) kept.push_back(j);
  }
  if (!std::is_sorted(kept.begin(), kept.end(), less)) return false;
  std::vector<JobId> fresh = by_creation.Left();
  std::sort(fresh.begin(), fresh.end(), less);
  jobs.clear();
  std::merge(kept.begin(), kept.end(), fresh.begin(), fresh.end(), std::back_inserter(jobs), less);
  return true;
}

}  // namespace

void SortInJobOrder(const Session& session, std::string_view list, std::vector<JobId>& jobs) {
  auto less = [&session](JobId a, JobId b) { return session.JobOrderLess(session.job(a), session.job(b)); };
  WaitMemo* memo = session.wait_memo();
  if (memo == nullptr || !memo->enabled()) {
    std::sort(jobs.begin(), jobs.end(), less);
    return;
  }
  std::vector<int64_t>& remembered = memo->OrderOf(list, !session.cluster().parked.empty());
  if (remembered.empty() || !MergeIntoRemembered(session, remembered, less, jobs)) {
    std::sort(jobs.begin(), jobs.end(), less);
  }
  remembered.clear();
  for (JobId j : jobs) {
    const JobInfo& job = session.job(j);
    if (!job.has_pod_group) {  // no creation order of its own: nothing to remember
      remembered.clear();
      return;
    }
    remembered.push_back(job.creation_order);
  }
}

const std::vector<JobId>& StarvingJobIds(const Session& session) {
  Session::Memos::PerVersion& memo = session.memos().starving_jobs;
  if (memo.version == session.state_version()) return memo.ids;
  memo.ids.clear();
  for (JobId id : session.LiveJobs()) {  // a Pending job is not ElasticEligible
    const JobInfo& job = session.job(id);
    if (MinHadByCount(job)) continue;  // most live jobs: they lack no task
    if (!ElasticEligible(session, job)) continue;
    const std::vector<TaskId>* missing = UnplacedMinTasks(session, job);
    if (missing == nullptr) continue;
    const bool needs_room =
        std::any_of(missing->begin(), missing->end(), [&](TaskId t) { return !session.task(t).best_effort; });
    if (needs_room) memo.ids.push_back(id);
  }
  memo.version = session.state_version();
  return memo.ids;
}

std::vector<JobId> StarvingJobs(const Session& session) {
  Session::Memos::PerVersion& memo = session.memos().starving_in_order;
  if (memo.version == session.state_version()) return memo.ids;
  memo.ids = StarvingJobIds(session);
  SortInJobOrder(session, "starving", memo.ids);
  memo.version = session.state_version();
  return memo.ids;
}

bool ParkableWhileAdmitted(const Session& session, const JobInfo& job) {
  if (job.phase != PodGroupPhase::kInqueue || !job.has_pod_group || job.measured || job.network_topology ||
      !job.min_task_member.empty() || job.tasks.empty() ||
      job.Count(TaskStatus::kPending) != static_cast<int32_t>(job.tasks.size()) ||
      session.HasOwnDeadline(job.id)) {
    return false;
  }
  return std::none_of(job.tasks.begin(), job.tasks.end(), [&](TaskId t) {
    const TaskInfo& task = session.task(t);
    return task.best_effort || task.gated || task.shape == kNoShape;
  });
}

bool AdmittedAlike(const Session& session, const JobInfo& a, const JobInfo& b) {
  if (a.queue != b.queue || a.priority != b.priority || a.min_available != b.min_available ||
      a.preemptable != b.preemptable || a.tasks.size() != b.tasks.size() || !(a.min_resources == b.min_resources)) {
    return false;
  }
  for (size_t i = 0; i < a.tasks.size(); ++i) {
    const TaskInfo& x = session.task(a.tasks[i]);
    const TaskInfo& y = session.task(b.tasks[i]);
    if (x.shape != y.shape || x.constraint_class != y.constraint_class || x.task_priority != y.task_priority ||
        x.role_index != y.role_index || x.preemptable != y.preemptable || !(x.request == y.request)) {
      return false;
    }
  }
  return true;
}

const std::vector<int32_t>& StarvingClassOf(const Session& session) {
  Session::Memos& memos = session.memos();
  if (memos.starving_classes_version == session.state_version()) return memos.starving_class_of;
  std::vector<int32_t>& class_of = memos.starving_class_of;
  class_of.assign(session.cluster().jobs.size(), -1);
  absl::flat_hash_map<std::tuple<QueueId, int32_t, uint64_t>, int32_t> classes;
  for (JobId id : StarvingJobIds(session)) {
    const JobInfo& job = session.job(id);
    if (session.JobDomains(job, /*for_eviction=*/true)) continue;
    auto [it, inserted] = classes.try_emplace(std::make_tuple(job.queue, job.priority, MinShapesHash(session, job)),
                                              static_cast<int32_t>(classes.size()));
    class_of[id] = it->second;
  }
  memos.starving_classes_version = session.state_version();
  return class_of;
}

}  // namespace lahar
