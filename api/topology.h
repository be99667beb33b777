// The network topology (spec 3.3): HyperNode objects resolved against a snapshot's nodes into a
// tree of domains, each knowing every node beneath it. Built when the HyperNodes or the nodes
// change, never per session, and shared by the snapshots built from the same state.
//
// A HyperNode that cannot be used as written (a member selector naming no kind or two, a regex
// that does not compile, labelMatch on HyperNode members, a member of two parents, a cycle, a
// tier not above a member's) is kept but marked broken, with the reason; so is every domain above
// it (its node set is not what its author meant). Broken domains never hold a job; the rest of
// the tree is used as usual.
#ifndef LAHAR_API_TOPOLOGY_H_
#define LAHAR_API_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/cluster_info.h"
#include "api/objects.h"

namespace lahar {

using DomainId = int32_t;

struct TopologyDomain {
  std::string name;
  int32_t tier = 0;
  std::string tier_name;
  DomainId parent = kNoId;         // the HyperNode holding this one, kNoId at the top
  std::vector<DomainId> children;  // HyperNode members
  std::vector<NodeId> nodes;       // every node beneath, ascending
  std::string broken;              // why it cannot hold a job; empty when sound
};

struct Topology {
  std::vector<TopologyDomain> domains;  // by tier, then name
  std::vector<std::string> problems;    // "HyperNode <name>: <why>", one per broken domain
  std::vector<DomainId> leaf_of;        // per node id: the lowest domain holding it, or kNoId
  std::vector<int32_t> tiers;           // the distinct tiers, ascending
  uint64_t digest = 0;                  // equal for equal topologies (a fingerprint input)

  DomainId Find(std::string_view name) const;
  // The tier of the HyperNodes whose tierName is `name`, or 0 when none has it.
  int32_t TierNamed(std::string_view name) const;
  bool Contains(DomainId domain, NodeId node) const;
  // The lowest domain holding every node of `nodes` (not empty), or kNoId.
  DomainId Enclosing(const std::vector<NodeId>& nodes) const;
  // `domain`'s ancestor (or itself) of the highest tier at most `tier`, or kNoId when `domain`'s
  // own tier is above it.
  DomainId WidestWithin(DomainId domain, int32_t tier) const;
};

// "HyperNode <name>: <why it is broken>", the words every report of a broken domain uses.
std::string HyperNodeProblem(const TopologyDomain& domain);

// Resolves `hypernodes` against `nodes` (ids are vector positions; names from NodeInfo::node).
Topology BuildTopology(std::vector<const HyperNode*> hypernodes, const std::vector<NodeInfo>& nodes);

// The same tree from node labels (plugin argument topology.labels): `keys` from the highest tier
// down to tier 1. A node's value of a key names its domain of that tier ("<key>=<value>"); a
// node without the key is in no domain of that tier.
Topology BuildLabelTopology(const std::vector<std::string>& keys, const std::vector<NodeInfo>& nodes);

}  // namespace lahar

#endif  // LAHAR_API_TOPOLOGY_H_
