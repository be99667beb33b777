#include "plugins/elastic/elastic.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "api/log.h"
#include "api/status_macros.h"
#include "plugins/elastic/goodput.h"
#include "scheduler/framework/capacity.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/per_job.h"
#include "scheduler/framework/session.h"

namespace lahar {
namespace {

constexpr std::string_view kCooldownKey = "elastic.cooldown";
constexpr std::string_view kCpuByLimitsKey = "elastic.cpuByLimits";
constexpr std::string_view kMinGainKey = "elastic.minGain";
constexpr std::string_view kGoodputKey = "elastic.goodput";
constexpr TaskId kNotComputed = -2;

class ElasticPlugin : public Plugin {
 public:
  explicit ElasticPlugin(ElasticPluginOptions options) : options_(options) {}

  std::string_view Name() const override { return "elastic"; }

  void OnSessionOpen(Session& session) override {
    session_ = &session;
    for (const QueueInfo& queue : session.cluster().queues) total_guarantee_ += queue.guarantee;
    memos_.Reset(session.jobs().size());
    smallest_share_.reset();
    any_measured_ = false;
    if (options_.goodput) {
      for (const JobInfo& job : session.cluster().jobs) any_measured_ = any_measured_ || job.measured;
    }
    // Any task starting or stopping to take resources may change its job's next pending task,
    // elastic workers and gains, and the cluster's idle resources.
    auto invalidate = [this](const TaskInfo& task) {
      if (JobMemo* memo = memos_.Find(task.job)) {
        memo->per_pod_task = kNotComputed;
        memo->gains = Gains();
      }
      idle_.reset();
    };
    session.AddEventHandler({invalidate, invalidate});

    session.AddElasticOrderFn([this](const JobInfo& l, const JobInfo& r) { return CompareElastic(l, r); },
                              [this](const JobInfo& job, OrderKey& key) { AddElasticKey(job, key); });
    session.AddScalableFn([this](const JobInfo& job) { return OutsideCooldown(job); });
    session.AddElasticGrowFn([this](const JobInfo& job) { return MayGrow(job); });
    if (any_measured_) {
      session.AddElasticVictimOrderFn([this](const JobInfo& l, const JobInfo& r) {
        const double gl = GainsOf(l).last_per_unit;
        const double gr = GainsOf(r).last_per_unit;
        return gl == gr ? 0 : (gl < gr ? -1 : 1);  // the lower gain gives up its worker first
      }, [this](const JobInfo& job, OrderKey& key) { key.AddNumber(GainsOf(job).last_per_unit); });
      session.AddElasticShedFn([this](const JobInfo& job) { return WorkersToShed(job); });
    }
    if (options_.cpu_by_limits) {
      session.AddElasticPredicateFn(
          [this](const TaskInfo& task, const NodeInfo& node) { return FitsWithinLimits(task, node); });
    }
    // A job holding no node adds nothing of its own to the vote's totals (AddContribution).
    session.AddJobEnqueueableFn([this](const JobInfo& job) { return EnqueueVote(job); },
                                [](const JobInfo& job) { return job.HoldsNothing(); });
    session.AddJobEnqueuedFn([this](const JobInfo& job, const Resources&) { MoveAdmittedContribution(job); });
  }

 private:
  int CompareElastic(const JobInfo& l, const JobInfo& r) {
    if (any_measured_) {
      const double gl = GainsOf(l).next_per_unit;
      const double gr = GainsOf(r).next_per_unit;
      if (gl != gr) return gl > gr ? -1 : 1;  // the higher expected gain first
    }
    int c = CompareFulfillment(FulfillmentOf(l), FulfillmentOf(r));
    if (c != 0) return c;
    const Resources& pl = PerPodRequest(l);
    const Resources& pr = PerPodRequest(r);
    for (ResourceId id : {kNvidiaGpu, kCpu, kMemory}) {
      if (pl.Get(id) != pr.Get(id)) return pl.Get(id) > pr.Get(id) ? -1 : 1;  // more first
    }
    return 0;
  }

