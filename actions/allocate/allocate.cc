#include "actions/allocate/allocate.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "api/log.h"
#include "api/state_hash.h"
#include "api/status_macros.h"
#include "api/strings.h"
#include "scheduler/framework/job_rules.h"
#include "scheduler/framework/queue_turns.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"
#include "scheduler/framework/wait_reasons.h"

namespace lahar {
namespace {

// What decides where a task can go: its constraints and its requests. Two tasks of one shape
// fit the same nodes. `request` points into the session's task table, which outlives the action.
struct Shape {
  int32_t number;  // TaskInfo::shape: equal numbers are equal classes and requests
  int32_t constraint_class;
  bool gated;  // scheduling gates: such a task fits no node, and is explained as gated
  const Resources* request;
  const std::vector<NodeId>* scope;  // the job's domain (Session::JobScope), null: every node
};

// By the cache's shape number when the task has one (a number, not its requests, is hashed: a
// backlog asks once per job), else by the fields.
struct ShapeHash {
  size_t operator()(const Shape& s) const {
    StateHash hash;
    hash.Add(s.number).Add(s.gated).Add(reinterpret_cast<uint64_t>(s.scope));
    if (s.number == kNoShape) hash.Add(s.constraint_class).Add(*s.request);
    return static_cast<size_t>(hash.value());
  }
};

struct ShapeEq {
  bool operator()(const Shape& a, const Shape& b) const {
    if (a.number != b.number || a.gated != b.gated || a.scope != b.scope) return false;
    return a.number != kNoShape || (a.constraint_class == b.constraint_class && *a.request == *b.request);
  }
};

// Why a shape fits no node: the fit errors of a full scan of the nodes (FitErrors::gated when
// the pod's scheduling gates refused it). Unset until first explained.
struct Failure {
  std::optional<FitErrors> errors;
};

// One run of the action. Invariants:
// - every job is visited at most once, when its queue comes up;
// - between two jobs the session holds only committed work and held statements, and neither is
//   undone before the run ends: measured between jobs, node usage only grows. Within a job it
//   grows too, until the job's statement is discarded, which undoes only that job's placements.
class Allocator {
 public:
  explicit Allocator(Session& session) : session_(session), alike_refusals_(session) {}

