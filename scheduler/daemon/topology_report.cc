#include "scheduler/daemon/topology_report.h"

namespace lahar {

TopologyChanges TopologyProblemTracker::Update(const std::shared_ptr<const Topology>& topology) {
  TopologyChanges changes;
  if (topology == last_) return changes;
  last_ = topology;
  std::map<std::string, std::string, std::less<>> now;
  if (topology != nullptr) {
    for (const TopologyDomain& domain : topology->domains) {
      if (domain.broken.empty()) continue;
      now[domain.name] = domain.broken;
      auto it = reported_.find(domain.name);
      if (it != reported_.end() && it->second == domain.broken) continue;
      changes.broken.push_back(BrokenHyperNode{domain.name, domain.broken, HyperNodeProblem(domain)});
    }
  }
  for (const auto& [name, why] : reported_) {
    if (!now.contains(name)) changes.mended.push_back(name);
  }
  reported_ = std::move(now);
  return changes;
}

}  // namespace lahar