  // CompareElastic's order as the job's key.
  void AddElasticKey(const JobInfo& job, OrderKey& key) {
    if (any_measured_) key.AddNumber(GainsOf(job).next_per_unit, /*higher_first=*/true);
    const Fulfillment fulfillment = FulfillmentOf(job);
    key.AddRatio(fulfillment.numerator, fulfillment.denominator);
    const Resources& per_pod = PerPodRequest(job);
    for (ResourceId id : {kNvidiaGpu, kCpu, kMemory}) key.AddInteger(per_pod.Get(id), /*higher_first=*/true);
  }

  // The request of the job's next pending task in task order, else of its last task.
  const Resources& PerPodRequest(const JobInfo& job) {
    static const Resources* const kNone = new Resources();
    if (job.tasks.empty()) return *kNone;
    // Tasks of one shape ask the same: then which task comes next does not matter, and the
    // ranking of elastic victims, which changes tasks between comparisons, needs no task order.
    std::optional<bool>& one_shape = memos_[job.id].one_shape;
    if (!one_shape) {
      const int32_t first = session_->task(job.tasks.front()).shape;
      one_shape = first != kNoShape && std::all_of(job.tasks.begin(), job.tasks.end(), [&](TaskId t) {
        return session_->task(t).shape == first;
      });
    }
    if (*one_shape) return session_->task(job.tasks.front()).request;
    TaskId& cached = memos_[job.id].per_pod_task;
    if (cached == kNotComputed) {
      const Session& s = *session_;
      TaskId next_pending = kNoId;
      TaskId last = kNoId;
      for (TaskId t : job.tasks) {
        const TaskInfo& task = s.task(t);
        if (task.status == TaskStatus::kPending &&
            (next_pending == kNoId || s.TaskOrderLess(task, s.task(next_pending)))) {
          next_pending = t;
        }
        if (last == kNoId || s.TaskOrderLess(s.task(last), task)) last = t;
      }
      cached = next_pending != kNoId ? next_pending : last;
    }
    return cached == kNoId ? *kNone : session_->task(cached).request;
  }

  bool Measured(const JobInfo& job) const { return options_.goodput && job.measured; }

  const ScalingCurve& CurveOf(const JobInfo& job) {
    std::optional<ScalingCurve>& curve = memos_[job.id].curve;
    if (!curve) curve = ScalingCurve::Fit(job.throughput);
    return *curve;
  }

  // The largest share of the cluster one pod of the job asks for, in any resource.
  double DominantShare(const JobInfo& job) {
    const Resources& total = session_->cluster().total_allocatable;
    double share = 0;
    for (const auto& [id, amount] : PerPodRequest(job).NonZero()) {
      if (id != kPods && total.Get(id) > 0) {
        share = std::max(share, static_cast<double>(amount) / static_cast<double>(total.Get(id)));
      }
    }
    return share;
  }

  // A measured job's gains are counted per unit of its dominant resource, the unit being the
  // smallest measured pod of the session (so a measured job of such pods compares with an
  // unmeasured one, expected to gain 1.0, by its plain gain).
  double PerUnit(const JobInfo& job, double gain) {
    if (!smallest_share_) {
      double smallest = 0;
      for (const JobInfo& other : session_->cluster().jobs) {
        if (!Measured(other)) continue;
        const double share = DominantShare(other);
        if (share > 0 && (smallest == 0 || share < smallest)) smallest = share;
      }
      smallest_share_ = smallest;
    }
    const double share = DominantShare(job);
    return share > 0 && *smallest_share_ > 0 ? gain * *smallest_share_ / share : gain;
  }

  // Expected gains of the job's next worker and of its last one (spec 3.2); 1.0 without reports.
  struct Gains {
    bool known = false;
    double next = 1.0;
    double next_per_unit = 1.0;
    double last_per_unit = 1.0;
  };
  const Gains& GainsOf(const JobInfo& job) {
    Gains& gains = memos_[job.id].gains;
    if (gains.known) return gains;
    gains.known = true;
    if (!Measured(job) || job.throughput.empty()) return gains;  // nothing measured yet: linear
    const int32_t n = job.PlacedCount();
    const ScalingCurve& curve = CurveOf(job);
    gains.next = curve.GainOfNext(n);
    gains.next_per_unit = PerUnit(job, gains.next);
    const double last = ReportedGain(job.throughput, n).value_or(curve.GainOfNext(n - 1));
    gains.last_per_unit = PerUnit(job, last);
    return gains;
  }

