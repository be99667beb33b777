#include "scheduler/framework/cycle.h"

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "api/status_macros.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/wait_memo.h"

namespace lahar {
namespace {

// The session's job updates, with those of the parked jobs (ClusterSnapshot::parked) whose
// class's representative was told a new reason: they are told it too, in key order among the
// others (as a session over every job lists them). A representative told no new reason leaves
// its class as it was: each member reported what it reported.
void TellParkedJobs(const Session& session, std::vector<CycleResult::JobUpdate>& updates) {
  const ClusterSnapshot& cluster = session.cluster();
  // Each update's reason, made once: a class's members are told their representative's object.
  const std::vector<JobStatusUpdate>& session_updates = session.job_updates();
  std::vector<std::shared_ptr<const WaitReason>> reasons(session_updates.size());
  for (size_t i = 0; i < session_updates.size(); ++i) {
    if (session_updates[i].waiting) reasons[i] = std::make_shared<const WaitReason>(*session_updates[i].waiting);
  }
  // Per class: its representative's update and that update's reason.
  std::vector<std::pair<const JobStatusUpdate*, std::shared_ptr<const WaitReason>>> told(
      cluster.parked_representatives.size());
  bool any_told = false;
  for (size_t c = 0; c < told.size(); ++c) {
    const JobId representative = cluster.parked_representatives[c];
    if (representative == kNoId) continue;
    const JobStatusUpdate* update = session.FindUpdate(representative);
    if (update == nullptr || !update->waiting) continue;
    told[c] = {update, reasons[static_cast<size_t>(update - session_updates.data())]};
    any_told = true;
  }
  updates.reserve(session_updates.size());
  // Both lists are in key order: the members told are merged in before the first update whose
  // key comes after theirs (the others are passed over without comparing keys).
  auto next_parked = cluster.parked.begin();
  auto tell_parked_before = [&](const std::string* key) {
    if (!any_told) return;
    for (; next_parked != cluster.parked.end(); ++next_parked) {
      const auto& [update, reason] = told[static_cast<size_t>(next_parked->parked_class)];
      if (update == nullptr) continue;
      if (key != nullptr && next_parked->key > *key) return;
      updates.push_back({std::string(next_parked->key), update->phase, reason, false});
    }
  };
  for (size_t i = 0; i < session_updates.size(); ++i) {
    const JobStatusUpdate& u = session_updates[i];
    std::string key = session.job(u.job).key();
    tell_parked_before(&key);
    updates.push_back({std::move(key), u.phase, std::move(reasons[i]), u.scaled});
  }
  tell_parked_before(nullptr);
}

}  // namespace

absl::StatusOr<CycleResult> RunSchedulingCycle(ClusterSnapshot snapshot, const SchedulerConfig& config,
                                               const Registry& registry, WaitMemo* memo,
                                               ClusterSnapshot* spent) {
  auto started = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Open(std::move(snapshot), config, registry));
  session->set_wait_memo(memo);
  RETURN_IF_ERROR(session->RunActions(registry));
  CycleResult result;
  auto time_taken = [&] {
    result.action_micros = session->action_micros();
    result.duration_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::steady_clock::now() - started)
                                 .count();
  };
  if (session->needs_parked_jobs()) {
    result.parked_classes_needed = session->ParkedClassesNeeded();
    time_taken();
    if (spent != nullptr) *spent = std::move(*session).TakeCluster();
    return result;
  }
  session->Close();
  if (memo != nullptr) memo->SessionEnded();
  for (const Binding& b : session->bindings()) {
    const TaskInfo& task = session->task(b.task);
    result.binds.push_back({task.key(), session->job(task.job).key(), session->node(b.node).name()});
  }
  for (const Eviction& e : session->evictions()) {
    const TaskInfo& task = session->task(e.task);
    std::string node = task.node != kNoId ? session->node(task.node).name() : "";
    result.evicts.push_back({task.key(), session->job(task.job).key(), node, e.reason});
  }
  TellParkedJobs(*session, result.job_updates);
  std::map<JobId, std::vector<JobId>> parkable;  // by representative
  for (const auto& [member, representative] : session->parkable()) parkable[representative].push_back(member);
  for (auto& [representative, members] : parkable) result.parkable.push_back({representative, std::move(members)});
  std::vector<Resources> allocated(session->cluster().queues.size());
  for (JobId id : session->LiveJobs()) {  // the others hold nothing
    const JobInfo& job = session->job(id);
    if (job.queue != kNoId) allocated[job.queue] += job.allocated;
  }
  result.queues.reserve(session->cluster().queues.size());
  for (const QueueInfo& queue : session->cluster().queues) {
    CycleResult::QueueState state{queue.name, allocated[queue.id], std::nullopt};
    auto deserved = session->queue_deserved().find(queue.id);
    if (deserved != session->queue_deserved().end()) state.deserved = deserved->second;
    result.queues.push_back(std::move(state));
  }
  time_taken();
  if (spent != nullptr) *spent = std::move(*session).TakeCluster();
  return result;
}

}  // namespace lahar