  void Run() {
    for (const NodeInfo& node : session_.nodes()) {
      if (!node.releasing.IsZero()) {
        any_releasing_ = true;
        break;
      }
    }

    // Jobs to visit, per queue: admitted, valid, with pending pods and short of their min.
    std::vector<std::vector<JobId>> jobs_of(session_.queues().size());
    for (JobId id : session_.LiveJobs()) {
      const JobInfo& job = session_.job(id);
      if (!IsAdmitted(job) || job.Count(TaskStatus::kPending) == 0) continue;
      // Fast path for the common case; jobs with role minimums are settled by TasksToReachMin.
      if (job.min_task_member.empty() &&
          job.ReadyCount() + job.Count(TaskStatus::kPipelined) >= job.min_available) {
        continue;
      }
      if (!QueueUsable(session_.queue(job.queue))) {
        session_.SetWaitReason(job.id, *QueueUnusable(session_.queue(job.queue)));
        continue;
      }
      // The session's memo answers most jobs; only an invalid one is asked why.
      if (!session_.JobValid(job)) {
        session_.SetWaitReason(job.id, *session_.JobInvalidReason(job));
        continue;
      }
      jobs_of[job.queue].push_back(job.id);
    }

    SetAsideDoomedJobs(jobs_of);

    // Only the queue whose turn it is changes its share until it is put back.
    QueueTurns turns(session_, "allocate", std::move(jobs_of));
    QueueId q = kNoId;
    while (turns.NextQueue(q)) {
      const QueueInfo& queue = session_.queue(q);
      if (session_.Overused(queue)) {
        LAHAR_LOG(2, "allocate") << "queue " << queue.name << " is overused; " << turns.Remaining(q).size()
                                 << " jobs wait";
        for (JobId j : turns.Remaining(q)) {
          // What it asks beyond what it holds: its minResources when set, else its pods' requests.
          const JobInfo& job = session_.job(j);
          Resources need = (job.min_resources.IsZero() ? job.request : job.min_resources) - job.allocated;
          need.ClampNegativeToZero();
          session_.SetWaitReason(j, QueueLimitOrGeneral(session_, QueueCheck::kOverused, job, need, "deserved share"));
        }
        continue;  // not put back: its jobs all have their reason
      }
      AllocateJob(session_.job(turns.TakeJob(q)));
      turns.PutBack(q);
    }

    // At the most the turns placed: the refusals that stand for every later turn are known.
    const std::vector<JobId> refused_to_the_end = RefusedToTheEnd();
    if (!ParkedClassesRefusedAlike(refused_to_the_end)) {
      for (auto it = held_.rbegin(); it != held_.rend(); ++it) (*it)->Discard();
      return session_.NeedEveryJob();
    }
    NoteRefusedToTheEnd(refused_to_the_end);

    // The jobs set aside fail as they would have at their turn: a shape's reason is made once
    // per pod counts (the jobs alike in them are told it as one, Session::SharedWaitReason).
    struct Told {
      int32_t pods, of;
      Session::SharedWaitReason shared;
    };
    absl::flat_hash_map<Shape, std::vector<Told>, ShapeHash, ShapeEq> reasons_of;
    for (const DoomedJob& d : doomed_) {
      const JobInfo& job = session_.job(d.job);
      std::vector<Told>& told = reasons_of[d.shape];
      auto same = std::find_if(told.begin(), told.end(),
                               [&](const Told& t) { return t.pods == d.pods && t.of == job.min_available; });
      if (same == told.end()) {
        WaitReason reason = told.empty() ? NoFitReason(job, d.pods, *unplaceable_.at(d.shape).errors)
                                         : told.front().shared.reason;
        reason.pods = d.pods;
        reason.of = job.min_available;
        same = told.insert(told.end(), Told{d.pods, job.min_available, {std::move(reason)}});
        same->shared.judged = job.id;
      }
      LAHAR_LOG(2, "allocate") << "job " << job.key() << ": " << WaitReasonText(same->shared.reason);
      session_.SetSharedWaitReason(job.id, same->shared);
    }
    NoteSetAsideParkable();

    // Held gangs bind in a later session, once the resources being released are free; what
    // they held returns to the session for the actions that follow.
    for (auto it = held_.rbegin(); it != held_.rend(); ++it) (*it)->Discard();
    held_.clear();
  }

 private:
  Shape ShapeOf(const TaskInfo& task) const {
    return Shape{task.shape, task.constraint_class, task.gated, &task.request, session_.JobScope(task.job)};
  }

  // A job set aside is told what the first set aside alike it (`judged`) is told, in every
  // session until either changes: its owner may park it (Session::NoteParkable) when the two
  // are alike in all a session reads of them, and `judged` comes first in job order (then,
  // alike and holding nothing, it always does: whatever looks for the first of the jobs that
  // wait, as backfill does, finds the same job without the parked ones).
  void NoteParkable(const JobInfo& job, JobId judged) {
    if (judged == job.id || !session_.wait_memo()->parks_jobs()) return;
    const JobInfo& representative = session_.job(judged);
    if (ParkableWhileAdmitted(session_, job) && ParkableWhileAdmitted(session_, representative) &&
        AdmittedAlike(session_, job, representative) && session_.JobOrderLess(representative, job)) {
      session_.NoteParkable(job.id, judged);
    }
  }