  // A worker is added only while it is expected to pay; a measured job grows one size past the
  // largest it reported, and never past a size its reports showed not to pay.
  bool MayGrow(const JobInfo& job) {
    if (GainsOf(job).next < options_.min_gain) return false;
    if (!Measured(job)) return true;
    const int32_t n = job.PlacedCount();
    if (job.throughput.empty() || n > job.throughput.back().size) return false;
    std::optional<int32_t> limit = UsefulSizeLimit(job.throughput, options_.min_gain);
    return !limit || n + 1 <= *limit;
  }

  int32_t WorkersToShed(const JobInfo& job) {
    if (!Measured(job)) return 0;
    std::optional<int32_t> limit = UsefulSizeLimit(job.throughput, options_.min_gain);
    if (!limit) return 0;
    return std::max(0, job.PlacedCount() - std::max(*limit, job.min_available));
  }

  bool OutsideCooldown(const JobInfo& job) const {
    if (job.last_scale_time == kNeverMillis) return true;
    const Millis cooldown = job.cooldown_override >= 0 ? job.cooldown_override : options_.cooldown;
    return session_->now() - job.last_scale_time >= cooldown;
  }

  bool IsExtended(ResourceId id) {
    if (id >= extended_.size()) extended_.resize(ResourceCount(), -1);
    if (id >= extended_.size()) return false;
    if (extended_[id] < 0) extended_[id] = ResourceName(id).find('/') != std::string::npos ? 1 : 0;
    return extended_[id] == 1;
  }

  FitResult FitsWithinLimits(const TaskInfo& task, const NodeInfo& node) {
    for (size_t i = 0; i < task.request.size(); ++i) {
      const auto id = static_cast<ResourceId>(i);
      if (task.request.Get(id) > 0 && IsExtended(id)) return {};
    }
    static constexpr std::string_view kNames[] = {"cpu", "memory"};
    const ResourceId ids[] = {kCpu, kMemory};
    for (int i = 0; i < 2; ++i) {
      const int64_t limit = task.limit.Get(ids[i]);
      if (limit <= 0) continue;
      if (node.used_limits.Get(ids[i]) + limit > node.allocatable.Get(ids[i])) {
        return {FitCode::kElasticLimit, kNames[i]};
      }
    }
    return {};
  }

  // Requests of the job's elastic workers on schedulable nodes (what taking them back frees).
  // The session's memo (job_rules), by the job's tasks version: valid while no task of it moves.
  const Resources& ElasticRequest(const JobInfo& job) { return ElasticWorkerRequests(*session_, job); }

  // Proportion's real capability: the capability, within what the other queues' guarantees
  // leave of the cluster.
  int64_t RealCapability(const QueueInfo& queue, ResourceId id) const {
    const Resources& total = session_->cluster().total_allocatable;
    int64_t limit = total.Get(id) - total_guarantee_.Get(id) + queue.guarantee.Get(id);
    const int64_t cap = queue.capability.Get(id);
    if (cap > 0) limit = std::min(limit, cap);
    return limit;
  }

  const Resources& ClusterIdle() {
    if (!idle_) idle_ = IdleCapacity(*session_);
    return *idle_;
  }

