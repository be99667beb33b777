#include "actions/preempt_elastic_workers/preempt_elastic_workers.h"

#include <algorithm>
#include <map>
#include <optional>
#include <queue>

#include "api/log.h"
#include "api/strings.h"
#include "scheduler/framework/elastic_workers.h"
#include "scheduler/framework/session.h"

namespace lahar {
namespace {

struct Victim {
  TaskId task;
  JobId job;
  int32_t position;  // index in its job's list of elastic workers (eviction order)
};

// Every candidate victim of a plan, ranked (rank = index in `ranked`).
struct VictimOrder {
  std::vector<Victim> ranked;
  std::map<JobId, std::vector<int32_t>> job_ranks;  // per job: ranks in its own eviction order
  std::vector<std::vector<int32_t>> node_ranks;     // per node: ranks, ascending
};

// Ranks the candidate victims for starving job `starving` (see the header): overused queues
// first, then the most fulfilled job, one worker at a time, each job highest index first. The
// order is found by taking the workers for real in a scratch statement, so that the elastic
// order and Overused hooks see each job's and queue's state after the workers taken before;
// the statement is discarded before returning.
VictimOrder BuildVictimOrder(Session& session, const JobInfo& starving, const std::vector<bool>& scalable,
                             VictimScope scope) {
  VictimOrder order;
  order.node_ranks.resize(session.nodes().size());
  std::map<JobId, std::vector<TaskId>> lists;
  for (const JobInfo& job : session.cluster().jobs) {
    if (job.id == starving.id || !ElasticEligible(session, job) || !MinPlaced(session, job)) continue;
    if (scope == VictimScope::kOutsideCooldown && !scalable[job.id]) continue;
    if (job.queue != starving.queue && !session.queue(job.queue).reclaimable) continue;
    std::vector<TaskId> workers = ElasticWorkers(session, job);
    if (!workers.empty()) lists.emplace(job.id, std::move(workers));
  }
  if (lists.empty()) return order;

  // A queue is above its deserved share when the Overused hooks say so (Volcano's sense:
  // allocated >= deserved in every resource) or when it holds more than the deserved share a
  // plugin reported (proportion) in some resource. The second is what matters for elastic
  // queues: their deserved share is capped by their request, which includes their pending
  // extras, so in the abundant resources (cpu of a GPU job) they never reach it.
  const std::map<QueueId, Resources>& deserved = session.queue_deserved();
  std::vector<Resources> queue_allocated(session.queues().size());
  for (const JobInfo& job : session.cluster().jobs) {
    if (job.queue != kNoId) queue_allocated[job.queue] += job.allocated;
  }
  auto above_share = [&](QueueId queue) {
    if (session.Overused(session.queue(queue))) return true;
    auto it = deserved.find(queue);
    return it != deserved.end() && !queue_allocated[queue].LessEqual(it->second);
  };

  // Most fulfilled on top: the heap's "largest" is the job the elastic order puts last.
  auto less = [&session](JobId a, JobId b) { return session.ElasticOrderLess(session.job(a), session.job(b)); };
  using Heap = std::priority_queue<JobId, std::vector<JobId>, decltype(less)>;
  std::map<JobId, int32_t> cursor;
  Statement scratch(session);
  auto take = [&](JobId job) {
    int32_t& next = cursor[job];
    const TaskId task = lists[job][next];
    order.job_ranks[job].push_back(static_cast<int32_t>(order.ranked.size()));
    order.ranked.push_back({task, job, next});
    scratch.Evict(task, "");
    queue_allocated[session.job(job).queue] -= session.task(task).request;
    ++next;
    return next < static_cast<int32_t>(lists[job].size());
  };
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1 && scope != VictimScope::kIncludingCooldown) break;
    Heap overused(less);
    Heap rest(less);
    for (const auto& [job, workers] : lists) {
      if (scalable[job] != (pass == 0)) continue;
      (above_share(session.job(job).queue) ? overused : rest).push(job);
    }
    while (!overused.empty()) {
      const JobId job = overused.top();
      overused.pop();
      if (!above_share(session.job(job).queue)) {
        rest.push(job);  // its queue is back within its share: ranked with the others
        continue;
      }
      if (take(job)) overused.push(job);
    }
    while (!rest.empty()) {
      const JobId job = rest.top();
      rest.pop();
      if (take(job)) rest.push(job);
    }
  }
  scratch.Discard();
  for (size_t r = 0; r < order.ranked.size(); ++r) {
    order.node_ranks[session.task(order.ranked[r].task).node].push_back(static_cast<int32_t>(r));
  }
  return order;
}

}  // namespace