  // The jobs set aside, each told the reason of its shape: each job alike another
  // (AdmittedAlike, so of the same queue) may be parked behind the first of them in job order.
  void NoteSetAsideParkable() {
    if (doomed_.size() < 2 || !session_.wait_memo()->parks_jobs()) return;
    std::vector<JobId> jobs(doomed_.size());
    std::transform(doomed_.begin(), doomed_.end(), jobs.begin(), [](const DoomedJob& d) { return d.job; });
    // Alike jobs have equal buckets: a job is compared with the classes of its bucket only.
    using Bucket = std::tuple<QueueId, int32_t, int32_t, size_t, int32_t>;
    absl::flat_hash_map<Bucket, std::vector<int32_t>> classes_of;
    std::vector<JobId> first;                     // per class, in job order
    std::vector<int32_t> class_of(jobs.size(), -1);  // per job
    for (size_t i = 0; i < jobs.size(); ++i) {
      const JobInfo& job = session_.job(jobs[i]);
      if (!ParkableWhileAdmitted(session_, job)) continue;
      std::vector<int32_t>& classes = classes_of[Bucket{job.queue, job.priority, job.min_available, job.tasks.size(),
                                                         session_.task(job.tasks.front()).shape}];
      auto same = std::find_if(classes.begin(), classes.end(),
                               [&](int32_t c) { return AdmittedAlike(session_, session_.job(first[c]), job); });
      if (same == classes.end()) {
        class_of[i] = static_cast<int32_t>(first.size());
        classes.push_back(class_of[i]);
        first.push_back(job.id);
        continue;
      }
      class_of[i] = *same;
      if (session_.JobOrderLess(job, session_.job(first[*same]))) first[*same] = job.id;
    }
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (class_of[i] >= 0) NoteParkable(session_.job(jobs[i]), first[class_of[i]]);
    }
  }

  // A job its queue refused at its turn, having placed nothing (the first of its alike key in
  // `refused_first_`): each job alike it that comes later in its queue's turns is refused as it
  // is, when nothing those turns read can differ from the end of the turns (usage only grows,
  // and so each test below holds at every turn between when it holds at both ends):
  // - its queue is not overused now: no later turn of it stops short;
  // - its first task still finds a node: the queue, not the nodes, refuses alike jobs;
  // - its queue's limit explains the refusal now as it did then: same queue, resource and
  //   usage, so every refusal between says the same.
  std::vector<JobId> RefusedToTheEnd() {
    std::vector<JobId> refused;
    for (const auto& [key, first] : refused_first_) {
      const JobInfo& job = session_.job(first);
      const WaitReason* told = session_.ToldWaitReason(first);
      if (told == nullptr || told->kind != WaitKind::kQueueLimit || session_.Overused(session_.queue(job.queue))) {
        continue;
      }
      const std::vector<TaskId> tasks = TasksToReachMin(session_, job);
      Failure* failure = nullptr;
      if (tasks.empty() || !SomeNodeTakes(session_.task(tasks.front()), /*job_placed_nothing=*/true, failure)) continue;
      Resources need;
      for (TaskId t : tasks) need += session_.task(t).request;
      if (QueueLimitOrGeneral(session_, QueueCheck::kAllocate, job, need, "deserved share or capability") == *told) {
        refused.push_back(first);
      }
    }
    std::sort(refused.begin(), refused.end());
    return refused;
  }

  // The jobs refused later alike a job refused to the end (RefusedToTheEnd) may be parked
  // behind it.
  void NoteRefusedToTheEnd(const std::vector<JobId>& refused_to_the_end) {
    for (const auto& [member, first] : refused_alike_) {
      if (std::binary_search(refused_to_the_end.begin(), refused_to_the_end.end(), first)) {
        NoteParkable(session_.job(member), first);
      }
    }
  }

  // Admitted jobs left out of the session (Session::parked_admitted) are refused as their
  // representative is, when it is set aside or refused by its queue to the end of the turns
  // (RefusedToTheEnd): alike in shapes, queue and everything those read. Else their turns would
  // decide, and the session needs every job.
  bool ParkedClassesRefusedAlike(const std::vector<JobId>& refused_to_the_end) const {
    const std::vector<Session::ParkedAdmitted>& parked = session_.parked_admitted();
    return std::all_of(parked.begin(), parked.end(), [&](const Session::ParkedAdmitted& c) {
      return std::binary_search(refused_to_the_end.begin(), refused_to_the_end.end(), c.representative) ||
             std::any_of(doomed_.begin(), doomed_.end(), [&c](const DoomedJob& d) { return d.job == c.representative; });
    });
  }

  // A job whose whole min is of shapes that fit no node now, idle or releasing: `pods` tasks,
  // the first of shape `shape`.
  struct DoomedJob {
    JobId job;
    int32_t pods;
    Shape shape;
  };

