// The proportion plugin: queues (departments) share the cluster by weight (Volcano's
// proportion plugin).
//
// Per queue it keeps `allocated` (requests of the queue's placed and pipelined tasks, kept
// current by an event handler), `request` (requests of every unfinished task of its jobs),
// `inqueue` (what admitted jobs, phase Inqueue or Running, are promised but do not hold yet:
// max(0, minResources - held)) and `deserved`, computed once per session by
// ComputeDeservedShares over ClusterSnapshot::total_allocatable (and reported with
// Session::ReportQueueDeserved).
//
// - QueueOrder: lower share first, share = max over resources of allocated / deserved
//   (a resource deserved 0 but allocated counts 1).
// - Overused (Volcano's rule): deserved <= allocated in every resource; a queue that deserves
//   nothing (no demand) is therefore overused.
// - Allocatable(queue, task): allocated + task request <= deserved, and <= capability where
//   the capability names the resource, in every resource the task requests.
// - JobEnqueueable (vote): reject when the queue is closed; permit a job without minResources;
//   otherwise permit when minResources + allocated + inqueue <= the queue's real capability
//   (min(capability, total - other queues' guarantees)) in every resource minResources names,
//   reject otherwise. A job that the enqueue action moves to Inqueue after a vote counts in
//   `inqueue` from the next vote on (actions must ask before they enqueue a job with
//   minResources, as Volcano's enqueue does).
// Queue trees (spec 2.1): a parent's allocated and request include its descendants'; deserved
// shares are computed top-down (the cluster among the top-level queues, each parent's deserved
// among its children); Overused and Allocatable hold at the queue and at every ancestor; queue
// order compares shares where the two queues' paths part, then queue priority. Which victims a
// reclaim may take is the reclaim action's, from the deserved shares reported here.
//
// The `capacity` plugin is this plugin with deserved as written in each Queue (absent: nothing
// deserved), no Overused hook (a queue may borrow up to its capability) and Allocatable by
// capability only.
#ifndef LAHAR_PLUGINS_PROPORTION_PROPORTION_H_
#define LAHAR_PLUGINS_PROPORTION_PROPORTION_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "api/resources.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

// Take no arguments.
absl::StatusOr<std::unique_ptr<Plugin>> NewProportionPlugin(const Arguments& arguments);
std::vector<ArgumentSpec> CapacityArguments();
absl::StatusOr<std::unique_ptr<Plugin>> NewCapacityPlugin(const Arguments& arguments);

// What ComputeDeservedShares needs of a queue.
struct QueueDemand {
  int32_t weight = 1;
  Resources capability;  // hard ceiling; a zero amount means that resource is not capped
  Resources guarantee;   // always reserved for the queue
  Resources request;     // what the queue's jobs ask for
  Resources deserved;    // set in the Queue spec: the resources named are taken as is (capped by
                         // capability), the others computed
  bool operator==(const QueueDemand&) const = default;
};

// Volcano's water-filling. Queues with an explicit `deserved` get it (capped by capability)
// first, in the resources it names; the resources it does not name are shared out by weight. The rest of `total` is then handed out in rounds: each round gives every queue not yet
// satisfied remaining × weight / (sum of those queues' weights), caps the queue at its real
// capability (min(capability, total - sum of all guarantees + its own guarantee)) and at its
// request, and floors it at its guarantee. A queue is satisfied when its request fits in its
// deserved or a round gives it nothing more; rounds stop when nothing remains or a round hands
// out nothing. The rounds work on exact (floating-point) amounts, as Volcano's do; the results
// are then rounded down to whole units, and the units that rounding took away go back one each
// to the largest fractions (ties to the lower index), so nothing is lost: 10 GPUs at weights
// 1:2 give 3 and 7.
// Returns one deserved vector per queue, in input order.
std::vector<Resources> ComputeDeservedShares(const Resources& total, const std::vector<QueueDemand>& queues);

// ComputeDeservedShares, answered from the last few splits asked when the inputs are equal.
std::vector<Resources> RecentDeservedShares(const Resources& total, std::vector<QueueDemand> queues);

// max over resources (but kPods) of allocated / deserved; a resource with deserved 0 and
// allocated > 0 counts 1.
double QueueShare(const Resources& allocated, const Resources& deserved);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_PROPORTION_PROPORTION_H_
