// Allocate's jobs set aside (their whole min fits no node) and the jobs it notes parkable: the
// set-aside and queue-refused jobs each told as the first alike them (Allocator).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "actions/allocate/allocator.h"
#include "api/log.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/wait_reasons.h"

namespace lahar::allocate_internal {

void Allocator::NoteParkable(const JobInfo& job, JobId judged) {
  if (judged == job.id || !session_.wait_memo()->parks_jobs()) return;
  const JobInfo& representative = session_.job(judged);
  if (ParkableWhileAdmitted(session_, job) && ParkableWhileAdmitted(session_, representative) &&
      AdmittedAlike(session_, job, representative) && session_.JobOrderLess(representative, job) &&
      session_.JobOrderTiesAlike(job) && session_.JobOrderTiesAlike(representative)) {
    session_.NoteParkable(job.id, judged);
  }
}

void Allocator::NoteSetAsideParkable() {
  if (doomed_.size() < 2 || !session_.wait_memo()->parks_jobs()) return;
  // Alike jobs have equal buckets: a job is compared with the classes of its bucket only.
  using Bucket = std::tuple<QueueId, int32_t, int32_t, size_t, int32_t>;
  absl::flat_hash_map<Bucket, std::vector<int32_t>> classes_of;
  std::vector<JobId> first;                     // per class, in job order
  std::vector<int32_t> class_of(doomed_.size(), -1);  // per job set aside
  for (size_t i = 0; i < doomed_.size(); ++i) {
    const JobInfo& job = session_.job(doomed_[i].job);
    if (!ParkableWhileAdmitted(session_, job)) continue;
    std::vector<int32_t>& classes = classes_of[Bucket{job.queue, job.priority, job.min_available, job.tasks.size(),
                                                       session_.task(job.tasks.front()).shape}];
    auto same = std::find_if(classes.begin(), classes.end(),
                             [&](int32_t c) { return AdmittedAlike(session_, session_.job(first[c]), job); });
    if (same == classes.end()) {
      class_of[i] = static_cast<int32_t>(first.size());
      classes.push_back(class_of[i]);
      first.push_back(job.id);
      continue;
    }
    class_of[i] = *same;
    if (session_.JobOrderLess(job, session_.job(first[*same]))) first[*same] = job.id;
  }
  for (size_t i = 0; i < doomed_.size(); ++i) {
    if (class_of[i] >= 0) NoteParkable(session_.job(doomed_[i].job), first[class_of[i]]);
  }
}

bool Allocator::RefusedAsTold(JobId id) {
  const JobInfo& job = session_.job(id);
  const WaitReason* told = session_.ToldWaitReason(id);
  if (told == nullptr || told->kind != WaitKind::kQueueLimit || session_.Overused(session_.queue(job.queue))) {
    return false;
  }
  const std::vector<TaskId> tasks = TasksToReachMin(session_, job);
  Failure* failure = nullptr;
  if (tasks.empty() || !SomeNodeTakes(session_.task(tasks.front()), /*job_placed_nothing=*/true, failure)) return false;
  Resources need;
  for (TaskId t : tasks) need += session_.task(t).request;
  return QueueLimitOrGeneral(session_, QueueCheck::kAllocate, job, need, "deserved share or capability") == *told;
}

std::vector<JobId> Allocator::RefusedToTheEnd() {
  std::vector<JobId> refused;
  for (const auto& [key, first] : refused_first_) {
    if (RefusedAsTold(first)) refused.push_back(first);
  }
  std::sort(refused.begin(), refused.end());
  return refused;
}

void Allocator::NoteRepresentativeRefused(const JobInfo& job) {
  const std::vector<Session::ParkedAdmitted>& parked = session_.parked_admitted();
  if (parked.empty() || job.Count(TaskStatus::kPending) != static_cast<int32_t>(job.tasks.size())) return;
  for (size_t i = 0; i < parked.size(); ++i) {
    if (parked[i].representative != job.id) continue;
    const std::optional<AlikeKey> alike = AlikeKeyOf(job);
    if (alike && alike_refusals_.Find(*alike) != nullptr) {
      if (refused_in_state_.empty()) refused_in_state_.assign(parked.size(), kNoState);
      refused_in_state_[i] = session_.state_version();
    }
    return;
  }
}

bool Allocator::StillInRefusedState(size_t parked_class) const {
  return parked_class < refused_in_state_.size() && refused_in_state_[parked_class] == session_.state_version();
}

void Allocator::SettlePassedClasses(const JobInfo& job) {
  const std::vector<Session::ParkedAdmitted>& parked = session_.parked_admitted();
  if (parked.empty()) return;
  if (settled_.empty()) settled_.assign(parked.size(), false);
  for (size_t i = 0; i < parked.size(); ++i) {
    if (settled_[i] || !session_.ComesAfterParkedClass(job, parked[i].parked_class)) continue;
    if (StillInRefusedState(i) || RefusedAsTold(parked[i].representative)) settled_[i] = true;
  }
}

void Allocator::NoteRefusedToTheEnd(const std::vector<JobId>& refused_to_the_end) {
  for (const auto& [member, first] : refused_alike_) {
    if (std::binary_search(refused_to_the_end.begin(), refused_to_the_end.end(), first)) {
      NoteParkable(session_.job(member), first);
    }
  }
}

std::vector<int32_t> Allocator::ParkedClassesNotRefusedAlike(const std::vector<JobId>& refused_to_the_end) const {
  const std::vector<Session::ParkedAdmitted>& parked = session_.parked_admitted();
  std::vector<int32_t> not_alike;
  auto to_the_end = [&](JobId job) {
    return std::binary_search(refused_to_the_end.begin(), refused_to_the_end.end(), job);
  };
  for (size_t i = 0; i < parked.size(); ++i) {
    // Refused as it was told until the turns passed its class, or in a state that lasted, or to
    // the end, or later in its turns alike a job that was (the class's first, laid out ahead of
    // it), or set aside.
    const JobId representative = parked[i].representative;
    const bool alike = (i < settled_.size() && settled_[i]) || StillInRefusedState(i) || to_the_end(representative) ||
                       std::any_of(refused_alike_.begin(), refused_alike_.end(),
                                   [&](const std::pair<JobId, JobId>& p) {
                                     return p.first == representative && to_the_end(p.second);
                                   }) ||
                       std::any_of(doomed_.begin(), doomed_.end(),
                                   [representative](const DoomedJob& d) { return d.job == representative; });
    if (!alike) not_alike.push_back(parked[i].parked_class);
  }
  return not_alike;
}

void Allocator::TellSetAside() {
  struct Told {
    int32_t pods, of;
    Session::SharedWaitReason shared;
  };
  absl::flat_hash_map<Shape, std::vector<Told>, ShapeHash, ShapeEq> reasons_of;
  for (const DoomedJob& d : doomed_) {
    const JobInfo& job = session_.job(d.job);
    std::vector<Told>& told = reasons_of[d.shape];
    auto same = std::find_if(told.begin(), told.end(),
                             [&](const Told& t) { return t.pods == d.pods && t.of == job.min_available; });
    if (same == told.end()) {
      WaitReason reason = told.empty() ? NoFitReason(job, d.pods, *unplaceable_.at(d.shape).errors)
                                       : told.front().shared.reason;
      reason.pods = d.pods;
      reason.of = job.min_available;
      same = told.insert(told.end(), Told{d.pods, job.min_available, {std::move(reason)}});
      same->shared.judged = job.id;
    }
    LAHAR_LOG(2, "allocate") << "job " << job.key() << ": " << WaitReasonText(same->shared.reason);
    session_.SetSharedWaitReason(job.id, same->shared);
  }
  NoteSetAsideParkable();
}

void Allocator::SetAsideDoomedJobs(std::vector<std::vector<JobId>>& jobs_of) {
  const bool set_aside = session_.wait_memo() != nullptr && session_.wait_memo()->enabled();
  std::vector<std::vector<DoomedJob>> doomed_of(jobs_of.size());
  std::vector<Resources> growth(jobs_of.size());  // what each queue's other jobs may place
  absl::flat_hash_map<Shape, bool, ShapeHash, ShapeEq> fits_nowhere;
  // The same answers, for numbered shapes over every node (most tasks), by number: a lookup
  // per job of a backlog. -1: not asked yet.
  std::vector<int8_t> nowhere_by_number;
  auto nowhere = [&](const TaskInfo& task) {
    const Shape shape = ShapeOf(task);
    int8_t* by_number = nullptr;
    if (shape.number != kNoShape && shape.scope == nullptr) {
      const auto index = static_cast<size_t>(shape.number) * 2 + (shape.gated ? 1 : 0);
      if (index >= nowhere_by_number.size()) nowhere_by_number.resize(index + 1, -1);
      by_number = &nowhere_by_number[index];
      if (*by_number >= 0) return *by_number == 1;
    }
    auto [it, inserted] = fits_nowhere.try_emplace(shape, false);
    if (!inserted) return it->second;
    // Whether a search would find a node, which leaves the actions' shared search state as it was.
    bool none = !session_.SomeNodeFits(task, Placement::kIdle);
    if (none && any_releasing_) none = !session_.SomeNodeFits(task, Placement::kFutureIdle);
    if (none) {
      Failure failure;
      failure.errors.emplace();
      session_.FindBestNode(task, Placement::kIdle, /*elastic=*/false, &*failure.errors);
      unplaceable_.try_emplace(shape, std::move(failure));
    }
    it->second = none;
    if (by_number != nullptr) *by_number = none ? 1 : 0;
    return none;
  };
  for (QueueId q = 0; q < static_cast<QueueId>(jobs_of.size()); ++q) {
    std::vector<JobId>& jobs = jobs_of[q];
    auto kept = jobs.begin();
    for (JobId j : jobs) {
      const JobInfo& job = session_.job(j);
      const MinTasks min = MinTasksOf(job);
      auto fits_nowhere_ungated = [&](TaskId t) { return !session_.task(t).gated && nowhere(session_.task(t)); };
      const bool doomed = !min.tasks.empty() &&
                          std::all_of(min.tasks.begin(), min.tasks.end(), fits_nowhere_ungated) &&
                          !session_.JobReady(job) && !session_.JobDomains(job, /*for_eviction=*/false);
      if (doomed && set_aside) {
        doomed_of[q].push_back({j, min.pods, ShapeOf(session_.task(min.tasks.front()))});
        continue;
      }
      if (!doomed) {
        for (TaskId t : min.tasks) {
          for (int32_t i = 0; i < min.copies; ++i) growth[q] += session_.task(t).request;
        }
      }
      *kept++ = j;
    }
    jobs.erase(kept, jobs.end());
  }
  const std::vector<bool> may_become_overused = session_.MayBecomeOverused(growth);
  for (QueueId q = 0; q < static_cast<QueueId>(jobs_of.size()); ++q) {
    if (doomed_of[q].empty()) continue;
    if (may_become_overused[q] || session_.Overused(session_.queue(q))) {
      for (const DoomedJob& d : doomed_of[q]) jobs_of[q].push_back(d.job);
    } else {
      doomed_.insert(doomed_.end(), doomed_of[q].begin(), doomed_of[q].end());
    }
  }
}

Allocator::MinTasks Allocator::MinTasksOf(const JobInfo& job) const {
  if (std::optional<std::pair<int32_t, TaskId>> one = MinOfOneShape(job)) {
    return MinTasks{one->first, one->first, {one->second}};
  }
  const std::vector<TaskId>& tasks = TasksToReachMin(session_, job);
  return MinTasks{static_cast<int32_t>(tasks.size()), 1, {tasks.begin(), tasks.end()}};
}

std::optional<std::pair<int32_t, TaskId>> Allocator::MinOfOneShape(const JobInfo& job) const {
  if (!job.min_task_member.empty()) return std::nullopt;
  const int32_t deficit = job.min_available - job.ReadyCount() - job.Count(TaskStatus::kPipelined);
  const int32_t pods = std::min(deficit, job.Count(TaskStatus::kPending));
  if (pods <= 0) return std::nullopt;
  const TaskInfo* first = nullptr;
  for (TaskId t : job.tasks) {
    const TaskInfo& task = session_.task(t);
    if (task.status != TaskStatus::kPending) continue;
    if (first == nullptr) {
      first = &task;
    } else if ((task.shape == kNoShape || task.shape != first->shape) &&  // one shape: one class, request
               (task.constraint_class != first->constraint_class || task.gated != first->gated ||
                !(task.request == first->request))) {
      return std::nullopt;
    }
  }
  return std::make_pair(pods, first->id);
}

}  // namespace lahar::allocate_internal
