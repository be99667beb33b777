#include "scheduler/framework/queue_turns.h"

#include <algorithm>

#include "api/strings.h"
#include "scheduler/framework/job_rules.h"

namespace lahar {

QueueTurns::QueueTurns(const Session& session, std::string_view action, std::vector<std::vector<JobId>> jobs_of)
    : session_(session), jobs_of_(std::move(jobs_of)), next_(jobs_of_.size(), 0) {
  for (QueueId q = 0; q < static_cast<QueueId>(jobs_of_.size()); ++q) {
    if (jobs_of_[q].empty()) continue;
    SortInJobOrder(session_, StrCat(action, " ", session_.queue(q).name), jobs_of_[q]);
    queues_.push_back(q);
  }
  std::make_heap(queues_.begin(), queues_.end(), [this](QueueId a, QueueId b) { return After(a, b); });
}

bool QueueTurns::NextQueue(QueueId& queue) {
  if (first_ != kNoId) {
    queue = first_;
    first_ = kNoId;
    return true;
  }
  if (queues_.empty()) return false;
  taken_in_state_ = session_.state_version();
  std::pop_heap(queues_.begin(), queues_.end(), [this](QueueId a, QueueId b) { return After(a, b); });
  queue = queues_.back();
  queues_.pop_back();
  return true;
}

void QueueTurns::PutBack(QueueId queue) {
  if (Remaining(queue).empty()) return;
  if (session_.state_version() == taken_in_state_) {
    first_ = queue;
    return;
  }
  queues_.push_back(queue);
  std::push_heap(queues_.begin(), queues_.end(), [this](QueueId a, QueueId b) { return After(a, b); });
}

}  // namespace lahar
