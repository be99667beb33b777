// The binpack plugin: Volcano's binpack score, which prefers nodes that the pod fills most.
//
// Over the resources the task requests that have a binpack weight (cpu, memory and those listed
// in binpack.resources):
//   score = binpack.weight × 100 × Σ weight_r × (used_r + request_r) / allocatable_r / Σ weight_r
// A resource the node has none of adds its weight but no score; a node where the pod would
// exceed some allocatable (possible when placing onto resources being released) scores 0.
//
// Arguments: binpack.weight (default 1), binpack.cpu (1), binpack.memory (1), integers >= 0;
// binpack.resources, a comma-separated list of resource names; binpack.resources.<name>, the
// weight of a listed resource (default 1; a weight for a resource not listed is an error).
#ifndef LAHAR_PLUGINS_BINPACK_BINPACK_H_
#define LAHAR_PLUGINS_BINPACK_BINPACK_H_

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/cluster_info.h"
#include "scheduler/framework/arguments.h"
#include "scheduler/framework/interfaces.h"

namespace lahar {

std::vector<ArgumentSpec> BinpackArguments();
absl::StatusOr<std::unique_ptr<Plugin>> NewBinpackPlugin(const Arguments& arguments);

struct BinpackWeights {
  int64_t weight = 1;                                     // binpack.weight
  std::vector<std::pair<ResourceId, int64_t>> resources;  // weight per resource (cpu, memory, ...)
};

// Per-resource weights written as <prefix>cpu, <prefix>memory (default 1 each), <prefix>resources
// (a comma-separated list of further resources) and <prefix>resources.<name> (default 1; a weight
// for a resource not listed is an error). binpack's prefix is "binpack.", network-topology-aware's
// "hypernode.binpack.".
absl::StatusOr<std::vector<std::pair<ResourceId, int64_t>>> ParseResourceWeights(const Arguments& arguments,
                                                                                 std::string_view prefix);

// Parses and validates the plugin's arguments.
absl::StatusOr<BinpackWeights> ParseBinpackWeights(const Arguments& arguments);

double BinpackScore(const TaskInfo& task, const NodeInfo& node, const BinpackWeights& weights);

}  // namespace lahar

#endif  // LAHAR_PLUGINS_BINPACK_BINPACK_H_
