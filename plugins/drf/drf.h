// The drf plugin: dominant resource fairness between jobs (Volcano's drf, without hierarchy).
//
// A job's share is the largest, over resources (every resource but the pod count), of the
// resources its placed and pipelined tasks request divided by the cluster's allocatable
// (ClusterSnapshot::total_allocatable); a resource the cluster has none of counts 1 when the
// job holds some. Shares follow every allocation and eviction of the session.
//
// - JobOrder: lower share first; equal shares are left to the next hook and the framework's
//   stable tie-break.
// - Preemptable: a candidate is a victim when the preemptor's job, given the preemptor, would
//   still have a share no larger than the candidate's job after losing the candidate (and the
//   victims already chosen from it).
#ifndef LAHAR_PLUGINS_DRF_DRF_H_
#define LAHAR_PLUGINS_DRF_DRF_H_

#include <memory>

#include "absl/status/statusor.h"
#include "api/resources.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Takes no arguments.
absl::StatusOr<std::unique_ptr<Plugin>> NewDrfPlugin(const Arguments& arguments);

// max over resources (but kPods) of allocated / total; 1 for a resource with total 0 and
// allocated > 0.
double DominantShare(const Resources& allocated, const Resources& total);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_DRF_DRF_H_