  // Shapes that fit no node when the action starts fit none until it ends (usage only grows, see
  // FindNode): each is explained here, once, for every job that asks, so that a job's reason
  // does not depend on which job asked first. A job whose whole min is of such shapes places
  // nothing whenever its turn comes, and its reason is known: with the sessions' memory on, it
  // is set aside from the queues' heaps and told its reason at the end, unless its queue is
  // overused or could become so during the run (then its turn decides between the overused
  // reason and no-fit). Jobs confined to network domains, gated and ready ones keep their turn.
  void SetAsideDoomedJobs(std::vector<std::vector<JobId>>& jobs_of) {
    const bool set_aside = session_.wait_memo() != nullptr && session_.wait_memo()->enabled();
    std::vector<std::vector<DoomedJob>> doomed_of(jobs_of.size());
    std::vector<Resources> growth(jobs_of.size());  // what each queue's other jobs may place
    absl::flat_hash_map<Shape, bool, ShapeHash, ShapeEq> fits_nowhere;
    // The same answers, for numbered shapes over every node (most tasks), by number: a lookup
    // per job of a backlog. -1: not asked yet.
    std::vector<int8_t> nowhere_by_number;
    auto nowhere = [&](const TaskInfo& task) {
      const Shape shape = ShapeOf(task);
      int8_t* by_number = nullptr;
      if (shape.number != kNoShape && shape.scope == nullptr) {
        const auto index = static_cast<size_t>(shape.number) * 2 + (shape.gated ? 1 : 0);
        if (index >= nowhere_by_number.size()) nowhere_by_number.resize(index + 1, -1);
        by_number = &nowhere_by_number[index];
        if (*by_number >= 0) return *by_number == 1;
      }
      auto [it, inserted] = fits_nowhere.try_emplace(shape, false);
      if (!inserted) return it->second;
      // Whether a search would find a node, which leaves the actions' shared search state as it was.
      bool none = !session_.SomeNodeFits(task, Placement::kIdle);
      if (none && any_releasing_) none = !session_.SomeNodeFits(task, Placement::kFutureIdle);
      if (none) {
        Failure failure;
        failure.errors.emplace();
        session_.FindBestNode(task, Placement::kIdle, /*elastic=*/false, &*failure.errors);
        unplaceable_.try_emplace(shape, std::move(failure));
      }
      it->second = none;
      if (by_number != nullptr) *by_number = none ? 1 : 0;
      return none;
    };
    for (QueueId q = 0; q < static_cast<QueueId>(jobs_of.size()); ++q) {
      std::vector<JobId>& jobs = jobs_of[q];
      auto kept = jobs.begin();
      for (JobId j : jobs) {
        const JobInfo& job = session_.job(j);
        const MinTasks min = MinTasksOf(job);
        auto fits_nowhere_ungated = [&](TaskId t) { return !session_.task(t).gated && nowhere(session_.task(t)); };
        const bool doomed = !min.tasks.empty() &&
                            std::all_of(min.tasks.begin(), min.tasks.end(), fits_nowhere_ungated) &&
                            !session_.JobReady(job) && !session_.JobDomains(job, /*for_eviction=*/false);
        if (doomed && set_aside) {
          doomed_of[q].push_back({j, min.pods, ShapeOf(session_.task(min.tasks.front()))});
          continue;
        }
        if (!doomed) {
          for (TaskId t : min.tasks) {
            for (int32_t i = 0; i < min.copies; ++i) growth[q] += session_.task(t).request;
          }
        }
        *kept++ = j;
      }
      jobs.erase(kept, jobs.end());
    }
    const std::vector<bool> may_become_overused = session_.MayBecomeOverused(growth);
    for (QueueId q = 0; q < static_cast<QueueId>(jobs_of.size()); ++q) {
      if (doomed_of[q].empty()) continue;
      if (may_become_overused[q] || session_.Overused(session_.queue(q))) {
        for (const DoomedJob& d : doomed_of[q]) jobs_of[q].push_back(d.job);
      } else {
        doomed_.insert(doomed_.end(), doomed_of[q].begin(), doomed_of[q].end());
      }
    }
  }

