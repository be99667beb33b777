#include "actions/backfill/backfill.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/framework/job_rules.h"
#include "api/log.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"
#include "scheduler/framework/wait_reasons.h"

namespace lahar {
namespace {

int32_t LiveTaskCount(const JobInfo& job) {
  return static_cast<int32_t>(job.tasks.size()) - job.Count(TaskStatus::kSucceeded) -
         job.Count(TaskStatus::kFailed);
}

class BackfillAction : public Action {
 public:
  std::string_view Name() const override { return "backfill"; }

  // Jobs in job order, each placing its min when it is best-effort or a single pod with no gang
  // waiting before it, then its best-effort extras. Only the jobs that may place something are
  // ranked: any other job with a min to reach only holds back the single pods after it, so of
  // those the first in job order is enough (a backlog of gangs costs a pass, not a sort).
  void Execute(Session& session) override {
    auto before = [&session](JobId a, JobId b) { return session.JobOrderLess(session.job(a), session.job(b)); };
    std::vector<JobId> jobs;      // may place something
    std::vector<JobId> blockers;  // only hold back what comes after them
    for (JobId id : session.LiveJobs()) {
      const JobInfo& job = session.job(id);
      if (!IsAdmitted(job) || job.Count(TaskStatus::kPending) == 0 || !QueueUsable(session.queue(job.queue))) continue;
      if (!session.JobValid(job)) continue;  // allocate has recorded why
      switch (Role(session, job)) {
        case JobRole::kNone:
          break;
        case JobRole::kBlocker:
          blockers.push_back(job.id);
          break;
        case JobRole::kMayPlace:
          jobs.push_back(job.id);
          break;
      }
    }
    if (jobs.empty()) return;  // (the blockers are then not ranked at all)
    std::optional<JobId> first_blocker;
    if (!blockers.empty()) first_blocker = *std::min_element(blockers.begin(), blockers.end(), before);
    SortInJobOrder(session, "backfill", jobs);  // as the last session ranked them, while that holds

    bool gang_waiting = false;  // a job earlier in job order still lacks its min
    for (JobId j : jobs) {
      if (first_blocker && before(*first_blocker, j)) gang_waiting = true;
      const JobInfo& job = session.job(j);
      std::vector<TaskId> min_tasks = TasksToReachMin(session, job);
      if (!min_tasks.empty()) {
        // A job that must share one network domain is allocate's to place, domain by domain.
        if (std::optional<DomainCandidates> where = session.JobDomains(job, /*for_eviction=*/false);
            where && !where->anywhere_after) {
          gang_waiting = true;
          continue;
        }
        const bool best_effort = std::all_of(min_tasks.begin(), min_tasks.end(),
                                             [&session](TaskId t) { return session.task(t).best_effort; });
        const bool single = job.min_available == 1 && LiveTaskCount(job) == 1;
        const bool tried = best_effort || (single && !gang_waiting);
        if (const int32_t parked_class = tried ? ClassRepresented(session, job.id) : -1; parked_class >= 0) {
          if (!FailsAsAllocateSaid(session, job, min_tasks)) return session.NeedParkedClass(parked_class);
          gang_waiting = true;
          continue;
        }
        if (!tried || !PlaceMin(session, job, min_tasks)) {
          gang_waiting = true;
          continue;
        }
      }
      PlaceBestEffortExtras(session, job);
    }
  }

 private:
  enum class JobRole {
    kNone,      // nothing to place: no min to reach and no best-effort pods
    kBlocker,   // a min that backfill never places (a gang, pods that ask for room)
    kMayPlace,  // a best-effort or single-pod min, best-effort extras, or a network-domain job
  };
  // The jobs parked behind a representative come after it in job order, so a try for it leaves
  // them as allocate told them: the session goes on without them only while the try fails for
  // the reason allocate gave (no node, or its queue's limit, as at its turn).
  static bool FailsAsAllocateSaid(Session& session, const JobInfo& job, const std::vector<TaskId>& min_tasks) {
    const WaitReason* told = session.ToldWaitReason(job.id);
    if (told == nullptr) return false;
    const WaitReason before = *told;  // a copy: the try may replace it
    if (PlaceMin(session, job, min_tasks)) return false;
    told = session.ToldWaitReason(job.id);
    return told != nullptr && *told == before;
  }

  // The parked class of admitted jobs `job` represents, or -1.
  static int32_t ClassRepresented(const Session& session, JobId job) {
    for (const Session::ParkedAdmitted& c : session.parked_admitted()) {
      if (c.representative == job) return c.parked_class;
    }
    return -1;
  }

