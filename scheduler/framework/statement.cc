#include "scheduler/framework/statement.h"

#include "api/log.h"

namespace lahar {

Statement::~Statement() { Discard(); }

void Statement::Record(TaskId task) {
  if (operations_.empty()) {
    state_before_ = session_.state_version();
    job_changes_before_ = session_.job_changes();
    uninterrupted_ = true;
    jobs_before_.clear();
  } else if (session_.state_version() != state_after_) {
    uninterrupted_ = false;
  }
  const JobId job = session_.task(task).job;
  for (const auto& [j, version] : jobs_before_) {
    if (j == job) return;
  }
  jobs_before_.emplace_back(job, session_.job_tasks_version(job));
}

void Statement::Allocate(TaskId task, NodeId node) {
  Record(task);
  operations_.push_back({Kind::kAllocate, task, node, session_.task(task).status, ""});
  session_.SetTaskStatus(task, TaskStatus::kAllocated, node);
  state_after_ = session_.state_version();
}

void Statement::Pipeline(TaskId task, NodeId node) {
  Record(task);
  operations_.push_back({Kind::kPipeline, task, node, session_.task(task).status, ""});
  session_.SetTaskStatus(task, TaskStatus::kPipelined, node);
  state_after_ = session_.state_version();
}

void Statement::Evict(TaskId task, std::string reason) {
  Record(task);
  const TaskInfo& info = session_.task(task);
  operations_.push_back({Kind::kEvict, task, info.node, info.status, std::move(reason)});
  session_.SetTaskStatus(task, TaskStatus::kReleasing, info.node);
  state_after_ = session_.state_version();
}

void Statement::Commit() {
  for (Operation& op : operations_) {
    switch (op.kind) {
      case Kind::kAllocate:
        session_.SetTaskStatus(op.task, TaskStatus::kBinding, op.node);
        session_.RecordBinding(op.task, op.node);
        LAHAR_LOG(2, "statement") << "bind " << session_.task(op.task).key() << " to "
                                  << session_.node(op.node).name();
        break;
      case Kind::kPipeline:
        break;
      case Kind::kEvict:
        session_.RecordEviction(op.task, std::move(op.reason));
        LAHAR_LOG(2, "statement") << "evict " << session_.task(op.task).key();
        break;
    }
  }
  operations_.clear();
}

void Statement::Discard() {
  if (operations_.empty()) return;
  // Only a run of changes nothing else came between or after is undone to the very state before.
  const bool restores = uninterrupted_ && session_.state_version() == state_after_ &&
                        session_.job_changes() == job_changes_before_;
  for (auto it = operations_.rbegin(); it != operations_.rend(); ++it) {
    NodeId node = it->kind == Kind::kEvict ? it->node : kNoId;
    session_.SetTaskStatus(it->task, it->previous, node);
  }
  operations_.clear();
  if (restores) session_.RestoreVersions(state_before_, jobs_before_);
}

void ScratchEvictions::Evict(TaskId task) {
  if (evicted_.empty()) state_before_ = session_.state_version();
  const TaskInfo& info = session_.task(task);
  evicted_.push_back({task, info.status, session_.job_tasks_version(info.job)});
  session_.ChangeTaskStatus</*kNodes=*/false>(task, TaskStatus::kReleasing, info.node);
  state_after_ = session_.state_version();
}

ScratchEvictions::~ScratchEvictions() {
  if (evicted_.empty()) return;
  // As a statement: the versions come back only when no other change came after the evictions.
  const bool restores = session_.state_version() == state_after_;
  for (auto it = evicted_.rbegin(); it != evicted_.rend(); ++it) {
    session_.ChangeTaskStatus</*kNodes=*/false>(it->task, it->previous, session_.task(it->task).node);
  }
  if (!restores) return;
  // Last first, so that each job ends at its version before its first eviction.
  session_.state_version_ = state_before_;
  for (auto it = evicted_.rbegin(); it != evicted_.rend(); ++it) {
    session_.job_tasks_version_[session_.task(it->task).job] = it->job_version;
  }
}

}  // namespace lahar