  // The tasks that bring a job to its min, as `pods` tasks: `tasks`, each standing for `copies`
  // of its shape. A job without role minimums whose pending tasks are all of one shape is
  // counted without making its list (one task standing for all); any other is TasksToReachMin.
  struct MinTasks {
    int32_t pods = 0;
    int32_t copies = 1;
    absl::InlinedVector<TaskId, 1> tasks;
  };
  MinTasks MinTasksOf(const JobInfo& job) const {
    if (std::optional<std::pair<int32_t, TaskId>> one = MinOfOneShape(job)) {
      return MinTasks{one->first, one->first, {one->second}};
    }
    const std::vector<TaskId>& tasks = TasksToReachMin(session_, job);
    return MinTasks{static_cast<int32_t>(tasks.size()), 1, {tasks.begin(), tasks.end()}};
  }

  // For a job without role minimums whose pending tasks are all of one shape: how many of them
  // its min still needs (TasksToReachMin's count) and one of them. nullopt otherwise, or when it
  // needs none.
  std::optional<std::pair<int32_t, TaskId>> MinOfOneShape(const JobInfo& job) const {
    if (!job.min_task_member.empty()) return std::nullopt;
    const int32_t deficit = job.min_available - job.ReadyCount() - job.Count(TaskStatus::kPipelined);
    const int32_t pods = std::min(deficit, job.Count(TaskStatus::kPending));
    if (pods <= 0) return std::nullopt;
    const TaskInfo* first = nullptr;
    for (TaskId t : job.tasks) {
      const TaskInfo& task = session_.task(t);
      if (task.status != TaskStatus::kPending) continue;
      if (first == nullptr) {
        first = &task;
      } else if ((task.shape == kNoShape || task.shape != first->shape) &&  // one shape: one class, request
                 (task.constraint_class != first->constraint_class || task.gated != first->gated ||
                  !(task.request == first->request))) {
        return std::nullopt;
      }
    }
    return std::make_pair(pods, first->id);
  }

  // Places the tasks that complete the job's min, then settles the statement:
  // - the job is ready (gang plugin: min reached) -> commit: allocated tasks bind;
  // - every needed task found a node and some of them only on resources being released
  //   (pipelined), and the job counts as pipelined -> hold the statement until the end of the
  //   action, so that jobs after it cannot take what it will need, then discard it: a gang never
  //   binds part of itself, and in a later session, once the releasing pods are gone, it fits
  //   on idle resources and binds whole. (Volcano keeps such a statement uncommitted for the
  //   rest of the session in the same way.) Evicting for a gang is the preempt actions' work;
  //   they pipeline the gang themselves;
  // - otherwise -> discard, and record why on the job: its gated pods when scheduling gates kept
  //   any of them from every node (nothing else matters until the gates go), else the fit errors
  //   of the first task that found no node, or the queue's limit.
  // After the first task that fits nowhere the remaining ones are still tried, so the message
  // counts every pod of the min that found no node (tasks of a shape that already failed are not
  // searched again).
  //
  // A job with a network-topology constraint (Session::JobDomains) is tried in each domain in
  // turn, its searches confined to it, until one holds its min; a reason that no other domain
  // would change (its queue's limit, its gates) ends the tries.
  void AllocateJob(const JobInfo& job) {
    std::optional<DomainCandidates> where = session_.JobDomains(job, /*for_eviction=*/false);
    if (!where) {
      const std::optional<AlikeKey> alike = AlikeKeyOf(job);
      if (Session::SharedWaitReason* same = alike ? alike_refusals_.Find(*alike) : nullptr) {
        session_.SetSharedWaitReason(job.id, *same);
        NoteRefusedInTurn(job, *alike, same->reason);
        return;
      }
      bool placed_nothing = false;
      if (std::optional<WaitReason> why = TryJob(job, &placed_nothing)) {
        if (alike && placed_nothing) {
          Session::SharedWaitReason& shared = alike_refusals_.Remember(*alike, *std::move(why));
          session_.SetSharedWaitReason(job.id, shared);
          NoteRefusedInTurn(job, *alike, shared.reason);
          return;
        }
        Wait(job, *std::move(why));
      }
      return;
    }
    while (const std::vector<NodeId>* domain = where->next()) {
      session_.SetJobScope(job.id, domain);
      std::optional<WaitReason> why = TryJob(job);
      if (!why) {
        if (!where->confine) session_.SetJobScope(job.id, nullptr);
        return;
      }
      if (why->kind != WaitKind::kNoFit) {
        session_.SetJobScope(job.id, nullptr);
        Wait(job, *std::move(why));
        return;
      }
    }
    session_.SetJobScope(job.id, nullptr);
    if (where->anywhere_after) {
      if (std::optional<WaitReason> why = TryJob(job)) Wait(job, *std::move(why));
      return;
    }
    Wait(job, where->none_fits());
  }

