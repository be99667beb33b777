#include "scheduler/framework/wait_reasons.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace lahar {

WaitReason SchedulingGatesReason(const std::vector<const TaskInfo*>& gated) {
  std::set<std::string> names;
  for (const TaskInfo* task : gated) names.insert(task->pod->scheduling_gates.begin(), task->pod->scheduling_gates.end());
  WaitReason reason{.kind = WaitKind::kGated, .pods = static_cast<int32_t>(gated.size())};
  reason.names.assign(names.begin(), names.end());
  return reason;
}

WaitReason NoFitReason(const JobInfo& job, int32_t unplaced, const FitErrors& errors) {
  WaitReason reason{.kind = WaitKind::kNoFit,
                    .shortage = errors.MostShort(),
                    .pods = unplaced,
                    .of = job.min_available,
                    .counts = errors.Counts()};
  if (reason.counts.empty()) reason.detail = "the cluster has no nodes";
  return reason;
}

WaitReason TerminatingForReason(const Session& session, const JobInfo& job, int32_t pods,
                                const std::vector<TaskId>& terminating) {
  std::map<std::string, int32_t> per_job;  // by key: the reason reads the same in every run
  for (TaskId t : terminating) ++per_job[session.job(session.task(t).job).key()];
  WaitReason reason{.kind = WaitKind::kWaitingForVictims, .pods = pods, .of = job.min_available};
  reason.counts.assign(per_job.begin(), per_job.end());
  return reason;
}

std::vector<TaskId> ReleasingTasksOn(const Session& session, std::vector<NodeId> nodes) {
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  std::vector<TaskId> out;
  for (NodeId n : nodes) {
    for (TaskId t : session.node(n).tasks) {
      if (session.task(t).status == TaskStatus::kReleasing) out.push_back(t);
    }
  }
  return out;
}

WaitReason QueueLimitOrGeneral(const Session& session, QueueCheck check, const JobInfo& job,
                               const Resources& request, std::string_view limit) {
  if (std::optional<WaitReason> reason = session.QueueLimitReason(check, job, request)) return *std::move(reason);
  return WaitReason{.kind = WaitKind::kQueueLimit, .subject = session.queue(job.queue).name, .limit = std::string(limit)};
}

}  // namespace lahar
