#include "scheduler/framework/victims.h"

#include <algorithm>
#include <set>

#include "absl/cleanup/cleanup.h"
#include "api/log.h"
#include "api/strings.h"
#include "scheduler/framework/capacity.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/victim_order.h"

namespace lahar {

using victims_internal::CollectVictims;
using victims_internal::CountWorkerHoldings;
using victims_internal::FewerFitWithAnyWorkers;
using victims_internal::Entry;
using victims_internal::NodeMayFit;
using victims_internal::RankVictims;
using victims_internal::ShapesKey;
using victims_internal::SomeNodeMayFit;
using victims_internal::SomeNodeMayFitWithAnyWorkers;
using victims_internal::VictimOrder;

std::vector<bool> ScalableJobs(const Session& session) {
  Session::Memos& memos = session.memos();
  if (memos.scalable_version != session.state_version() || memos.scalable_job_changes != session.job_changes()) {
    // Asked of live jobs only: the others (Pending, holding nothing) are neither victims nor
    // starving, and no reader asks about them.
    memos.scalable.assign(session.cluster().jobs.size(), false);
    // Asked only of jobs that may have a worker: no reader looks at the others' (a job with no
    // more tasks than its min has no surplus of ready pods, so no worker, and grows none).
    for (JobId id : session.LiveElasticJobs()) memos.scalable[id] = session.Scalable(session.job(id));
    memos.scalable_version = session.state_version();
    memos.scalable_job_changes = session.job_changes();
  }
  return memos.scalable;
}

VictimPolicy ElasticWorkersPolicy(const Session& session, const JobInfo& starving) {
  VictimPolicy policy;
  const Session* s = &session;
  const QueueId own = starving.queue;
  policy.kind = [s, own](const JobInfo& job) {
    return job.queue == own || s->queue(job.queue).reclaimable ? VictimKind::kElasticWorkers : VictimKind::kNone;
  };
  policy.reason = {"elastic-preempted-for", &starving};
  policy.takes_workers_only = true;
  return policy;
}

bool CooldownChangesNothing(const Session& session, const std::vector<bool>& scalable) {
  const std::vector<JobId>& live = session.LiveElasticJobs();  // the others have no worker
  return std::none_of(live.begin(), live.end(), [&](JobId id) {
    if (scalable[id]) return false;
    // No more ready than its min (most live jobs): no worker, seen here without a call.
    const JobInfo& job = session.job(id);
    return job.ReadyCount() > job.min_available && !ElasticWorkers(session, job).empty();
  });
}

std::function<std::pair<int64_t, int64_t>(const JobInfo& starving)> ElasticWorkersOrderKey(const Session& session) {
  const std::vector<QueueInfo>& queues = session.cluster().queues;
  const bool shared = std::all_of(queues.begin(), queues.end(), [](const QueueInfo& q) { return q.reclaimable; });
  return [shared](const JobInfo& starving) {
    return shared ? std::pair<int64_t, int64_t>{-1, 0} : std::pair<int64_t, int64_t>{starving.queue, 0};
  };
}


void SettleVictims(Session& session, const VictimPlan& plan) {
  const std::set<JobId> whole(plan.whole_jobs.begin(), plan.whole_jobs.end());
  for (JobId job : whole) session.SetJobPhase(job, PodGroupPhase::kPending);
  for (TaskId victim : plan.victims) {
    const JobId job = session.task(victim).job;
    if (whole.count(job) == 0 && !session.WasScaled(job)) session.MarkScaled(job);
  }
}

std::string EvictionReason(std::string_view verb, const JobInfo& starving) {
  return StrCat(verb, " ", starving.namespace_, "/", starving.name);
}

std::string VictimPolicy::Reason::Text() const {
  return starving != nullptr ? EvictionReason(verb, *starving) : std::string(verb);
}

std::pair<std::string_view, std::string_view> SplitEvictionReason(std::string_view reason) {
  const size_t space = reason.find(' ');
  if (space == std::string_view::npos) return {reason, {}};
  return {reason.substr(0, space), reason.substr(space + 1)};
}

void UpdateFreeCapacity(const Session& session, const VictimPlan& plan, Resources& free) {
  // Per touched node: its future idle now, and before the plan (victims were not releasing yet,
  // the placements not promised), each clamped at zero as FreeCapacity counts them.
  std::map<NodeId, Resources> change;  // what the plan added to the node's future idle
  for (TaskId v : plan.victims) change[session.task(v).node] += session.task(v).request;
  for (const auto& [task, node] : plan.placements) change[node] -= session.task(task).request;
  for (const auto& [id, delta] : change) {
    const NodeInfo& node = session.node(id);
    if (!node.schedulable) continue;
    Resources now = node.FutureIdle();
    Resources before = now - delta;
    now.ClampNegativeToZero();
    before.ClampNegativeToZero();
    free += now;
    free -= before;
  }
}

VictimPlan PlanForStarvingJob(Session& session, Statement& statement, JobId job_id, const VictimPolicy& policy,
                              const std::vector<bool>& scalable, VictimOrderCache* cache,
                              std::pair<int64_t, int64_t> key,
                              std::optional<std::pair<int64_t, int64_t>> order_key) {
  VictimPlan plan;
  const JobInfo& job = session.job(job_id);
  // A copy: the plan pipelines the job's tasks, which changes the memo it comes from.
  const std::vector<TaskId>* unplaced = UnplacedMinTasks(session, job);
  if (unplaced == nullptr || unplaced->empty()) return plan;
  const std::vector<TaskId> tasks = *unplaced;
  const QueueInfo& queue = session.queue(job.queue);
  auto room = [&](const TaskInfo& task) {
    return policy.room ? policy.room(task) : session.Allocatable(queue, task);
  };

  // Callers with a cache have asked FailsAlike already, before making the policy.
  const uint64_t shapes = cache != nullptr ? ShapesKey(session, job, key) : 0;
  const uint64_t changes_before = session.task_state_changes();
  bool gang_asked = false;
  absl::Cleanup remember_failure = [&] {
    if (cache != nullptr && !plan.fits && !gang_asked) {
      cache->entries().failures.emplace(shapes, session.task_state_changes() != changes_before);
    }
  };

  std::optional<VictimOrder> own_order;  // collected when the first task needs evictions
  const TaskInfo& preemptor = session.task(tasks.front());
  auto collected = [&]() -> VictimOrder& {
    if (cache != nullptr) {
      auto [it, inserted] = cache->entries().orders.try_emplace(order_key.value_or(key));
      if (inserted) it->second = CollectVictims(session, job, preemptor, policy, scalable, cache->entries().candidates);
      return it->second;
    }
    if (!own_order) {
      victims_internal::Candidates candidates;
      own_order = CollectVictims(session, job, preemptor, policy, scalable, candidates);
    }
    return *own_order;
  };
  auto ensure_order = [&]() -> const VictimOrder& {
    VictimOrder& order = collected();
    if (!order.is_ranked) {
      RankVictims(session, policy, scalable, order, cache != nullptr ? &cache->entries().ranked_workers : nullptr);
    }
    return order;
  };

  // Node searches of this plan alone: what it finds depends on the state, never on other plans.
  Session::NodeSearch search;
  // Most plans of a backlog fail at their first task, which fits no node as things are nor with
  // every elastic worker of the cluster gone: then the plan fails there before an order is
  // collected, with nothing done, as it would below (room and node searches change nothing).
  std::optional<NodeId> first_without_evictions;  // step b's answer for the first task, once asked
  const victims_internal::WorkerHoldings* holdings = nullptr;  // counted when that answer is no node
  const WaitMemo* wait_memo = session.wait_memo();
  if (policy.takes_workers_only && wait_memo != nullptr && wait_memo->enabled() && room(preemptor)) {
    first_without_evictions =
        session.FindBestNode(preemptor, Placement::kFutureIdle, /*elastic=*/false, /*errors=*/nullptr, &search);
    if (*first_without_evictions == kNoId) {
      holdings = &CountWorkerHoldings(session);
      if (!SomeNodeMayFitWithAnyWorkers(session, *holdings, preemptor)) {
        LAHAR_LOG(2, "victims") << job.key() << ": " << preemptor.key() << " fits no node even after evictions";
        return plan;
      }
    }
  }

  // Necessary condition: the unplaced min fits in what is free plus everything the entries free.
  {
    Resources need;
    for (TaskId t : tasks) need += session.task(t).request;
    if (!need.FitsIn(collected().reachable)) {
      LAHAR_LOG(2, "victims") << job.key() << ": min exceeds free plus takeable capacity";
      return plan;
    }
  }

  // A gang of alike pods whose first needs evictions cannot be placed whole when all the nodes
  // together hold fewer of its pods than it needs, even with every elastic worker gone: the plan
  // fails, as below, without its order ranked. It fails untouched when its first pod fits no
  // node after evictions; else it would place that one, evicting for it, before failing on a
  // later pod, and the caller would discard that: its trace is left instead.
  if (holdings != nullptr && tasks.size() > 1 && !policy.admissible && session.JobScope(job.id) == nullptr &&
      std::all_of(tasks.begin(), tasks.end(), [&](TaskId t) { return session.task(t).request == preemptor.request; }) &&
      FewerFitWithAnyWorkers(session, *holdings, preemptor.request, tasks.size())) {
    if (SomeNodeMayFit(session, collected(), preemptor)) session.ReplayDiscardedChanges();
    LAHAR_LOG(2, "victims") << job.key() << ": its min fits no set of nodes even after evictions";
    return plan;
  }

  // Per victim job: how many entries of its list are taken, by this plan or by plans committed
  // since the order was built (those lead the list); -1: not looked at yet. With a cache the
  // vector is reused from plan to plan and only the entries this plan touched are reset, so a
  // plan costs what it looks at, not the number of jobs.
  std::vector<int32_t> own_taken;
  std::vector<int32_t>& taken = cache != nullptr ? cache->entries().taken : own_taken;
  if (taken.size() != session.cluster().jobs.size()) taken.assign(session.cluster().jobs.size(), -1);
  std::vector<JobId> touched;
  absl::Cleanup reset_taken = [&taken, &touched] {
    for (JobId j : touched) taken[j] = -1;
  };
  auto entries_taken = [&](JobId victim) -> int32_t& {
    int32_t& count = taken[victim];
    if (count < 0) {
      touched.push_back(victim);
      count = 0;
      const VictimOrder& order = ensure_order();
      for (int32_t r : order.job_ranks[victim]) {
        if (!order.gone[r]) break;
        ++count;
      }
    }
    return count;
  };
  auto is_taken = [&](const Entry& e) { return e.position < entries_taken(e.job); };
  // A job confined to a domain (spec 3.3) takes its victims there only: an entry with a pod
  // outside the domain is passed over as if it were none (its job's later entries may still
  // go), and a whole job goes only when every pod it has left is inside, so no worker is left
  // running without its gang.
  const bool scoped = session.JobScope(job.id) != nullptr;
  auto in_scope = [&](const Entry& e) {
    if (!scoped) return true;
    auto inside = [&](TaskId v) {
      const TaskInfo& task = session.task(v);
      return !HoldsNode(task.status) || session.InJobScope(job.id, task.node);
    };
    if (e.whole) return std::all_of(session.job(e.job).tasks.begin(), session.job(e.job).tasks.end(), inside);
    return std::all_of(e.tasks.begin(), e.tasks.end(), inside);
  };
  // What taking entry `rank` takes when its job's entries before position `first` are gone
  // already: it and the entries of its job between. With a `node`, also what they free there.
  struct Cost {
    int32_t pods = 0;
    Resources freed;
    Resources freed_on_node;
    int32_t pods_on_node = 0;  // the pod slots it frees there
  };
  auto cost_from = [&](int32_t rank, int32_t first, NodeId node) {
    const VictimOrder& order = ensure_order();
    const Entry& e = order.ranked[rank];
    const std::vector<int32_t>& ranks = order.job_ranks[e.job];
    Cost cost;
    for (int32_t p = first; p <= e.position; ++p) {
      const Entry& step = order.ranked[ranks[p]];
      if (!in_scope(step)) continue;
      cost.pods += static_cast<int32_t>(step.tasks.size());
      cost.freed += step.freed;
      if (node == kNoId) continue;
      for (TaskId v : step.tasks) {
        if (session.task(v).node != node) continue;
        cost.freed_on_node += session.task(v).request;
        ++cost.pods_on_node;
      }
    }
    return cost;
  };
  // Whether the policy lets entry `rank` go, on top of `already` taken from its queue.
  auto admissible = [&](int32_t rank, int32_t first, const Resources& already) {
    if (!policy.admissible) return true;
    const Entry& e = ensure_order().ranked[rank];
    return policy.admissible(session.job(e.job), already + cost_from(rank, first, kNoId).freed);
  };
  std::string reason;  // policy.reason as text, made at the plan's first eviction
  auto take_through = [&](int32_t rank) {
    const VictimOrder& order = ensure_order();
    const Entry& e = order.ranked[rank];
    int32_t& done = entries_taken(e.job);
    const std::vector<int32_t>& ranks = order.job_ranks[e.job];
    for (; done <= e.position; ++done) {
      const Entry& step = order.ranked[ranks[done]];
      if (!in_scope(step)) continue;
      for (TaskId victim : step.tasks) {
        if (reason.empty()) reason = policy.reason.Text();
        statement.Evict(victim, reason);
        plan.victims.push_back(victim);
      }
      if (step.whole) plan.whole_jobs.push_back(step.job);
      if (policy.on_take) policy.on_take(session.job(step.job), step.freed);
    }
  };

  for (TaskId t : tasks) {
    const TaskInfo& task = session.task(t);
    // a. Room in the queue, from the queue's own entries if the policy allows.
    while (!room(task)) {
      std::optional<int32_t> next;
      if (policy.make_room_in_own_queue) {
        const VictimOrder& order = ensure_order();
        for (size_t r = 0; r < order.ranked.size() && !next; ++r) {
          const Entry& e = order.ranked[r];
          if (session.job(e.job).queue == job.queue && !is_taken(e) && in_scope(e) &&
              admissible(static_cast<int32_t>(r), entries_taken(e.job), Resources())) {
            next = static_cast<int32_t>(r);
          }
        }
      }
      if (!next) {
        LAHAR_LOG(2, "victims") << job.key() << ": queue " << queue.name << " has no room for " << task.key();
        return plan;
      }
      take_through(*next);
    }
    // b. Room on a node without (more) evictions.
    NodeId node = kNoId;
    if (t == tasks.front() && first_without_evictions) {
      node = *first_without_evictions;  // asked above, in this state
    } else {
      node = session.FindBestNode(task, Placement::kFutureIdle, /*elastic=*/false, /*errors=*/nullptr, &search);
    }
    if (node != kNoId) {
      statement.Pipeline(t, node);
      plan.placements.emplace_back(t, node);
      continue;
    }
    // c. The node where the fewest evictions make room, when some node may have it.
    if (!SomeNodeMayFit(session, collected(), task)) {
      LAHAR_LOG(2, "victims") << job.key() << ": " << task.key() << " fits no node even after evictions";
      return plan;
    }
    const VictimOrder& order = ensure_order();
    NodeId best = kNoId;
    int32_t best_pods = 0;
    int32_t best_rank = 0;
    std::vector<int32_t> best_needed;
    std::vector<int32_t> needed;
    // Per job: entries this node's walk takes; per victim queue: what it takes (few of each).
    std::vector<std::pair<JobId, int32_t>> through;
    std::vector<std::pair<QueueId, Resources>> walk_freed;
    auto visit = [&](NodeId id) {
      const NodeInfo& candidate = session.node(id);
      if (!session.InJobScope(job.id, id)) return;
      if (!NodeMayFit(session, order, id, task) || !session.Predicate(task, candidate).ok()) return;
      Resources available = candidate.FutureIdle();
      int32_t slots = candidate.FuturePodSlots();
      int32_t pods = 0;
      through.clear();
      walk_freed.clear();
      needed.clear();
      for (int32_t r : order.node_ranks[id]) {
        const Entry& e = order.ranked[r];
        if (is_taken(e) || !in_scope(e)) continue;
        auto it = std::find_if(through.begin(), through.end(), [&e](const auto& p) { return p.first == e.job; });
        if (it == through.end()) it = through.insert(through.end(), {e.job, entries_taken(e.job)});
        if (e.position < it->second) continue;  // taken by an entry of its job earlier in this walk
        // The entries of its job before it go too: their pods count, and those on this node free room.
        const QueueId victim_queue = session.job(e.job).queue;
        auto q = std::find_if(walk_freed.begin(), walk_freed.end(),
                              [victim_queue](const auto& p) { return p.first == victim_queue; });
        if (q == walk_freed.end()) q = walk_freed.insert(walk_freed.end(), {victim_queue, Resources()});
        Resources& queue_freed = q->second;
        const Cost cost = cost_from(r, it->second, id);
        if (policy.admissible && !policy.admissible(session.job(e.job), queue_freed + cost.freed)) continue;
        it->second = e.position + 1;
        queue_freed += cost.freed;
        available += cost.freed_on_node;
        slots += cost.pods_on_node;
        pods += cost.pods;
        needed.push_back(r);
        if (!task.request.FitsIn(available) || slots <= 0) continue;
        if (best == kNoId || pods < best_pods || (pods == best_pods && (r < best_rank || (r == best_rank && id < best)))) {
          best = id;
          best_pods = pods;
          best_rank = r;
          best_needed = needed;
        }
        return;
      }
    };
    // Nodes in the rank order of their live entries: a node is (pods, rank of its last needed
    // entry) at best (its first live entry's rank, the smallest entry's pods), so once a node
    // costs no more pods than the smallest entry has, no node first met at a later rank beats it.
    std::vector<bool> visited(session.nodes().size(), false);
    for (int32_t r = 0; r < static_cast<int32_t>(order.ranked.size()); ++r) {
      if (best != kNoId && best_pods <= order.min_entry_pods && r > best_rank) break;
      const Entry& e = order.ranked[r];
      if (is_taken(e) || !in_scope(e)) continue;
      for (TaskId v : e.tasks) {
        const NodeId id = session.task(v).node;
        if (id == kNoId || visited[id]) continue;
        visited[id] = true;
        visit(id);
      }
    }
    if (best == kNoId) {
      LAHAR_LOG(2, "victims") << job.key() << ": " << task.key() << " fits no node even after evictions";
      return plan;
    }
    for (int32_t r : best_needed) {
      if (!is_taken(order.ranked[r])) take_through(r);
    }
    if (!session.ResourceFit(task, session.node(best), Placement::kFutureIdle).ok()) {
      LAHAR_WARN("victims") << task.key() << " does not fit " << session.node(best).name()
                            << " after the planned evictions";
      return plan;
    }
    statement.Pipeline(t, best);
    plan.placements.emplace_back(t, best);
  }
  gang_asked = true;
  plan.fits = session.JobPipelined(job);
  return plan;
}

}  // namespace lahar
