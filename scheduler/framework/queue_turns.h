// Volcano's turn-taking between queues, shared by enqueue and allocate: the queue first in queue
// order gives its next job in job order, then goes back into the order. Each queue's jobs are
// sorted once (SortInJobOrder): considering or placing one job moves no other in the job order,
// so this is the order a heap per queue would give.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_QUEUE_TURNS_H_
#define LAHAR_SCHEDULER_FRAMEWORK_QUEUE_TURNS_H_

#include <span>
#include <string_view>
#include <vector>

#include "scheduler/framework/session.h"

namespace lahar {

class QueueTurns {
 public:
  // `jobs_of[q]`: the jobs of queue q to hand out; `action` names the lists whose order the
  // sessions' memory keeps.
  QueueTurns(const Session& session, std::string_view action, std::vector<std::vector<JobId>> jobs_of);

  // The queue whose turn it is, taken out of the order; false when no queue has jobs left. Only
  // that queue's place in the order may change until it is put back.
  bool NextQueue(QueueId& queue);
  // The queue's next job in job order; it must have one (Remaining not empty).
  JobId TakeJob(QueueId queue) { return jobs_of_[queue][next_[queue]++]; }
  // Its jobs not taken yet, in job order.
  std::span<const JobId> Remaining(QueueId queue) const {
    return std::span<const JobId>(jobs_of_[queue]).subspan(next_[queue]);
  }
  // Back into the order, when it has jobs left.
  void PutBack(QueueId queue);

 private:
  bool After(QueueId a, QueueId b) const { return session_.QueueOrderLess(session_.queue(b), session_.queue(a)); }

  const Session& session_;
  std::vector<std::vector<JobId>> jobs_of_;
  std::vector<size_t> next_;     // per queue: its first job not taken
  std::vector<QueueId> queues_;  // a heap: std heaps keep the greatest on top, so "after" puts the first there
  // A queue put back in the session state it was taken in (its job was refused, or its tries
  // undone): it is still first in the queue order, which is total and reads that state only, so
  // it is the next queue without a trip through the heap. kNoId: none.
  QueueId first_ = kNoId;
  uint64_t taken_in_state_ = 0;  // Session::state_version when the last queue was taken
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_QUEUE_TURNS_H_