  void Wait(const JobInfo& job, WaitReason reason) {
    LAHAR_LOG(2, "allocate") << "job " << job.key() << ": " << WaitReasonText(reason);
    session_.SetWaitReason(job.id, std::move(reason));
  }

  // Jobs alike in all a refused try reads of them (AlikeKeyOf), for the session state the
  // refusals were made in: a try that placed nothing and hit a gate searched no node anew once
  // its shapes' first try had failed (those failures are kept for the action), so an alike job
  // tried in the same state is refused alike, and a backlog of them is told it as one.
  struct AlikeKey {
    uint64_t shapes;  // MinShapesHash: the shapes of the tasks it lacks, in task order
    QueueId queue;
    int32_t priority;
    int32_t min_available;
    int32_t lacking;  // how many tasks it lacks
    bool operator==(const AlikeKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const AlikeKey& k) {
      return H::combine(std::move(h), k.shapes, k.queue, k.priority, k.min_available, k.lacking);
    }
  };
  // The job's key when its refusal may be shared: with the sessions' memory, a job of pending
  // tasks only and no role minimums (so that nothing of it is ready or placed before a try, and
  // its readiness reads counts alone), whose lacking tasks have numbered shapes.
  std::optional<AlikeKey> AlikeKeyOf(const JobInfo& job) {
    if (session_.wait_memo() == nullptr || !session_.wait_memo()->enabled()) return std::nullopt;
    if (!job.min_task_member.empty() || job.Count(TaskStatus::kPending) != static_cast<int32_t>(job.tasks.size())) {
      return std::nullopt;
    }
    const std::vector<TaskId>& lacking = TasksToReachMin(session_, job);
    if (lacking.empty()) return std::nullopt;
    for (TaskId t : lacking) {
      if (session_.task(t).shape == kNoShape) return std::nullopt;
    }
    return AlikeKey{MinShapesHash(session_, job), job.queue, job.priority, job.min_available,
                    static_cast<int32_t>(lacking.size())};
  }

  // Remembers a job its queue refused at its turn having placed nothing, as the first of its
  // alike key, or as refused alike the first.
  void NoteRefusedInTurn(const JobInfo& job, const AlikeKey& key, const WaitReason& reason) {
    if (reason.kind != WaitKind::kQueueLimit || !session_.wait_memo()->parks_jobs()) return;
    auto [first, inserted] = refused_first_.try_emplace(key, job.id);
    if (!inserted) refused_alike_.emplace_back(job.id, first->second);
  }

