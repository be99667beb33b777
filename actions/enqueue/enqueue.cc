#include "actions/enqueue/enqueue.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "api/log.h"
#include "api/state_hash.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/framework/capacity.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/queue_turns.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/wait_memo.h"
#include "scheduler/framework/wait_reasons.h"

namespace lahar {
namespace {

// What the cluster can still promise to jobs admitted in this session: free capacity, plus what
// the configured evicting actions could take for the job (spec 3, enqueue).
class ClusterHeadroom {
 public:
  explicit ClusterHeadroom(const Session& session) : session_(&session) {
    // Per node: idle, plus what releasing pods will free, minus what is promised to pipelined
    // tasks. A node overcommitted by other schedulers' pods frees nothing (and takes nothing away).
    available_ = FreeCapacity(session);
    // Elastic workers count as reclaimable: preempt-elastic-workers can take them back.
    const SchedulerConfig& config = session.config();
    if (config.HasAction("preempt-elastic-workers")) available_ += ElasticWorkerRequests(session);
    // preempt: what lower-priority jobs of the same queue hold (Takeable; enqueue moves no task,
    // so it is the same state when first read).
    wants_by_priority_ = config.HasAction("preempt");
    // reclaim: what reclaimable queues hold beyond their deserved share.
    if (config.HasAction("reclaim")) {
      const size_t queues = session.cluster().queues.size();
      std::vector<Resources> held(queues);
      for (JobId id : session.LiveJobs()) {  // the others hold nothing
        const JobInfo& job = session.job(id);
        if (job.queue != kNoId) held[job.queue] += job.allocated;
      }
      lent_.resize(queues);
      for (const auto& [queue, deserved] : session.queue_deserved()) {
        const QueueInfo& q = session.queue(queue);
        if (!q.IsLeaf() || !q.reclaimable) continue;
        Resources beyond = held[queue] - deserved;
        beyond.ClampNegativeToZero();
        lent_[queue] = beyond;
        lent_total_ += beyond;
      }
    }
  }

  // Why `need` does not fit what is left for `job` (kind `admission`), or nullopt.
  std::optional<WaitReason> Refusal(const JobInfo& job, const Resources& need) const {
    if (need.FirstShortage(available_) < 0) return std::nullopt;
    const Resources takeable = Takeable(job);
    const int shortage = need.FirstShortage(available_ + takeable);
    if (shortage < 0) return std::nullopt;
    const auto r = static_cast<ResourceId>(shortage);
    return WaitReason{.kind = WaitKind::kAdmission,
                      .subject = "cluster",
                      .limit = takeable.IsZero() ? "free" : "free or evictable",
                      .shortage = ResourceShortage{r, available_.Get(r) + takeable.Get(r), 0, need.Get(r)}};
  }
  void Reserve(const Resources& need) { available_ -= need; }

 private:
  Resources Takeable(const JobInfo& job) const {
    Resources extra;
    if (wants_by_priority_) {
      if (by_priority_ == nullptr) by_priority_ = HoldingsByPriority::Of(*session_);
      extra += by_priority_->Below(job.queue, job.priority);
    }
    if (!lent_.empty()) extra += lent_total_ - lent_[job.queue];
    return extra;
  }

  const Session* session_;
  Resources available_;
  bool wants_by_priority_ = false;
  mutable std::shared_ptr<const HoldingsByPriority> by_priority_;  // when first read
  std::vector<Resources> lent_;                                  // per queue: held beyond deserved
  Resources lent_total_;
};

// Refusals of jobs alike in their admission facts (AdmissionFactsFn), for the session state they
// were made in: a backlog of alike jobs held by one limit is judged once per state, not once
// per job. Off with the sessions' memory (`--no-skip`), which judges every job on its own.
class AlikeRefusals {
 public:
  // A job's admission facts; `min_resources` points into the session's job table.
  struct Facts {
    QueueId queue;
    int32_t priority;
    PodGroupPhase phase;
    // JobInfo::min_resources_number of a job that holds nothing, whose request is its min: the
    // number stands for both. kNoShape: the two below are compared.
    int32_t min_number;
    const Resources* min_resources;
    Resources need;

    bool Numbered() const { return min_number != kNoShape; }
  };

  explicit AlikeRefusals(const Session& session)
      : session_(session),
        enabled_(session.wait_memo() != nullptr && session.wait_memo()->enabled()),
        parks_jobs_(enabled_ && session.wait_memo()->parks_jobs()),
        numbered_(session),
        others_(session) {}

