#include "plugins/proportion/proportion.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "api/log.h"
#include "scheduler/framework/config.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/per_job.h"
#include "scheduler/framework/session.h"

namespace lahar {
namespace {

size_t Dimensions(const Resources& total, const std::vector<QueueDemand>& queues) {
  size_t n = total.size();
  for (const QueueDemand& q : queues) {
    n = std::max({n, q.capability.size(), q.guarantee.size(), q.request.size(), q.deserved.size()});
  }
  return n;
}

// `amounts` limited by `capability` where the capability names a resource (non-zero).
Resources CapBy(Resources amounts, const Resources& capability) {
  for (size_t i = 0; i < capability.size(); ++i) {
    const auto id = static_cast<ResourceId>(i);
    const int64_t cap = capability.Get(id);
    if (cap > 0 && amounts.Get(id) > cap) amounts.Set(id, cap);
  }
  return amounts;
}

// Amounts as doubles, indexed by resource id, for the water-filling rounds.
using Amounts = std::vector<double>;

Amounts ToAmounts(const Resources& r, size_t dims) {
  Amounts out(dims);
  for (size_t d = 0; d < dims; ++d) out[d] = static_cast<double>(r.Get(static_cast<ResourceId>(d)));
  return out;
}

// How a queue's deserved share is found.
enum class DeservedMode {
  kProportion,  // by weight, water-filling down the tree (explicit deserved taken as written)
  kCapacity,    // as written in each Queue; absent: nothing deserved, all it holds is borrowed
};

// Volcano's proportion (and capacity) plugin, per session, over the queue tree.
class QueueSharePlugin : public Plugin {
 public:
  explicit QueueSharePlugin(DeservedMode mode) : mode_(mode) {}
  std::string_view Name() const override { return mode_ == DeservedMode::kCapacity ? "capacity" : "proportion"; }

