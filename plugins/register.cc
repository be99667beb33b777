// The one list of built-in plugins.
#include "plugins/binpack/binpack.h"
#include "plugins/conformance/conformance.h"
#include "plugins/drf/drf.h"
#include "plugins/elastic/elastic.h"
#include "plugins/gang/gang.h"
#include "plugins/network_topology/network_topology.h"
#include "plugins/nodeorder/nodeorder.h"
#include "plugins/overcommit/overcommit.h"
#include "plugins/pdb/pdb.h"
#include "plugins/predicates/predicates.h"
#include "plugins/priority/priority.h"
#include "plugins/proportion/proportion.h"
#include "plugins/sla/sla.h"
#include "api/status_macros.h"
#include "scheduler/builtins.h"

namespace lahar {

absl::Status RegisterBuiltinPlugins(Registry& registry) {
  // Plugins without arguments declare none: any key set for them is an error.
  RETURN_IF_ERROR(registry.RegisterPlugin("priority", NewPriorityPlugin, {}));
  RETURN_IF_ERROR(registry.RegisterPlugin("gang", NewGangPlugin, {}));
  RETURN_IF_ERROR(registry.RegisterPlugin("elastic", NewElasticPlugin, ElasticArguments()));
  RETURN_IF_ERROR(registry.RegisterPlugin("drf", NewDrfPlugin, {}));
  RETURN_IF_ERROR(registry.RegisterPlugin("proportion", NewProportionPlugin, {}));
  RETURN_IF_ERROR(registry.RegisterPlugin("capacity", NewCapacityPlugin, CapacityArguments()));
  RETURN_IF_ERROR(registry.RegisterPlugin("conformance", NewConformancePlugin, {}));
  RETURN_IF_ERROR(registry.RegisterPlugin("overcommit", NewOvercommitPlugin, OvercommitArguments()));
  RETURN_IF_ERROR(registry.RegisterPlugin("pdb", NewPdbPlugin, {}));
  RETURN_IF_ERROR(registry.RegisterPlugin("sla", NewSlaPlugin, SlaArguments()));
  RETURN_IF_ERROR(registry.RegisterPlugin("predicates", NewPredicatesPlugin, PredicatesArguments()));
  RETURN_IF_ERROR(registry.RegisterPlugin("nodeorder", NewNodeorderPlugin, NodeorderArguments()));
  RETURN_IF_ERROR(registry.RegisterPlugin("binpack", NewBinpackPlugin, BinpackArguments()));
  RETURN_IF_ERROR(registry.RegisterPlugin("network-topology-aware", NewNetworkTopologyPlugin, NetworkTopologyArguments()));
  return absl::OkStatus();
}

}  // namespace lahar
