#include "actions/reclaim/reclaim.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "api/log.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/framework/capacity.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"
#include "scheduler/framework/victims.h"

namespace lahar {
namespace {

// What every queue holds (its jobs' placed and pipelined requests, its descendants' included),
// kept current across the plans of one run, and the least any of its own placed pods requests.
class QueueLedger {
 public:
  explicit QueueLedger(const Session& session)
      : session_(session), held_(session.cluster().queues.size()), smallest_pod_(held_.size()) {
    // With every queue a leaf (most clusters), no job is in an inner one: the jobs are not read.
    if (std::any_of(session.cluster().queues.begin(), session.cluster().queues.end(),
                    [](const QueueInfo& q) { return !q.IsLeaf(); })) {
      for (const JobInfo& job : session.cluster().jobs) {
        jobs_in_inner_queues_ = jobs_in_inner_queues_ || (job.queue != kNoId && !session.queue(job.queue).IsLeaf());
      }
    }
    // Per queue: the shape number of the last pod taken in (equal numbers, equal requests), so
    // that a run of pods of one shape, most of a queue's, is taken in once.
    std::vector<int32_t> last_shape(held_.size(), kNoShape);
    for (JobId id : session.LiveJobs()) {  // the others hold nothing
      const JobInfo& job = session.job(id);
      if (job.queue == kNoId || job.HoldsNothing()) continue;
      Add(job.queue, HeldRequests(session, job), +1);
      std::optional<Resources>& smallest = smallest_pod_[job.queue];
      for (TaskId t : job.tasks) {
        const TaskInfo& task = session.task(t);
        if (!IsPlaced(task.status)) continue;
        if (task.shape != kNoShape && task.shape == last_shape[job.queue]) continue;
        last_shape[job.queue] = task.shape;
        if (smallest) {
          smallest->MinWith(task.request);
        } else {
          smallest = task.request;
        }
      }
    }
  }
  void Add(QueueId queue, const Resources& amount, int sign) {
    for (QueueId q = queue; q != kNoId; q = session_.queue(q).parent) {
      if (sign > 0) {
        held_[q] += amount;
      } else {
        held_[q] -= amount;
      }
    }
  }
  const Resources& held(QueueId queue) const { return held_[queue]; }
  // The element-wise least request of the queue's placed pods when the run began (nullopt: it
  // had none). Pods evicted since only leave it smaller than the true least: a safe bound.
  const std::optional<Resources>& smallest_pod(QueueId queue) const { return smallest_pod_[queue]; }
  bool jobs_in_inner_queues() const { return jobs_in_inner_queues_; }
  std::vector<Resources> Save() const { return held_; }
  void Restore(std::vector<Resources> saved) { held_ = std::move(saved); }

 private:
  const Session& session_;
  std::vector<Resources> held_;
  std::vector<std::optional<Resources>> smallest_pod_;
  bool jobs_in_inner_queues_ = false;
};

QueueId LowestCommonAncestor(const Session& session, QueueId a, QueueId b) {
  for (QueueId x = a; x != kNoId; x = session.queue(x).parent) {
    if (session.cluster().IsAncestor(x, b)) return x;
  }
  return kNoId;
}

// One run of the action: the queues' holdings, and the claim of the starving job being planned.
class ReclaimRun {
 public:
  explicit ReclaimRun(Session& session)
      : session_(session), deserved_(session.queue_deserved()), ledger_(session), free_(FreeCapacity(session)) {}

