// Where a task fits: one node's answer (ResourceFit, Evaluate) and the search over nodes
// (FindBestNode), with its cache of searches by pod shape, and the fit errors it gathers.
#include "scheduler/framework/session.h"

#include <algorithm>
#include <optional>

#include "absl/base/attributes.h"
#include "absl/container/inlined_vector.h"
#include "api/strings.h"
#include "scheduler/framework/wait_memo.h"

namespace lahar {
namespace {

std::string FitMessage(const FitResult& r) {
  switch (r.code) {
    case FitCode::kFit: return "fit";
    case FitCode::kInsufficientResource: return StrCat("too little ", r.detail);
    case FitCode::kTooManyPods: return "too many pods";
    case FitCode::kNodeUnschedulable: return "unschedulable (cordoned)";
    case FitCode::kNodeNotReady: return "not ready";
    case FitCode::kNodeSelectorMismatch: return "labels that do not match the node selector";
    case FitCode::kNodeAffinityMismatch: return "labels that do not match the node affinity";
    case FitCode::kUntoleratedTaint: return StrCat("taint ", r.detail);
    case FitCode::kElasticLimit: return StrCat("no room for elastic workers within pod limits of ", r.detail);
    case FitCode::kSchedulingGated: return "scheduling gates";
    case FitCode::kOther: return std::string(r.detail);
  }
  return "unknown";
}

// The pod slots a placement may still use on the node.
int32_t PodSlots(const NodeInfo& node, Placement placement) {
  return placement == Placement::kFutureIdle ? node.FuturePodSlots() : node.IdlePodSlots();
}

// The first resource (the lowest id) the node has too little of for a pod asking `want`, or -1:
// ResourceFit's test, inlined into the searches, which ask it of every node (the amounts are read
// off the vectors' storage).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline int FirstShortOf(const Resources::View& want, const NodeInfo& node,
                                                     Placement placement) {
  const Resources::View allocatable = node.allocatable.view(), used = node.used.view(),
                        pipelined = node.pipelined.view(), releasing = node.releasing.view();
  for (size_t i = 0; i < want.size; ++i) {
    if (want.data[i] <= 0) continue;
    // Pipelined tasks are promised what releasing pods free first, then idle capacity: idle
    // placements may only use what those promises leave.
    int64_t free = allocatable[i] - used[i];
    const int64_t promised_beyond_releasing = pipelined[i] - releasing[i];
    if (placement == Placement::kFutureIdle || promised_beyond_releasing > 0) free -= promised_beyond_releasing;
    if (want.data[i] > free) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

void FitErrors::Add(const FitResult& result) {
  if (result.code == FitCode::kSchedulingGated) gated_ = true;
  ++counts_[FitMessage(result)];
}

std::optional<ResourceShortage> FitErrors::MostShort() const {
  std::optional<ResourceShortage> most;
  int32_t most_nodes = 0;
  for (size_t r = 0; r < too_little_.size(); ++r) {
    const auto& [nodes, need] = too_little_[r];
    if (nodes > most_nodes) {
      most_nodes = nodes;
      most = ResourceShortage{.resource = static_cast<ResourceId>(r), .need = need};
    }
  }
  return most;
}

std::vector<std::pair<std::string, int32_t>> FitErrors::Counts() const {
  std::map<std::string, int> counts = counts_;
  for (size_t r = 0; r < too_little_.size(); ++r) {
    if (too_little_[r].first > 0) {
      counts[FitMessage({FitCode::kInsufficientResource, ResourceName(static_cast<ResourceId>(r))})] +=
          too_little_[r].first;
    }
  }
  std::vector<std::pair<std::string, int32_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

FitResult Session::ResourceFit(const TaskInfo& task, const NodeInfo& node, Placement placement, int* short_of) const {
  if (PodSlots(node, placement) <= 0) return {FitCode::kTooManyPods, {}};
  const int first_short = FirstShortOf(task.request.view(), node, placement);
  if (short_of != nullptr) *short_of = first_short;
  if (first_short >= 0) return {FitCode::kInsufficientResource, {}};
  return {};
}

std::optional<NodeId> Session::FindInCache(const TaskInfo& task, const NodeSearch::Shape& shape,
                                           NodeSearch& search) {
  NodeSearch::Cached& cache = search.cache;
  if (!cache.valid || cache.free_epoch != free_epoch_ || !(cache.shape == shape)) return std::nullopt;
  NodeId best = kNoId;
  double best_score = 0;
  size_t kept = 0;
  for (size_t i = 0; i < cache.nodes.size(); ++i) {
    NodeId id = cache.nodes[i];
    double score = cache.scores[i];
    if (cache.versions[i] != node_version_[id]) {
      const NodeInfo& node = cluster_.nodes[id];
      FitResult fit = ResourceFit(task, node, shape.placement);
      if (fit.ok()) fit = Predicate(task, node);
      if (fit.ok() && shape.elastic) fit = ElasticPredicate(task, node);
      if (!fit.ok()) continue;  // no longer a candidate
      score = NodeScore(task, node);
    }
    cache.nodes[kept] = id;
    cache.scores[kept] = score;
    cache.versions[kept] = node_version_[id];
    ++kept;
    if (best == kNoId || score > best_score || (score == best_score && id < best)) {
      best = id;
      best_score = score;
    }
  }
  cache.nodes.resize(kept);
  cache.scores.resize(kept);
  cache.versions.resize(kept);
  if (best == kNoId) {
    cache.valid = false;  // exhausted: search afresh
    return std::nullopt;
  }
  return best;
}

std::optional<double> Session::Evaluate(const TaskInfo& task, const NodeInfo& node, Placement placement, bool elastic,
                                        FitErrors* errors) const {
  // Which resource the node is short of is asked only when explaining: the hot path's call
  // passes no out-parameter.
  int short_of = -1;
  FitResult fit = errors == nullptr ? ResourceFit(task, node, placement) : ResourceFit(task, node, placement, &short_of);
  // A pod that waits for its gates would wait on an empty node too: that is the reason (only
  // a gated pod is refused for them).
  if (!fit.ok() && errors != nullptr && task.gated) {
    if (FitResult own = Predicate(task, node); own.code == FitCode::kSchedulingGated) fit = own;
  }
  if (fit.code == FitCode::kInsufficientResource && errors != nullptr) {
    const auto short_id = static_cast<ResourceId>(short_of);
    errors->AddTooLittle(short_id, task.request.Get(short_id));
    return std::nullopt;
  }
  if (fit.ok()) fit = Predicate(task, node);
  if (fit.ok() && elastic) fit = ElasticPredicate(task, node);
  if (!fit.ok()) {
    if (errors != nullptr) errors->Add(fit);
    return std::nullopt;
  }
  return NodeScore(task, node);
}

size_t Session::SkipNodesShortOf(const TaskInfo& task, Placement placement, size_t at, size_t end) {
  // With skipping switched off (`lahar-sim --no-skip`) every node is examined, so that the
  // identity of the two runs' events shows the index skips exactly.
  if (wait_memo_ != nullptr && !wait_memo_->enabled()) return at + 1;
  // A tree costs a pass over the nodes, a few instructions a node, where examining a node costs
  // some 150: the first is built once the session's searches met a sixteenth of the cluster's
  // nodes without room (bench-week's first 24 h: 2.2% fewer instructions than at all of them).
  if (!free_index_.Any() && ++unindexed_misses_ <= cluster_.nodes.size() / 16) return at + 1;
  const int short_of = FirstShortOf(task.request.view(), cluster_.nodes[at], placement);
  if (short_of < 0) return at + 1;  // refused for something else: nothing to skip by
  // The nodes passed over are those short of some resource: each would be examined and refused
  // for it, so the search lands where a skip by one resource at a time would, with fewer stops.
  return free_index_.NextWithRoomForAll(cluster_.nodes, task.request, static_cast<ResourceId>(short_of), at + 1, end);
}

NodeId Session::FindBestNodeIn(const std::vector<NodeId>& scope, const TaskInfo& task, Placement placement,
                               bool elastic, FitErrors* errors) {
  NodeId best = kNoId;
  double best_score = 0;
  for (NodeId id : scope) {
    std::optional<double> score = Evaluate(task, cluster_.nodes[id], placement, elastic, errors);
    if (score && (best == kNoId || *score > best_score)) {  // ascending ids: ties keep the lower
      best = id;
      best_score = *score;
    }
  }
  return best;
}

NodeId Session::ExplainingSearch(const TaskInfo& task, Placement placement, bool elastic, FitErrors& errors) {
  NodeId best = kNoId;
  double best_score = 0;
  const Resources::View want = task.request.view();
  // A node's answer for the request holds while it is as laid out (NodeAsLaidOut) with the same
  // stamp: kept across sessions, a backlog's explanations ask only the nodes that changed.
  std::vector<WaitMemo::NodeShortage>* kept = nullptr;
  if (!task.gated && wait_memo_ != nullptr && wait_memo_->enabled()) {
    kept = &wait_memo_->ShortagesOf(task.request, placement == Placement::kFutureIdle, cluster_.node_set_version,
                                    cluster_.nodes.size());
  }
  // Per resource, the nodes short of it first: added to `errors` at the end.
  absl::InlinedVector<int32_t, 8> short_nodes(want.size, 0);
  for (const NodeInfo& node : cluster_.nodes) {
    // Most nodes of an explained search are refused for a resource (the task fits none): counted
    // here as Evaluate would count them, without its calls. A gated task's refusal may be its gates.
    if (!task.gated) {
      WaitMemo::NodeShortage* shortage = kept != nullptr && NodeAsLaidOut(node.id) ? &(*kept)[node.id] : nullptr;
      int32_t short_of = 0;
      if (shortage != nullptr && shortage->stamp.Matches(node)) {
        short_of = shortage->short_of;
      } else {
        short_of = PodSlots(node, placement) > 0 ? FirstShortOf(want, node, placement) : WaitMemo::kNoPodSlot;
        if (shortage != nullptr) *shortage = {WaitMemo::NodeStamp::Of(node), short_of};
      }
      if (short_of >= 0) {
        ++short_nodes[static_cast<size_t>(short_of)];
        continue;
      }
    }
    std::optional<double> score = Evaluate(task, node, placement, elastic, &errors);
    if (score && (best == kNoId || *score > best_score)) {  // ascending ids: ties keep the lower
      best = node.id;
      best_score = *score;
    }
  }
  for (size_t r = 0; r < short_nodes.size(); ++r) {
    if (short_nodes[r] > 0) errors.AddTooLittle(static_cast<ResourceId>(r), want.data[r], short_nodes[r]);
  }
  return best;
}

bool Session::SomeNodeFits(const TaskInfo& task, Placement placement) {
  auto fits = [&](const NodeInfo& node) {
    return ResourceFit(task, node, placement).ok() && Predicate(task, node).ok();
  };
  if (const std::vector<NodeId>* scope = job_scope_[task.job]) {
    return std::any_of(scope->begin(), scope->end(), [&](NodeId id) { return fits(cluster_.nodes[id]); });
  }
  uint64_t* no_room = NoRoomEntry(task, placement);
  if (no_room != nullptr && *no_room == free_epoch_ + 1) return false;
  const size_t n = cluster_.nodes.size();
  size_t misses = 0;  // nodes in a row that did not fit
  for (size_t at = 0; at < n; ++at) {
    if (fits(cluster_.nodes[at])) return true;
    if (++misses >= 2) at = SkipNodesShortOf(task, placement, at, n) - 1;
  }
  if (no_room != nullptr) *no_room = free_epoch_ + 1;
  return false;
}

uint64_t* Session::NoRoomEntry(const TaskInfo& task, Placement placement) const {
  if (task.shape == kNoShape) return nullptr;
  const size_t index = static_cast<size_t>(task.shape) * 4 + (task.gated ? 2 : 0) +
                       (placement == Placement::kFutureIdle ? 1 : 0);
  if (index >= no_room_epoch_.size()) no_room_epoch_.resize(index + 1, 0);
  return &no_room_epoch_[index];
}

NodeId Session::FindBestNode(const TaskInfo& task, Placement placement, bool elastic, FitErrors* errors,
                             NodeSearch* search) {
  const size_t n = cluster_.nodes.size();
  if (n == 0) return kNoId;
  if (const std::vector<NodeId>* scope = job_scope_[task.job]) {
    return FindBestNodeIn(*scope, task, placement, elastic, errors);
  }
  // Where no node has room, a scan examines every node and leaves the search as it was (the
  // next one starts where it started): then one that finds nothing need not be made.
  uint64_t* no_room = elastic ? nullptr : NoRoomEntry(task, placement);
  if (errors != nullptr) {
    const NodeId best = ExplainingSearch(task, placement, elastic, *errors);
    if (best == kNoId && no_room != nullptr) *no_room = free_epoch_ + 1;
    return best;
  }
  NodeSearch& state = search != nullptr ? *search : search_;
  NodeSearch::Shape shape{task.constraint_class, placement, elastic, task.request, task.limit};
  if (std::optional<NodeId> cached = FindInCache(task, shape, state)) return *cached;
  if (no_room != nullptr && *no_room == free_epoch_ + 1) return kNoId;
  size_t want = n;
  if (n > static_cast<size_t>(search_options_.min_nodes_to_find)) {
    int pct = search_options_.percentage;
    if (pct <= 0) pct = std::max<int>(search_options_.min_percentage, 50 - static_cast<int>(n / 125));
    want = std::max<size_t>(n * static_cast<size_t>(pct) / 100,
                            static_cast<size_t>(search_options_.min_nodes_to_find));
  }
  const size_t start = want < n ? state.next_start % n : 0;
  NodeSearch::Cached fresh;  // sized once: most searches find all they want
  fresh.nodes.reserve(want);
  fresh.scores.reserve(want);
  fresh.versions.reserve(want);
  NodeId best = kNoId;
  double best_score = 0;
  size_t found = 0;
  size_t examined = 0;
  // Past two nodes in a row that do not fit, those that cannot have room are skipped as examined
  // (they would be, and found nothing): a full cluster is not scanned node by node, and where
  // most nodes fit the index is seldom asked.
  size_t missed = n;  // the last node examined that did not fit (by its place in the search)
  for (; examined < n && found < want; ++examined) {
    const size_t at = (start + examined) % n;
    const NodeInfo& node = cluster_.nodes[at];
    std::optional<double> evaluated = Evaluate(task, node, placement, elastic, /*errors=*/nullptr);
    if (!evaluated) {
      if (missed + 1 == examined) {
        const size_t lap_end = at >= start ? n : start;  // from `start` to the last node, then from node 0
        examined += SkipNodesShortOf(task, placement, at, lap_end) - at - 1;
      }
      missed = examined;
      continue;
    }
    ++found;
    const double score = *evaluated;
    fresh.nodes.push_back(node.id);
    fresh.scores.push_back(score);
    fresh.versions.push_back(node_version_[node.id]);
    if (best == kNoId || score > best_score || (score == best_score && node.id < best)) {
      best = node.id;
      best_score = score;
    }
  }
  if (best == kNoId && no_room != nullptr) *no_room = free_epoch_ + 1;
  if (want < n) state.next_start = (start + examined) % n;
  if (best != kNoId) {
    fresh.valid = true;
    fresh.shape = std::move(shape);
    fresh.free_epoch = free_epoch_;
    state.cache = std::move(fresh);
  }
  return best;
}
}  // namespace lahar
