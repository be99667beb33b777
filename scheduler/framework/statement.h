// A statement groups a job's placements and evictions so that they take effect together or
// not at all (gang scheduling): Commit turns them into bindings and evictions, Discard undoes
// them in reverse order.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_STATEMENT_H_
#define LAHAR_SCHEDULER_FRAMEWORK_STATEMENT_H_

#include <string>
#include <vector>

#include "scheduler/framework/session.h"

namespace lahar {

class Statement {
 public:
  explicit Statement(Session& session) : session_(session) {}
  // An uncommitted statement is discarded: nothing half-done survives a scope.
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Pending -> Allocated on `node` (uses idle resources).
  void Allocate(TaskId task, NodeId node);
  // Pending -> Pipelined on `node` (uses resources that evictions are releasing).
  void Pipeline(TaskId task, NodeId node);
  // Placed -> Releasing; `reason` is carried to the eviction.
  void Evict(TaskId task, std::string reason);

  // Allocated tasks become Binding and are recorded as bindings; evictions are recorded.
  // Pipelined tasks keep their promise for the rest of the session.
  void Commit();
  // Undoes every operation, last first.
  void Discard();

  bool empty() const { return operations_.empty(); }
  size_t size() const { return operations_.size(); }

 private:
  enum class Kind { kAllocate, kPipeline, kEvict };
  struct Operation {
    Kind kind;
    TaskId task;
    NodeId node;
    TaskStatus previous;
    std::string reason;
  };

  // Before each operation: notes the versions the session's state had before the first one.
  void Record(TaskId task);

  Session& session_;
  std::vector<Operation> operations_;
  // For Discard to give the session back its versions (Session::RestoreVersions): those before
  // the first operation, the state's after the last, and whether another change came between.
  uint64_t state_before_ = 0;
  uint64_t state_after_ = 0;
  uint64_t job_changes_before_ = 0;
  bool uninterrupted_ = true;
  std::vector<std::pair<JobId, uint64_t>> jobs_before_;
};

// Evictions made only for the jobs, queues and plugins to be asked about as they would be with
// those pods gone (RankVictims), all undone when it ends. It leaves the session as a discarded
// statement of the same evictions would (versions given back, task state changes counted, cached
// node searches forgotten), but never touches the nodes nor marks the jobs changed, so the next
// snapshot need not lay them out again. Only for changes undone before anything reads the nodes.
class ScratchEvictions {
 public:
  explicit ScratchEvictions(Session& session) : session_(session) {}
  ~ScratchEvictions();
  ScratchEvictions(const ScratchEvictions&) = delete;
  ScratchEvictions& operator=(const ScratchEvictions&) = delete;

  // Placed -> Releasing, on the node it stays on.
  void Evict(TaskId task);

 private:
  struct Evicted {
    TaskId task;
    TaskStatus previous;
    uint64_t job_version;  // its job's tasks version before
  };
  Session& session_;
  std::vector<Evicted> evicted_;
  uint64_t state_before_ = 0;
  uint64_t state_after_ = 0;  // after its last eviction
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_STATEMENT_H_