  void OnSessionOpen(Session& session) override {
    session_ = &session;
    const ClusterSnapshot& cluster = session.cluster();
    const size_t queue_count = cluster.queues.size();
    const Resources& total = cluster.total_allocatable;

    queues_.assign(queue_count, {});
    promised_.Reset(cluster.jobs.size());
    counted_.assign(cluster.jobs.size(), false);
    promise_stale_.assign(cluster.jobs.size(), false);
    stale_promises_.clear();
    voted_.assign(cluster.jobs.size(), false);
    voted_pending_.clear();
    synced_job_changes_ = session.job_changes();

    std::vector<QueueDemand> demands(queue_count);
    Resources total_guarantee;
    for (const QueueInfo& queue : cluster.queues) {
      demands[queue.id] = {queue.weight, queue.capability, queue.guarantee, Resources(), queue.deserved};
      if (queue.parent == kNoId && queue.broken.empty()) total_guarantee += queue.guarantee;
    }
    // What the queues' jobs ask for: as the cache kept it, else summed here.
    const bool demand_kept = cluster.queue_demand.size() == queue_count;
    if (demand_kept) {
      for (const QueueInfo& queue : cluster.queues) {
        const Resources& demand = cluster.queue_demand[queue.id];
        if (demand.IsZero()) continue;
        for (QueueId q = queue.id; q != kNoId; q = cluster.queues[q].parent) demands[q].request += demand;
      }
    } else {
      Resources grown;
      for (const JobInfo& job : cluster.jobs) {
        if (job.queue == kNoId) continue;
        const Resources& demand = JobDemand(job, job.tasks.size(), grown);
        for (QueueId q = job.queue; q != kNoId; q = cluster.queues[q].parent) demands[q].request += demand;
      }
    }
    // What they hold: as the cache kept it, else summed here (a job that is not live holds
    // nothing; nothing is pipelined yet, so allocated sums the placed tasks).
    if (cluster.queue_allocated.size() == queue_count) {
      for (const QueueInfo& queue : cluster.queues) {
        const Resources& allocated = cluster.queue_allocated[queue.id];
        if (allocated.IsZero()) continue;
        for (QueueId q = queue.id; q != kNoId; q = cluster.queues[q].parent) queues_[q].allocated += allocated;
      }
    } else {
      for (JobId id : session.LiveJobs()) {
        const JobInfo& job = session.job(id);
        if (job.queue == kNoId || job.PlacedCount() == 0) continue;
        for (QueueId q = job.queue; q != kNoId; q = cluster.queues[q].parent) queues_[q].allocated += job.allocated;
      }
    }
    for (JobId id : session.LiveJobs()) {  // an admitted job is live
      const JobInfo& job = session.job(id);
      if (job.queue != kNoId && Admitted(job.phase)) Count(job);
    }
    // Admitted jobs left out promise what their representative, alike and holding nothing, does.
    for (const Session::ParkedAdmitted& parked : session.parked_admitted()) {
      Resources promise = Promise(parked.representative);
      promise *= parked.members;
      queues_[session.job(parked.representative).queue].inqueue += promise;
    }
    // With `preempt` configured, what lower-priority jobs of a queue hold is room for a job of
    // higher priority at admission (spec 3, enqueue), as the session opened: made when first
    // read, or before a task first moves (most sessions never read it).
    by_priority_.reset();
    wants_by_priority_ = session.config().HasAction("preempt");
    if (wants_by_priority_) session.BeforeNextTaskChange([this] { ByPriority(); });

    // Deserved shares top-down: the cluster among the top-level queues, then each parent's
    // deserved among its children, exactly alike.
    std::vector<QueueId> level;
    for (const QueueInfo& queue : cluster.queues) {
      if (queue.parent == kNoId && queue.broken.empty()) level.push_back(queue.id);
    }
    std::vector<std::pair<Resources, std::vector<QueueId>>> splits = {{total, level}};
    for (size_t i = 0; i < splits.size(); ++i) {
      const Resources whole = splits[i].first;
      const std::vector<QueueId> members = splits[i].second;
      std::vector<Resources> shares;
      if (mode_ == DeservedMode::kCapacity) {
        for (QueueId q : members) shares.push_back(CapBy(cluster.queues[q].deserved, cluster.queues[q].capability));
      } else {
        std::vector<QueueDemand> part;
        for (QueueId q : members) part.push_back(demands[q]);
        shares = RecentDeservedShares(whole, std::move(part));
      }
      for (size_t m = 0; m < members.size(); ++m) {
        queues_[members[m]].deserved = shares[m];
        const QueueInfo& queue = cluster.queues[members[m]];
        if (!queue.children.empty()) splits.emplace_back(shares[m], queue.children);
      }
    }

    Resources free_of_guarantees = total - total_guarantee;
    free_of_guarantees.ClampNegativeToZero();
    for (const QueueInfo& queue : cluster.queues) {
      QueueState& q = queues_[queue.id];
      q.real_capability = CapBy(free_of_guarantees + queue.guarantee, queue.capability);
      q.share = QueueShare(q.allocated, q.deserved);
      if (queue.broken.empty()) session.ReportQueueDeserved(queue.id, q.deserved);
      LAHAR_LOG(2, Name()) << "queue " << queue.name << ": weight " << queue.weight << ", request "
                           << demands[queue.id].request.DebugString() << ", deserved "
                           << q.deserved.DebugString() << ", allocated " << q.allocated.DebugString();
    }

    // Each queue's path from the top of its tree, once: queue order compares along them.
    paths_.assign(queue_count, {});
    for (const QueueInfo& queue : cluster.queues) {
      for (QueueId q = queue.id; q != kNoId; q = cluster.queues[q].parent) paths_[queue.id].push_back(q);
      std::reverse(paths_[queue.id].begin(), paths_[queue.id].end());
    }
    session.AddQueueOrderFn([this](const QueueInfo& l, const QueueInfo& r) { return CompareQueues(l, r); });
    if (mode_ == DeservedMode::kProportion) {
      session.AddOverusedFn([this](const QueueInfo& queue) { return OverusedAt(queue.id).has_value(); },
                            [this](const std::vector<Resources>& growth) { return OverusedIfGrown(growth); });
    }
    session.AddAllocatableFn(
        [this](const QueueInfo& queue, const TaskInfo& task) { return !AllocateExcess(queue.id, task.request); });
    // A job not yet counted in its queue's inqueue is judged by its queue, priority and
    // minResources alone (AdmitExcess).
    auto by_facts = [this](const JobInfo& job) { return !counted_[job.id]; };
    session.AddJobEnqueueableFn([this](const JobInfo& job) { return Enqueueable(job); }, by_facts);
    session.AddQueueLimitFn(
        [this](QueueCheck check, const JobInfo& job, const Resources& request) { return Explain(check, job, request); },
        by_facts);
    session.AddEventHandler({
        [this](const TaskInfo& task) { OnTask(task, +1); },
        [this](const TaskInfo& task) { OnTask(task, -1); },
    });
  }

