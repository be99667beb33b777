#include "actions/allocate/allocate.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "actions/allocate/allocator.h"
#include "api/log.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/queue_turns.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"
#include "scheduler/framework/wait_reasons.h"

namespace lahar {
namespace allocate_internal {

void Allocator::Run() {
  for (const NodeInfo& node : session_.nodes()) {
    if (!node.releasing.IsZero()) {
      any_releasing_ = true;
      break;
    }
  }

  // Jobs to visit, per queue: admitted, valid, with pending pods and short of their min.
  std::vector<std::vector<JobId>> jobs_of(session_.queues().size());
  for (JobId id : session_.LiveJobs()) {
    const JobInfo& job = session_.job(id);
    if (!IsAdmitted(job) || job.Count(TaskStatus::kPending) == 0) continue;
    // Fast path for the common case; jobs with role minimums are settled by TasksToReachMin.
    if (job.min_task_member.empty() &&
        job.ReadyCount() + job.Count(TaskStatus::kPipelined) >= job.min_available) {
      continue;
    }
    if (!QueueUsable(session_.queue(job.queue))) {
      session_.SetWaitReason(job.id, *QueueUnusable(session_.queue(job.queue)));
      continue;
    }
    // The session's memo answers most jobs; only an invalid one is asked why.
    if (!session_.JobValid(job)) {
      session_.SetWaitReason(job.id, *session_.JobInvalidReason(job));
      continue;
    }
    jobs_of[job.queue].push_back(job.id);
  }

  SetAsideDoomedJobs(jobs_of);

  // Only the queue whose turn it is changes its share until it is put back.
  QueueTurns turns(session_, "allocate", std::move(jobs_of));
  QueueId q = kNoId;
  while (turns.NextQueue(q)) {
    const QueueInfo& queue = session_.queue(q);
    if (session_.Overused(queue)) {
      LAHAR_LOG(2, "allocate") << "queue " << queue.name << " is overused; " << turns.Remaining(q).size()
                               << " jobs wait";
      for (JobId j : turns.Remaining(q)) {
        // What it asks beyond what it holds: its minResources when set, else its pods' requests.
        const JobInfo& job = session_.job(j);
        Resources need = (job.min_resources.IsZero() ? job.request : job.min_resources) - job.allocated;
        need.ClampNegativeToZero();
        session_.SetWaitReason(j, QueueLimitOrGeneral(session_, QueueCheck::kOverused, job, need, "deserved share"));
      }
      continue;  // not put back: its jobs all have their reason
    }
    const JobInfo& job = session_.job(turns.TakeJob(q));
    SettlePassedClasses(job);
    AllocateJob(job);
    NoteRepresentativeRefused(job);
    turns.PutBack(q);
  }

  // At the most the turns placed: the refusals that stand for every later turn are known.
  const std::vector<JobId> refused_to_the_end = RefusedToTheEnd();
  if (session_.NeedParkedClasses(ParkedClassesNotRefusedAlike(refused_to_the_end))) {
    for (auto it = held_.rbegin(); it != held_.rend(); ++it) (*it)->Discard();
    return;
  }
  NoteRefusedToTheEnd(refused_to_the_end);
  TellSetAside();

  // Held gangs bind in a later session, once the resources being released are free; what
  // they held returns to the session for the actions that follow.
  for (auto it = held_.rbegin(); it != held_.rend(); ++it) (*it)->Discard();
  held_.clear();
}

void Allocator::AllocateJob(const JobInfo& job) {
  std::optional<DomainCandidates> where = session_.JobDomains(job, /*for_eviction=*/false);
  if (!where) {
    const std::optional<AlikeKey> alike = AlikeKeyOf(job);
    if (Session::SharedWaitReason* same = alike ? alike_refusals_.Find(*alike) : nullptr) {
      session_.SetSharedWaitReason(job.id, *same);
      NoteRefusedInTurn(job, *alike, same->reason);
      return;
    }
    bool placed_nothing = false;
    if (std::optional<WaitReason> why = TryJob(job, &placed_nothing)) {
      if (alike && placed_nothing) {
        Session::SharedWaitReason& shared = alike_refusals_.Remember(*alike, *std::move(why));
        session_.SetSharedWaitReason(job.id, shared);
        NoteRefusedInTurn(job, *alike, shared.reason);
        return;
      }
      Wait(job, *std::move(why));
    }
    return;
  }
  while (const std::vector<NodeId>* domain = where->next()) {
    session_.SetJobScope(job.id, domain);
    std::optional<WaitReason> why = TryJob(job);
    if (!why) {
      if (!where->confine) session_.SetJobScope(job.id, nullptr);
      return;
    }
    if (why->kind != WaitKind::kNoFit) {
      session_.SetJobScope(job.id, nullptr);
      Wait(job, *std::move(why));
      return;
    }
  }
  session_.SetJobScope(job.id, nullptr);
  if (where->anywhere_after) {
    if (std::optional<WaitReason> why = TryJob(job)) Wait(job, *std::move(why));
    return;
  }
  Wait(job, where->none_fits());
}

void Allocator::Wait(const JobInfo& job, WaitReason reason) {
  LAHAR_LOG(2, "allocate") << "job " << job.key() << ": " << WaitReasonText(reason);
  session_.SetWaitReason(job.id, std::move(reason));
}

std::optional<Allocator::AlikeKey> Allocator::AlikeKeyOf(const JobInfo& job) {
  if (session_.wait_memo() == nullptr || !session_.wait_memo()->enabled()) return std::nullopt;
  if (!job.min_task_member.empty() || job.Count(TaskStatus::kPending) != static_cast<int32_t>(job.tasks.size())) {
    return std::nullopt;
  }
  const std::vector<TaskId>& lacking = TasksToReachMin(session_, job);
  if (lacking.empty()) return std::nullopt;
  for (TaskId t : lacking) {
    if (session_.task(t).shape == kNoShape) return std::nullopt;
  }
  return AlikeKey{MinShapesHash(session_, job), job.queue, job.priority, job.min_available,
                  static_cast<int32_t>(lacking.size())};
}

void Allocator::NoteRefusedInTurn(const JobInfo& job, const AlikeKey& key, const WaitReason& reason) {
  if (reason.kind != WaitKind::kQueueLimit || !session_.wait_memo()->parks_jobs()) return;
  auto [first, inserted] = refused_first_.try_emplace(key, job.id);
  if (!inserted) refused_alike_.emplace_back(job.id, first->second);
}

std::optional<WaitReason> Allocator::TryJob(const JobInfo& job, bool* placed_nothing) {
  const std::vector<TaskId> tasks = TasksToReachMin(session_, job);
  if (tasks.empty()) return std::nullopt;
  const QueueInfo& queue = session_.queue(job.queue);
  auto stmt = std::make_unique<Statement>(session_);
  int placed = 0;
  int pipelined = 0;
  bool queue_refused = false;                // once some node could have taken the task
  std::optional<FitErrors> why;              // the first unplaced task's fit errors
  std::vector<const TaskInfo*> gated;        // unplaced for their scheduling gates: the reason
  std::vector<NodeId> pipelined_on;
  auto note = [&](const TaskInfo& task, Failure& failure) {
    const FitErrors& errors = Explain(task, failure);
    if (errors.gated()) {
      gated.push_back(&task);
    } else if (!why) {
      why = errors;
    }
  };
  for (TaskId id : tasks) {
    const TaskInfo& task = session_.task(id);
    bool pipeline = false;
    Failure* failure = nullptr;
    if (!gated.empty()) {
      // The job waits for its gates: the rest of its min is only searched to count theirs.
      if (FindNode(task, stmt->empty(), pipeline, failure) == kNoId) note(task, *failure);
      continue;
    }
    if (!session_.Allocatable(queue, task)) {
      // A queue's deserved share is at most the cluster, so a full cluster trips the queue
      // check first. Name the queue only when some node could have taken the task.
      if (!why) {
        if (SomeNodeTakes(task, stmt->empty(), failure)) {
          queue_refused = true;
        } else {
          note(task, *failure);
        }
      }
      if (gated.empty()) break;
      continue;
    }
    NodeId node = FindNode(task, stmt->empty(), pipeline, failure);
    if (node == kNoId) {
      note(task, *failure);
      continue;
    }
    if (pipeline) {
      stmt->Pipeline(id, node);
      pipelined_on.push_back(node);
      ++pipelined;
    } else {
      stmt->Allocate(id, node);
      ++placed;
    }
  }
  const int unplaced = static_cast<int>(tasks.size()) - placed - pipelined;

  if (session_.JobReady(job)) {
    LAHAR_LOG(2, "allocate") << "job " << job.key() << ": " << placed << " pods bind, " << pipelined
                             << " pipelined";
    stmt->Commit();
    KeepJobFailures();
    return std::nullopt;
  }
  if (unplaced == 0 && pipelined > 0 && session_.JobPipelined(job)) {
    LAHAR_LOG(2, "allocate") << "job " << job.key() << ": held, " << pipelined
                             << " pods wait for resources being released";
    session_.SetWaitReason(job.id,
                           TerminatingForReason(session_, job, pipelined, ReleasingTasksOn(session_, pipelined_on)));
    held_.push_back(std::move(stmt));
    KeepJobFailures();
    return std::nullopt;
  }
  stmt->Discard();
  if (placed_nothing != nullptr) *placed_nothing = placed == 0 && pipelined == 0 && gated.empty();
  WaitReason reason;
  if (!gated.empty()) {
    // Nothing else can start the job before its gates are removed: that is why it waits.
    reason = SchedulingGatesReason(gated);
  } else if (queue_refused) {
    // Measured against the whole min the job still lacks, now that its placements are undone.
    Resources need;
    for (TaskId id : tasks) need += session_.task(id).request;
    reason = QueueLimitOrGeneral(session_, QueueCheck::kAllocate, job, need, "deserved share or capability");
  } else if (unplaced > 0) {
    reason = NoFitReason(job, unplaced, *why);
  } else {
    reason = WaitReason{.kind = WaitKind::kInvalid, .subject = "NotEnoughPods",
                        .detail = StrCat("gang not ready with ", job.ReadyCount() + placed + pipelined, "/",
                                         job.min_available, " pods: too few pending pods")};
  }
  job_unplaceable_.clear();
  return reason;
}

NodeId Allocator::FindNode(const TaskInfo& task, bool job_placed_nothing, bool& pipeline, Failure*& failure, Session::NodeSearch* search) {
  const Shape shape = ShapeOf(task);
  for (auto* memo : {&unplaceable_, &job_unplaceable_}) {
    if (memo->empty()) continue;
    auto it = memo->find(shape);
    if (it != memo->end()) {
      failure = &it->second;
      return kNoId;
    }
  }
  NodeId node = session_.FindBestNode(task, Placement::kIdle, /*elastic=*/false, nullptr, search);
  if (node != kNoId) {
    pipeline = false;
    return node;
  }
  // Without releasing pods the future idle resources are no larger than the idle ones.
  if (any_releasing_) {
    node = session_.FindBestNode(task, Placement::kFutureIdle, /*elastic=*/false, nullptr, search);
    if (node != kNoId) {
      pipeline = true;
      return node;
    }
  }
  auto& memo = job_placed_nothing ? unplaceable_ : job_unplaceable_;
  auto [it, inserted] = memo.try_emplace(shape);
  failure = &it->second;
  return kNoId;
}

bool Allocator::SomeNodeTakes(const TaskInfo& task, bool job_placed_nothing, Failure*& failure) {
  const Shape shape = ShapeOf(task);
  const bool numbered = task.shape != kNoShape;
  if (numbered) {
    auto it = taken_in_state_.find(shape);
    if (it != taken_in_state_.end() && it->second == session_.state_version()) return true;
  }
  Session::NodeSearch probe;
  bool pipeline = false;
  if (FindNode(task, job_placed_nothing, pipeline, failure, &probe) == kNoId) return false;
  if (numbered) taken_in_state_[shape] = session_.state_version();
  return true;
}

void Allocator::KeepJobFailures() {
  for (auto& [shape, summary] : job_unplaceable_) unplaceable_.try_emplace(shape, std::move(summary));
  job_unplaceable_.clear();
}

const FitErrors& Allocator::Explain(const TaskInfo& task, Failure& failure) {
  if (!failure.errors) {
    failure.errors.emplace();
    session_.FindBestNode(task, Placement::kIdle, /*elastic=*/false, &*failure.errors);
  }
  return *failure.errors;
}

}  // namespace allocate_internal

namespace {

using allocate_internal::Allocator;

class AllocateAction : public Action {
 public:
  std::string_view Name() const override { return "allocate"; }
  void Execute(Session& session) override { Allocator(session).Run(); }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewAllocateAction(const Arguments& arguments) {
  RETURN_IF_ERROR(ValidateNodeSearchArguments(arguments));
  return std::make_unique<AllocateAction>();
}

}  // namespace lahar
