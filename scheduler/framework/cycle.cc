#include "scheduler/framework/cycle.h"

#include <chrono>

#include "api/status_macros.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/wait_memo.h"

namespace lahar {

absl::StatusOr<CycleResult> RunSchedulingCycle(ClusterSnapshot snapshot, const SchedulerConfig& config,
                                               const Registry& registry, WaitMemo* memo,
                                               ClusterSnapshot* spent) {
  auto started = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Open(std::move(snapshot), config, registry));
  session->set_wait_memo(memo);
  RETURN_IF_ERROR(session->RunActions(registry));
  session->Close();
  if (memo != nullptr) memo->SessionEnded();
  CycleResult result;
  for (const Binding& b : session->bindings()) {
    const TaskInfo& task = session->task(b.task);
    result.binds.push_back({task.key(), session->job(task.job).key(), session->node(b.node).name()});
  }
  for (const Eviction& e : session->evictions()) {
    const TaskInfo& task = session->task(e.task);
    std::string node = task.node != kNoId ? session->node(task.node).name() : "";
    result.evicts.push_back({task.key(), session->job(task.job).key(), node, e.reason});
  }
  result.job_updates.reserve(session->job_updates().size());
  for (const JobStatusUpdate& u : session->job_updates()) {
    result.job_updates.push_back({session->job(u.job).key(), u.phase, u.waiting, u.scaled});
  }
  std::vector<Resources> allocated(session->cluster().queues.size());
  for (JobId id : session->LiveJobs()) {  // the others hold nothing
    const JobInfo& job = session->job(id);
    if (job.queue != kNoId) allocated[job.queue] += job.allocated;
  }
  for (const QueueInfo& queue : session->cluster().queues) {
    CycleResult::QueueState state{queue.name, allocated[queue.id], std::nullopt};
    auto deserved = session->queue_deserved().find(queue.id);
    if (deserved != session->queue_deserved().end()) state.deserved = deserved->second;
    result.queues.push_back(std::move(state));
  }
  result.action_micros = session->action_micros();
  result.duration_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::steady_clock::now() - started)
                               .count();
  if (spent != nullptr) *spent = std::move(*session).TakeCluster();
  return result;
}

}  // namespace lahar
