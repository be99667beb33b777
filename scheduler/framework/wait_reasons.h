// The wait reasons (spec 7) that more than one action gives, built from what the action saw.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_WAIT_REASONS_H_
#define LAHAR_SCHEDULER_FRAMEWORK_WAIT_REASONS_H_

#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "api/cluster_info.h"
#include "api/wait_reason.h"
#include "scheduler/framework/session.h"

namespace lahar {

// Pods kept off every node by their scheduling gates (kind `gated`): "2 pods have scheduling
// gates: example.com/quota", gate names deduplicated and sorted.
WaitReason SchedulingGatesReason(const std::vector<const TaskInfo*>& gated);

// `unplaced` pods of the job's min fit no node; `errors` are the first one's (kind `no-fit`):
// "1/3 pods unschedulable: 2 nodes have too little cpu".
WaitReason NoFitReason(const JobInfo& job, int32_t unplaced, const FitErrors& errors);

// `pods` of the job wait for `terminating` tasks to release their nodes (kind
// `waiting-for-victims`): "3 pods of default/low-1 are terminating for it".
WaitReason TerminatingForReason(const Session& session, const JobInfo& job, int32_t pods,
                                const std::vector<TaskId>& terminating);

// The tasks being released on `nodes` (each node counted once).
std::vector<TaskId> ReleasingTasksOn(const Session& session, std::vector<NodeId> nodes);

// The queue's refusal of the job under `check`, as the plugin that refused explains it, else
// in general words naming `limit`.
WaitReason QueueLimitOrGeneral(const Session& session, QueueCheck check, const JobInfo& job,
                               const Resources& request, std::string_view limit);

// Refusals of jobs alike in `Key`, for the session state they were made in: an action that
// judges a backlog tells an alike job the refusal made once (Session::SetSharedWaitReason), and
// forgets them all once the state moves (an admission or placement may let them pass). A
// refusal's address stays valid while others are added.
template <typename Key, typename Hash = absl::Hash<Key>, typename Eq = std::equal_to<Key>>
class RefusalsInState {
 public:
  explicit RefusalsInState(const Session& session) : session_(session) {}

  // The refusal of a job alike `key` in the current state, or null.
  Session::SharedWaitReason* Find(const Key& key) {
    Sync();
    // A backlog's jobs come in runs of alike ones: the last one found is compared first.
    if (last_found_ != nullptr && Eq()(*last_key_, key)) return last_found_;
    auto it = by_key_.find(key);
    if (it == by_key_.end()) return nullptr;
    last_key_ = key;
    last_found_ = it->second;
    return last_found_;
  }
  // Remembers the refusal of a job alike `key` in the current state, and returns it.
  Session::SharedWaitReason& Remember(Key key, WaitReason refusal) {
    Sync();
    Session::SharedWaitReason& kept = reasons_.emplace_back(Session::SharedWaitReason{std::move(refusal)});
    by_key_.try_emplace(std::move(key), &kept);
    return kept;
  }

 private:
  void Sync() {
    if (version_ == session_.state_version()) return;
    version_ = session_.state_version();
    by_key_.clear();
    reasons_.clear();
    last_found_ = nullptr;
  }

  const Session& session_;
  uint64_t version_ = UINT64_MAX;
  std::deque<Session::SharedWaitReason> reasons_;
  absl::flat_hash_map<Key, Session::SharedWaitReason*, Hash, Eq> by_key_;
  std::optional<Key> last_key_;  // Find's last answer, while last_found_ is set
  Session::SharedWaitReason* last_found_ = nullptr;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_WAIT_REASONS_H_