  // One try at placing the job's min (see AllocateJob); nullopt when it was placed or held,
  // else why it waits, and `placed_nothing` says whether the try placed no task and met no
  // scheduling gate.
  std::optional<WaitReason> TryJob(const JobInfo& job, bool* placed_nothing = nullptr) {
    const std::vector<TaskId> tasks = TasksToReachMin(session_, job);
    if (tasks.empty()) return std::nullopt;
    const QueueInfo& queue = session_.queue(job.queue);
    auto stmt = std::make_unique<Statement>(session_);
    int placed = 0;
    int pipelined = 0;
    bool queue_refused = false;                // once some node could have taken the task
    std::optional<FitErrors> why;              // the first unplaced task's fit errors
    std::vector<const TaskInfo*> gated;        // unplaced for their scheduling gates: the reason
    std::vector<NodeId> pipelined_on;
    auto note = [&](const TaskInfo& task, Failure& failure) {
      const FitErrors& errors = Explain(task, failure);
      if (errors.gated()) {
        gated.push_back(&task);
      } else if (!why) {
        why = errors;
      }
    };
    for (TaskId id : tasks) {
      const TaskInfo& task = session_.task(id);
      bool pipeline = false;
      Failure* failure = nullptr;
      if (!gated.empty()) {
        // The job waits for its gates: the rest of its min is only searched to count theirs.
        if (FindNode(task, stmt->empty(), pipeline, failure) == kNoId) note(task, *failure);
        continue;
      }
      if (!session_.Allocatable(queue, task)) {
        // A queue's deserved share is at most the cluster, so a full cluster trips the queue
        // check first. Name the queue only when some node could have taken the task.
        if (!why) {
          if (SomeNodeTakes(task, stmt->empty(), failure)) {
            queue_refused = true;
          } else {
            note(task, *failure);
          }
        }
        if (gated.empty()) break;
        continue;
      }
      NodeId node = FindNode(task, stmt->empty(), pipeline, failure);
      if (node == kNoId) {
        note(task, *failure);
        continue;
      }
      if (pipeline) {
        stmt->Pipeline(id, node);
        pipelined_on.push_back(node);
        ++pipelined;
      } else {
        stmt->Allocate(id, node);
        ++placed;
      }
    }
    const int unplaced = static_cast<int>(tasks.size()) - placed - pipelined;

    if (session_.JobReady(job)) {
      LAHAR_LOG(2, "allocate") << "job " << job.key() << ": " << placed << " pods bind, " << pipelined
                               << " pipelined";
      stmt->Commit();
      KeepJobFailures();
      return std::nullopt;
    }
    if (unplaced == 0 && pipelined > 0 && session_.JobPipelined(job)) {
      LAHAR_LOG(2, "allocate") << "job " << job.key() << ": held, " << pipelined
                               << " pods wait for resources being released";
      session_.SetWaitReason(job.id,
                             TerminatingForReason(session_, job, pipelined, ReleasingTasksOn(session_, pipelined_on)));
      held_.push_back(std::move(stmt));
      KeepJobFailures();
      return std::nullopt;
    }
    stmt->Discard();
    if (placed_nothing != nullptr) *placed_nothing = placed == 0 && pipelined == 0 && gated.empty();
    WaitReason reason;
    if (!gated.empty()) {
      // Nothing else can start the job before its gates are removed: that is why it waits.
      reason = SchedulingGatesReason(gated);
    } else if (queue_refused) {
      // Measured against the whole min the job still lacks, now that its placements are undone.
      Resources need;
      for (TaskId id : tasks) need += session_.task(id).request;
      reason = QueueLimitOrGeneral(session_, QueueCheck::kAllocate, job, need, "deserved share or capability");
    } else if (unplaced > 0) {
      reason = NoFitReason(job, unplaced, *why);
    } else {
      reason = WaitReason{.kind = WaitKind::kInvalid, .subject = "NotEnoughPods",
                          .detail = StrCat("gang not ready with ", job.ReadyCount() + placed + pipelined, "/",
                                           job.min_available, " pods: too few pending pods")};
    }
    job_unplaceable_.clear();
    return reason;
  }

