// The nodeorder plugin: kube-scheduler's resource scores, as Volcano's nodeorder combines them.
//
// score = leastrequested.weight × LeastAllocated + balancedresource.weight × BalancedAllocation
//       + mostrequested.weight × MostAllocated, each on 0..100 (MaxNodeScore), as a double
//       (kube-scheduler truncates each to an integer; Lahar keeps the fraction).
// With requested = node.used + task.request, over resources the node has (allocatable > 0):
// - LeastAllocated: mean over cpu and memory of (allocatable - requested) × 100 / allocatable
//   (0 when requested exceeds allocatable);
// - MostAllocated: mean over cpu and memory of min(requested, allocatable) × 100 / allocatable;
// - BalancedAllocation: (1 - standard deviation of the fractions requested / allocatable
//   (capped at 1) of cpu, memory and, when the task requests it, nvidia.com/gpu) × 100.
// Pods without requests are scored with their zero requests (kube-scheduler substitutes
// 100m / 200Mi).
//
// Arguments (Volcano's names): leastrequested.weight (default 1), balancedresource.weight
// (default 1), mostrequested.weight (default 0), integers >= 0. Volcano's other nodeorder weights
// (nodeaffinity, podaffinity, tainttoleration, imagelocality, podtopologyspread, selectorspread)
// are accepted with a warning so Volcano configurations load, and have no effect.
#ifndef LAHAR_PLUGINS_NODEORDER_NODEORDER_H_
#define LAHAR_PLUGINS_NODEORDER_NODEORDER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "api/cluster_info.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

std::vector<ArgumentSpec> NodeorderArguments();
absl::StatusOr<std::unique_ptr<Plugin>> NewNodeorderPlugin(const Arguments& arguments);

// The three scores on 0..100 for placing `task` on `node`.
double LeastAllocatedScore(const TaskInfo& task, const NodeInfo& node);
double MostAllocatedScore(const TaskInfo& task, const NodeInfo& node);
double BalancedAllocationScore(const TaskInfo& task, const NodeInfo& node);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_NODEORDER_NODEORDER_H_
