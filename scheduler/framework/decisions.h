// What a session decided, applied by the caller (the simulator or the daemon) after Close().
#ifndef LAHAR_SCHEDULER_FRAMEWORK_DECISIONS_H_
#define LAHAR_SCHEDULER_FRAMEWORK_DECISIONS_H_

#include <optional>
#include <string>

#include "api/cluster_info.h"
#include "api/wait_reason.h"

namespace lahar {

struct Binding {
  TaskId task;
  NodeId node;
};
struct Eviction {
  TaskId task;
  std::string reason;
};
struct JobStatusUpdate {
  JobId job;
  PodGroupPhase phase;
  std::optional<WaitReason> waiting;  // why the job waits, when it does
  bool scaled = false;  // elastic worker count changed this session: restarts the cooldown
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_DECISIONS_H_
