// The session's extension points: plugins register hooks here (Add*Fn) and actions ask them
// (JobOrderLess, Predicate, Preemptable, ...), tier by tier.
#include "scheduler/framework/session.h"

#include <algorithm>
#include <iterator>

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
}  // namespace

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

bool Session::JobOrderTiesAlike(const JobInfo& job) const {
  if (job_order_hook_without_ties_) return false;
  for (const JobOrderTiesFn& ties : job_order_ties_) {
    if (!ties(job)) return false;
  }
  return true;
}

bool Session::ComesAfterParkedClass(const JobInfo& job, int32_t parked_class) const {
  const auto c = static_cast<size_t>(parked_class);
  const JobId representative = cluster_.parked_representatives[c];
  if (representative == kNoId) return false;
  const JobInfo& first = cluster_.jobs[representative];
  return first.queue == job.queue && first.priority == job.priority && cluster_.parked_last[c].Before(job) &&
         job.HoldsNothing() && JobOrderTiesAlike(job);
}

bool Session::JudgedByAdmissionFacts(const JobInfo& job) const {
  if (admission_hook_without_facts_) return false;
  for (const AdmissionFactsFn& by_facts : admission_facts_) {
    if (!by_facts(job)) return false;
  }
  return true;
}

void Session::AddJobOrderFn(JobCompareFn fn, JobOrderTiesFn ties_alike, JobKeyFn key) {
  if (!AddHook(job_order_, ExtensionPoint::kJobOrder, std::move(fn))) return;
  job_order_keys_.push_back(std::move(key));
  if (ties_alike) {
    job_order_ties_.push_back(std::move(ties_alike));
  } else {
    job_order_hook_without_ties_ = true;
  }
}
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
void Session::AddElasticOrderFn(JobCompareFn fn, JobKeyFn key) {
  if (AddHook(elastic_order_, ExtensionPoint::kElasticOrder, std::move(fn))) elastic_order_keys_.push_back(std::move(key));
}
void Session::AddElasticVictimOrderFn(JobCompareFn fn, JobKeyFn key) {
  if (AddHook(elastic_victim_order_, ExtensionPoint::kElasticOrder, std::move(fn))) {
    elastic_victim_order_keys_.push_back(std::move(key));
  }
}
void Session::AddScalableFn(JobTestFn fn) { AddHook(scalable_, ExtensionPoint::kScalable, std::move(fn)); }
void Session::AddElasticGrowFn(JobTestFn fn) { AddHook(elastic_grow_, ExtensionPoint::kScalable, std::move(fn)); }
void Session::AddElasticShedFn(JobCountFn fn) { AddHook(elastic_shed_, ExtensionPoint::kScalable, std::move(fn)); }
void Session::AddElasticPredicateFn(PredicateFn fn) { AddHook(elastic_predicates_, ExtensionPoint::kElasticPredicate, std::move(fn)); }
void Session::AddEventHandler(EventHandler handler) { event_handlers_.push_back(std::move(handler)); }
void Session::BeforeNextTaskChange(std::function<void()> fn) { before_next_task_change_.push_back(std::move(fn)); }
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

bool Session::ElasticVictimOrderKeyed() const {
  auto all_keyed = [](const std::vector<JobKeyFn>& keys) {
    return std::all_of(keys.begin(), keys.end(), [](const JobKeyFn& key) { return key != nullptr; });
  };
  return all_keyed(elastic_victim_order_keys_) && all_keyed(elastic_order_keys_) && all_keyed(job_order_keys_);
}

void Session::ElasticVictimKey(const JobInfo& job, OrderKey& key) const {
  key.Clear();
  for (const JobKeyFn& fn : elastic_victim_order_keys_) fn(job, key);
  key.Swap();  // then ElasticOrderLess(r, l), and JobOrderLess(r, l) within it
  for (const JobKeyFn& fn : elastic_order_keys_) fn(job, key);
  for (const JobKeyFn& fn : job_order_keys_) fn(job, key);
  key.AddInteger(job.creation_timestamp);
  key.AddInteger(job.creation_order);
  key.AddInteger(job.id);
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

bool Session::JobValid(const JobInfo& job) const {
  std::vector<std::pair<uint64_t, bool>>& valid = memos_.valid;
  if (valid.size() != cluster_.jobs.size()) valid.assign(cluster_.jobs.size(), {UINT64_MAX, false});
  auto& [version, answer] = valid[job.id];
  if (version != job_tasks_version_[job.id]) {
    version = job_tasks_version_[job.id];
    answer = !JobInvalidReason(job).has_value();
  }
  return answer;
}

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
    if (victims) return std::move(*victims);
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
}  // namespace lahar
