// The one list of built-in actions.
#include "actions/allocate/allocate.h"
#include "actions/backfill/backfill.h"
#include "actions/elastic_scale/elastic_scale.h"
#include "actions/enqueue/enqueue.h"
#include "actions/preempt/preempt.h"
#include "actions/preempt_elastic_workers/preempt_elastic_workers.h"
#include "actions/reclaim/reclaim.h"
#include "api/status_macros.h"
#include "scheduler/builtins.h"

namespace lahar {

absl::Status RegisterBuiltinActions(Registry& registry) {
  RETURN_IF_ERROR(registry.RegisterAction("enqueue", NewEnqueueAction, EnqueueArguments()));
  RETURN_IF_ERROR(registry.RegisterAction("allocate", NewAllocateAction, NodeSearchArgumentSpecs()));
  RETURN_IF_ERROR(registry.RegisterAction("elastic-scale", NewElasticScaleAction, {}));
  RETURN_IF_ERROR(registry.RegisterAction("preempt-elastic-workers", NewPreemptElasticWorkersAction, {}));
  RETURN_IF_ERROR(registry.RegisterAction("backfill", NewBackfillAction, NodeSearchArgumentSpecs()));
  RETURN_IF_ERROR(registry.RegisterAction("preempt", NewPreemptAction, PreemptArguments()));
  RETURN_IF_ERROR(registry.RegisterAction("reclaim", NewReclaimAction, ReclaimArguments()));
  return absl::OkStatus();
}

}  // namespace lahar