  std::optional<VictimPolicy> PolicyFor(const JobInfo& job) {
    const std::vector<TaskId>* unplaced = UnplacedMinTasks(session_, job);
    if (unplaced == nullptr) return std::nullopt;
    // Asked for every starving job: the claim's vectors keep their storage from job to job.
    claim_.reclaimer = job.queue;
    claim_.need = Resources();
    claim_.planned = Resources();
    claim_.contested.clear();
    for (TaskId t : *unplaced) claim_.need += session_.task(t).request;
    // Contested: what the min needs and the cluster lacks; when it lacks nothing in total (a
    // fragmented cluster), everything the min needs.
    const auto resources = static_cast<ResourceId>(claim_.need.size());
    for (ResourceId r = 0; r < resources; ++r) {
      if (r != kPods && claim_.need.Get(r) > 0 && claim_.need.Get(r) > free_.Get(r)) claim_.contested.push_back(r);
    }
    if (claim_.contested.empty()) {
      for (ResourceId r = 0; r < resources; ++r) {
        if (r != kPods && claim_.need.Get(r) > 0) claim_.contested.push_back(r);
      }
    }
    // The reclaiming queue itself, with the whole min placed (its ancestors: per victim).
    const QueueId reclaimer = job.queue;
    if (!WithinDeserved(reclaimer, session_.queue(reclaimer).parent, claim_.need)) {
      LAHAR_LOG(2, "reclaim") << job.key() << ": its min would take queue " << session_.queue(reclaimer).name
                              << " above its deserved share";
      return std::nullopt;
    }
    if (!EvictionsMayCover(job)) {
      LAHAR_LOG(2, "reclaim") << job.key() << ": other queues hold too little above their deserved shares for its min";
      return std::nullopt;
    }
    claim_.saved = ledger_.Save();

    VictimPolicy policy;
    const Session& session = session_;
    policy.kind = [&session, reclaimer](const JobInfo& other) {
      if (other.queue == reclaimer || other.queue == kNoId) return VictimKind::kNone;
      const QueueId top = LowestCommonAncestor(session, reclaimer, other.queue);
      for (QueueId q = other.queue; q != top && q != kNoId; q = session.queue(q).parent) {
        if (!session.queue(q).reclaimable) return VictimKind::kNone;
      }
      return VictimKind::kWholeJob;
    };
    policy.whole_job_group = [&session, reclaimer](const JobInfo& other) -> int64_t {
      const QueueId top = LowestCommonAncestor(session, reclaimer, other.queue);
      return top == kNoId ? 0 : -static_cast<int64_t>(session.queue(top).depth) - 1;
    };
    policy.admissible = [this](const JobInfo& victim, const Resources& freed) { return Admissible(victim, freed); };
    policy.on_take = [this](const JobInfo& victim, const Resources& freed) { ledger_.Add(victim.queue, freed, -1); };
    policy.room = [this](const TaskInfo& task) { return Room(task); };
    policy.make_room_in_own_queue = false;
    policy.reason = {"reclaimed-for", &job};
    return policy;
  }

  void Settled(const VictimPlan& plan, bool committed) {
    if (!committed) {
      ledger_.Restore(std::move(claim_.saved));
      return;
    }
    for (const auto& [task, node] : plan.placements) ledger_.Add(claim_.reclaimer, session_.task(task).request, +1);
    UpdateFreeCapacity(session_, plan, free_);
  }

 private:
  struct Claim {
    QueueId reclaimer = kNoId;
    Resources need;                     // the requests of its unplaced min
    std::vector<ResourceId> contested;  // the resources reclaim is about
    Resources planned;                  // placed by the plan so far
    std::vector<Resources> saved;       // the ledger before the plan
  };

  const Resources* DeservedOf(QueueId queue) const {
    auto it = deserved_.find(queue);
    return it == deserved_.end() ? nullptr : &it->second;
  }

  // Each queue from `from` up to (not including) `top` stays within its deserved share, in the
  // contested resources, holding `more` besides.
  bool WithinDeserved(QueueId from, QueueId top, const Resources& more) const {
    for (QueueId q = from; q != top && q != kNoId; q = session_.queue(q).parent) {
      const Resources* d = DeservedOf(q);
      if (d == nullptr) return false;
      for (ResourceId r : claim_.contested) {
        const int64_t limit = d->Get(r);
        if (limit > 0 && ledger_.held(q).Get(r) + more.Get(r) > limit) return false;
      }
    }
    return true;
  }

