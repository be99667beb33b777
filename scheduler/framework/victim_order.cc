#include "scheduler/framework/victim_order.h"

#include <algorithm>
#include <memory>
#include <tuple>

#include "api/log.h"
#include "api/state_hash.h"
#include "scheduler/framework/capacity.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/order_key.h"
#include "scheduler/framework/statement.h"

namespace lahar {
namespace victims_internal {
namespace {

// Protected whatever the hooks say: annotated volcano.sh/preemptable "false", or its eviction
// was just refused by the apiserver (a PodDisruptionBudget the plan did not know of).
bool Unpreemptable(const Session& session, const TaskInfo& task) {
  if (!task.preemptable) return true;
  const auto& refused = session.cluster().eviction_refused;
  return !refused.empty() && refused.count(task.key()) != 0;
}

// The first of a set under a strict total order, kept as a tournament: when the first's key
// changes or it leaves, only its path to the root is played again (one comparison a level,
// about half what a binary heap's pop and push cost). Which element comes first does not depend
// on how the set is laid out, so it answers as any heap over the same order would.
template <typename Less>
class Tournament {
 public:
  Tournament(const std::vector<int32_t>& items, int32_t universe, Less less) : less_(less) {
    size_t leaves = 1;
    while (leaves < items.size()) leaves *= 2;
    winners_.assign(2 * leaves, kNone);
    leaf_of_.assign(static_cast<size_t>(universe), 0);
    for (size_t i = 0; i < items.size(); ++i) {
      winners_[leaves + i] = items[i];
      leaf_of_[static_cast<size_t>(items[i])] = leaves + i;
    }
    for (size_t n = leaves - 1; n >= 1; --n) winners_[n] = Play(winners_[2 * n], winners_[2 * n + 1]);
  }
  bool empty() const { return winners_[1] == kNone; }
  int32_t top() const { return winners_[1]; }
  // The first's key changed: where it stands now.
  void Replay() { Replay(leaf_of_[static_cast<size_t>(top())]); }
  // The first leaves the set.
  void Pop() {
    const size_t leaf = leaf_of_[static_cast<size_t>(top())];
    winners_[leaf] = kNone;
    Replay(leaf);
  }

 private:
  static constexpr int32_t kNone = -1;
  // The one of `a` and `b` that comes first (`less` says which comes later, as for a heap).
  int32_t Play(int32_t a, int32_t b) const {
    if (a == kNone) return b;
    if (b == kNone) return a;
    return less_(a, b) ? b : a;
  }
  void Replay(size_t leaf) {
    for (size_t n = leaf / 2; n >= 1; n /= 2) winners_[n] = Play(winners_[2 * n], winners_[2 * n + 1]);
  }