  // What one job adds to the cluster's room for an elastic job's min (its elastic workers, less
  // what it lacks of its own min once admitted) and to its queue's commitments.
  static bool CountsAdmitted(const JobInfo& job) {
    return job.phase == PodGroupPhase::kInqueue || job.phase == PodGroupPhase::kRunning;
  }
  void AddContribution(const JobInfo& job, Resources& free, Resources& committed) {
    AddContribution(job, CountsAdmitted(job), free, committed);
  }
  void AddContribution(const JobInfo& job, bool admitted, Resources& free, Resources& committed) {
    // Not admitted, it adds what it holds less its workers', and its workers' to `free`: nothing
    // when it holds nothing (most of a backlog), whose workers are not even looked for.
    if (job.allocated.IsZero()) {
      if (admitted) AddAdmittedHoldingNothing(job, free, committed);
      return;
    }
    const Resources& elastic = ElasticRequest(job);
    // On raw storage, without temporaries: every vote's totals pass over every live job.
    const Resources& min = job.min_resources;
    const size_t n = std::max({job.allocated.size(), elastic.size(), min.size()});
    int64_t* free_at = free.GrownData(n);
    int64_t* committed_at = committed.GrownData(n);
    const int64_t* workers_at = elastic.data();
    const int64_t* allocated_at = job.allocated.data();
    const int64_t* min_at = min.data();
    const size_t workers_n = elastic.size(), allocated_n = job.allocated.size(), min_n = min.size();
    for (size_t i = 0; i < n; ++i) {
      const int64_t workers = i < workers_n ? workers_at[i] : 0;
      free_at[i] += workers;
      const int64_t min_part = (i < allocated_n ? allocated_at[i] : 0) - workers;  // the placed part of its min
      if (!admitted) {
        committed_at[i] += min_part;
        continue;
      }
      const int64_t wanted = i < min_n ? min_at[i] : 0;
      if (wanted > min_part) free_at[i] -= wanted - min_part;  // what it lacks of its min
      committed_at[i] += std::max(min_part, wanted);
    }
  }

  // An admitted job with nothing placed lacks all of its min and commits all of it (the general
  // case of AddContribution, with nothing placed); `jobs` such jobs alike lack `jobs` times it.
  static void AddAdmittedHoldingNothing(const JobInfo& job, Resources& free, Resources& committed, int64_t jobs = 1) {
    Resources lacking = job.min_resources;
    lacking.ClampNegativeToZero();
    if (jobs != 1) lacking *= jobs;
    free -= lacking;
    committed += lacking;
  }

  // The contributions of every job, per session state: a vote subtracts its own job's, so a
  // session's votes cost one pass over the jobs per admission, not one per waiting job.
  struct VoteTotals {
    uint64_t version = UINT64_MAX;
    uint64_t job_changes = 0;   // Session::job_changes() when they were last right
    uint64_t task_changes = 0;  // Session::task_state_changes() when summed
    Resources free;
    std::vector<Resources> committed;  // per queue
  };
  const VoteTotals& Totals() {
    if (totals_.version != session_->state_version()) {
      totals_ = VoteTotals();
      totals_.version = session_->state_version();
      totals_.job_changes = session_->job_changes();
      totals_.task_changes = session_->task_state_changes();
      totals_.committed.resize(session_->cluster().queues.size());
      Resources ignored;
      for (JobId id : session_->LiveJobs()) {  // the others hold nothing and are not admitted: no part
        const JobInfo& other = session_->job(id);
        AddContribution(other, totals_.free, other.queue == kNoId ? ignored : totals_.committed[other.queue]);
      }
      // Admitted jobs left out hold nothing, and add what their representative would holding
      // nothing (it may hold something by now).
      for (const Session::ParkedAdmitted& parked : session_->parked_admitted()) {
        const JobInfo& representative = session_->job(parked.representative);
        AddAdmittedHoldingNothing(representative, totals_.free, totals_.committed[representative.queue], parked.members);
      }
    }
    return totals_;
  }

  // An admission changes only its job's phase: when nothing else changed since the totals were
  // summed, its contribution is moved from pending to admitted instead of summing every job anew
  // for the next vote (exact: the sums are of integers).
  void MoveAdmittedContribution(const JobInfo& job) {
    if (totals_.version == UINT64_MAX || job.queue == kNoId || !CountsAdmitted(job) ||
        totals_.task_changes != session_->task_state_changes() || totals_.job_changes + 1 != session_->job_changes()) {
      return;  // summed anew at the next vote
    }
    Resources free_before, committed_before, free_after, committed_after;
    AddContribution(job, /*admitted=*/false, free_before, committed_before);
    AddContribution(job, /*admitted=*/true, free_after, committed_after);
    totals_.free += free_after;
    totals_.free -= free_before;
    totals_.committed[job.queue] += committed_after;
    totals_.committed[job.queue] -= committed_before;
    totals_.version = session_->state_version();
    totals_.job_changes = session_->job_changes();
  }