 private:
  struct QueueState {
    Resources allocated;        // placed and pipelined requests of the queue's (and descendants') tasks
    Resources inqueue;          // promised to admitted jobs beyond what they hold
    Resources deserved;
    Resources real_capability;  // min(capability, total - other queues' guarantees)
    double share = 0;           // QueueShare(allocated, deserved), or kStaleShare
  };

  static constexpr double kStaleShare = -1;  // a share is never negative (as drf marks its own)
  double ShareOf(QueueId id) const {
    QueueState& q = queues_[id];
    if (q.share < 0) q.share = QueueShare(q.allocated, q.deserved);
    return q.share;
  }

  static bool Admitted(PodGroupPhase phase) {
    return phase == PodGroupPhase::kInqueue || phase == PodGroupPhase::kRunning;
  }

  // Lower share first, compared at the level where the two queues' paths part (a department's
  // share decides between its teams and another department's); then higher queue priority.
  int CompareQueues(const QueueInfo& l, const QueueInfo& r) const {
    const std::vector<QueueId>& lp = paths_[l.id];
    const std::vector<QueueId>& rp = paths_[r.id];
    size_t i = 0;
    while (i < lp.size() && i < rp.size() && lp[i] == rp[i]) ++i;
    if (i < lp.size() && i < rp.size()) {
      const double ls = ShareOf(lp[i]);
      const double rs = ShareOf(rp[i]);
      if (ls != rs) return ls < rs ? -1 : 1;
      const int32_t lpri = session_->queue(lp[i]).priority;
      const int32_t rpri = session_->queue(rp[i]).priority;
      if (lpri != rpri) return lpri > rpri ? -1 : 1;
    }
    return 0;
  }

  // What an admitted job is promised beyond what it holds.
  Resources Promise(JobId job) const {
    const JobInfo& info = session_->job(job);
    Resources promise = info.min_resources;
    if (!info.HoldsNothing()) promise -= HeldRequests(*session_, info);  // most of a backlog holds nothing
    promise.ClampNegativeToZero();
    return promise;
  }

  // Starts counting an admitted job's promise in its queue's inqueue.
  void Count(const JobInfo& job) {
    counted_[job.id] = true;
    // Most admitted jobs hold their min already: promised nothing, which an empty sum says.
    if (job.Count(TaskStatus::kPipelined) == 0 && !job.HoldsNothing() && job.min_resources.LessEqual(job.allocated)) {
      return;
    }
    Resources& promised = promised_[job.id];
    promised = Promise(job.id);
    queues_[job.queue].inqueue += promised;
  }

  void Recount(JobId job) {
    QueueState& q = queues_[session_->job(job).queue];
    Resources& promised = promised_[job];
    q.inqueue -= promised;
    promised = Promise(job);
    q.inqueue += promised;
  }

  void OnTask(const TaskInfo& task, int sign) {
    const JobInfo& job = session_->job(task.job);
    if (job.queue == kNoId) return;
    for (QueueId id = job.queue; id != kNoId; id = session_->queue(id).parent) {
      QueueState& q = queues_[id];
      if (sign > 0) {
        q.allocated += task.request;
      } else {
        q.allocated -= task.request;
      }
      q.share = kStaleShare;  // made again when queues are next compared: tasks move far more often
    }
    // Its promise is counted again when next read (AdmitExcess): tasks move far more often.
    if (counted_[job.id] && !promise_stale_[job.id]) {
      promise_stale_[job.id] = true;
      stale_promises_.push_back(job.id);
    }
  }

  void SettlePromises() {
    for (JobId job : stale_promises_) {
      promise_stale_[job] = false;
      Recount(job);
    }
    stale_promises_.clear();
  }