  Less less_;
  std::vector<int32_t> winners_;  // [1, leaves): the winner under each node; [leaves, 2 leaves): the set
  std::vector<size_t> leaf_of_;   // per item: its leaf
};

// The job's start: its earliest running pod's start time; a pod not yet started counts as now.
int64_t StartOf(const Session& session, const JobInfo& job) {
  int64_t start = INT64_MAX;
  for (TaskId t : job.tasks) {
    const TaskInfo& task = session.task(t);
    if (!IsPlaced(task.status)) continue;
    const int64_t started = task.pod->start_time_ms < 0 ? INT64_MAX : task.pod->start_time_ms;
    start = std::min(start, started);
  }
  return start;
}

// The allowed subset of `tasks` for `preemptor` by the policy's hooks (no hooks: all), sorted.
std::vector<TaskId> AllowedByHooks(const Session& session, const VictimPolicy& policy, const TaskInfo& preemptor,
                                   const std::vector<TaskId>& tasks) {
  std::vector<TaskId> allowed = policy.hooks == VictimPolicy::Hooks::kPreemptable
                                    ? session.Preemptable(preemptor, tasks)
                                    : session.Reclaimable(preemptor, tasks);
  std::sort(allowed.begin(), allowed.end());
  return allowed;
}

// With `whole` false only the workers are made: the hooks see the job's tasks in its eviction
// order, workers first, so what they allow of the workers does not depend on the tasks after.
Candidate CandidateOf(Session& session, const JobInfo& job, const TaskInfo& preemptor, const VictimPolicy& policy,
                      const std::vector<bool>& scalable, bool whole) {
  Candidate candidate;
  // MinPlaced first: it is a count for most jobs, and most of a backlog has nothing placed.
  if (!job.preemptable || !MinPlaced(session, job) || !ElasticEligible(session, job)) return candidate;
  candidate.eligible = true;
  // The placed tasks in the job's own eviction order (its elastic workers first), as the
  // hooks see them: a budget (pdb) spends its allowance on the first it is offered.
  const bool workers_may_go = scalable[job.id] || policy.include_cooldown;
  std::vector<TaskId> placed = workers_may_go ? ElasticWorkers(session, job) : std::vector<TaskId>();
  const size_t offered_workers = placed.size();
  candidate.whole_known = whole;
  if (!whole && placed.empty()) return candidate;
  bool busy = false;  // placed in this session: never a victim
  if (whole) {
    std::vector<TaskId> offered(placed);
    std::sort(offered.begin(), offered.end());
    for (TaskId t : job.tasks) {
      const TaskInfo& task = session.task(t);
      if (!IsPlaced(task.status)) continue;
      busy = busy || task.status == TaskStatus::kAllocated || task.status == TaskStatus::kBinding;
      if (!std::binary_search(offered.begin(), offered.end(), t)) placed.push_back(t);
    }
  }
  const std::vector<TaskId> allowed = AllowedByHooks(session, policy, preemptor, placed);
  auto protected_task = [&](TaskId t) {
    return !std::binary_search(allowed.begin(), allowed.end(), t) || Unpreemptable(session, session.task(t));
  };
  for (size_t i = 0; i < offered_workers; ++i) {
    if (protected_task(placed[i])) break;  // the ones after it may only go after it
    candidate.workers.push_back(placed[i]);
    candidate.workers_freed += session.task(placed[i]).request;
  }
  if (!whole) return candidate;
  candidate.whole_allowed = !busy && std::none_of(placed.begin(), placed.end(), protected_task);
  for (size_t i = candidate.workers.size(); i < placed.size(); ++i) {
    candidate.rest.push_back(placed[i]);
    candidate.rest_freed += session.task(placed[i]).request;
  }
  return candidate;
}

}  // namespace

VictimOrder CollectVictims(Session& session, const JobInfo& starving, const TaskInfo& preemptor,
                           const VictimPolicy& policy, const std::vector<bool>& scalable,
                           Candidates& candidates) {
  VictimOrder order;
  order.reachable = FreeCapacity(session);
  candidates.Size(session.cluster().jobs.size(), session.LiveJobs().size());
  std::vector<std::pair<NodeId, TaskId>> on_nodes;
  auto add = [&](const std::vector<TaskId>& tasks, const Resources& freed) {
    order.reachable += freed;
    for (TaskId t : tasks) {
      const TaskInfo& task = session.task(t);
      if (task.node != kNoId) on_nodes.emplace_back(task.node, t);
    }
  };
  // A Pending job is never a victim (ElasticEligible); one without tasks beyond its min has no
  // elastic worker.
  const std::vector<JobId>& asked = policy.takes_workers_only ? session.LiveElasticJobs() : session.LiveJobs();
  for (JobId id : asked) {
    const JobInfo& job = session.job(id);
    if (job.id == starving.id) continue;
    // Most of a backlog: short of its min, never a candidate (MinPlaced, CandidateOf).
    if (!MinReadyByCount(job)) continue;
    const VictimKind kind = policy.kind(job);  // cheap: asked before the candidate is made
    if (kind == VictimKind::kNone) continue;
    // Most running jobs: no more ready than their min, so no elastic worker (ElasticWorkers).
    if (kind == VictimKind::kElasticWorkers && job.ReadyCount() <= job.min_available) continue;
    std::optional<Candidate>& candidate = candidates[job.id];
    const bool whole = kind == VictimKind::kWholeJob;
    if (!candidate || (whole && !candidate->whole_known)) {
      candidate = CandidateOf(session, job, preemptor, policy, scalable, whole);
    }
    if (!candidate->eligible) continue;
    if (kind == VictimKind::kWholeJob && candidate->whole_allowed) {
      order.whole.push_back(Entry{job.id, static_cast<int32_t>(candidate->workers.size()),
                                  {candidate->rest.begin(), candidate->rest.end()}, candidate->rest_freed, true});
      add(candidate->rest, candidate->rest_freed);
    }
    if (!candidate->workers.empty()) {
      order.worker_lists.emplace(job.id, candidate->workers);
      add(candidate->workers, candidate->workers_freed);
    }
  }
  order.has_workers = !order.worker_lists.empty();
  // The nodes that hold candidates get their bounds in node order, marked first (no sort).
  std::vector<int32_t>& index = order.bound_index;
  index.assign(session.nodes().size(), -1);
  for (const auto& [node, task] : on_nodes) index[node] = 0;
  for (size_t node = 0; node < index.size(); ++node) {
    if (index[node] < 0) continue;
    index[node] = static_cast<int32_t>(order.node_bounds.size());
    order.node_bounds.push_back({static_cast<NodeId>(node), {}, 0});
  }
  for (const auto& [node, task] : on_nodes) {
    VictimOrder::NodeBound& bound = order.node_bounds[index[node]];
    bound.freed += session.task(task).request;
    ++bound.pods;
  }
  return order;
}

namespace {

// A node's future idle with `freed` more, amount by amount, read off the vectors' storage without
// making the sums: the bounds below pass over every node in each state they are asked in.
struct RoomWithFreed {
  RoomWithFreed(const NodeInfo& node, const Resources& extra)
      : allocatable(node.allocatable.view()),
        used(node.used.view()),
        releasing(node.releasing.view()),
        pipelined(node.pipelined.view()),
        freed(extra.view()),
        size(std::max({allocatable.size, used.size, releasing.size, pipelined.size, freed.size})) {}
  int64_t operator[](size_t i) const { return allocatable[i] - used[i] + releasing[i] - pipelined[i] + freed[i]; }

