// TODO(owner): replace this stub with the enqueue action.
#ifndef LAHAR_ACTIONS_ENQUEUE_ENQUEUE_H_
#define LAHAR_ACTIONS_ENQUEUE_ENQUEUE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Validates `arguments` and creates the action.
absl::StatusOr<std::unique_ptr<Action>> NewEnqueueAction(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_ACTIONS_ENQUEUE_ENQUEUE_H_
