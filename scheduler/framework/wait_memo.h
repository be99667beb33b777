// What one session leaves for the next about waiting work, owned by whoever runs the sessions
// (the simulator, the daemon) and handed to each through RunSchedulingCycle.
//
// A session re-examines waiting jobs although almost nothing changed since the last one. The
// memo lets an action skip a run that cannot turn out differently: the run is described by a
// fingerprint of everything it reads (see PlanUnlessFruitless in victims.h), and a run that changed nothing (it found no plan for any starving job) is
// remembered with it. The next run with an equal fingerprint, before any plugin's answer
// changes by time alone (Session::ExpiresAt: cooldowns, sla deadlines), is skipped, and its only
// trace on the session (task states changed and undone, which invalidates cached node searches)
// is replayed. A skipped run and a run tried in full give the same decisions: with the memo
// disabled (`lahar-sim run --no-skip`) every run is tried, and events are byte-identical.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_WAIT_MEMO_H_
#define LAHAR_SCHEDULER_FRAMEWORK_WAIT_MEMO_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "api/cluster_info.h"

namespace lahar {

namespace victims_internal {
struct WorkerHoldings;
}  // namespace victims_internal

class WaitMemo {
 public:
  explicit WaitMemo(bool enabled = true) : enabled_(enabled) {}

  bool enabled() const { return enabled_; }
  // Whether the owner parks the jobs sessions say it may (ClusterCache::ParkJobs): the
  // simulator does; then enqueue notes them (Session::NoteParkable).
  bool parks_jobs() const { return enabled_ && parks_jobs_; }
  void set_parks_jobs(bool parks) { parks_jobs_ = parks; }

  // A run of `action` that changed nothing, in state `fingerprint`; `touched`: it changed task
  // states and undid them. Valid until `expires` (exclusive).
  struct FruitlessRun {
    uint64_t fingerprint = 0;
    bool touched = false;
    Millis expires = 0;
  };
  // The remembered run of `action` when it had this fingerprint and has not expired at `now`;
  // else another action's run with this fingerprint (fingerprints name the run's class, and
  // actions whose runs read the same share one: see PlanUnlessFruitless).
  const FruitlessRun* Find(std::string_view action, uint64_t fingerprint, Millis now) const;
  void Remember(std::string_view action, const FruitlessRun& run) {
    if (enabled_) runs_.insert_or_assign(std::string(action), run);
  }
  void Forget(std::string_view action) { runs_.erase(std::string(action)); }
  // Whether the last run of `action` that was tried found nothing to do (it is remembered).
  bool LastRunFruitless(std::string_view action) const { return runs_.find(action) != runs_.end(); }

  // The job order a list of jobs (named by `list`) had in the last session of the same layout,
  // by creation order (JobInfo::creation_order): see SortInJobOrder. Sessions that leave parked
  // jobs out (`parked_left_out`) and those over every job keep an order each: a session over
  // every job after many without the parked ones finds most of its jobs in the order kept.
  std::vector<int64_t>& OrderOf(std::string_view list, bool parked_left_out) {
    auto& orders = orders_[parked_left_out ? 1 : 0];
    auto it = orders.find(list);
    if (it == orders.end()) it = orders.emplace(std::string(list), std::vector<int64_t>()).first;
    return it->second;
  }

