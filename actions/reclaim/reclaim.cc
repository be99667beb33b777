#include "actions/reclaim/reclaim.h"

#include <map>
#include <vector>

#include "api/log.h"
#include "api/strings.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"
#include "scheduler/framework/victims.h"

namespace lahar {
namespace {

// What every queue holds (its jobs' placed and pipelined requests, its descendants' included),
// kept current across the plans of one run.
class QueueLedger {
 public:
  explicit QueueLedger(const Session& session) : session_(session), held_(session.cluster().queues.size()) {
    for (const JobInfo& job : session.cluster().jobs) {
      if (job.queue == kNoId) continue;
      Resources holds = job.allocated;
      for (TaskId t : job.tasks) {
        if (session.task(t).status == TaskStatus::kPipelined) holds += session.task(t).request;
      }
      Add(job.queue, holds, +1);
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
  std::vector<Resources> Save() const { return held_; }
  void Restore(std::vector<Resources> saved) { held_ = std::move(saved); }

 private:
  const Session& session_;
  std::vector<Resources> held_;
};

QueueId LowestCommonAncestor(const Session& session, QueueId a, QueueId b) {
  for (QueueId x = a; x != kNoId; x = session.queue(x).parent) {
    if (session.cluster().IsAncestor(x, b)) return x;
  }
  return kNoId;
}

class ReclaimAction : public Action {
 public:
  std::string_view Name() const override { return "reclaim"; }

  void Execute(Session& session) override {
    const std::map<QueueId, Resources>& deserved = session.queue_deserved();
    if (deserved.empty()) return;  // no plugin says what any queue deserves: nothing to reclaim
    auto deserved_of = [&deserved](QueueId q) -> const Resources* {
      auto it = deserved.find(q);
      return it == deserved.end() ? nullptr : &it->second;
    };
    const std::vector<bool> scalable = ScalableJobs(session);
    QueueLedger ledger(session);
    VictimOrderCache orders;
    for (JobId id : StarvingJobs(session)) {
      const JobInfo& job = session.job(id);
      const QueueId reclaimer = job.queue;
      std::optional<std::vector<TaskId>> unplaced = UnplacedMinTasks(session, job);
      if (!unplaced.has_value()) continue;
      Resources need;
      for (TaskId t : *unplaced) need += session.task(t).request;
      // Contested: what the min needs and the cluster lacks; when it lacks nothing in total (a
      // fragmented cluster), everything the min needs.
      const Resources free = FreeCapacity(session);
      std::vector<ResourceId> contested;
      for (const auto& [r, amount] : need.NonZero()) {
        if (r != kPods && amount > free.Get(r)) contested.push_back(r);
      }
      if (contested.empty()) {
        for (const auto& [r, amount] : need.NonZero()) {
          if (r != kPods) contested.push_back(r);
        }
      }
      // R's side: within its deserved share with the min placed, at every level below `top`.
      auto within_deserved = [&](QueueId from, QueueId top, const Resources& more) {
        for (QueueId q = from; q != top && q != kNoId; q = session.queue(q).parent) {
          const Resources* d = deserved_of(q);
          if (d == nullptr) return false;
          for (ResourceId r : contested) {
            const int64_t limit = d->Get(r);
            if (limit > 0 && ledger.held(q).Get(r) + more.Get(r) > limit) return false;
          }
        }
        return true;
      };
      // The reclaiming queue itself, with the whole min placed (its ancestors: per victim, below).
      if (!within_deserved(reclaimer, session.queue(reclaimer).parent, need)) {
        LAHAR_LOG(2, "reclaim") << job.key() << ": its min would take queue " << session.queue(reclaimer).name
                                << " above its deserved share";
        continue;
      }

      VictimPolicy policy;
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
      policy.admissible = [&](const JobInfo& victim, const Resources& freed) {
        const QueueId top = LowestCommonAncestor(session, reclaimer, victim.queue);
        if (!within_deserved(session.queue(reclaimer).parent, top, need)) return false;
        for (QueueId q = victim.queue; q != top && q != kNoId; q = session.queue(q).parent) {
          const Resources* d = deserved_of(q);
          if (d == nullptr) return false;
          for (ResourceId r : contested) {
            if (freed.Get(r) > 0 && ledger.held(q).Get(r) - freed.Get(r) < d->Get(r)) return false;
          }
          // Its guarantee is never reclaimed either.
          for (const auto& [r, g] : session.queue(q).guarantee.NonZero()) {
            if (freed.Get(r) > 0 && ledger.held(q).Get(r) - freed.Get(r) < g) return false;
          }
        }
        return true;
      };
      policy.on_take = [&ledger](const JobInfo& victim, const Resources& freed) { ledger.Add(victim.queue, freed, -1); };
      // Room: the capability at every level (the deserved shares were checked above and, per victim,
      // up to the common ancestor; Allocatable would also hold the ancestors to theirs, which a
      // sibling's reclaim moves within). `planned` counts the tasks the plan placed before.
      Resources planned;
      policy.room = [&](const TaskInfo& task) {
        for (QueueId q = reclaimer; q != kNoId; q = session.queue(q).parent) {
          for (const auto& [r, cap] : session.queue(q).capability.NonZero()) {
            if (r != kPods && ledger.held(q).Get(r) + planned.Get(r) + task.request.Get(r) > cap) return false;
          }
        }
        planned += task.request;
        return true;
      };
      policy.make_room_in_own_queue = false;
      policy.reason = EvictionReason("reclaimed-for", job);

      std::vector<Resources> saved = ledger.Save();
      Statement statement(session);
      VictimPlan plan = PlanForStarvingJob(session, statement, id, policy, scalable, &orders, {reclaimer, 0});
      if (!plan.fits || plan.victims.empty()) {
        statement.Discard();
        ledger.Restore(std::move(saved));
        continue;
      }
      statement.Commit();
      orders.Clear();
      for (const auto& [task, node] : plan.placements) ledger.Add(reclaimer, session.task(task).request, +1);
      SettleVictims(session, plan);
      LAHAR_LOG(2, "reclaim") << job.key() << ": pipelined " << plan.placements.size() << " tasks, evicted "
                              << plan.victims.size() << " pods of other queues";
    }
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewReclaimAction(const Arguments& arguments) {
  if (!arguments.values().empty()) {
    return absl::InvalidArgumentError(StrCat(arguments.owner(), ": unknown argument \"",
                                             arguments.values().begin()->first, "\" (reclaim takes no arguments)"));
  }
  return std::make_unique<ReclaimAction>();
}

}  // namespace lahar