  // The job's facts when every admission hook judges it by them alone, else nullopt.
  std::optional<Facts> FactsOf(const JobInfo& job) {
    if (!enabled_ || !session_.JudgedByAdmissionFacts(job)) return std::nullopt;
    // Most waiting jobs: their request (AdmissionRequest) is their min, known by its number.
    if (job.min_resources_number != kNoShape && job.allocated.IsZero() && !job.min_resources.IsZero()) {
      return Facts{job.queue, job.priority, job.phase, job.min_resources_number, &job.min_resources, Resources()};
    }
    return Facts{job.queue, job.priority, job.phase, kNoShape, &job.min_resources, AdmissionRequest(session_, job)};
  }
  // Whether the session's owner parks jobs refused alike (WaitMemo::parks_jobs).
  bool parks_jobs() const { return parks_jobs_; }
  // The refusal of a job with these facts in the current state, or null.
  Session::SharedWaitReason* Find(const Facts& facts) {
    return facts.Numbered() ? numbered_.Find(NumberedKey::Of(facts)) : others_.Find(facts);
  }
  // Remembers the refusal of a job with these facts, and returns it. Its address is kept while
  // others are added (RefuseAllIfNoneAdmitted holds it).
  Session::SharedWaitReason& Remember(Facts facts, WaitReason refusal) {
    if (facts.Numbered()) return numbered_.Remember(NumberedKey::Of(facts), std::move(refusal));
    return others_.Remember(std::move(facts), std::move(refusal));
  }

 private:
  // Most facts: the job's numbered min stands for its request, so four numbers say all.
  struct NumberedKey {
    uint64_t queue_and_min;
    uint64_t priority_and_phase;
    static NumberedKey Of(const Facts& f) {
      return {static_cast<uint64_t>(static_cast<uint32_t>(f.queue)) << 32 | static_cast<uint32_t>(f.min_number),
              static_cast<uint64_t>(static_cast<uint32_t>(f.priority)) << 32 | static_cast<uint32_t>(f.phase)};
    }
    bool operator==(const NumberedKey& other) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const NumberedKey& k) {
      return H::combine(std::move(h), k.queue_and_min, k.priority_and_phase);
    }
  };
  struct FactsHash {
    size_t operator()(const Facts& f) const {
      StateHash hash;
      hash.Add(f.queue).Add(f.priority).Add(static_cast<int32_t>(f.phase)).Add(f.min_number);
      hash.Add(*f.min_resources).Add(f.need);
      return static_cast<size_t>(hash.value());
    }
  };
  struct FactsEq {
    bool operator()(const Facts& a, const Facts& b) const {
      return a.queue == b.queue && a.priority == b.priority && a.phase == b.phase && a.min_number == b.min_number &&
             *a.min_resources == *b.min_resources && a.need == b.need;
    }
  };

  const Session& session_;
  const bool enabled_;
  const bool parks_jobs_;
  RefusalsInState<NumberedKey> numbered_;
  RefusalsInState<Facts, FactsHash, FactsEq> others_;
};

class EnqueueAction : public Action {
 public:
  std::string_view Name() const override { return "enqueue"; }

  void Execute(Session& session) override {
    std::vector<std::vector<JobId>> jobs_of(session.queues().size());
    bool any_waits = false;
    for (const JobInfo& job : session.jobs()) {
      if (!job.has_pod_group || job.phase != PodGroupPhase::kPending) continue;
      if (job.queue == kNoId) {
        session.SetWaitReason(job.id, WaitReason{.kind = WaitKind::kInvalid, .subject = "QueueNotFound",
                                                 .detail = "the job's queue does not exist"});
        continue;
      }
      jobs_of[job.queue].push_back(job.id);
      any_waits = true;
    }
    if (!any_waits) return;  // most sessions

    // A plugin's cluster admission (overcommit) replaces the headroom, which is then not built.
    std::optional<ClusterHeadroom> headroom;
    if (!session.HasClusterAdmissionHooks()) headroom.emplace(session);
    AlikeRefusals alike(session);
    if (RefuseAllIfNoneAdmitted(session, jobs_of, headroom, alike)) return;

    // One job from the first queue, then the queue goes back into the order (Volcano's enqueue).
    // The turns take every waiting job: parked ones are left out only while their classes are
    // refused alike in every state the turns pass through (ParkedClasses).
    ParkedClasses parked(session);
    if (session.NeedParkedClasses(parked.NotAlikeInThisState(session, headroom, alike))) return;
    QueueTurns turns(session, "enqueue", std::move(jobs_of));
    QueueId q = kNoId;
    while (turns.NextQueue(q)) {
      const uint64_t state = session.state_version();
      const JobInfo& job = session.job(turns.TakeJob(q));
      parked.PassedBy(session, job);
      if (session.NeedParkedClasses(parked.TurnOf(session, job, headroom, alike))) return;
      Consider(session, job, headroom, alike);
      if (session.state_version() != state &&
          session.NeedParkedClasses(parked.NotAlikeInThisState(session, headroom, alike))) {
        return;
      }
      if (turns.Remaining(q).empty() && session.state_version() == state) parked.QueueDone(q);
      turns.PutBack(q);
    }
  }