  // What TasksToReachMin and MinShapesHash were for a job whose tasks are all pending, by its
  // version (JobInfo::version: its pods and PodGroup as the cache received them), as offsets from
  // its first task. With no task moved they depend on those objects alone (under one
  // configuration), so they hold in every session until one of them changes: a backlog's jobs
  // are not ranked afresh in each.
  struct PendingJobMin {
    bool known = false;  // offsets and shapes made
    std::vector<int32_t> offsets;
    uint64_t shapes = 0;
    uint64_t asked = 0;  // the session that last asked
  };
  // The entry of `build`, empty (not known) when neither this session nor the last made one; valid
  // until the next call.
  PendingJobMin& PendingJobMinOf(uint64_t job_version);
  // What ElasticWorkers was for a job with placed tasks, as the snapshot laid it out (no task of
  // it moved in the session yet), by its version and its tasks' states (a task fails when its
  // node is gone, which the version does not say), as offsets from its first task. They depend
  // on those alone (under one configuration): a running job's workers are not put in task order
  // afresh in every session.
  struct JobWorkers {
    bool known = false;  // offsets made
    std::vector<int32_t> offsets;
    uint64_t asked = 0;  // the session that last asked
  };
  // The entry of `key`, empty (not known) when no session made one in the last
  // kWorkersKeptSessions or so; valid until the next call.
  JobWorkers& JobWorkersOf(uint64_t key);
  // A running job's workers are asked about only in the sessions that judge a backlog, which are
  // often far apart: an entry is kept for this many sessions without being asked, swept as often.
  static constexpr uint64_t kWorkersKeptSessions = 64;
  // A job's tasks' part of the evicting runs' fingerprint (their states and nodes), by the
  // job's version and the cache's node set (a task fails when its node is gone): made while no
  // task of it moved in the session, as most jobs holding nodes are laid out unchanged. Kept and
  // swept as JobWorkers; `known` false until made.
  struct TasksPart {
    bool known = false;
    uint64_t hash = 0;
    uint64_t asked = 0;
  };
  TasksPart& TasksPartOf(uint64_t key);
  // What a node's carried entries below were made from: the node object and the cache's count of
  // what its pods hold (NodeInfo::version, held_version). Made only while the node is as laid out
  // (Session::NodeAsLaidOut), as each session lays most nodes out unchanged; an entry is valid
  // while the node has the same stamp.
  struct NodeStamp {
    uint64_t version = 0;
    uint64_t held_version = 0;  // 0: no entry made
    static NodeStamp Of(const NodeInfo& node) { return {node.version, node.held_version}; }
    bool Matches(const NodeInfo& node) const { return held_version == node.held_version && version == node.version; }
  };
  // A node's part of the evicting runs' fingerprint (PlanUnlessFruitless), by place.
  struct NodePart {
    NodeStamp stamp;
    uint64_t hash = 0;
  };
  std::vector<NodePart>& node_parts() { return node_parts_; }
  // A node's parts of FreeCapacity and IdleCapacity (capacity.h), by place: what the cluster can
  // still take is summed from parts, not counted anew in each session.
  struct NodeFree {
    NodeStamp stamp;
    Resources free;
    Resources idle;
  };
  // The parts by node, and their sums, kept as parts are made again: a session starts from the
  // sums and counts only the nodes it finds or makes different.
  struct CarriedCapacity {
    std::vector<NodeFree> parts;
    Resources free;
    Resources idle;
  };
  CarriedCapacity& carried_capacity() { return carried_capacity_; }
  // Which resource a node is short of first for pods asking a request, by place (Session's
  // explaining searches): the nodes a session finds unchanged are not asked again why they refuse
  // a backlog's pods. `short_of` is the id of the first resource it lacks, -1 none, or kNoPodSlot
  // when it has no pod slot left (then resources are not asked).
  struct NodeShortage {
    NodeStamp stamp;
    int32_t short_of = -1;
  };
  static constexpr int32_t kNoPodSlot = -2;
  // The nodes' entries for pods asking `request` (onto future idle resources or idle ones) under
  // the node set `node_set_version` of `nodes` nodes; valid until the next call. Kept and swept
  // as JobWorkers.
  std::vector<NodeShortage>& ShortagesOf(const Resources& request, bool future_idle, uint64_t node_set_version,
                                         size_t nodes);
  // What the elastic workers of the running jobs hold per node (victim_order.h), carried so that
  // a session counts again only the jobs whose objects changed since a session last counted.
  std::shared_ptr<victims_internal::WorkerHoldings>& worker_holdings() { return worker_holdings_; }
  // Ends a session: entries no recent session asked for are dropped (their jobs changed or went).
  void SessionEnded();

  // Runs skipped and runs tried in full (with a fingerprint), for benchmarks.
  int64_t skipped() const { return skipped_; }
  int64_t tried() const { return tried_; }
  void CountSkipped() { ++skipped_; }
  void CountTried() { ++tried_; }

 private:
  bool enabled_;
  bool parks_jobs_ = false;
  std::map<std::string, FruitlessRun, std::less<>> runs_;
  std::array<std::map<std::string, std::vector<int64_t>, std::less<>>, 2> orders_;  // by layout
  absl::flat_hash_map<uint64_t, PendingJobMin> pending_min_;
  absl::flat_hash_map<uint64_t, JobWorkers> workers_;
  absl::flat_hash_map<uint64_t, TasksPart> tasks_parts_;
  std::vector<NodePart> node_parts_;
  struct Shortages {
    Resources request;
    bool future_idle = false;
    uint64_t node_set_version = 0;
    std::vector<NodeShortage> nodes;
    uint64_t asked = 0;
  };
  std::vector<Shortages> shortages_;  // few: one per request explained lately
  CarriedCapacity carried_capacity_;
  std::shared_ptr<victims_internal::WorkerHoldings> worker_holdings_;
  uint64_t sessions_ = 1;  // sessions ended, plus one: names the running session
  int64_t skipped_ = 0;
  int64_t tried_ = 0;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_WAIT_MEMO_H_
