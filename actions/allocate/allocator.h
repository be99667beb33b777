// The allocate action's run (Allocator): its turns, in allocate.cc, and the jobs it sets aside or
// parks, in set_aside.cc. Internal to the action.
#ifndef LAHAR_ACTIONS_ALLOCATE_ALLOCATOR_H_
#define LAHAR_ACTIONS_ALLOCATE_ALLOCATOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "api/state_hash.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"
#include "scheduler/framework/wait_reasons.h"

namespace lahar::allocate_internal {

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

  void Run();

 private:
  Shape ShapeOf(const TaskInfo& task) const {
    return Shape{task.shape, task.constraint_class, task.gated, &task.request, session_.JobScope(task.job)};
  }

  // ---- Jobs set aside, and jobs parked (set_aside.cc) ----

  // A job set aside is told what the first set aside alike it (`judged`) is told, in every
  // session until either changes: its owner may park it (Session::NoteParkable) when the two
  // are alike in all a session reads of them, and `judged` comes first in job order (then,
  // alike and holding nothing, it always does: whatever looks for the first of the jobs that
  // wait, as backfill does, finds the same job without the parked ones).
  void NoteParkable(const JobInfo& job, JobId judged);

  // The jobs set aside, each told the reason of its shape: each job alike another
  // (AdmittedAlike, so of the same queue) may be parked behind the first of them in job order.
  void NoteSetAsideParkable();

  // A job its queue refused at its turn, having placed nothing (the first of its alike key in
  // `refused_first_`): each job alike it that comes later in its queue's turns is refused as it
  // is, when nothing those turns read can differ from the end of the turns (usage only grows,
  // and so each test below holds at every turn between when it holds at both ends):
  // - its queue is not overused now: no later turn of it stops short;
  // - its first task still finds a node: the queue, not the nodes, refuses alike jobs;
  // - its queue's limit explains the refusal now as it did then: same queue, resource and
  //   usage, so every refusal between says the same.
  std::vector<JobId> RefusedToTheEnd();
  // The same test for one job refused by its queue: refused now as it was told.
  bool RefusedAsTold(JobId job);

  // The turns take `job`: a parked class of its queue whose members all come before it in job
  // order (both tied by every job-order hook, so by creation) had their turns between its
  // representative's and now, so when the representative is refused now as it was told
  // (RefusedAsTold), they were refused alike (usage only grows), whatever comes after: settled.
  void SettlePassedClasses(const JobInfo& job);

  // After the turn of `job`: when it represents a parked class and its refusal is remembered for
  // jobs alike it (alike_refusals_), the state it was refused in. While the state stays that
  // one, the class's members, whose turns come after, are told that refusal by looking it up,
  // whatever it says (a queue's limit, or nodes that a placement before took).
  void NoteRepresentativeRefused(const JobInfo& job);
  bool StillInRefusedState(size_t parked_class) const;

  // The jobs refused later alike a job refused to the end (RefusedToTheEnd) may be parked
  // behind it.
  void NoteRefusedToTheEnd(const std::vector<JobId>& refused_to_the_end);

  // Admitted jobs left out of the session (Session::parked_admitted) are refused as their
  // representative is, when it is set aside or refused by its queue to the end of the turns
  // (RefusedToTheEnd), or refused alike a job that was (the class's first, laid out ahead of
  // it): alike in shapes, queue and everything those read. Else their turns would
  // decide, and the session needs them back: those classes (indices in
  // ClusterSnapshot::parked_representatives) are returned.
  std::vector<int32_t> ParkedClassesNotRefusedAlike(const std::vector<JobId>& refused_to_the_end) const;

  // The jobs set aside fail as they would have at their turn: a shape's reason is made once
  // per pod counts (the jobs alike in them are told it as one, Session::SharedWaitReason), and
  // each may be parked behind the first alike it (NoteSetAsideParkable).
  void TellSetAside();

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
  void SetAsideDoomedJobs(std::vector<std::vector<JobId>>& jobs_of);

  // The tasks that bring a job to its min, as `pods` tasks: `tasks`, each standing for `copies`
  // of its shape. A job without role minimums whose pending tasks are all of one shape is
  // counted without making its list (one task standing for all); any other is TasksToReachMin.
  struct MinTasks {
    int32_t pods = 0;
    int32_t copies = 1;
    absl::InlinedVector<TaskId, 1> tasks;
  };
  MinTasks MinTasksOf(const JobInfo& job) const;

  // For a job without role minimums whose pending tasks are all of one shape: how many of them
  // its min still needs (TasksToReachMin's count) and one of them. nullopt otherwise, or when it
  // needs none.
  std::optional<std::pair<int32_t, TaskId>> MinOfOneShape(const JobInfo& job) const;

  // ---- A job's turn (allocate.cc) ----

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
  void AllocateJob(const JobInfo& job);

  // Tells the job why it waits (and logs it).
  void Wait(const JobInfo& job, WaitReason reason);

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
  std::optional<AlikeKey> AlikeKeyOf(const JobInfo& job);

  // Remembers a job its queue refused at its turn having placed nothing, as the first of its
  // alike key, or as refused alike the first.
  void NoteRefusedInTurn(const JobInfo& job, const AlikeKey& key, const WaitReason& reason);

  // One try at placing the job's min (see AllocateJob); nullopt when it was placed or held,
  // else why it waits, and `placed_nothing` says whether the try placed no task and met no
  // scheduling gate.
  std::optional<WaitReason> TryJob(const JobInfo& job, bool* placed_nothing = nullptr);

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
                  Session::NodeSearch* search = nullptr);

  // Whether FindNode would find `task` a node, else false with `failure` as FindNode sets it.
  // Only asked to name the limit a queue refused the task by, so it leaves the session's node
  // search as it was (where the next search starts, what it has cached): explaining one job
  // changes nowhere another is placed. A shape that found a node finds one again while the
  // session's state is the same: a backlog of jobs the queue refuses costs one search per shape.
  bool SomeNodeTakes(const TaskInfo& task, bool job_placed_nothing, Failure*& failure);

  // The job's placements stay for the rest of the action: so do the failures seen among them.
  void KeepJobFailures();

  // Why a shape fits no node, computed once (a full scan of the nodes). It describes the nodes as
  // they were when first asked, which is when the shape first failed to fit.
  const FitErrors& Explain(const TaskInfo& task, Failure& failure);

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
  std::vector<bool> settled_;  // per Session::parked_admitted class (SettlePassedClasses)
  static constexpr uint64_t kNoState = ~uint64_t{0};
  std::vector<uint64_t> refused_in_state_;  // per Session::parked_admitted class, or kNoState
  std::vector<std::unique_ptr<Statement>> held_;
};

}  // namespace lahar::allocate_internal

#endif  // LAHAR_ACTIONS_ALLOCATE_ALLOCATOR_H_