 private:
  // Why a job is refused: as alike jobs are, or for reasons of its own. Neither: admitted.
  struct Refusal {
    Session::SharedWaitReason* shared = nullptr;
    std::optional<WaitReason> own;
    bool Refuses() const { return shared != nullptr || own.has_value(); }
  };

  // Volcano's turns between queues and jobs decide anything only from the first admission:
  // until one, the session state does not move and each job is refused as it would be at its
  // turn. So when no waiting job is admitted in the state the action starts in (most sessions
  // of a backlog), each is told why without the job order being made. Else nothing is told
  // (the turns judge every job again, alike ones looked up) and false is returned.
  static bool RefuseAllIfNoneAdmitted(Session& session, const std::vector<std::vector<JobId>>& jobs_of,
                                      const std::optional<ClusterHeadroom>& headroom, AlikeRefusals& alike) {
    std::vector<std::pair<JobId, Session::SharedWaitReason*>> shared;
    std::vector<std::pair<JobId, WaitReason>> own;
    for (const std::vector<JobId>& jobs : jobs_of) {
      for (JobId id : jobs) {
        const JobInfo& job = session.job(id);
        std::optional<AlikeRefusals::Facts> facts = alike.FactsOf(job);
        if (Session::SharedWaitReason* same = facts ? alike.Find(*facts) : nullptr) {
          shared.emplace_back(id, same);
          continue;
        }
        Resources need;
        Refusal refusal = JudgeAfresh(session, job, headroom, alike, std::move(facts), need);
        if (!refusal.Refuses()) return false;
        if (refusal.shared != nullptr) {
          shared.emplace_back(id, refusal.shared);
        } else {
          own.emplace_back(id, *std::move(refusal.own));
        }
      }
    }
    for (auto& [id, reason] : shared) TellAlike(session, id, *reason, alike.parks_jobs());
    for (auto& [id, reason] : own) session.SetWaitReason(id, std::move(reason));
    return true;
  }

  // Tells a job the refusal of a job alike it. A job refused as an alike one judged before it
  // is refused as that one is in every session where none is admitted (RefuseAllIfNoneAdmitted):
  // its owner may park it (Session::NoteParkable) and let sessions judge the other only, until
  // one would admit a job (then every job is back).
  static void TellAlike(Session& session, JobId id, Session::SharedWaitReason& shared, bool parks_jobs) {
    session.SetSharedWaitReason(id, shared);
    if (!parks_jobs || shared.judged == kNoId || shared.judged == id) return;
    if (Parkable(session, session.job(id)) && Parkable(session, session.job(shared.judged))) {
      session.NoteParkable(id, shared.judged);
    }
  }

  // A waiting job only enqueue reads: it holds nothing, and it is not measured (the elastic
  // plugin reads every measured job for its unit of gain).
  // And one the job order keeps behind its class's first job (ParkedClasses).
  static bool Parkable(const Session& session, const JobInfo& job) {
    return job.HoldsNothing() && !job.measured && session.JobOrderTiesAlike(job);
  }