  // A limit the queue `queue` (or an ancestor) would pass: `limit` of `resource`, `used` of it
  // taken, `need` more asked. The votes and their explanations (Explain) share these rules.
  struct Excess {
    QueueId queue;
    bool deserved;  // else the capability
    ResourceId resource;
    int64_t limit, used, need;
  };

  // Placing `request` more stays within deserved (proportion only) and capability, at the
  // queue and every ancestor; else the first limit passed.
  std::optional<Excess> AllocateExcess(QueueId queue, const Resources& request) const {
    for (QueueId id = queue; id != kNoId; id = session_->queue(id).parent) {
      const QueueState& q = queues_[id];
      const Resources& capability = session_->queue(id).capability;
      for (size_t i = 0; i < request.size(); ++i) {
        const auto r = static_cast<ResourceId>(i);
        const int64_t amount = request.Get(r);
        if (r == kPods || amount <= 0) continue;
        // The capability first: it is what a user set, and deserved is capped by it.
        const int64_t used = q.allocated.Get(r);
        const int64_t cap = capability.Get(r);
        if (cap > 0 && used + amount > cap) return Excess{id, false, r, cap, used, amount};
        if (mode_ == DeservedMode::kProportion && used + amount > q.deserved.Get(r)) {
          return Excess{id, true, r, q.deserved.Get(r), used, amount};
        }
      }
    }
    return std::nullopt;
  }

  // The queue or ancestor that holds at least its deserved share in every resource, with the
  // first resource it deserves (need left 0 for the caller).
  std::optional<Excess> OverusedAt(QueueId queue) const {
    for (QueueId id = queue; id != kNoId; id = session_->queue(id).parent) {
      const QueueState& q = queues_[id];
      if (!q.deserved.LessEqual(q.allocated)) continue;
      ResourceId r = kCpu;
      for (const auto& [named, amount] : q.deserved.NonZero()) {
        if (named != kPods && amount > 0) {
          r = named;
          break;
        }
      }
      return Excess{id, true, r, q.deserved.Get(r), q.allocated.Get(r), 0};
    }
    return std::nullopt;
  }

  // OverusedAt's test for every queue once every queue's own jobs hold `growth` more: a queue
  // counts what its descendants hold, so each ancestor grows by what its subtree may place.
  std::vector<bool> OverusedIfGrown(const std::vector<Resources>& growth) const {
    const size_t count = queues_.size();
    std::vector<Resources> grown(count);
    for (size_t q = 0; q < count; ++q) grown[q] = queues_[q].allocated;
    for (QueueId q = 0; q < static_cast<QueueId>(count); ++q) {
      if (growth[q].IsZero()) continue;
      for (QueueId a = q; a != kNoId; a = session_->queue(a).parent) grown[a] += growth[q];
    }
    std::vector<bool> overused(count, false);
    for (QueueId q = 0; q < static_cast<QueueId>(count); ++q) {
      for (QueueId a = q; a != kNoId && !overused[q]; a = session_->queue(a).parent) {
        overused[q] = queues_[a].deserved.LessEqual(grown[a]);
      }
    }
    return overused;
  }

  std::optional<WaitReason> Explain(QueueCheck check, const JobInfo& job, const Resources& request) {
    if (job.queue == kNoId) return std::nullopt;
    std::optional<Excess> excess;
    switch (check) {
      case QueueCheck::kAdmit: excess = AdmitExcess(job); break;
      case QueueCheck::kAllocate: excess = AllocateExcess(job.queue, request); break;
      case QueueCheck::kOverused:
        if (mode_ == DeservedMode::kProportion) excess = OverusedAt(job.queue);
        if (excess) {
          // A share capped by the capability is the capability's doing: name what the user set.
          excess->need = request.Get(excess->resource);
          const int64_t cap = session_->queue(excess->queue).capability.Get(excess->resource);
          if (cap > 0 && excess->limit >= cap) {
            excess->deserved = false;
            excess->limit = cap;
          }
        }
        break;
    }
    if (!excess) return std::nullopt;
    return WaitReason{.kind = WaitKind::kQueueLimit,
                      .subject = session_->queue(excess->queue).name,
                      .limit = excess->deserved ? "deserved" : "capability",
                      .shortage = ResourceShortage{excess->resource, excess->limit, excess->used, excess->need}};
  }