  int EnqueueVote(const JobInfo& job) {
    if (job.queue == kNoId) return kAbstain;
    const QueueInfo& queue = session_->queue(job.queue);
    if (!queue.open) return kAbstain;
    const VoteTotals& totals = Totals();
    // Its own part of the totals is taken away; a job that holds nothing and is not admitted
    // (most of a backlog) has none, and is judged without temporaries.
    Resources own_free, own_committed;
    if (!job.HoldsNothing() || CountsAdmitted(job) || !ElasticRequest(job).IsZero()) {
      AddContribution(job, own_free, own_committed);
    }
    const Resources& idle = ClusterIdle();
    const Resources& queue_committed = totals.committed[job.queue];
    const Resources& min = job.min_resources;
    // Its min must fit what is free once workers are taken back, and its queue's capability.
    for (size_t i = 0; i < min.size(); ++i) {
      const auto id = static_cast<ResourceId>(i);
      const int64_t amount = min.Get(id);
      if (amount > 0 && amount > idle.Get(id) + totals.free.Get(id) - own_free.Get(id)) return kAbstain;
      if (amount == 0 || id == kPods) continue;
      if (queue_committed.Get(id) - own_committed.Get(id) + amount > RealCapability(queue, id)) return kAbstain;
    }
    LAHAR_LOG(2, "elastic") << "enqueue " << job.key() << ": permit, min fits once elastic workers are taken back";
    return kPermit;
  }

  ElasticPluginOptions options_;
  Session* session_ = nullptr;
  // What is worked out per job, made when the job is first asked about (PerJob).
  struct JobMemo {
    TaskId per_pod_task = kNotComputed;
    // Whether its tasks share one shape (TaskInfo::shape), once asked. Shapes are the pods',
    // which no session changes.
    std::optional<bool> one_shape;
    Gains gains;
    std::optional<ScalingCurve> curve;
  };
  PerJob<JobMemo> memos_;
  std::optional<Resources> idle_;
  std::optional<double> smallest_share_;
  bool any_measured_ = false;
  VoteTotals totals_;
  Resources total_guarantee_;
  std::vector<int8_t> extended_;  // per resource id: -1 unknown, 0 no, 1 yes
};

}  // namespace

std::vector<ArgumentSpec> ElasticArguments() {
  return {
      {kCooldownKey, ArgumentKind::kDuration, "60s", ArgumentSupport::kHonoured,
       "no elastic change to a job again within this time of the last"},
      {kCpuByLimitsKey, ArgumentKind::kBool, "true", ArgumentSupport::kHonoured,
       "CPU-only elastic workers fit within the pod limits on a node"},
      {kMinGainKey, ArgumentKind::kNumber, "0.1", ArgumentSupport::kHonoured,
       "an elastic worker is added only while its expected gain is at least this"},
      {kGoodputKey, ArgumentKind::kBool, "true", ArgumentSupport::kHonoured,
       "order elastic work by the throughput jobs report (lahar.sh/throughput)"},
  };
}

absl::StatusOr<ElasticPluginOptions> ParseElasticPluginOptions(const Arguments& arguments) {
  ElasticPluginOptions options;
  ASSIGN_OR_RETURN(options.cooldown, arguments.GetDuration(kCooldownKey, options.cooldown));
  ASSIGN_OR_RETURN(options.cpu_by_limits, arguments.GetBool(kCpuByLimitsKey, options.cpu_by_limits));
  ASSIGN_OR_RETURN(options.min_gain, arguments.GetDouble(kMinGainKey, options.min_gain, 0, 1e9));
  ASSIGN_OR_RETURN(options.goodput, arguments.GetBool(kGoodputKey, options.goodput));
  return options;
}

absl::StatusOr<std::unique_ptr<Plugin>> NewElasticPlugin(const Arguments& arguments) {
  ASSIGN_OR_RETURN(ElasticPluginOptions options, ParseElasticPluginOptions(arguments));
  return std::make_unique<ElasticPlugin>(options);
}

}  // namespace lahar
