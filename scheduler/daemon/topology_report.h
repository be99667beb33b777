// HyperNodes the network topology cannot use (spec 3.3: a cycle, a member of two parents, a
// regex that does not compile, ...), told once: the daemon logs each and posts a Warning Event
// on the HyperNode when it breaks (or breaks for another reason), not again every session while
// it stays broken, and says so when it is sound again.
#ifndef LAHAR_SCHEDULER_DAEMON_TOPOLOGY_REPORT_H_
#define LAHAR_SCHEDULER_DAEMON_TOPOLOGY_REPORT_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/topology.h"

namespace lahar {

struct BrokenHyperNode {
  std::string name;
  std::string why;      // the domain's reason
  std::string problem;  // HyperNodeProblem: "HyperNode <name>: <why>", for logs and Events
};

struct TopologyChanges {
  std::vector<BrokenHyperNode> broken;  // newly broken, or broken for another reason
  std::vector<std::string> mended;      // broken before, sound now or deleted
};

class TopologyProblemTracker {
 public:
  // What changed since the last call. `topology` is what the cache built (null: no HyperNodes);
  // the same topology again (the cache rebuilds it only on changes) is no change.
  TopologyChanges Update(const std::shared_ptr<const Topology>& topology);

 private:
  std::shared_ptr<const Topology> last_;  // null at first, as for a cluster without HyperNodes
  std::map<std::string, std::string, std::less<>> reported_;  // HyperNode -> the reason told
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_DAEMON_TOPOLOGY_REPORT_H_
