#include "scheduler/framework/session.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "api/log.h"
#include "api/status_macros.h"
#include "api/strings.h"

namespace lahar {
namespace {

// Runs a tiered comparison: the first hook that tells l and r apart decides.
template <typename Hooks, typename T>
int CompareByHooks(const Hooks& hooks, const T& l, const T& r) {
  for (const auto& hook : hooks) {
    int c = hook.fn(l, r);
    if (c != 0) return c;
  }
  return 0;
}

// The first hook's answer that is not empty (an optional), or an empty one.
template <typename Hooks, typename... Args>
auto FirstAnswer(const Hooks& hooks, const Args&... args) -> decltype(hooks.front().fn(args...)) {
  for (const auto& hook : hooks) {
    if (auto answer = hook.fn(args...)) return answer;
  }
  return std::nullopt;
}

// Pipelined / enqueueable voting: per tier, a reject ends it; a tier with a permit decides.
template <typename Hooks, typename T>
bool TierVote(const Hooks& hooks, const T& subject, bool no_vote_result) {
  size_t i = 0;
  while (i < hooks.size()) {
    int tier = hooks[i].tier;
    bool permitted = false;
    for (; i < hooks.size() && hooks[i].tier == tier; ++i) {
      int vote = hooks[i].fn(subject);
      if (vote < 0) return false;
      if (vote > 0) permitted = true;
    }
    if (permitted) return true;
  }
  return no_vote_result;
}

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

}  // namespace

void FitErrors::Add(const FitResult& result) {
  if (result.code == FitCode::kSchedulingGated) gated_ = true;
  ++counts_[FitMessage(result)];
}

void FitErrors::AddShortage(ResourceId resource, int64_t need) {
  auto& [nodes, pod_need] = shortages_[resource];
  ++nodes;
  pod_need = need;
}

std::optional<ResourceShortage> FitErrors::MostShort() const {
  std::optional<ResourceShortage> most;
  int32_t most_nodes = 0;
  for (const auto& [resource, entry] : shortages_) {
    if (entry.first > most_nodes) {
      most_nodes = entry.first;
      most = ResourceShortage{.resource = resource, .need = entry.second};
    }
  }
  return most;
}

std::vector<std::pair<std::string, int32_t>> FitErrors::Counts() const {
  std::vector<std::pair<std::string, int32_t>> sorted(counts_.begin(), counts_.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

Session::Session(ClusterSnapshot cluster, const SchedulerConfig& config)
    : cluster_(std::move(cluster)), config_(config) {
  job_update_index_.assign(cluster_.jobs.size(), -1);
  reason_as_reported_.assign(cluster_.jobs.size(), false);
  node_version_.assign(cluster_.nodes.size(), 0);
  job_tasks_version_.assign(cluster_.jobs.size(), 0);
  job_scope_.assign(cluster_.jobs.size(), nullptr);
  memos_.reach_min.resize(cluster_.jobs.size());
  memos_.elastic_workers.resize(cluster_.jobs.size());
  live_.assign(cluster_.jobs.size(), false);
  for (const JobInfo& job : cluster_.jobs) {
    if (job.phase == PodGroupPhase::kPending && job.HoldsNothing()) continue;
    live_[job.id] = true;
    live_jobs_.push_back(job.id);
  }
}

void Session::MakeLive(JobId job) {
  if (live_[job]) return;
  live_[job] = true;
  live_jobs_.insert(std::lower_bound(live_jobs_.begin(), live_jobs_.end(), job), job);
}

Session::~Session() = default;

absl::StatusOr<std::unique_ptr<Session>> Session::Open(ClusterSnapshot cluster,
                                                       const SchedulerConfig& config,
                                                       const Registry& registry) {
  std::unique_ptr<Session> session(new Session(std::move(cluster), config));
  for (size_t t = 0; t < config.tiers.size(); ++t) {
    for (const PluginOption& option : config.tiers[t].plugins) {
      ASSIGN_OR_RETURN(std::unique_ptr<Plugin> plugin, registry.NewPlugin(option.name, option.arguments));
      session->opening_plugin_ = &option;
      session->opening_tier_ = static_cast<int>(t);
      plugin->OnSessionOpen(*session);
      session->plugins_.push_back(std::move(plugin));
    }
  }
  session->opening_plugin_ = nullptr;
  for (const std::string& name : config.actions) {
    if (name == "allocate" || name == "backfill") {
      const Arguments& args = config.ActionArguments(name);
      NodeSearchOptions& o = session->search_options_;
      ASSIGN_OR_RETURN(int64_t min_nodes, args.GetInt("minNodesToFind", o.min_nodes_to_find, 1, 1 << 30));
      ASSIGN_OR_RETURN(int64_t min_pct, args.GetInt("minPercentageOfNodesToFind", o.min_percentage, 1, 100));
      ASSIGN_OR_RETURN(int64_t pct, args.GetInt("percentageOfNodesToFind", o.percentage, 0, 100));
      o = {static_cast<int>(min_nodes), static_cast<int>(min_pct), static_cast<int>(pct)};
      break;
    }
  }
  return session;
}

absl::Status Session::RunActions(const Registry& registry) {
  for (const std::string& name : config_.actions) {
    ASSIGN_OR_RETURN(std::unique_ptr<Action> action, registry.NewAction(name, config_.ActionArguments(name)));
    auto started = std::chrono::steady_clock::now();
    action->Execute(*this);
    action_micros_.emplace_back(
        name, std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count());
  }
  return absl::OkStatus();
}

void Session::Close() {
  if (closed_) return;
  for (auto& plugin : plugins_) plugin->OnSessionClose(*this);
  // A job that has its gang is Running; the phase is what users and `enqueue` see next time.
  for (JobId id : live_jobs_) {  // sets only live jobs' phases: the list holds
    JobInfo& job = cluster_.jobs[id];
    if (job.phase == PodGroupPhase::kCompleted) continue;
    if (job.ReadyCount() >= job.min_available && job.PlacedCount() > 0 &&
        job.phase != PodGroupPhase::kRunning) {
      SetJobPhase(job.id, PodGroupPhase::kRunning);
    }
  }
  SettleUpdates();
  closed_ = true;
}

template <typename Fn>
bool Session::AddHook(std::vector<Hook<Fn>>& hooks, ExtensionPoint point, Fn fn) {
  if (opening_plugin_ != nullptr && !opening_plugin_->IsEnabled(point)) return false;
  hooks.push_back({opening_tier_, std::move(fn)});
  return true;
}

void Session::NoteAdmissionFacts(bool added, AdmissionFactsFn by_facts) {
  if (!added) return;
  if (by_facts) {
    admission_facts_.push_back(std::move(by_facts));
  } else {
    admission_hook_without_facts_ = true;
  }
}

bool Session::JudgedByAdmissionFacts(const JobInfo& job) const {
  if (admission_hook_without_facts_) return false;
  for (const AdmissionFactsFn& by_facts : admission_facts_) {
    if (!by_facts(job)) return false;
  }
  return true;
}

void Session::AddJobOrderFn(JobCompareFn fn) { AddHook(job_order_, ExtensionPoint::kJobOrder, std::move(fn)); }
void Session::AddQueueOrderFn(QueueCompareFn fn) { AddHook(queue_order_, ExtensionPoint::kQueueOrder, std::move(fn)); }
void Session::AddTaskOrderFn(TaskCompareFn fn) { AddHook(task_order_, ExtensionPoint::kTaskOrder, std::move(fn)); }
void Session::AddPredicateFn(PredicateFn fn) { AddHook(predicates_, ExtensionPoint::kPredicate, std::move(fn)); }
void Session::AddNodeOrderFn(NodeScoreFn fn) { AddHook(node_order_, ExtensionPoint::kNodeOrder, std::move(fn)); }
void Session::AddJobValidFn(JobValidFn fn) { AddHook(job_valid_, ExtensionPoint::kJobValid, std::move(fn)); }
void Session::AddJobReadyFn(JobTestFn fn) { AddHook(job_ready_, ExtensionPoint::kJobReady, std::move(fn)); }
void Session::AddJobPipelinedFn(JobVoteFn fn) { AddHook(job_pipelined_, ExtensionPoint::kJobPipelined, std::move(fn)); }
void Session::AddJobStarvingFn(JobTestFn fn) { AddHook(job_starving_, ExtensionPoint::kJobStarving, std::move(fn)); }
void Session::AddJobEnqueueableFn(JobVoteFn fn, AdmissionFactsFn by_facts) {
  NoteAdmissionFacts(AddHook(job_enqueueable_, ExtensionPoint::kJobEnqueued, std::move(fn)), std::move(by_facts));
}
void Session::AddClusterAdmissionFn(ClusterAdmissionFn fn, AdmissionFactsFn by_facts) {
  NoteAdmissionFacts(AddHook(cluster_admission_, ExtensionPoint::kJobEnqueued, std::move(fn)), std::move(by_facts));
}
void Session::AddJobEnqueuedFn(JobEnqueuedFn fn) { AddHook(job_enqueued_, ExtensionPoint::kJobEnqueued, std::move(fn)); }
void Session::AddOverusedFn(QueueTestFn fn, QueueGrowthTestFn if_grown) {
  AddHook(overused_, ExtensionPoint::kOverused, OverusedTest{std::move(fn), std::move(if_grown)});
}
void Session::AddAllocatableFn(AllocatableFn fn) { AddHook(allocatable_, ExtensionPoint::kAllocatable, std::move(fn)); }
void Session::AddQueueLimitFn(QueueLimitFn fn, AdmissionFactsFn by_facts) {
  NoteAdmissionFacts(AddHook(queue_limit_, ExtensionPoint::kJobValid, std::move(fn)), std::move(by_facts));
}
void Session::AddPreemptableFn(VictimsFn fn) { AddHook(preemptable_, ExtensionPoint::kPreemptable, std::move(fn)); }
void Session::AddReclaimableFn(VictimsFn fn) { AddHook(reclaimable_, ExtensionPoint::kReclaimable, std::move(fn)); }
void Session::AddElasticOrderFn(JobCompareFn fn) { AddHook(elastic_order_, ExtensionPoint::kElasticOrder, std::move(fn)); }
void Session::AddElasticVictimOrderFn(JobCompareFn fn) {
  AddHook(elastic_victim_order_, ExtensionPoint::kElasticOrder, std::move(fn));
}
void Session::AddScalableFn(JobTestFn fn) { AddHook(scalable_, ExtensionPoint::kScalable, std::move(fn)); }
void Session::AddElasticGrowFn(JobTestFn fn) { AddHook(elastic_grow_, ExtensionPoint::kScalable, std::move(fn)); }
void Session::AddElasticShedFn(JobCountFn fn) { AddHook(elastic_shed_, ExtensionPoint::kScalable, std::move(fn)); }
void Session::AddElasticPredicateFn(PredicateFn fn) { AddHook(elastic_predicates_, ExtensionPoint::kElasticPredicate, std::move(fn)); }
void Session::AddEventHandler(EventHandler handler) { event_handlers_.push_back(std::move(handler)); }
void Session::AddJobDomainsFn(JobDomainsFn fn) { AddHook(job_domains_, ExtensionPoint::kHyperNodeOrder, std::move(fn)); }
void Session::AddJobAdmissionFn(ClusterAdmissionFn fn, AdmissionFactsFn by_facts) {
  NoteAdmissionFacts(AddHook(job_admission_, ExtensionPoint::kHyperNodeOrder, std::move(fn)), std::move(by_facts));
}

std::optional<DomainCandidates> Session::JobDomains(const JobInfo& job, bool for_eviction) const {
  return FirstAnswer(job_domains_, job, for_eviction);
}

bool Session::JobOrderLess(const JobInfo& l, const JobInfo& r) const {
  int c = CompareByHooks(job_order_, l, r);
  if (c != 0) return c < 0;
  if (l.creation_timestamp != r.creation_timestamp) return l.creation_timestamp < r.creation_timestamp;
  if (l.creation_order != r.creation_order) return l.creation_order < r.creation_order;
  return l.id < r.id;  // ids follow namespace/name order
}

bool Session::QueueOrderLess(const QueueInfo& l, const QueueInfo& r) const {
  int c = CompareByHooks(queue_order_, l, r);
  if (c != 0) return c < 0;
  return l.id < r.id;
}

bool Session::TaskOrderLess(const TaskInfo& l, const TaskInfo& r) const {
  int c = CompareByHooks(task_order_, l, r);
  if (c != 0) return c < 0;
  // The spec's order inside a job: task priority, then pod index, then name.
  if (l.task_priority != r.task_priority) return l.task_priority > r.task_priority;
  if (l.index != r.index) return l.index < r.index;
  return l.id < r.id;
}

bool Session::ElasticOrderLess(const JobInfo& l, const JobInfo& r) const {
  int c = CompareByHooks(elastic_order_, l, r);
  if (c != 0) return c < 0;
  return JobOrderLess(l, r);
}

bool Session::ElasticVictimOrderLess(const JobInfo& l, const JobInfo& r) const {
  int c = CompareByHooks(elastic_victim_order_, l, r);
  if (c != 0) return c < 0;
  return ElasticOrderLess(r, l);
}

bool Session::ElasticMayGrow(const JobInfo& job) const {
  for (const auto& hook : elastic_grow_) {
    if (!hook.fn(job)) return false;
  }
  return true;
}

int32_t Session::ElasticWorkersToShed(const JobInfo& job) const {
  int32_t shed = 0;
  for (const auto& hook : elastic_shed_) shed = std::max(shed, hook.fn(job));
  return shed;
}

FitResult Session::Predicate(const TaskInfo& task, const NodeInfo& node) const {
  for (const auto& hook : predicates_) {
    FitResult r = hook.fn(task, node);
    if (!r.ok()) return r;
  }
  return {};
}

FitResult Session::ElasticPredicate(const TaskInfo& task, const NodeInfo& node) const {
  for (const auto& hook : elastic_predicates_) {
    FitResult r = hook.fn(task, node);
    if (!r.ok()) return r;
  }
  return {};
}

double Session::NodeScore(const TaskInfo& task, const NodeInfo& node) const {
  double score = 0;
  for (const auto& hook : node_order_) score += hook.fn(task, node);
  return score;
}

std::optional<WaitReason> Session::JobInvalidReason(const JobInfo& job) const { return FirstAnswer(job_valid_, job); }

bool Session::JobReady(const JobInfo& job) const {
  for (const auto& hook : job_ready_) {
    if (!hook.fn(job)) return false;
  }
  return true;
}

bool Session::JobPipelined(const JobInfo& job) const { return TierVote(job_pipelined_, job, true); }

bool Session::JobStarving(const JobInfo& job) const {
  // Per tier: any hook that says "not starving" ends it; a tier of agreeing hooks decides.
  size_t i = 0;
  while (i < job_starving_.size()) {
    int tier = job_starving_[i].tier;
    for (; i < job_starving_.size() && job_starving_[i].tier == tier; ++i) {
      if (!job_starving_[i].fn(job)) return false;
    }
    return true;
  }
  return false;
}

bool Session::JobEnqueueable(const JobInfo& job) const { return TierVote(job_enqueueable_, job, true); }

std::optional<WaitReason> Session::ClusterAdmissionRefusal(const JobInfo& job, const Resources& need) const {
  return FirstAnswer(cluster_admission_, job, need);
}

std::optional<WaitReason> Session::JobAdmissionRefusal(const JobInfo& job, const Resources& need) const {
  return FirstAnswer(job_admission_, job, need);
}

void Session::AdmitJob(JobId job, const Resources& need) {
  SetJobPhase(job, PodGroupPhase::kInqueue);
  for (const auto& hook : job_enqueued_) hook.fn(cluster_.jobs[job], need);
}

bool Session::Overused(const QueueInfo& queue) const {
  for (const auto& hook : overused_) {
    if (hook.fn.now(queue)) return true;
  }
  return false;
}

std::vector<bool> Session::MayBecomeOverused(const std::vector<Resources>& growth) const {
  std::vector<bool> may(cluster_.queues.size(), false);
  for (const auto& hook : overused_) {
    if (!hook.fn.if_grown) return std::vector<bool>(cluster_.queues.size(), true);
    const std::vector<bool> grown = hook.fn.if_grown(growth);
    for (size_t q = 0; q < may.size(); ++q) may[q] = may[q] || grown[q];
  }
  return may;
}

bool Session::Allocatable(const QueueInfo& queue, const TaskInfo& task) const {
  for (const auto& hook : allocatable_) {
    if (!hook.fn(queue, task)) return false;
  }
  return true;
}

std::optional<WaitReason> Session::QueueLimitReason(QueueCheck check, const JobInfo& job,
                                                    const Resources& request) const {
  return FirstAnswer(queue_limit_, check, job, request);
}

bool Session::Scalable(const JobInfo& job) const {
  for (const auto& hook : scalable_) {
    if (!hook.fn(job)) return false;
  }
  return true;
}

bool Session::HasElasticHooks() const { return !elastic_order_.empty() || !scalable_.empty(); }

template <typename Hooks>
static std::vector<TaskId> IntersectVictims(const Hooks& hooks, const TaskInfo& preemptor,
                                            const std::vector<TaskId>& candidates) {
  // No plugin protects anything: the candidates stand (the actions' own rules chose them).
  if (hooks.empty()) return candidates;
  size_t i = 0;
  while (i < hooks.size()) {
    int tier = hooks[i].tier;
    std::optional<std::vector<TaskId>> victims;
    for (; i < hooks.size() && hooks[i].tier == tier; ++i) {
      std::vector<TaskId> allowed = hooks[i].fn(preemptor, candidates);
      std::sort(allowed.begin(), allowed.end());
      if (!victims) {
        victims = std::move(allowed);
      } else {
        std::vector<TaskId> both;
        std::set_intersection(victims->begin(), victims->end(), allowed.begin(), allowed.end(),
                              std::back_inserter(both));
        victims = std::move(both);
      }
    }
    if (victims) return *victims;
  }
  return {};
}

std::vector<TaskId> Session::Preemptable(const TaskInfo& preemptor,
                                         const std::vector<TaskId>& candidates) const {
  return IntersectVictims(preemptable_, preemptor, candidates);
}

std::vector<TaskId> Session::Reclaimable(const TaskInfo& preemptor,
                                         const std::vector<TaskId>& candidates) const {
  return IntersectVictims(reclaimable_, preemptor, candidates);
}

FitResult Session::ResourceFit(const TaskInfo& task, const NodeInfo& node, Placement placement) const {
  const int32_t slots = placement == Placement::kFutureIdle ? node.FuturePodSlots() : node.IdlePodSlots();
  if (slots <= 0) return {FitCode::kTooManyPods, {}};
  const Resources& req = task.request;
  for (size_t i = 0; i < req.size(); ++i) {
    auto id = static_cast<ResourceId>(i);
    int64_t want = req.Get(id);
    if (want <= 0) continue;
    // Pipelined tasks are promised what releasing pods free first, then idle capacity: idle
    // placements may only use what those promises leave.
    int64_t free = node.allocatable.Get(id) - node.used.Get(id);
    int64_t promised_beyond_releasing = node.pipelined.Get(id) - node.releasing.Get(id);
    if (placement == Placement::kFutureIdle || promised_beyond_releasing > 0) free -= promised_beyond_releasing;
    if (want > free) return {FitCode::kInsufficientResource, {}};
  }
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
  FitResult fit = ResourceFit(task, node, placement);
  if (!fit.ok() && errors != nullptr) {
    // A pod that waits for its gates would wait on an empty node too: that is the reason.
    if (FitResult own = Predicate(task, node); own.code == FitCode::kSchedulingGated) fit = own;
  }
  if (fit.code == FitCode::kInsufficientResource && errors != nullptr) {
    // Name the first short resource only when explaining; the hot path skips the lookup.
    Resources free = placement == Placement::kIdle ? node.Idle() : node.FutureIdle();
    int short_id = task.request.FirstShortage(free);
    static thread_local std::string name;
    name = short_id >= 0 ? ResourceName(static_cast<ResourceId>(short_id)) : "resources";
    fit.detail = name;
    errors->Add(fit);
    if (short_id >= 0) errors->AddShortage(static_cast<ResourceId>(short_id), task.request.Get(static_cast<ResourceId>(short_id)));
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

NodeId Session::FindBestNode(const TaskInfo& task, Placement placement, bool elastic, FitErrors* errors,
                             NodeSearch* search) {
  const size_t n = cluster_.nodes.size();
  if (n == 0) return kNoId;
  if (const std::vector<NodeId>* scope = job_scope_[task.job]) {
    return FindBestNodeIn(*scope, task, placement, elastic, errors);
  }
  NodeSearch& state = search != nullptr ? *search : search_;
  NodeSearch::Shape shape{task.constraint_class, placement, elastic, task.request, task.limit};
  if (errors == nullptr) {
    if (std::optional<NodeId> cached = FindInCache(task, shape, state)) return *cached;
  }
  size_t want = n;
  if (errors == nullptr && n > static_cast<size_t>(search_options_.min_nodes_to_find)) {
    int pct = search_options_.percentage;
    if (pct <= 0) pct = std::max<int>(search_options_.min_percentage, 50 - static_cast<int>(n / 125));
    want = std::max<size_t>(n * static_cast<size_t>(pct) / 100,
                            static_cast<size_t>(search_options_.min_nodes_to_find));
  }
  const size_t start = errors == nullptr && want < n ? state.next_start % n : 0;
  NodeSearch::Cached fresh;
  NodeId best = kNoId;
  double best_score = 0;
  size_t found = 0;
  size_t examined = 0;
  for (; examined < n && found < want; ++examined) {
    const NodeInfo& node = cluster_.nodes[(start + examined) % n];
    std::optional<double> evaluated = Evaluate(task, node, placement, elastic, errors);
    if (!evaluated) continue;
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
  if (errors == nullptr) {
    if (want < n) state.next_start = (start + examined) % n;
    if (best != kNoId) {
      fresh.valid = true;
      fresh.shape = std::move(shape);
      fresh.free_epoch = free_epoch_;
      state.cache = std::move(fresh);
    }
  }
  return best;
}

void Session::SetTaskStatus(TaskId task_id, TaskStatus status, NodeId node_id) {
  TaskInfo& task = cluster_.tasks[task_id];
  JobInfo& job = cluster_.jobs[task.job];
  const TaskStatus old = task.status;
  const NodeId old_node = task.node;
  MakeLive(job.id);
  ++task_state_changes_;
  // Only placing a pending task or binding an allocated one leaves every node at most as free
  // as before; anything else may make nodes feasible again for cached searches.
  const bool only_consumes = (old == TaskStatus::kPending && (status == TaskStatus::kAllocated ||
                                                              status == TaskStatus::kPipelined)) ||
                             (old == TaskStatus::kAllocated && status == TaskStatus::kBinding);
  if (!only_consumes) ++free_epoch_;
  state_version_ = ++version_counter_;
  job_tasks_version_[task.job] = ++version_counter_;
  if (old_node != kNoId) ++node_version_[old_node];
  if (node_id != kNoId) ++node_version_[node_id];
  auto takes = [](TaskStatus s) { return IsPlaced(s) || s == TaskStatus::kPipelined; };
  const bool took = takes(old);
  // A task that stays on its node (evicted, or an eviction undone) keeps its place in the
  // node's list: a discarded plan leaves the node exactly as it found it.
  const bool keeps_slot = HoldsNode(old) && HoldsNode(status) && old_node == node_id;

  // Remove the old contribution.
  if (old_node != kNoId) {
    NodeInfo& node = cluster_.nodes[old_node];
    if (HoldsNode(old)) {
      node.used -= task.request;
      node.used_limits -= task.limit;
      --node.pod_count;
      if (!keeps_slot) {
        auto it = std::find(node.tasks.begin(), node.tasks.end(), task_id);
        if (it != node.tasks.end()) node.tasks.erase(it);
      }
    }
    if (old == TaskStatus::kReleasing) {
      node.releasing -= task.request;
      --node.releasing_pods;
    }
    if (old == TaskStatus::kPipelined) {
      node.pipelined -= task.request;
      --node.pipelined_pods;
    }
  }
  CountTask(task, -1, job);

  task.status = status;
  task.node = (status == TaskStatus::kPending || status == TaskStatus::kSucceeded ||
               status == TaskStatus::kFailed)
                  ? kNoId
                  : node_id;

  // Add the new one.
  if (task.node != kNoId) {
    NodeInfo& node = cluster_.nodes[task.node];
    if (HoldsNode(status)) {
      node.used += task.request;
      node.used_limits += task.limit;
      ++node.pod_count;
      if (!keeps_slot) node.tasks.push_back(task_id);
    }
    if (status == TaskStatus::kReleasing) {
      node.releasing += task.request;
      ++node.releasing_pods;
    }
    if (status == TaskStatus::kPipelined) {
      node.pipelined += task.request;
      ++node.pipelined_pods;
    }
  }
  CountTask(task, +1, job);

  const bool takes_now = takes(status);
  if (took != takes_now) {
    for (const EventHandler& handler : event_handlers_) {
      const auto& fn = takes_now ? handler.on_allocate : handler.on_deallocate;
      if (fn) fn(task);
    }
  }
}

void Session::HoldResources(NodeId node, const Resources& amount) {
  cluster_.nodes[node].used += amount;
  ++node_version_[node];
  ++holds_version_;
}

void Session::ReleaseHeldResources(NodeId node, const Resources& amount) {
  cluster_.nodes[node].used -= amount;
  ++node_version_[node];
  ++holds_version_;
  ++free_epoch_;  // the node is freer: cached searches may have missed it
}

JobStatusUpdate& Session::UpdateFor(JobId job) {
  int32_t& index = job_update_index_[job];
  if (index < 0) {
    index = static_cast<int32_t>(job_updates_.size());
    // Made before any phase change of the job (SetJobPhase asks first): the phase it opened with.
    job_updates_.push_back({job, cluster_.jobs[job].phase, std::nullopt, false});
    if (reason_as_reported_[job]) job_updates_.back().waiting = *cluster_.jobs[job].reported_wait;
    opened_phase_.push_back(cluster_.jobs[job].phase);
  }
  return job_updates_[index];
}

void Session::SettleUpdates() {
  size_t kept = 0;
  for (size_t i = 0; i < job_updates_.size(); ++i) {
    JobStatusUpdate& u = job_updates_[i];
    const std::shared_ptr<const WaitReason>& reported = cluster_.jobs[u.job].reported_wait;
    const bool unchanged = u.phase == opened_phase_[i] && !u.scaled && u.waiting.has_value() &&
                           reported != nullptr && *reported == *u.waiting;
    if (unchanged) continue;
    if (kept != i) job_updates_[kept] = std::move(u);
    ++kept;
  }
  job_updates_.resize(kept);
  opened_phase_.clear();
  std::sort(job_updates_.begin(), job_updates_.end(),
            [](const JobStatusUpdate& a, const JobStatusUpdate& b) { return a.job < b.job; });
  std::fill(job_update_index_.begin(), job_update_index_.end(), -1);
  reason_as_reported_.assign(reason_as_reported_.size(), false);
  for (size_t i = 0; i < job_updates_.size(); ++i) job_update_index_[job_updates_[i].job] = static_cast<int32_t>(i);
}

void Session::SetJobPhase(JobId job, PodGroupPhase phase) {
  MakeLive(job);
  ++job_changes_;
  state_version_ = ++version_counter_;
  UpdateFor(job).phase = phase;
  cluster_.jobs[job].phase = phase;
}

void Session::RestoreVersions(uint64_t state, const std::vector<std::pair<JobId, uint64_t>>& jobs) {
  state_version_ = state;
  for (const auto& [job, version] : jobs) job_tasks_version_[job] = version;
}

bool Session::AsReported(JobId job, const WaitReason& reason) {
  if (job_update_index_[job] >= 0) return false;
  const std::shared_ptr<const WaitReason>& reported = cluster_.jobs[job].reported_wait;
  const bool same = reported != nullptr && *reported == reason;
  reason_as_reported_[job] = same;
  return same;
}

bool Session::SetWaitReason(JobId job, WaitReason&& reason) {
  if (AsReported(job, reason)) return true;
  UpdateFor(job).waiting = std::move(reason);
  return false;
}

bool Session::SetWaitReason(JobId job, const WaitReason& reason) {
  if (AsReported(job, reason)) return true;
  UpdateFor(job).waiting = reason;
  return false;
}

void Session::SetSharedWaitReason(JobId job, SharedWaitReason& shared) {
  const WaitReason* reported = cluster_.jobs[job].reported_wait.get();
  if (reported == nullptr || reported != shared.equal_reported) {
    if (SetWaitReason(job, shared.reason)) shared.equal_reported = reported;
  } else if (job_update_index_[job] >= 0) {
    UpdateFor(job).waiting = shared.reason;
  } else {
    reason_as_reported_[job] = true;  // AsReported, without the comparison
  }
}

void Session::ReportQueueDeserved(QueueId queue, Resources deserved) {
  queue_deserved_[queue] = std::move(deserved);
}

void Session::MarkScaled(JobId job) {
  ++job_changes_;
  state_version_ = ++version_counter_;
  UpdateFor(job).scaled = true;
  cluster_.jobs[job].last_scale_time = cluster_.now;
  MakeLive(job);  // it holds workers, so is live already; TakeCluster counts on it
}

ClusterSnapshot Session::TakeCluster() && {
  // Every change to a job goes through SetTaskStatus, SetJobPhase or MarkScaled, which make it
  // live: the other jobs are as the snapshot laid them out.
  cluster_.job_as_laid_out.resize(cluster_.jobs.size(), false);
  for (JobId id : live_jobs_) cluster_.job_as_laid_out[id] = false;
  return std::move(cluster_);
}

bool Session::WasScaled(JobId job) const {
  int32_t index = job_update_index_[job];
  return index >= 0 && job_updates_[index].scaled;
}

}  // namespace lahar
