// What a session keeps of results derived from its state (Session::memos()).
#ifndef LAHAR_SCHEDULER_FRAMEWORK_SESSION_MEMOS_H_
#define LAHAR_SCHEDULER_FRAMEWORK_SESSION_MEMOS_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "api/cluster_info.h"

namespace lahar {

class HoldingsByPriority;  // job_rules.h
namespace victims_internal {
struct WorkerHoldings;  // victim_order.h
}  // namespace victims_internal

// Results derived from a session's state, kept while the state they were made from holds
// (several actions ask for them; job_rules.cc and victims.cc keep them): Session::Memos.
struct SessionMemos {
  struct PerVersion {
    uint64_t version = UINT64_MAX;
    std::vector<TaskId> ids;
    std::optional<uint64_t> shapes;  // reach_min only: MinShapesHash
    std::optional<Resources> requests;  // elastic_workers only: ElasticWorkerRequests
  };
  PerVersion starving_jobs;         // StarvingJobIds, by state_version()
  PerVersion starving_in_order;     // StarvingJobs, by state_version()
  uint64_t starving_classes_version = UINT64_MAX;
  std::vector<int32_t> starving_class_of;  // StarvingClassOf, by state_version()
  // Entries for the jobs asked about, each made when its job is first asked: a table sized by
  // the jobs was cleared and freed whole each session, for a few hundred jobs asked.
  struct PerJob {
    std::vector<int32_t> slot;     // per job: its entry, -1 none; sized when first asked
    std::deque<PerVersion> entries;  // a deque: references to an entry outlive later ones made
    PerVersion* Find(JobId job) {
      if (slot.empty()) return nullptr;
      const int32_t at = slot[static_cast<size_t>(job)];
      return at < 0 ? nullptr : &entries[static_cast<size_t>(at)];
    }
    PerVersion& Of(JobId job, size_t jobs) {
      if (slot.empty()) slot.assign(jobs, -1);
      int32_t& at = slot[static_cast<size_t>(job)];
      if (at < 0) {
        at = static_cast<int32_t>(entries.size());
        entries.emplace_back();
      }
      return entries[static_cast<size_t>(at)];
    }
  };
  // Per job, by job_tasks_version():
  PerJob reach_min;        // TasksToReachMin
  PerJob elastic_workers;  // ElasticWorkers
  std::vector<std::pair<uint64_t, bool>> valid;  // JobValid per job: (job_tasks_version(), valid)
  // ScalableJobs, by state_version() and job_changes() (a scale time is not undone with the
  // tasks a statement discards).
  uint64_t scalable_version = UINT64_MAX;
  uint64_t scalable_job_changes = UINT64_MAX;
  std::vector<bool> scalable;
  // FreeCapacity, and each node's part of it by node_version(): only nodes changed since are
  // counted again. kCarriedPart: the node's part is the sessions' memory's (capacity.cc).
  Resources free_capacity;
  std::vector<Resources> free_per_node;
  std::vector<uint64_t> free_node_versions;
  uint64_t free_state_version = UINT64_MAX;  // state_version() when last counted: the nodes are as they were
  // Whether the sessions' memory of the nodes' parts was brought up to date with this session's
  // nodes (capacity.cc).
  bool carried_capacity_current = false;
  // HoldingsByPriority::Of, by state_version().
  std::shared_ptr<const HoldingsByPriority> holdings_by_priority;
  uint64_t holdings_by_priority_version = UINT64_MAX;
  uint64_t fingerprint_version = UINT64_MAX;
  std::optional<uint64_t> fingerprint;  // of the state an evicting run reads, by state_version()
  // What every live job's elastic workers hold per node, each job's part by job_tasks_version():
  // the WaitMemo's, carried, when the session has one; null until first asked.
  std::shared_ptr<victims_internal::WorkerHoldings> worker_holdings;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_SESSION_MEMOS_H_