  // Jobs voted on while Pending that the enqueue action has since admitted start counting.
  void SyncAdmissions() {
    // Only a phase change admits a job: without one since the last sync there is nothing to do
    // (a pass per vote over every job that voted made a session quadratic in its backlog).
    if (session_->job_changes() == synced_job_changes_) return;
    synced_job_changes_ = session_->job_changes();
    size_t kept = 0;
    for (JobId job : voted_pending_) {
      const JobInfo& info = session_->job(job);
      if (Admitted(info.phase)) {
        if (!counted_[job]) Count(info);
        voted_[job] = false;
      } else {
        voted_pending_[kept++] = job;
      }
    }
    voted_pending_.resize(kept);
  }

  int Enqueueable(const JobInfo& job) {
    SyncAdmissions();
    if (job.queue == kNoId) return kReject;
    const QueueInfo& queue = session_->queue(job.queue);
    if (job.phase == PodGroupPhase::kPending && !counted_[job.id] && !voted_[job.id]) {
      voted_[job.id] = true;
      voted_pending_.push_back(job.id);
    }
    if (!queue.open) {
      LAHAR_LOG(2, Name()) << job.key() << ": queue " << queue.name << " is closed";
      return kReject;
    }
    if (std::optional<Excess> excess = AdmitExcess(job)) {
      LAHAR_LOG(2, Name()) << job.key() << ": queue " << queue.name << " cannot hold " << ResourceName(excess->resource)
                           << ": real capability " << excess->limit << ", held or promised " << excess->used
                           << ", asked " << excess->need;
      return kReject;
    }
    return kPermit;
  }

  const HoldingsByPriority* ByPriority() {
    if (wants_by_priority_ && by_priority_ == nullptr) by_priority_ = HoldingsByPriority::Of(*session_);
    return by_priority_.get();
  }

  // The job's minResources on top of what its queue holds and has promised (less what preempt
  // could take from lower priorities) stays within the queue's real capability; else the first
  // resource that would pass it.
  std::optional<Excess> AdmitExcess(const JobInfo& job) {
    if (job.min_resources.IsZero()) return std::nullopt;
    SettlePromises();
    const QueueState& q = queues_[job.queue];
    // A job already counted must not count twice.
    Resources held = q.allocated + q.inqueue;
    if (const Resources* promised = promised_.Find(job.id)) held -= *promised;
    if (const HoldingsByPriority* below = ByPriority()) held -= below->Below(job.queue, job.priority);
    for (size_t i = 0; i < job.min_resources.size(); ++i) {  // in id order, as NonZero() lists them
      const auto id = static_cast<ResourceId>(i);
      const int64_t amount = job.min_resources.Get(id);
      if (id == kPods || amount <= 0) continue;
      if (held.Get(id) + amount > q.real_capability.Get(id)) {
        return Excess{job.queue, false, id, q.real_capability.Get(id), held.Get(id), amount};
      }
    }
    return std::nullopt;
  }

  const DeservedMode mode_;
  const Session* session_ = nullptr;
  mutable std::vector<QueueState> queues_;  // mutable: shares are made again when read (ShareOf)
  std::vector<std::vector<QueueId>> paths_;  // per queue: its ancestors from the top, then itself
  // Per job promised something: its part of its queue's inqueue (most admitted jobs hold their
  // min and are promised nothing). Never held while another is made.
  PerJob<Resources, std::vector<Resources>> promised_;
  // Per-job flags as bytes (not std::vector<bool>): the first is read for every waiting job.
  std::vector<uint8_t> counted_;        // per job: its promise is in its queue's inqueue
  std::vector<uint8_t> promise_stale_;  // per job: counted, and its tasks moved since
  std::vector<JobId> stale_promises_;
  std::vector<uint8_t> voted_;          // per job: in voted_pending_
  std::vector<JobId> voted_pending_;
  uint64_t synced_job_changes_ = 0;
  // Made once per session, when preempt runs (ByPriority).
  bool wants_by_priority_ = false;
  std::shared_ptr<const HoldingsByPriority> by_priority_;
};

}  // namespace

double QueueShare(const Resources& allocated, const Resources& deserved) {
  double share = 0;
  const size_t n = std::max(allocated.size(), deserved.size());
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<ResourceId>(i);
    if (id == kPods) continue;
    const int64_t a = allocated.Get(id);
    const int64_t d = deserved.Get(id);
    const double s = d <= 0 ? (a > 0 ? 1.0 : 0.0) : static_cast<double>(a) / static_cast<double>(d);
    share = std::max(share, s);
  }
  return share;
}

