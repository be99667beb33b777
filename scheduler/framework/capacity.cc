#include "scheduler/framework/capacity.h"

#include <cstdint>
#include <vector>

#include "scheduler/framework/wait_memo.h"

namespace lahar {
namespace {

Resources Clamped(Resources amounts) {
  amounts.ClampNegativeToZero();
  return amounts;
}

// FreeCapacity's marks of how a node's part is counted in the session's sum, besides the version
// it was counted at: not yet, or as the sessions' memory carries it.
constexpr uint64_t kUncounted = UINT64_MAX;
constexpr uint64_t kCarriedPart = UINT64_MAX - 1;

// The sessions' memory of the nodes' parts and their sums, null without the memory. Brought up to
// date once per session, before its sums are read: a part is made again, and the sums moved by
// the difference, when the node object or the cache's count changed. A node that is not as the
// cache counted it keeps its old part in the sums; a session counts it afresh and takes that out.
const WaitMemo::CarriedCapacity* Carried(const Session& session) {
  WaitMemo* memo = session.wait_memo();
  if (memo == nullptr || !memo->enabled()) return nullptr;
  WaitMemo::CarriedCapacity& carried = memo->carried_capacity();
  Session::Memos& memos = session.memos();
  if (memos.carried_capacity_current) return &carried;
  memos.carried_capacity_current = true;
  const std::vector<NodeInfo>& nodes = session.cluster().nodes;
  if (carried.parts.size() != nodes.size()) carried = {std::vector<WaitMemo::NodeFree>(nodes.size()), {}, {}};
  for (const NodeInfo& node : nodes) {
    // As laid out: its part is the one the sessions' memory carries.
    if (!session.NodeAsLaidOut(node.id)) continue;
    WaitMemo::NodeFree& part = carried.parts[node.id];
    if (part.stamp.Matches(node)) continue;
    carried.free -= part.free;
    carried.idle -= part.idle;
    part.stamp = WaitMemo::NodeStamp::Of(node);
    part.free = node.schedulable ? Clamped(node.FutureIdle()) : Resources();
    part.idle = node.schedulable ? Clamped(node.Idle()) : Resources();
    carried.free += part.free;
    carried.idle += part.idle;
  }
  return &carried;
}

}  // namespace

Resources FreeCapacity(const Session& session) {
  Session::Memos& memos = session.memos();
  const std::vector<NodeInfo>& nodes = session.cluster().nodes;
  // The plans of a backlog that fail ask it again and again with every node as it was.
  if (memos.free_state_version == session.state_version()) return memos.free_capacity;
  const WaitMemo::CarriedCapacity* carried = nullptr;
  if (memos.free_node_versions.size() != nodes.size()) {  // first asked in the session
    carried = Carried(session);
    memos.free_capacity = carried != nullptr ? carried->free : Resources();
    memos.free_per_node.assign(nodes.size(), Resources());
    memos.free_node_versions.assign(nodes.size(), carried != nullptr ? kCarriedPart : kUncounted);
  }
  // Every change to a node (task states, held resources) moves its version.
  for (size_t id = 0; id < nodes.size(); ++id) {
    uint64_t& counted = memos.free_node_versions[id];
    const uint64_t version = session.node_version(static_cast<NodeId>(id));
    const NodeInfo& node = nodes[id];
    if (counted == kCarriedPart) {
      if (session.NodeAsLaidOut(node.id)) continue;
      if (carried == nullptr) carried = Carried(session);
      memos.free_capacity -= carried->parts[id].free;  // replaced by its part as the session has it
    } else if (counted == version) {
      continue;
    } else if (counted != kUncounted) {
      memos.free_capacity -= memos.free_per_node[id];  // its part as last counted
    }
    counted = version;
    Resources& part = memos.free_per_node[id];
    if (node.schedulable) {
      part = node.FutureIdle();
      part.ClampNegativeToZero();
    } else {
      part.SetZero();
    }
    memos.free_capacity += part;
  }
  memos.free_state_version = session.state_version();
  return memos.free_capacity;
}

Resources IdleCapacity(const Session& session) {
  const WaitMemo::CarriedCapacity* carried = Carried(session);
  Resources idle = carried != nullptr ? carried->idle : Resources();
  for (const NodeInfo& node : session.cluster().nodes) {
    if (carried != nullptr) {
      if (session.NodeAsLaidOut(node.id)) continue;
      idle -= carried->parts[node.id].idle;  // replaced by its part as the session has it
    }
    if (node.schedulable) idle += Clamped(node.Idle());
  }
  return idle;
}

}  // namespace lahar