  // What the job can be in this action, decided at its start: a job's min and pods change only
  // when the job itself is placed.
  static JobRole Role(Session& session, const JobInfo& job) {
    const std::vector<TaskId>& min_tasks = TasksToReachMin(session, job);
    if (min_tasks.empty()) {
      const bool extras = std::any_of(job.tasks.begin(), job.tasks.end(), [&session](TaskId t) {
        return session.task(t).status == TaskStatus::kPending && session.task(t).best_effort;
      });
      return extras ? JobRole::kMayPlace : JobRole::kNone;
    }
    // Whether a domain job waits can depend on what is placed before it: it keeps its turn.
    if (session.JobDomains(job, /*for_eviction=*/false)) return JobRole::kMayPlace;
    const bool best_effort =
        std::all_of(min_tasks.begin(), min_tasks.end(), [&session](TaskId t) { return session.task(t).best_effort; });
    const bool single = job.min_available == 1 && LiveTaskCount(job) == 1;
    return best_effort || single ? JobRole::kMayPlace : JobRole::kBlocker;
  }

  // Places the tasks completing the job's min on idle resources; commits when the job is then
  // ready, else rolls back and records why (as allocate: pods kept off every node by their
  // scheduling gates first, counted over the min).
  static bool PlaceMin(Session& session, const JobInfo& job, const std::vector<TaskId>& tasks) {
    const QueueInfo& queue = session.queue(job.queue);
    Statement stmt(session);
    std::optional<WaitReason> why;
    std::vector<const TaskInfo*> gated;
    for (TaskId id : tasks) {
      const TaskInfo& task = session.task(id);
      const bool allocatable = session.Allocatable(queue, task);
      NodeId node = session.FindBestNode(task, Placement::kIdle);
      if (node == kNoId) {  // the nodes are the more fundamental reason (as in allocate)
        FitErrors errors;
        session.FindBestNode(task, Placement::kIdle, /*elastic=*/false, &errors);
        if (errors.gated()) gated.push_back(&task);
        if (gated.empty()) {
          why = NoFitReason(job, static_cast<int32_t>(tasks.size() - stmt.size()), errors);
          break;
        }
      }
      if (!gated.empty()) continue;  // the job waits for its gates: only counting them now
      if (!allocatable) {
        Resources need;
        for (TaskId t : tasks) need += session.task(t).request;
        why = QueueLimitOrGeneral(session, QueueCheck::kAllocate, job, need, "deserved share or capability");
        break;
      }
      stmt.Allocate(id, node);
    }
    if (!why && gated.empty() && session.JobReady(job)) {
      LAHAR_LOG(2, "backfill") << "job " << job.key() << ": " << stmt.size() << " pods bind";
      stmt.Commit();
      return true;
    }
    stmt.Discard();
    if (!gated.empty()) {
      session.SetWaitReason(job.id, SchedulingGatesReason(gated));
    } else if (why) {
      session.SetWaitReason(job.id, *std::move(why));
    }
    return false;  // otherwise the gang plugin says what the job lacks
  }

  // Best-effort pods of a job that has its min: each one that finds a node binds.
  static void PlaceBestEffortExtras(Session& session, const JobInfo& job) {
    std::vector<TaskId> tasks;
    for (TaskId id : job.tasks) {
      const TaskInfo& task = session.task(id);
      if (task.status == TaskStatus::kPending && task.best_effort) tasks.push_back(id);
    }
    if (tasks.empty()) return;
    std::sort(tasks.begin(), tasks.end(),
              [&session](TaskId a, TaskId b) { return session.TaskOrderLess(session.task(a), session.task(b)); });
    const QueueInfo& queue = session.queue(job.queue);
    Statement stmt(session);
    for (TaskId id : tasks) {
      const TaskInfo& task = session.task(id);
      if (!session.Allocatable(queue, task)) break;
      NodeId node = session.FindBestNode(task, Placement::kIdle);
      if (node != kNoId) stmt.Allocate(id, node);
    }
    if (stmt.empty()) return;
    if (session.JobReady(job)) {
      LAHAR_LOG(2, "backfill") << "job " << job.key() << ": " << stmt.size() << " best-effort pods bind";
      stmt.Commit();
    }
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewBackfillAction(const Arguments& arguments) {
  RETURN_IF_ERROR(ValidateNodeSearchArguments(arguments));
  return std::make_unique<BackfillAction>();
}

}  // namespace lahar