std::vector<Resources> ComputeDeservedShares(const Resources& total, const std::vector<QueueDemand>& queues) {
  const size_t n = queues.size();
  const size_t dims = Dimensions(total, queues);

  Resources total_guarantee;
  for (const QueueDemand& q : queues) total_guarantee += q.guarantee;
  Resources free_of_guarantees = total - total_guarantee;
  free_of_guarantees.ClampNegativeToZero();

  // Exact amounts as Volcano keeps them (float64); integers only at the end.
  std::vector<Amounts> deserved(n, Amounts(dims, 0.0));
  std::vector<Amounts> cap(n), minimum(n), request(n);
  for (size_t q = 0; q < n; ++q) {
    cap[q] = ToAmounts(CapBy(free_of_guarantees + queues[q].guarantee, queues[q].capability), dims);
    minimum[q] = ToAmounts(queues[q].guarantee, dims);
    request[q] = ToAmounts(queues[q].request, dims);
  }
  // Differences below this are rounding noise (amounts are integers of up to ~1e15).
  Amounts epsilon(dims);
  for (size_t d = 0; d < dims; ++d) {
    epsilon[d] = 1e-9 * std::max(1.0, static_cast<double>(total.Get(static_cast<ResourceId>(d))));
  }

  std::vector<bool> met(n, false);
  Amounts remaining = ToAmounts(total, dims);
  if (kPods < dims) remaining[kPods] = 0;
  // A resource a queue's `deserved` names is taken as written (capped by capability); the
  // resources it does not name are shared out by weight like any other queue's (spec 2.1).
  std::vector<std::vector<bool>> fixed(n, std::vector<bool>(dims, false));
  for (size_t q = 0; q < n; ++q) {
    if (queues[q].deserved.IsZero()) continue;
    const Amounts written = ToAmounts(CapBy(queues[q].deserved, queues[q].capability), dims);
    bool all_named = true;
    for (size_t d = 0; d < dims; ++d) {
      if (queues[q].deserved.Get(static_cast<ResourceId>(d)) <= 0 && d != kPods) {
        all_named = all_named && remaining[d] <= 0;  // a resource nobody has needs no share
        continue;
      }
      fixed[q][d] = true;
      deserved[q][d] = written[d];
      remaining[d] = std::max(0.0, remaining[d] - written[d]);
    }
    met[q] = all_named;
  }

  // Every round either satisfies a queue or hands out what remains to queues that can take it;
  // a queue that hit a cap is satisfied the round after. The bound only guards that argument.
  for (size_t round = 0; round < 4 * n + 8; ++round) {
    int64_t total_weight = 0;
    for (size_t q = 0; q < n; ++q) {
      if (!met[q]) total_weight += std::max(0, queues[q].weight);
    }
    if (total_weight == 0) {
      for (size_t q = 0; q < n; ++q) {
        if (met[q]) continue;
        for (size_t d = 0; d < dims; ++d) {
          if (!fixed[q][d]) deserved[q][d] = std::max(deserved[q][d], minimum[q][d]);
        }
      }
      break;
    }
    const Amounts before = remaining;
    for (size_t q = 0; q < n; ++q) {
      if (met[q]) continue;
      const double fraction =
          static_cast<double>(std::max(0, queues[q].weight)) / static_cast<double>(total_weight);
      bool satisfied = true;
      bool unchanged = true;
      for (size_t d = 0; d < dims; ++d) {
        if (fixed[q][d]) continue;
        const double old = deserved[q][d];
        double next = old + before[d] * fraction;
        next = std::min({next, cap[q][d], request[q][d]});
        next = std::max(next, minimum[q][d]);
        satisfied = satisfied && request[q][d] <= next + epsilon[d];
        unchanged = unchanged && std::abs(next - old) <= epsilon[d];
        remaining[d] -= next - old;
        deserved[q][d] = next;
      }
      if (satisfied || unchanged) met[q] = true;
    }
    bool empty = true;
    bool stalled = true;
    for (size_t d = 0; d < dims; ++d) {
      remaining[d] = std::max(0.0, remaining[d]);
      empty = empty && remaining[d] <= epsilon[d];
      stalled = stalled && std::abs(remaining[d] - before[d]) <= epsilon[d];
    }
    if (empty || stalled) break;
  }

  // To integers: round each amount down, then give the units the rounding took away (of what
  // the rounds handed out) back one each to the largest fractions, ties to the lower index.
  std::vector<Resources> out(n);
  std::vector<std::pair<double, size_t>> fractions;
  for (size_t d = 0; d < dims; ++d) {
    const auto id = static_cast<ResourceId>(d);
    double exact_sum = 0;
    int64_t floor_sum = 0;
    fractions.clear();
    for (size_t q = 0; q < n; ++q) {
      const double exact = deserved[q][d];
      // 3.9999999999996 is 4: the rounds' float noise must not cost a whole unit.
      const double noise = std::min(0.5, 1e-9 * std::max(1.0, exact));
      auto whole = static_cast<int64_t>(std::floor(exact));
      if (exact - static_cast<double>(whole) >= 1 - noise) ++whole;
      out[q].Set(id, whole);
      if (!fixed[q][d]) {
        exact_sum += exact;
        floor_sum += whole;
        const double fraction = exact - static_cast<double>(whole);
        if (fraction > noise) fractions.emplace_back(-fraction, q);
      }
    }
    std::sort(fractions.begin(), fractions.end());
    int64_t leftover = std::llround(exact_sum) - floor_sum;
    for (size_t i = 0; i < fractions.size() && leftover > 0; ++i, --leftover) {
      out[fractions[i].second].Add(id, 1);
    }
  }
  return out;
}

