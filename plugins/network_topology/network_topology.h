// The network-topology-aware plugin (spec 3.3): a gang inside one network domain.
//
// The topology is the cluster's HyperNodes (ClusterSnapshot::topology); without any, the
// argument topology.labels (node label keys from the highest tier down to tier 1) builds it from
// node labels. For every job whose min is still to be placed, JobDomains answers:
//   - PodGroup networkTopology mode hard: the sound domains of tier 1 up to highestTierAllowed
//     (default 1; highestTierName: the tier of HyperNodes with that tierName), lowest tier first,
//     then best fit: the least free capacity of the job's dominant resource left after its min,
//     ties by name. None holds it: it waits whole, with a reason naming the most free domain.
//     Evicting actions plan per domain and take victims from the one needing the fewest.
//     Once placed, every later pod (elastic workers, recreated pods) stays inside the domain of
//     the allowed tier that holds its pods (Session::SetJobScope).
//   - mode soft: the same over every tier, then anywhere.
//   - no constraint (hypernode.binpack.normal-pod.enable, default true): as soft, so small jobs
//     fill the fullest domains that hold them and whole domains stay free for the big ones.
// The dominant resource is the one the min asks most of, as a share of the cluster, weighted by
// hypernode.binpack.cpu / .memory / .resources.<name> (default 1 for every resource).
#ifndef LAHAR_PLUGINS_NETWORK_TOPOLOGY_NETWORK_TOPOLOGY_H_
#define LAHAR_PLUGINS_NETWORK_TOPOLOGY_NETWORK_TOPOLOGY_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

std::vector<ArgumentSpec> NetworkTopologyArguments();
absl::StatusOr<std::unique_ptr<Plugin>> NewNetworkTopologyPlugin(const Arguments& arguments);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_NETWORK_TOPOLOGY_NETWORK_TOPOLOGY_H_
