#include "scheduler/framework/statement.h"

#include "api/log.h"

namespace lahar {

Statement::~Statement() { Discard(); }

void Statement::Allocate(TaskId task, NodeId node) {
  operations_.push_back({Kind::kAllocate, task, node, session_.task(task).status, ""});
  session_.SetTaskStatus(task, TaskStatus::kAllocated, node);
}

void Statement::Pipeline(TaskId task, NodeId node) {
  operations_.push_back({Kind::kPipeline, task, node, session_.task(task).status, ""});
  session_.SetTaskStatus(task, TaskStatus::kPipelined, node);
}

void Statement::Evict(TaskId task, std::string reason) {
  const TaskInfo& info = session_.task(task);
  operations_.push_back({Kind::kEvict, task, info.node, info.status, std::move(reason)});
  session_.SetTaskStatus(task, TaskStatus::kReleasing, info.node);
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
  for (auto it = operations_.rbegin(); it != operations_.rend(); ++it) {
    NodeId node = it->kind == Kind::kEvict ? it->node : kNoId;
    session_.SetTaskStatus(it->task, it->previous, node);
  }
  operations_.clear();
}

}  // namespace lahar
