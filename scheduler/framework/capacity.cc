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

// The sessions' memory of each node's parts, sized to the nodes; null without the memory.
std::vector<WaitMemo::NodeFree>* CarriedParts(const Session& session) {
  WaitMemo* memo = session.wait_memo();
  if (memo == nullptr || !memo->enabled()) return nullptr;
  memo->node_free().resize(session.cluster().nodes.size());
  return &memo->node_free();
}

// Whether the node, at `version` in the session, is as the cache counted what its pods hold:
// then its carried parts are read (the cache's versions say whether they are still right).
bool Carries(const std::vector<WaitMemo::NodeFree>* carried, const NodeInfo& node, uint64_t version) {
  return carried != nullptr && version == 0 && node.held_version != 0;
}

// The node's carried parts, made again when the node object or the cache's count changed.
const WaitMemo::NodeFree& CarriedPart(std::vector<WaitMemo::NodeFree>& carried, const NodeInfo& node) {
  WaitMemo::NodeFree& part = carried[node.id];
  if (part.version != node.version || part.held_version != node.held_version) {
    part.version = node.version;
    part.held_version = node.held_version;
    part.free = node.schedulable ? Clamped(node.FutureIdle()) : Resources();
    part.idle = node.schedulable ? Clamped(node.Idle()) : Resources();
  }
  return part;
}

}  // namespace

Resources FreeCapacity(const Session& session) {
  Session::Memos& memos = session.memos();
  const std::vector<NodeInfo>& nodes = session.cluster().nodes;
  if (memos.free_node_versions.size() != nodes.size()) {
    memos.free_capacity = Resources();
    memos.free_per_node.assign(nodes.size(), Resources());
    memos.free_node_versions.assign(nodes.size(), UINT64_MAX);
  }
  std::vector<WaitMemo::NodeFree>* carried = CarriedParts(session);
  // Every change to a node (task states, held resources) moves its version.
  for (size_t id = 0; id < nodes.size(); ++id) {
    uint64_t& counted = memos.free_node_versions[id];
    const uint64_t version = session.node_version(static_cast<NodeId>(id));
    if (counted == version) continue;
    const NodeInfo& node = nodes[id];
    if (counted != UINT64_MAX) {  // its part as last counted, which this one replaces
      memos.free_capacity -= Carries(carried, node, counted) ? (*carried)[id].free : memos.free_per_node[id];
    }
    counted = version;
    if (Carries(carried, node, version)) {
      memos.free_capacity += CarriedPart(*carried, node).free;
      continue;
    }
    Resources& part = memos.free_per_node[id];
    if (node.schedulable) {
      part = node.FutureIdle();
      part.ClampNegativeToZero();
    } else {
      part.SetZero();
    }
    memos.free_capacity += part;
  }
  return memos.free_capacity;
}

Resources IdleCapacity(const Session& session) {
  std::vector<WaitMemo::NodeFree>* carried = CarriedParts(session);
  Resources idle;
  for (const NodeInfo& node : session.cluster().nodes) {
    if (Carries(carried, node, session.node_version(node.id))) {
      idle += CarriedPart(*carried, node).idle;
    } else if (node.schedulable) {
      idle += Clamped(node.Idle());
    }
  }
  return idle;
}

}  // namespace lahar
