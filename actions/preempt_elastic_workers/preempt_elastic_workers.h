// TODO(owner): replace this stub with the preempt-elastic-workers action.
#ifndef LAHAR_ACTIONS_PREEMPT_ELASTIC_WORKERS_PREEMPT_ELASTIC_WORKERS_H_
#define LAHAR_ACTIONS_PREEMPT_ELASTIC_WORKERS_PREEMPT_ELASTIC_WORKERS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Validates `arguments` and creates the action.
absl::StatusOr<std::unique_ptr<Action>> NewPreemptElasticWorkersAction(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_ACTIONS_PREEMPT_ELASTIC_WORKERS_PREEMPT_ELASTIC_WORKERS_H_