  Resources::View allocatable, used, releasing, pipelined, freed;
  size_t size;  // past it every amount is zero
};

// How many pods asking `request` `node` could take once `freed` more (and `pods` more pod slots)
// are free there, counted up to `at_most`.
int64_t PodsFittingWithFreed(const NodeInfo& node, const Resources& freed, int32_t pods, const Resources& request,
                             int64_t at_most) {
  if (!node.schedulable) return 0;
  int64_t fit = std::min<int64_t>(at_most, node.FuturePodSlots() + pods);
  // Most nodes are asked about for most tasks, most often for one pod (then nothing is divided).
  const RoomWithFreed room_of(node, freed);
  const Resources::View want = request.view();
  for (size_t i = 0; i < want.size && fit > 0; ++i) {
    const int64_t amount = want.data[i];
    if (amount <= 0) continue;
    const int64_t room = room_of[i];
    if (amount * fit > room) fit = room < amount ? 0 : room / amount;
  }
  return std::max<int64_t>(fit, 0);
}

}  // namespace

void RoomBound::Reset(uint64_t state_version) {
  most.SetZero();
  total.SetZero();
  most_slots = 0;
  total_slots = 0;
  made_at = state_version;
}

void RoomBound::Add(const NodeInfo& node, const Resources& freed, int32_t pods) {
  if (!node.schedulable) return;  // it takes no pod (PodsFittingWithFreed)
  const RoomWithFreed offered(node, freed);
  const size_t n = offered.size;
  int64_t* most_of = most.GrownData(n);
  int64_t* total_of = total.GrownData(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t amount = offered[i];
    most_of[i] = std::max(most_of[i], amount);
    total_of[i] += std::max<int64_t>(amount, 0);
  }
  const int32_t slots = node.FuturePodSlots() + pods;
  most_slots = std::max(most_slots, slots);
  total_slots += std::max(slots, 0);
}

bool RoomBound::NoneFits(const Resources& request, uint64_t state_version) const {
  if (made_at != state_version) return false;
  if (most_slots <= 0) return true;
  for (size_t i = 0; i < request.size(); ++i) {
    const int64_t amount = request.data()[i];
    if (amount > 0 && amount > most.Get(static_cast<ResourceId>(i))) return true;
  }
  return false;
}

bool RoomBound::FewerFit(const Resources& request, size_t count, uint64_t state_version) const {
  if (made_at != state_version) return false;
  const auto wanted = static_cast<int64_t>(count);
  if (total_slots < wanted) return true;
  for (size_t i = 0; i < request.size(); ++i) {
    const int64_t amount = request.data()[i];
    if (amount > 0 && total.Get(static_cast<ResourceId>(i)) / amount < wanted) return true;
  }
  return false;
}

namespace {

// Takes a part's workers out of the per-node sums and its key out of the index (before it is
// counted again or dropped).
void Uncount(WorkerHoldings& holdings, WorkerHoldings::Part& part) {
  for (const auto& [node, request] : part.workers) {
    holdings.per_node[node].freed -= request;
    --holdings.per_node[node].pods;
  }
  part.workers.clear();
  if (part.key != 0) holdings.part_by_key.erase(part.key);
  part.key = 0;
}

// The first ask of a session: the parts carried from an earlier one are taken for the live jobs
// that have their key again, and every other part is taken out of the sums and dropped.
void TakeCarriedParts(const Session& session, WorkerHoldings& holdings) {
  const ClusterSnapshot& cluster = session.cluster();
  holdings.state_version = UINT64_MAX;
  // Made in an earlier session: its state versions say nothing of this one's.
  holdings.room_with_workers = RoomBound();
  holdings.room_of_all = RoomBound();
  holdings.last_fit = WorkerHoldings::LastFit();
  holdings.last_fewer = WorkerHoldings::LastFewer();
  holdings.part_of.assign(cluster.jobs.size(), -1);
  if (holdings.node_set_version != cluster.node_set_version || holdings.per_node.size() != cluster.nodes.size()) {
    holdings.per_node.assign(cluster.nodes.size(), WorkerHoldings::Held());
    holdings.parts.clear();
    holdings.part_by_key.clear();
    holdings.node_set_version = cluster.node_set_version;
    return;
  }
  if (holdings.parts.empty()) return;
  std::vector<bool> kept(holdings.parts.size(), false);
  for (JobId id : session.LiveElasticJobs()) {
    const JobInfo& job = session.job(id);
    if (job.ReadyCount() <= job.min_available) continue;  // no worker (ElasticWorkers)
    const std::optional<uint64_t> key = CarriedWorkersKey(session, job);
    if (!key) continue;
    auto it = holdings.part_by_key.find(*key);
    if (it == holdings.part_by_key.end()) continue;
    WorkerHoldings::Part& part = holdings.parts[it->second];
    part.version = 0;  // the job's tasks as laid out (CarriedWorkersKey)
    part.job = id;
    holdings.part_of[id] = it->second;
    kept[it->second] = true;
  }
  size_t out = 0;
  for (size_t i = 0; i < holdings.parts.size(); ++i) {
    WorkerHoldings::Part& part = holdings.parts[i];
    if (!kept[i]) {
      Uncount(holdings, part);
      continue;
    }
    if (out != i) {
      holdings.parts[out] = std::move(part);
      holdings.part_by_key[holdings.parts[out].key] = static_cast<int32_t>(out);
      holdings.part_of[holdings.parts[out].job] = static_cast<int32_t>(out);
    }
    ++out;
  }
  holdings.parts.resize(out);
}

}  // namespace

const WorkerHoldings& CountWorkerHoldings(const Session& session) {
  WaitMemo* wait_memo = session.wait_memo();
  const bool carried = wait_memo != nullptr && wait_memo->enabled();
  std::shared_ptr<WorkerHoldings>& memo = session.memos().worker_holdings;
  if (memo == nullptr) {  // the session's first ask (a session laid out again for parked jobs asks anew)
    if (carried) {
      std::shared_ptr<WorkerHoldings>& kept = wait_memo->worker_holdings();
      if (kept == nullptr) kept = std::make_shared<WorkerHoldings>();
      memo = kept;
    } else {
      memo = std::make_shared<WorkerHoldings>();
    }
    TakeCarriedParts(session, *memo);
  }
  WorkerHoldings& holdings = *memo;
  // The plans of a backlog that fail untouched ask it again and again in one state.
  if (holdings.state_version == session.state_version()) return holdings;
  // The parts of the live jobs whose tasks changed since they were counted are counted again
  // (the other jobs hold nothing; those without tasks beyond their min have no worker).
  for (JobId id : session.LiveElasticJobs()) {
    int32_t& index = holdings.part_of[id];
    // Most live jobs of a backlog: no more ready than their min, so no worker (ElasticWorkers).
    if (index < 0 && session.job(id).ReadyCount() <= session.job(id).min_available) continue;
    const uint64_t version = session.job_tasks_version(id);
    if (index >= 0 && holdings.parts[index].version == version) continue;
    if (index < 0) {
      index = static_cast<int32_t>(holdings.parts.size());
      holdings.parts.emplace_back();
    }
    WorkerHoldings::Part& part = holdings.parts[index];
    Uncount(holdings, part);
    const JobInfo& job = session.job(id);
    for (TaskId t : ElasticWorkers(session, job)) {
      const TaskInfo& task = session.task(t);
      if (task.node == kNoId) continue;
      part.workers.emplace_back(task.node, task.request);
      holdings.per_node[task.node].freed += task.request;
      ++holdings.per_node[task.node].pods;
    }
    part.version = version;
    part.job = id;
    // Counted as laid out: carried, should a later session find the job so again.
    const std::optional<uint64_t> key = carried && version == 0 ? CarriedWorkersKey(session, job) : std::nullopt;
    part.key = key.value_or(0);
    if (part.key != 0) holdings.part_by_key[part.key] = index;
  }
  holdings.state_version = session.state_version();
  holdings.room_with_workers.made_at = UINT64_MAX;  // the holdings moved
  holdings.room_of_all.made_at = UINT64_MAX;
  return holdings;
}

bool SomeNodeMayFitWithAnyWorkers(const Session& session, const WorkerHoldings& holdings, const TaskInfo& task) {
  // Most asks of a backlog, again and again in one state: more than any node could offer.
  RoomBound& room = holdings.room_with_workers;
  if (room.WorthMaking(session.state_version())) {
    room.Reset(session.state_version());
    for (size_t n = 0; n < holdings.per_node.size(); ++n) {
      const WorkerHoldings::Held& held = holdings.per_node[n];
      if (held.pods > 0) room.Add(session.node(static_cast<NodeId>(n)), held.freed, held.pods);
    }
  }
  if (room.NoneFits(task.request, session.state_version())) return false;
  WorkerHoldings::LastFit& last = holdings.last_fit;
  if (task.shape != kNoShape && last.shape == task.shape && last.state_version == session.state_version()) {
    return last.fits;
  }
  bool fits = false;
  for (size_t n = 0; n < holdings.per_node.size() && !fits; ++n) {
    const WorkerHoldings::Held& held = holdings.per_node[n];
    if (held.pods == 0) continue;  // no worker there: not a node an order bounds (NodeMayFit)
    const NodeInfo& node = session.node(static_cast<NodeId>(n));
    fits = PodsFittingWithFreed(node, held.freed, held.pods, task.request, 1) > 0 && session.Predicate(task, node).ok();
  }
  last = {session.state_version(), task.shape, fits};
  return fits;
}

bool FewerFitWithAnyWorkers(const Session& session, const WorkerHoldings& holdings, const Resources& request,
                            size_t count) {
  // Most gangs of a backlog that get here, again and again in one state: more than all the
  // nodes together offer.
  RoomBound& room = holdings.room_of_all;
  if (room.WorthMaking(session.state_version())) {
    room.Reset(session.state_version());
    for (const NodeInfo& node : session.cluster().nodes) {
      const WorkerHoldings::Held& held = holdings.per_node[node.id];
      room.Add(node, held.freed, held.pods);
    }
  }
  if (room.FewerFit(request, count, session.state_version())) return true;
  WorkerHoldings::LastFewer& last = holdings.last_fewer;
  if (last.state_version == session.state_version() && last.count == count && last.request == request) {
    return last.fewer;
  }
  size_t fit = 0;
  for (const NodeInfo& node : session.cluster().nodes) {
    const WorkerHoldings::Held& held = holdings.per_node[node.id];
    fit += static_cast<size_t>(
        PodsFittingWithFreed(node, held.freed, held.pods, request, static_cast<int64_t>(count - fit)));
    if (fit >= count) break;
  }
  last.state_version = session.state_version();
  last.request = request;
  last.count = count;
  last.fewer = fit < count;
  return last.fewer;
}

bool NodeMayFit(const Session& session, const VictimOrder& order, NodeId id, const TaskInfo& task) {
  const int32_t index = order.bound_index[id];
  if (index < 0) return false;
  const VictimOrder::NodeBound& bound = order.node_bounds[index];
  return PodsFittingWithFreed(session.node(id), bound.freed, bound.pods, task.request, 1) > 0;
}

bool SomeNodeMayFit(const Session& session, const VictimOrder& order, const TaskInfo& task) {
  RoomBound& room = order.room;
  if (room.WorthMaking(session.state_version())) {
    room.Reset(session.state_version());
    for (const VictimOrder::NodeBound& bound : order.node_bounds) room.Add(session.node(bound.node), bound.freed, bound.pods);
  }
  if (room.NoneFits(task.request, session.state_version())) return false;
  for (const VictimOrder::NodeBound& bound : order.node_bounds) {
    if (NodeMayFit(session, order, bound.node, task) && session.Predicate(task, session.node(bound.node)).ok()) {
      return true;
    }
  }
  return false;
}

void RankVictims(Session& session, const VictimPolicy& policy, const std::vector<bool>& scalable, VictimOrder& order,
                 RankedWorkers* shared) {
  order.is_ranked = true;
  order.node_ranks.resize(session.nodes().size());
  order.job_ranks.resize(session.cluster().jobs.size());
  auto add = [&order](Entry entry) {
    order.job_ranks[entry.job].push_back(static_cast<int32_t>(order.ranked.size()));
    order.ranked.push_back(std::move(entry));
  };

  const std::map<JobId, std::vector<TaskId>>& worker_lists = order.worker_lists;
  const VictimOrder* ranked_before = nullptr;
  if (shared != nullptr && !worker_lists.empty()) {
    for (const VictimOrder* other : *shared) {
      if (other->worker_lists == worker_lists) ranked_before = other;
    }
  }
  if (ranked_before != nullptr) {
    order.ranked.reserve(static_cast<size_t>(ranked_before->worker_entries) + order.whole.size());
    for (int32_t r = 0; r < ranked_before->worker_entries; ++r) add(ranked_before->ranked[static_cast<size_t>(r)]);
  } else if (!worker_lists.empty()) {
    // A queue is above its deserved share when the Overused hooks say so (Volcano's sense:
    // allocated >= deserved in every resource) or when it holds more than the deserved share a
    // plugin reported in some resource. The second matters for elastic queues: their deserved
    // share is capped by their request, which includes their pending extras, so in abundant
    // resources (the cpu of a GPU job) they never reach it.
    const std::map<QueueId, Resources>& deserved = session.queue_deserved();
    std::vector<Resources> queue_allocated(session.queues().size());
    for (JobId id : session.LiveJobs()) {  // the others hold nothing
      const JobInfo& job = session.job(id);
      if (job.queue != kNoId) queue_allocated[job.queue] += job.allocated;
    }
    auto above_share = [&](QueueId queue) {
      if (session.Overused(session.queue(queue))) return true;
      auto it = deserved.find(queue);
      return it != deserved.end() && !queue_allocated[queue].LessEqual(it->second);
    };
    // The jobs with workers by their index in id order (the lists' order), each with its list
    // and how many of it are ranked.
    struct Giver {
      JobId job;
      const std::vector<TaskId>* workers;
      int32_t next = 0;
    };
    std::vector<Giver> givers;
    givers.reserve(worker_lists.size());
    size_t worker_count = 0;
    for (const auto& [job, workers] : worker_lists) {
      givers.push_back({job, &workers});
      worker_count += workers.size();
    }
    order.ranked.reserve(worker_count + order.whole.size());
    // Workers are taken for real, as scratch evictions, so that the elastic order and the
    // Overused hooks see each job and queue after the workers ranked before; undone at the end.
    // With every hook keyed, a giver is compared by its job's key, made when first compared
    // after its job last changed (when the hooks would have been asked).
    const bool keyed = session.ElasticVictimOrderKeyed();
    struct GiverKey {
      bool made = false;
      OrderKey key;
    };
    std::vector<GiverKey> keys(keyed ? givers.size() : 0);
    auto key_of = [&](int32_t index) -> const OrderKey& {
      GiverKey& key = keys[index];
      if (!key.made) {
        session.ElasticVictimKey(session.job(givers[index].job), key.key);
        key.made = true;
      }
      return key.key;
    };
    auto less = [&](int32_t a, int32_t b) {
      if (keyed) {
        const OrderKey& key_a = key_of(a);
        const OrderKey& key_b = key_of(b);
        if (key_a.complete() && key_b.complete()) return Compare(key_b, key_a) < 0;
      }
      return session.ElasticVictimOrderLess(session.job(givers[b].job), session.job(givers[a].job));
    };
    ScratchEvictions scratch(session);  // undone at the end of this block, before the orders are read
    auto take = [&](int32_t index) {
      Giver& giver = givers[index];
      const TaskId task = (*giver.workers)[giver.next];
      const Resources& request = session.task(task).request;
      add(Entry{giver.job, giver.next, {task}, request, false});
      scratch.Evict(task);
      if (keyed) keys[index].made = false;
      queue_allocated[session.job(giver.job).queue] -= request;
      ++giver.next;
      return giver.next < static_cast<int32_t>(giver.workers->size());
    };
    const auto universe = static_cast<int32_t>(givers.size());
    for (int pass = 0; pass < 2; ++pass) {  // outside their cooldown, then (when included) inside
      std::vector<int32_t> overused_givers;
      std::vector<int32_t> rest_givers;
      for (int32_t index = 0; index < universe; ++index) {
        const JobId job = givers[index].job;
        if (scalable[job] != (pass == 0)) continue;
        (above_share(session.job(job).queue) ? overused_givers : rest_givers).push_back(index);
      }
      // The first to give up its next worker gives it; then it stands where its job now is.
      Tournament overused(overused_givers, universe, less);
      while (!overused.empty()) {
        const int32_t index = overused.top();
        if (!above_share(session.job(givers[index].job).queue)) {
          rest_givers.push_back(index);  // its queue is back within its share: ranked with the others
          overused.Pop();
          continue;
        }
        take(index) ? overused.Replay() : overused.Pop();
      }
      Tournament rest(rest_givers, universe, less);
      while (!rest.empty()) take(rest.top()) ? rest.Replay() : rest.Pop();
    }
  }
  order.worker_entries = static_cast<int32_t>(order.ranked.size());
  if (shared != nullptr && order.worker_entries > 0 && ranked_before == nullptr) shared->push_back(&order);

  // Whole jobs: the policy's group, lowest priority, most recently started, fewest pods, name.
  std::vector<std::tuple<int64_t, int32_t, int64_t, size_t, JobId, size_t>> keys;
  for (size_t i = 0; i < order.whole.size(); ++i) {
    const JobInfo& job = session.job(order.whole[i].job);
    const int64_t group = policy.whole_job_group ? policy.whole_job_group(job) : 0;
    keys.emplace_back(group, job.priority, -StartOf(session, job), order.whole[i].tasks.size(), job.id, i);
  }
  std::sort(keys.begin(), keys.end());
  for (const auto& key : keys) add(std::move(order.whole[std::get<5>(key)]));
  order.whole.clear();
  order.gone.assign(order.ranked.size(), false);
  for (const Entry& e : order.ranked) {
    order.min_entry_pods = std::min(order.min_entry_pods, static_cast<int32_t>(e.tasks.size()));
  }

  for (size_t r = 0; r < order.ranked.size(); ++r) {
    if (order.ranked[r].tasks.size() == 1) {  // an elastic worker
      const NodeId n = session.task(order.ranked[r].tasks.front()).node;
      if (n != kNoId) order.node_ranks[n].push_back(static_cast<int32_t>(r));
      continue;
    }
    NodeId last = kNoId;
    std::vector<NodeId> nodes;
    for (TaskId t : order.ranked[r].tasks) nodes.push_back(session.task(t).node);
    std::sort(nodes.begin(), nodes.end());
    for (NodeId n : nodes) {
      if (n != last && n != kNoId) order.node_ranks[n].push_back(static_cast<int32_t>(r));
      last = n;
    }
  }
}

// What makes two starving jobs' plans alike: the order key and the shapes of the unplaced min.
uint64_t ShapesKey(const Session& session, const JobInfo& job, std::pair<int64_t, int64_t> key) {
  return StateHash().Add(key.first).Add(key.second).Add(MinShapesHash(session, job)).value();
}

}  // namespace victims_internal

using victims_internal::Entry;
using victims_internal::ShapesKey;
using victims_internal::VictimOrder;



VictimOrderCache::VictimOrderCache() : entries_(std::make_unique<Entries>()) {}
VictimOrderCache::~VictimOrderCache() = default;
void VictimOrderCache::Clear() {
  entries_->classes_off = true;
  entries_->orders.clear();
  entries_->ranked_workers.clear();
  entries_->candidates.Clear();
  entries_->failures.clear();
  entries_->last_failure.reset();
}

bool VictimOrderCache::FailsAlike(Session& session, const JobInfo& job, std::pair<int64_t, int64_t> key) {
  if (entries_->failures.empty()) return false;
  const std::vector<TaskId>* tasks = UnplacedMinTasks(session, job);
  if (tasks == nullptr || tasks->empty()) return false;
  const uint64_t shapes = ShapesKey(session, job, key);
  std::optional<std::pair<uint64_t, bool>>& last = entries_->last_failure;
  if (!last || last->first != shapes) {
    auto failed = entries_->failures.find(shapes);
    if (failed == entries_->failures.end()) return false;
    last = *failed;
  }
  if (last->second) session.ForgetCachedSearches();  // the trace the failed plan left
  LAHAR_LOG(2, "victims") << job.key() << ": fails as a starving job of the same shapes did";
  Entries& e = *entries_;
  if (!e.classes_off) {
    if (e.class_of.empty()) e.class_of = StarvingClassOf(session);
    const int32_t c = e.class_of[job.id];
    if (c >= 0) {
      if (e.class_fails.size() <= static_cast<size_t>(c)) e.class_fails.resize(static_cast<size_t>(c) + 1, 0);
      e.class_fails[c] = last->second ? 2 : 1;
    }
  }
  return true;
}

bool VictimOrderCache::FailsAsItsClass(Session& session, JobId job) {
  const Entries& e = *entries_;
  if (e.classes_off || e.class_fails.empty()) return false;
  const int32_t c = e.class_of[job];
  if (c < 0 || static_cast<size_t>(c) >= e.class_fails.size() || e.class_fails[c] == 0) return false;
  if (session.JobScope(job) != nullptr) return false;  // confined for now: a key of its own
  if (e.class_fails[c] == 2) session.ForgetCachedSearches();
  LAHAR_LOG(2, "victims") << session.job(job).key() << ": fails as a starving job of the same shapes did";
  return true;
}

void VictimOrderCache::LeftAlone(const Session& session, const JobInfo& job, std::pair<int64_t, int64_t> key) {
  const std::vector<TaskId>* tasks = UnplacedMinTasks(session, job);
  if (tasks == nullptr || tasks->empty()) return;  // FailsAlike does not ask for these
  entries_->failures.emplace(ShapesKey(session, job, key), /*touched=*/false);
}

void VictimOrderCache::Committed(const Session& session, const VictimPlan& plan) {
  // A budget shared by several jobs allows less for each once one of them lost pods.
  if (!session.cluster().disruption_budgets.empty()) return Clear();
  entries_->classes_off = true;
  entries_->failures.clear();
  entries_->last_failure.reset();
  entries_->ranked_workers.clear();
  std::set<JobId> victim_jobs;
  for (TaskId v : plan.victims) victim_jobs.insert(session.task(v).job);
  // A candidate reads its own job's tasks and phase only (and the hooks, which without budgets
  // answer per task): the plan changed the victims' jobs and the starving job, no other.
  victims_internal::Candidates& candidates = entries_->candidates;
  auto forget = [&candidates](JobId job) { candidates.Forget(job); };
  for (JobId job : victim_jobs) forget(job);
  for (const auto& [task, node] : plan.placements) forget(session.task(task).job);
  for (auto it = entries_->orders.begin(); it != entries_->orders.end();) {
    VictimOrder& order = it->second;
    if (order.has_workers || !order.is_ranked) {
      it = entries_->orders.erase(it);
      continue;
    }
    // An entry with a pod no longer placed is gone; what the victims free is free capacity now,
    // less what the plan pipelined (the free part of `reachable` follows FreeCapacity).
    for (JobId job : victim_jobs) {
      for (int32_t r : order.job_ranks[job]) {
        const Entry& e = order.ranked[r];
        if (order.gone[r] || std::all_of(e.tasks.begin(), e.tasks.end(), [&](TaskId t) {
              return IsPlaced(session.task(t).status);
            })) {
          continue;
        }
        order.gone[r] = true;
        order.reachable -= e.freed;
      }
    }
    UpdateFreeCapacity(session, plan, order.reachable);
    ++it;
  }
}

}  // namespace lahar