  // The classes of the jobs the session's snapshot left out (ClusterSnapshot::parked), as the
  // turns pass from state to state. A refused job moves no state, and the queue order reads the
  // state alone (QueueTurns), so the parked jobs' turns would change no other job's: the session
  // decides as one over every job would when each class is refused, as its representative is,
  // for one same reason in every state its members' turns may come in. Each parked job is then
  // told that reason (RunSchedulingCycle). Else the session needs every job.
  //
  // The members' turns come after their representative's: parked jobs are tied with it by every
  // job-order hook (Parkable), and the cache parks only jobs after it in the session's own order
  // (ClusterCache::ParkJobs). So a class counts from its representative's turn on; the states
  // before it (the admission of a job alike, laid out ahead of it) are none of its members'. It
  // counts no longer once its queue's last laid-out job is refused (QueueDone).
  class ParkedClasses {
   public:
    explicit ParkedClasses(const Session& session) {
      const std::vector<JobId>& representatives = session.cluster().parked_representatives;
      first_.resize(representatives.size());
      counts_.assign(representatives.size(), false);
      queue_of_.assign(representatives.size(), kNoId);
      for (size_t c = 0; c < representatives.size(); ++c) {
        // A class that is gone, or one of admitted jobs (allocate's to judge).
        if (representatives[c] == kNoId || session.job(representatives[c]).phase != PodGroupPhase::kPending) continue;
        if (session.JobOrderTiesAlike(session.job(representatives[c]))) {
          waiting_for_turn_.emplace_back(representatives[c], c);
          queue_of_[c] = session.job(representatives[c]).queue;
        } else {
          counts_[c] = true;  // its members' turns may come anywhere
        }
      }
      std::sort(waiting_for_turn_.begin(), waiting_for_turn_.end());
    }

    // The classes that count and would be admitted in the current state, or refused otherwise
    // than in the first state they counted in.
    std::vector<int32_t> NotAlikeInThisState(Session& session, const std::optional<ClusterHeadroom>& headroom,
                                             AlikeRefusals& alike) {
      std::vector<int32_t> not_alike;
      for (size_t c = 0; c < counts_.size(); ++c) {
        if (counts_[c] && !Alike(session, c, headroom, alike)) not_alike.push_back(static_cast<int32_t>(c));
      }
      return not_alike;
    }

    // The queue's last laid-out job was refused: over every job, the queue would stay first and
    // its parked jobs be refused in this state, so its classes count no longer.
    void QueueDone(QueueId queue) {
      for (const auto& [representative, c] : waiting_for_turn_) {
        if (queue_of_[c] == queue) counts_[c] = false;
      }
    }

    // The turns take `job`: a class of its queue whose members all come before it in job order
    // (both tied by every job-order hook, so by creation) had their turns in the states that
    // counted, and counts no longer.
    void PassedBy(const Session& session, const JobInfo& job) {
      for (const auto& [representative, c] : waiting_for_turn_) {
        if (counts_[c] && session.ComesAfterParkedClass(job, static_cast<int32_t>(c))) counts_[c] = false;
      }
    }

    // The turns take `job`: when it is a class's representative, the class counts from now on.
    // That class when it would be admitted now (its members would be judged after that).
    std::vector<int32_t> TurnOf(Session& session, const JobInfo& job, const std::optional<ClusterHeadroom>& headroom,
                                AlikeRefusals& alike) {
      auto it = std::lower_bound(waiting_for_turn_.begin(), waiting_for_turn_.end(), std::pair<JobId, size_t>(job.id, 0));
      if (it == waiting_for_turn_.end() || it->first != job.id) return {};
      counts_[it->second] = true;
      if (Alike(session, it->second, headroom, alike)) return {};
      return {static_cast<int32_t>(it->second)};
    }

   private:
    bool Alike(Session& session, size_t c, const std::optional<ClusterHeadroom>& headroom, AlikeRefusals& alike) {
      std::optional<WaitReason> refusal =
          RefusalOf(session, session.job(session.cluster().parked_representatives[c]), headroom, alike);
      if (!refusal) return false;
      if (!first_[c]) {
        first_[c] = std::move(refusal);
        return true;
      }
      return *first_[c] == *refusal;
    }

    // The job's refusal in the current state, as its alike jobs are told it; nullopt when it
    // would be admitted (or is not judged by its facts alone).
    static std::optional<WaitReason> RefusalOf(Session& session, const JobInfo& job,
                                               const std::optional<ClusterHeadroom>& headroom, AlikeRefusals& alike) {
      std::optional<AlikeRefusals::Facts> facts = alike.FactsOf(job);
      if (!facts) return std::nullopt;
      if (Session::SharedWaitReason* same = alike.Find(*facts)) return same->reason;
      Resources need;
      Refusal refusal = JudgeAfresh(session, job, headroom, alike, std::move(facts), need);
      if (refusal.shared == nullptr) return refusal.own;
      return refusal.shared->reason;
    }