// A pure function, asked again and again with the same inputs: a queue's demand moves only
// when its jobs come, go or grow, and most sessions follow a bind or a release, not that. Per
// thread: sessions run on one.
std::vector<Resources> RecentDeservedShares(const Resources& total, std::vector<QueueDemand> queues) {
  struct Split {
    Resources total;
    std::vector<QueueDemand> queues;
    std::vector<Resources> shares;
  };
  constexpr size_t kKept = 8;  // a queue tree's parents, each split once a session
  thread_local std::vector<Split> recent;
  for (size_t i = 0; i < recent.size(); ++i) {
    if (recent[i].total == total && recent[i].queues == queues) {
      const auto at = recent.begin() + static_cast<std::ptrdiff_t>(i);
      std::rotate(recent.begin(), at, at + 1);  // to the front: the last asked goes last
      return recent.front().shares;
    }
  }
  std::vector<Resources> shares = ComputeDeservedShares(total, queues);
  if (recent.size() == kKept) recent.pop_back();
  recent.insert(recent.begin(), Split{total, std::move(queues), shares});
  return shares;
}

absl::StatusOr<std::unique_ptr<Plugin>> NewProportionPlugin(const Arguments& arguments) {
  return std::make_unique<QueueSharePlugin>(DeservedMode::kProportion);
}

std::vector<ArgumentSpec> CapacityArguments() {
  constexpr auto kIgnored = ArgumentSupport::kIgnored;
  return {
      {"ancestorReclaimLevel", ArgumentKind::kInt, "0", kIgnored,
       "Lahar reclaims at every level of the queue tree"},
      {"capacity.DynamicResourceAllocationEnable", ArgumentKind::kBool, "false", kIgnored, "DRA quotas"},
      {"capacity.DRAConsumableCapacityEnable", ArgumentKind::kBool, "false", kIgnored, "DRA quotas"},
  };
}

absl::StatusOr<std::unique_ptr<Plugin>> NewCapacityPlugin(const Arguments& arguments) {
  return std::make_unique<QueueSharePlugin>(DeservedMode::kCapacity);
}

}  // namespace lahar