std::vector<bool> ScalableJobs(const Session& session) {
  std::vector<bool> scalable(session.cluster().jobs.size());
  for (const JobInfo& job : session.cluster().jobs) scalable[job.id] = session.Scalable(job);
  return scalable;
}

std::string ElasticPreemptionReason(const JobInfo& starving) {
  return StrCat("elastic-preempted-for ", starving.namespace_, "/", starving.name);
}

struct VictimOrderCache::Entries {
  std::map<std::pair<QueueId, VictimScope>, VictimOrder> orders;
};
VictimOrderCache::VictimOrderCache() : entries_(std::make_unique<Entries>()) {}
VictimOrderCache::~VictimOrderCache() = default;
void VictimOrderCache::Clear() { entries_->orders.clear(); }

StarvingJobPlan PlanStarvingJob(Session& session, Statement& statement, JobId job_id,
                                const std::vector<bool>& scalable, VictimScope scope,
                                const std::string& reason, VictimOrderCache* cache) {
  StarvingJobPlan plan;
  const JobInfo& job = session.job(job_id);
  std::optional<std::vector<TaskId>> tasks = UnplacedMinTasks(session, job);
  if (!tasks.has_value()) return plan;
  const QueueInfo& queue = session.queue(job.queue);

  std::optional<VictimOrder> order;  // built when the first task needs evictions
  std::map<JobId, int32_t> taken;    // per victim job: how many of its list this plan evicted
  auto ensure_order = [&]() -> const VictimOrder& {
    if (cache != nullptr) {
      auto [it, inserted] = cache->entries().orders.try_emplace({job.queue, scope});
      if (inserted) it->second = BuildVictimOrder(session, job, scalable, scope);
      return it->second;
    }
    if (!order) order = BuildVictimOrder(session, job, scalable, scope);
    return *order;
  };
  // Evicts the victim of rank `rank` and, first, the workers its job must lose before it.
  auto evict_through = [&](int32_t rank) {
    const VictimOrder& victims = ensure_order();
    const Victim& v = victims.ranked[rank];
    int32_t& done = taken[v.job];
    const std::vector<int32_t>& ranks = victims.job_ranks.at(v.job);
    for (; done <= v.position; ++done) {
      const TaskId victim = victims.ranked[ranks[done]].task;
      statement.Evict(victim, reason);
      plan.victims.push_back(victim);
    }
  };
  auto evicted = [&](const Victim& v) {
    auto it = taken.find(v.job);
    return it != taken.end() && v.position < it->second;
  };

  for (TaskId t : *tasks) {
    const TaskInfo& task = session.task(t);
    // a. Room in the queue, from the queue's own elastic workers if need be.
    while (!session.Allocatable(queue, task)) {
      const VictimOrder& victims = ensure_order();
      std::optional<int32_t> next;
      for (size_t r = 0; r < victims.ranked.size() && !next; ++r) {
        const Victim& v = victims.ranked[r];
        if (session.job(v.job).queue == job.queue && !evicted(v)) next = static_cast<int32_t>(r);
      }
      if (!next) {
        LAHAR_LOG(2, "preempt-elastic-workers") << job.key() << ": queue " << queue.name << " cannot take "
                                                << task.key() << " even without its elastic workers";
        return plan;
      }
      evict_through(*next);
    }
    // b. Room on a node without (more) evictions.
    NodeId node = session.FindBestNode(task, Placement::kFutureIdle);
    if (node != kNoId) {
      statement.Pipeline(t, node);
      plan.placements.emplace_back(t, node);
      continue;
    }
    // c. The node where the fewest evictions make room.
    const VictimOrder& victims = ensure_order();
    NodeId best = kNoId;
    int32_t best_evictions = 0;
    int32_t best_rank = 0;
    std::map<JobId, int32_t> prefix;  // per job: the end of its list this node would need
    for (NodeId id = 0; id < static_cast<NodeId>(session.nodes().size()); ++id) {
      const std::vector<int32_t>& ranks = victims.node_ranks[id];
      if (ranks.empty()) continue;
      const NodeInfo& candidate = session.node(id);
      if (!candidate.schedulable || candidate.pod_count >= candidate.max_pods) continue;
      if (!session.Predicate(task, candidate).ok()) continue;
      Resources available = candidate.FutureIdle();
      int32_t evictions = 0;
      prefix.clear();
      for (int32_t r : ranks) {
        const Victim& v = victims.ranked[r];
        if (evicted(v)) continue;
        auto [it, inserted] = prefix.emplace(v.job, taken.count(v.job) ? taken[v.job] : 0);
        if (v.position + 1 > it->second) {
          evictions += v.position + 1 - it->second;
          it->second = v.position + 1;
        }
        available += session.task(v.task).request;
        if (!task.request.FitsIn(available)) continue;
        if (best == kNoId || evictions < best_evictions || (evictions == best_evictions && r < best_rank)) {
          best = id;
          best_evictions = evictions;
          best_rank = r;
        }
        break;
      }
    }
    if (best == kNoId) {
      LAHAR_LOG(2, "preempt-elastic-workers") << job.key() << ": " << task.key()
                                              << " fits no node even after evicting elastic workers";
      return plan;
    }
    for (int32_t r : victims.node_ranks[best]) {
      if (r > best_rank) break;
      if (!evicted(victims.ranked[r])) evict_through(r);
    }
    if (!session.ResourceFit(task, session.node(best), Placement::kFutureIdle).ok()) {
      LAHAR_WARN("preempt-elastic-workers") << task.key() << " does not fit " << session.node(best).name()
                                            << " after the planned evictions";
      return plan;
    }
    statement.Pipeline(t, best);
    plan.placements.emplace_back(t, best);
  }
  plan.fits = session.JobPipelined(job);
  return plan;
}