  // A node for `task` on idle resources, else on resources being released (`pipeline` = true),
  // else kNoId, and then `failure` points at the shape's memo entry (see Explain), valid until
  // the next insertion into a memo.
  //
  // A shape that fit no node keeps fitting none while usage only grows, because every predicate
  // (resources, pod count, selector, affinity, taints, cordon, gates) refuses a fuller node whenever it
  // refused an emptier one. So a failure is remembered: for the rest of the action when the job
  // had placed nothing yet (`job_placed_nothing`: the usage was that of committed and held work,
  // see the class comment), else for the rest of this job only, and for the rest of the action
  // if the job's placements then stay. A predicate that is not monotone in node usage
  // (inter-pod affinity) would need this memo dropped.
  // `search`: the node search to go on with, null for the session's.
  NodeId FindNode(const TaskInfo& task, bool job_placed_nothing, bool& pipeline, Failure*& failure,
                  Session::NodeSearch* search = nullptr) {
    const Shape shape = ShapeOf(task);
    for (auto* memo : {&unplaceable_, &job_unplaceable_}) {
      if (memo->empty()) continue;
      auto it = memo->find(shape);
      if (it != memo->end()) {
        failure = &it->second;
        return kNoId;
      }
    }
    NodeId node = session_.FindBestNode(task, Placement::kIdle, /*elastic=*/false, nullptr, search);
    if (node != kNoId) {
      pipeline = false;
      return node;
    }
    // Without releasing pods the future idle resources are no larger than the idle ones.
    if (any_releasing_) {
      node = session_.FindBestNode(task, Placement::kFutureIdle, /*elastic=*/false, nullptr, search);
      if (node != kNoId) {
        pipeline = true;
        return node;
      }
    }
    auto& memo = job_placed_nothing ? unplaceable_ : job_unplaceable_;
    auto [it, inserted] = memo.try_emplace(shape);
    failure = &it->second;
    return kNoId;
  }

  // Whether FindNode would find `task` a node, else false with `failure` as FindNode sets it.
  // Only asked to name the limit a queue refused the task by, so it leaves the session's node
  // search as it was (where the next search starts, what it has cached): explaining one job
  // changes nowhere another is placed. A shape that found a node finds one again while the
  // session's state is the same: a backlog of jobs the queue refuses costs one search per shape.
  bool SomeNodeTakes(const TaskInfo& task, bool job_placed_nothing, Failure*& failure) {
    const Shape shape = ShapeOf(task);
    const bool numbered = task.shape != kNoShape;
    if (numbered) {
      auto it = taken_in_state_.find(shape);
      if (it != taken_in_state_.end() && it->second == session_.state_version()) return true;
    }
    Session::NodeSearch probe;
    bool pipeline = false;
    if (FindNode(task, job_placed_nothing, pipeline, failure, &probe) == kNoId) return false;
    if (numbered) taken_in_state_[shape] = session_.state_version();
    return true;
  }

  // The job's placements stay for the rest of the action: so do the failures seen among them.
  void KeepJobFailures() {
    for (auto& [shape, summary] : job_unplaceable_) unplaceable_.try_emplace(shape, std::move(summary));
    job_unplaceable_.clear();
  }

  // Why a shape fits no node, computed once (a full scan of the nodes). It describes the nodes as
  // they were when first asked, which is when the shape first failed to fit.
  const FitErrors& Explain(const TaskInfo& task, Failure& failure) {
    if (!failure.errors) {
      failure.errors.emplace();
      session_.FindBestNode(task, Placement::kIdle, /*elastic=*/false, &*failure.errors);
    }
    return *failure.errors;
  }

  Session& session_;
  bool any_releasing_ = false;
  // Shapes that fit no node (with why, once explained): for the whole action, and for the job
  // being placed.
  using ShapeMemo = absl::flat_hash_map<Shape, Failure, ShapeHash, ShapeEq>;
  ShapeMemo unplaceable_;
  ShapeMemo job_unplaceable_;
  // Numbered shapes SomeNodeTakes found a node for, with the session state it found it in.
  absl::flat_hash_map<Shape, uint64_t, ShapeHash, ShapeEq> taken_in_state_;
  std::vector<DoomedJob> doomed_;  // set aside (SetAsideDoomedJobs)
  RefusalsInState<AlikeKey> alike_refusals_;  // of alike jobs (AlikeKeyOf)
  // Jobs their queue refused at their turn (NoteRefusedInTurn): the first of each alike key, and
  // the later ones with that first.
  absl::flat_hash_map<AlikeKey, JobId> refused_first_;
  std::vector<std::pair<JobId, JobId>> refused_alike_;
  std::vector<std::unique_ptr<Statement>> held_;
};

class AllocateAction : public Action {
 public:
  std::string_view Name() const override { return "allocate"; }
  void Execute(Session& session) override { Allocator(session).Run(); }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Action>> NewAllocateAction(const Arguments& arguments) {
  RETURN_IF_ERROR(ValidateNodeSearchArguments(arguments));
  return std::make_unique<AllocateAction>();
}

}  // namespace lahar