  // A necessary condition, checked before any victim is collected. Admissible keeps each
  // victim's queue at or above its deserved share in every contested resource an entry frees,
  // and an entry frees at least one placed pod's request: a leaf queue whose holdings above its
  // share (its slack) are less than its smallest pod's request in some contested resource gives
  // nothing, and the others give at most their slack. When the free capacity and that fall short
  // of the min, no plan fits; when no queue gives anything, the plan could only pipeline onto free
  // capacity, which allocate has searched already. Either way the job is left alone.
  bool EvictionsMayCover(const JobInfo& job) const {
    if (ledger_.jobs_in_inner_queues()) return true;  // their victims' slack is not a leaf's: no bound
    Resources reachable = free_;
    bool any_gives = false;
    for (const QueueInfo& q : session_.cluster().queues) {
      if (q.id == job.queue || !q.IsLeaf()) continue;
      const Resources* d = DeservedOf(q.id);
      const std::optional<Resources>& smallest_pod = ledger_.smallest_pod(q.id);
      if (d == nullptr || !smallest_pod) continue;
      Resources slack;
      bool gives = true;
      for (ResourceId r : claim_.contested) {
        const int64_t above = ledger_.held(q.id).Get(r) - d->Get(r);
        const int64_t smallest = smallest_pod->Get(r);
        if (smallest > 0 && above < smallest) gives = false;
        slack.Set(r, std::max<int64_t>(0, above));
      }
      if (!gives) continue;
      any_gives = true;
      reachable += slack;
    }
    if (!any_gives) return false;
    for (ResourceId r : claim_.contested) {
      if (claim_.need.Get(r) > reachable.Get(r)) return false;
    }
    return true;
  }

  // Below the common ancestor: the reclaimer's side stays within its deserved shares with the min
  // placed; the victim's side stays at or above its deserved shares and guarantees.
  bool Admissible(const JobInfo& victim, const Resources& freed) const {
    const QueueId top = LowestCommonAncestor(session_, claim_.reclaimer, victim.queue);
    if (!WithinDeserved(session_.queue(claim_.reclaimer).parent, top, claim_.need)) return false;
    for (QueueId q = victim.queue; q != top && q != kNoId; q = session_.queue(q).parent) {
      const Resources* d = DeservedOf(q);
      if (d == nullptr) return false;
      for (ResourceId r : claim_.contested) {
        if (freed.Get(r) > 0 && ledger_.held(q).Get(r) - freed.Get(r) < d->Get(r)) return false;
      }
      for (const auto& [r, g] : session_.queue(q).guarantee.NonZero()) {
        if (freed.Get(r) > 0 && ledger_.held(q).Get(r) - freed.Get(r) < g) return false;
      }
    }
    return true;
  }

  // The capability at every level (the deserved shares are checked per victim, up to the common
  // ancestor: Allocatable would also hold the ancestors to theirs, which a sibling's reclaim moves
  // within). The planner asks once per task, before placing it.
  bool Room(const TaskInfo& task) {
    for (QueueId q = claim_.reclaimer; q != kNoId; q = session_.queue(q).parent) {
      for (const auto& [r, cap] : session_.queue(q).capability.NonZero()) {
        if (r != kPods && ledger_.held(q).Get(r) + claim_.planned.Get(r) + task.request.Get(r) > cap) return false;
      }
    }
    claim_.planned += task.request;
    return true;
  }

  Session& session_;
  const std::map<QueueId, Resources>& deserved_;
  QueueLedger ledger_;
  Resources free_;  // FreeCapacity, kept current across committed plans
  Claim claim_;
};

class ReclaimAction : public Action {
 public:
  std::string_view Name() const override { return "reclaim"; }

  void Execute(Session& session) override {
    if (session.queue_deserved().empty()) return;  // no plugin says what any queue deserves
    // Made for the first starving job planned (a run skipped as unchanged, or without starving
    // jobs, needs no holdings): nothing changes the session before that.
    std::optional<ReclaimRun> run;
    StarvingJobHandler handler;
    handler.policy = [&run, &session](const JobInfo& job) {
      if (!run) run.emplace(session);
      return run->PolicyFor(job);
    };
    handler.settled = [&run](const VictimPlan& plan, bool committed) { run->Settled(plan, committed); };
    RelieveStarvingJobs(session, Name(), handler);
  }
};

}  // namespace

std::vector<ArgumentSpec> ReclaimArguments() {
  return {{kPredicateErrorCacheEnable, ArgumentKind::kBool, "true", ArgumentSupport::kIgnored,
           "Lahar always caches predicate verdicts per constraint class"}};
}

absl::StatusOr<std::unique_ptr<Action>> NewReclaimAction(const Arguments& arguments) {
  return std::make_unique<ReclaimAction>();
}

}  // namespace lahar