namespace {

// Free capacity (idle and releasing, less pipelined promises) on schedulable nodes plus the
// requests of elastic workers of jobs outside their cooldown.
Resources ReachableCapacity(const Session& session, const std::vector<bool>& scalable) {
  Resources total;
  for (const NodeInfo& node : session.cluster().nodes) {
    if (!node.schedulable) continue;
    Resources free = node.FutureIdle();
    free.ClampNegativeToZero();
    total += free;
  }
  for (const JobInfo& job : session.cluster().jobs) {
    if (scalable[job.id]) total += ElasticWorkerRequests(session, job);
  }
  return total;
}

class PreemptElasticWorkersAction : public Action {
 public:
  std::string_view Name() const override { return "preempt-elastic-workers"; }

  void Execute(Session& session) override {
    const std::vector<bool> scalable = ScalableJobs(session);
    // A necessary condition, cheap enough to check for every starving job: its unplaced min
    // must fit in what is free plus every elastic worker that may be taken back. Jobs that fail
    // it skip the dry run, which ranks every elastic worker of the cluster.
    Resources reachable = ReachableCapacity(session, scalable);
    VictimOrderCache orders;
    for (JobId id : StarvingJobs(session)) {
      const JobInfo& job = session.job(id);
      std::optional<std::vector<TaskId>> unplaced = UnplacedMinTasks(session, job);
      if (!unplaced.has_value()) continue;
      Resources need;
      for (TaskId t : *unplaced) need += session.task(t).request;
      if (!need.FitsIn(reachable)) {
        LAHAR_LOG(2, "preempt-elastic-workers") << job.key() << ": min exceeds free plus reclaimable capacity";
        continue;
      }
      const std::string reason = ElasticPreemptionReason(job);
      Statement statement(session);
      StarvingJobPlan plan =
          PlanStarvingJob(session, statement, id, scalable, VictimScope::kOutsideCooldown, reason, &orders);
      if (!plan.fits) {
        statement.Discard();
        LAHAR_LOG(2, "preempt-elastic-workers") << job.key() << ": min does not fit, nothing evicted";
        continue;
      }
      statement.Commit();
      orders.Clear();
      reachable = ReachableCapacity(session, scalable);
      for (TaskId victim : plan.victims) {
        const JobId victim_job = session.task(victim).job;
        if (!session.WasScaled(victim_job)) session.MarkScaled(victim_job);
      }
      LAHAR_LOG(2, "preempt-elastic-workers") << job.key() << ": pipelined " << plan.placements.size()
                                              << " tasks, evicted " << plan.victims.size() << " elastic workers";
    }
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewPreemptElasticWorkersAction(const Arguments& arguments) {
  return std::make_unique<PreemptElasticWorkersAction>();
}

}  // namespace lahar