    std::vector<std::optional<WaitReason>> first_;  // per class
    std::vector<bool> counts_;                      // per class
    std::vector<QueueId> queue_of_;                 // per class whose turn is waited for
    std::vector<std::pair<JobId, size_t>> waiting_for_turn_;  // (representative, class), by job
  };

  static void Consider(Session& session, const JobInfo& job, std::optional<ClusterHeadroom>& headroom,
                       AlikeRefusals& alike) {
    // Most of a backlog: a job alike one refused in this session state is told the same. Such a
    // refusal was made past the queue's own checks (JudgeAfresh), which its facts' queue passes
    // for the whole session, so it is looked up first; the rest, whose reasons take a large
    // frame, is made for the others only.
    std::optional<AlikeRefusals::Facts> facts = alike.FactsOf(job);
    if (Session::SharedWaitReason* same = facts ? alike.Find(*facts) : nullptr) {
      TellAlike(session, job.id, *same, alike.parks_jobs());
      return;
    }
    ConsiderAfresh(session, job, headroom, alike, std::move(facts));
  }

  ABSL_ATTRIBUTE_NOINLINE static void ConsiderAfresh(Session& session, const JobInfo& job,
                                                     std::optional<ClusterHeadroom>& headroom, AlikeRefusals& alike,
                                                     std::optional<AlikeRefusals::Facts> facts) {
    Resources need;
    Refusal refusal = JudgeAfresh(session, job, headroom, alike, std::move(facts), need);
    if (refusal.shared != nullptr) {
      session.SetSharedWaitReason(job.id, *refusal.shared);
      return;
    }
    if (refusal.own) {
      session.SetWaitReason(job.id, *std::move(refusal.own));
      return;
    }
    if (headroom) headroom->Reserve(need);
    LAHAR_LOG(2, "enqueue") << "job " << job.key() << " admitted to queue " << session.queue(job.queue).name;
    session.AdmitJob(job.id, need);
  }

  // The job's refusal in the current state, a refusal alike jobs share when it has `facts`;
  // else none, and `need` is what admitting it promises.
  static Refusal JudgeAfresh(Session& session, const JobInfo& job, const std::optional<ClusterHeadroom>& headroom,
                             AlikeRefusals& alike, std::optional<AlikeRefusals::Facts> facts, Resources& need) {
    const QueueInfo& queue = session.queue(job.queue);
    if (std::optional<WaitReason> why = QueueUnusable(queue)) return {nullptr, std::move(why)};
    if (!queue.open) return {nullptr, WaitReason{.kind = WaitKind::kQueueClosed, .subject = queue.name}};
    // Not the gang's pod count: operators (Volcano's job controller, Kubeflow's training-operator)
    // create a job's pods only once its PodGroup is Inqueue, so admission judges minResources
    // (else the pods there are), as Volcano's enqueue does; allocate holds a job short of pods.
    // The cluster first: when both refuse, the cluster's shortage is the more concrete reason.
    // A job that can never start where it is (a hard network-topology job no domain holds) is
    // not admitted at all: admitted, it would hold its queue's capability for nothing.
    // The cluster's headroom and the hooks' answers change only with the session state.
    need = facts && !facts->Numbered() ? facts->need : AdmissionRequest(session, job);
    std::optional<WaitReason> refusal = session.JobAdmissionRefusal(job, need);
    if (!refusal) refusal = headroom ? headroom->Refusal(job, need) : session.ClusterAdmissionRefusal(job, need);
    if (!refusal && !session.JobEnqueueable(job)) {
      refusal = QueueLimitOrGeneral(session, QueueCheck::kAdmit, job, need, "capability");
    }
    if (!refusal) return {};
    if (facts) {
      Session::SharedWaitReason& shared = alike.Remember(*std::move(facts), *std::move(refusal));
      shared.judged = job.id;  // alike jobs told it may be parked behind this one
      return {&shared, std::nullopt};
    }
    return {nullptr, std::move(refusal)};
  }
};

}  // namespace

std::vector<ArgumentSpec> EnqueueArguments() {
  return {{"overcommit-factor", ArgumentKind::kNumber, "1.2", ArgumentSupport::kIgnored,
           "older Volcano releases; the overcommit plugin's argument now"}};
}

absl::StatusOr<std::unique_ptr<Action>> NewEnqueueAction(const Arguments& arguments) {
  return std::make_unique<EnqueueAction>();
}

}  // namespace lahar
