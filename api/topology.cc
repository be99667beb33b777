#include "api/topology.h"

#include <algorithm>
#include <map>
#include <regex>

#include "api/labels.h"
#include "api/state_hash.h"
#include "api/strings.h"

namespace lahar {

DomainId Topology::Find(std::string_view name) const {
  for (size_t d = 0; d < domains.size(); ++d) {
    if (domains[d].name == name) return static_cast<DomainId>(d);
  }
  return kNoId;
}

int32_t Topology::TierNamed(std::string_view name) const {
  for (const TopologyDomain& d : domains) {
    if (!d.tier_name.empty() && d.tier_name == name) return d.tier;
  }
  return 0;
}

bool Topology::Contains(DomainId domain, NodeId node) const {
  const std::vector<NodeId>& nodes = domains[domain].nodes;
  return std::binary_search(nodes.begin(), nodes.end(), node);
}

DomainId Topology::Enclosing(const std::vector<NodeId>& nodes) const {
  if (nodes.empty() || nodes.front() < 0 || static_cast<size_t>(nodes.front()) >= leaf_of.size()) return kNoId;
  for (DomainId d = leaf_of[nodes.front()]; d != kNoId; d = domains[d].parent) {
    bool all = true;
    for (NodeId n : nodes) {
      if (!Contains(d, n)) {
        all = false;
        break;
      }
    }
    if (all) return d;
  }
  return kNoId;
}

DomainId Topology::WidestWithin(DomainId domain, int32_t tier) const {
  if (domain == kNoId || domains[domain].tier > tier) return kNoId;
  while (domains[domain].parent != kNoId && domains[domains[domain].parent].tier <= tier) {
    domain = domains[domain].parent;
  }
  return domain;
}

std::string HyperNodeProblem(const TopologyDomain& domain) {
  return StrCat("HyperNode ", domain.name, ": ", domain.broken);
}

namespace {

// The literal text every match of an ECMAScript `pattern` anchored with '^' starts with ("" when
// it is not anchored): node names are sorted, so only those with that prefix need the regex.
std::string AnchoredPrefix(std::string_view pattern) {
  // An alternative anywhere may match without the prefix ("^a|b").
  if (pattern.empty() || pattern[0] != '^' || pattern.find('|') != std::string_view::npos) return "";
  std::string prefix;
  for (size_t i = 1; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (std::string_view(".[]()*+?{}|\\$^").find(c) != std::string_view::npos) {
      // A quantifier applies to the character before it, which may then be absent.
      if ((c == '*' || c == '?' || c == '{') && !prefix.empty()) prefix.pop_back();
      break;
    }
    prefix.push_back(c);
  }
  return prefix;
}

// Marks `domain` broken with `why` unless it already is (the first reason found stands).
void Break(TopologyDomain& domain, std::string why) {
  if (domain.broken.empty()) domain.broken = std::move(why);
}

}  // namespace

Topology BuildTopology(std::vector<const HyperNode*> hypernodes, const std::vector<NodeInfo>& nodes) {
  std::sort(hypernodes.begin(), hypernodes.end(), [](const HyperNode* a, const HyperNode* b) {
    return a->tier != b->tier ? a->tier < b->tier : a->meta.name < b->meta.name;
  });
  Topology topology;
  const size_t n = hypernodes.size();
  topology.domains.resize(n);
  std::map<std::string_view, DomainId> by_name;
  for (size_t d = 0; d < n; ++d) {
    TopologyDomain& domain = topology.domains[d];
    domain.name = hypernodes[d]->meta.name;
    domain.tier = hypernodes[d]->tier;
    domain.tier_name = hypernodes[d]->tier_name;
    by_name.emplace(domain.name, static_cast<DomainId>(d));
  }

  // Node ids by name, sorted, for exact and prefixed matches.
  std::vector<std::pair<std::string_view, NodeId>> node_names;
  node_names.reserve(nodes.size());
  for (const NodeInfo& node : nodes) node_names.emplace_back(node.name(), node.id);
  std::sort(node_names.begin(), node_names.end());

  // Direct members, as written.
  std::vector<std::vector<NodeId>> node_members(n);
  std::vector<std::vector<DomainId>> child_members(n);
  for (size_t d = 0; d < n; ++d) {
    TopologyDomain& domain = topology.domains[d];
    const std::vector<HyperNodeMember>& members = hypernodes[d]->members;
    for (size_t k = 0; k < members.size(); ++k) {
      const HyperNodeMember& m = members[k];
      const bool node_member = m.type == HyperNodeMember::Type::kNode;
      const std::string where = StrCat("member ", k, " (", node_member ? "Node" : "HyperNode", ")");
      if (m.selector_kinds() != 1) {
        Break(domain, StrCat(where, ": a selector names exactly one of exactMatch, regexMatch and labelMatch, this one ",
                             m.selector_kinds()));
        continue;
      }
      std::optional<std::regex> pattern;
      if (m.regex) {
        try {
          pattern.emplace(*m.regex, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
          Break(domain, StrCat(where, ": regexMatch pattern \"", *m.regex, "\" does not compile (", e.what(), ")"));
          continue;
        }
      }
      if (node_member && m.exact_name) {
        auto it = std::lower_bound(node_names.begin(), node_names.end(), std::pair<std::string_view, NodeId>(*m.exact_name, kNoId));
        if (it != node_names.end() && it->first == *m.exact_name) node_members[d].push_back(it->second);
      } else if (node_member && pattern) {
        const std::string prefix = AnchoredPrefix(*m.regex);
        auto it = std::lower_bound(node_names.begin(), node_names.end(), std::pair<std::string_view, NodeId>(prefix, kNoId));
        for (; it != node_names.end() && it->first.substr(0, prefix.size()) == prefix; ++it) {
          if (std::regex_search(it->first.begin(), it->first.end(), *pattern)) node_members[d].push_back(it->second);
        }
      } else if (node_member) {
        for (const NodeInfo& node : nodes) {
          if (MatchesLabelSelector(*m.label_match, node.node->meta.labels)) node_members[d].push_back(node.id);
        }
      } else if (m.label_match) {
        Break(domain, StrCat(where, ": labelMatch selects nodes only"));
      } else if (m.exact_name) {
        // A HyperNode not (yet) created is no member; it joins when it appears.
        if (auto it = by_name.find(*m.exact_name); it != by_name.end()) child_members[d].push_back(it->second);
      } else {
        for (const auto& [name, id] : by_name) {
          if (id != static_cast<DomainId>(d) && std::regex_search(name.begin(), name.end(), *pattern)) {
            child_members[d].push_back(id);
          }
        }
      }
    }
    std::sort(node_members[d].begin(), node_members[d].end());
    node_members[d].erase(std::unique(node_members[d].begin(), node_members[d].end()), node_members[d].end());
    std::sort(child_members[d].begin(), child_members[d].end());
    child_members[d].erase(std::unique(child_members[d].begin(), child_members[d].end()), child_members[d].end());
  }

  // One parent each: a node or HyperNode claimed twice is reported, and what claims it breaks.
  std::vector<DomainId> node_parent(nodes.size(), kNoId);
  std::vector<DomainId> parent(n, kNoId);
  for (size_t d = 0; d < n; ++d) {
    for (NodeId node : node_members[d]) {
      if (node_parent[node] == kNoId) {
        node_parent[node] = static_cast<DomainId>(d);
        continue;
      }
      const std::string why = StrCat("node ", nodes[node].name(), " is a member of both ",
                                     topology.domains[node_parent[node]].name, " and ", topology.domains[d].name);
      Break(topology.domains[node_parent[node]], why);
      Break(topology.domains[d], why);
    }
    for (DomainId child : child_members[d]) {
      if (parent[child] == kNoId) {
        parent[child] = static_cast<DomainId>(d);
        continue;
      }
      Break(topology.domains[child], StrCat("is a member of both ", topology.domains[parent[child]].name, " and ",
                                            topology.domains[d].name));
    }
  }

  // Cycles: a depth-first walk down the member lists; every HyperNode on a cycle breaks.
  std::vector<uint8_t> state(n, 0);  // 0 new, 1 on the walk's path, 2 done
  std::vector<DomainId> path;
  auto walk = [&](auto& self, DomainId d) -> void {
    state[d] = 1;
    path.push_back(d);
    for (DomainId c : child_members[d]) {
      if (state[c] == 1) {
        auto from = std::find(path.begin(), path.end(), c);
        std::string cycle;
        for (auto it = from; it != path.end(); ++it) cycle += StrCat(topology.domains[*it].name, " -> ");
        cycle += topology.domains[c].name;
        for (auto it = from; it != path.end(); ++it) Break(topology.domains[*it], StrCat("is part of a cycle: ", cycle));
      } else if (state[c] == 0) {
        self(self, c);
      }
    }
    path.pop_back();
    state[d] = 2;
  };
  for (size_t d = 0; d < n; ++d) {
    if (state[d] == 0) walk(walk, static_cast<DomainId>(d));
  }
  for (size_t d = 0; d < n; ++d) {
    for (DomainId c : child_members[d]) {
      if (topology.domains[d].tier <= topology.domains[c].tier) {
        Break(topology.domains[d], StrCat("tier ", topology.domains[d].tier, " is not above the tier of its member ",
                                          topology.domains[c].name, " (", topology.domains[c].tier, ")"));
      }
    }
  }

  // Links and node sets, lowest tier first (members of a sound HyperNode are of lower tiers).
  for (size_t d = 0; d < n; ++d) {
    TopologyDomain& domain = topology.domains[d];
    domain.nodes = node_members[d];
    for (DomainId c : child_members[d]) {
      if (parent[c] != static_cast<DomainId>(d)) continue;
      domain.children.push_back(c);
      topology.domains[c].parent = static_cast<DomainId>(d);
    }
  }
  // Node sets and breakage travel up; a cycle has no bottom, so the walk is bounded by depth.
  for (size_t round = 0; round < n; ++round) {
    bool changed = false;
    for (size_t d = 0; d < n; ++d) {
      TopologyDomain& domain = topology.domains[d];
      std::vector<NodeId> all = node_members[d];
      for (DomainId c : domain.children) {
        const TopologyDomain& child = topology.domains[c];
        all.insert(all.end(), child.nodes.begin(), child.nodes.end());
      }
      // Every HyperNode that names a broken member breaks, its parent or not.
      for (DomainId c : child_members[d]) {
        const TopologyDomain& child = topology.domains[c];
        if (!child.broken.empty() && domain.broken.empty()) {
          domain.broken = StrCat("its member ", child.name, " is broken");
          changed = true;
        }
      }
      std::sort(all.begin(), all.end());
      all.erase(std::unique(all.begin(), all.end()), all.end());
      if (all != domain.nodes) {
        domain.nodes = std::move(all);
        changed = true;
      }
    }
    if (!changed) break;
  }

  topology.leaf_of = std::move(node_parent);
  StateHash digest;
  for (const TopologyDomain& domain : topology.domains) {
    if (!domain.broken.empty()) topology.problems.push_back(HyperNodeProblem(domain));
    if (topology.tiers.empty() || topology.tiers.back() != domain.tier) topology.tiers.push_back(domain.tier);
    digest.Add(domain.name).Add(domain.tier).Add(domain.parent).Add(domain.broken);
    digest.Add(static_cast<uint64_t>(domain.nodes.size()));
    for (NodeId node : domain.nodes) digest.Add(node);
  }
  std::sort(topology.problems.begin(), topology.problems.end());
  topology.digest = digest.value();
  return topology;
}

Topology BuildLabelTopology(const std::vector<std::string>& keys, const std::vector<NodeInfo>& nodes) {
  // Each label value becomes a HyperNode "<key>=<value>" of its tier, whose members are the nodes
  // (tier 1) or the domains of the tier below that its nodes are in.
  std::map<std::string, HyperNode> made;
  const int32_t tiers = static_cast<int32_t>(keys.size());
  for (const NodeInfo& node : nodes) {
    std::string below;  // the node's domain of the tier below, if any
    for (int32_t tier = 1; tier <= tiers; ++tier) {
      const std::string& key = keys[static_cast<size_t>(tiers - tier)];
      const auto label = node.node->meta.labels.find(key);
      if (label == node.node->meta.labels.end()) continue;
      const std::string name = StrCat(key, "=", label->second);
      HyperNode& hn = made[name];
      if (hn.meta.name.empty()) {
        hn.meta.name = name;
        hn.tier = tier;
        hn.tier_name = key;
      }
      HyperNodeMember member;
      if (below.empty()) {
        member.type = HyperNodeMember::Type::kNode;
        member.exact_name = node.name();
      } else {
        member.type = HyperNodeMember::Type::kHyperNode;
        member.exact_name = below;
      }
      const bool seen = std::any_of(hn.members.begin(), hn.members.end(), [&](const HyperNodeMember& m) {
        return m.type == member.type && *m.exact_name == *member.exact_name;
      });
      if (!seen) hn.members.push_back(std::move(member));
      below = name;
    }
  }
  std::vector<const HyperNode*> hypernodes;
  for (const auto& [name, hn] : made) hypernodes.push_back(&hn);
  return BuildTopology(std::move(hypernodes), nodes);
}

}  // namespace lahar
