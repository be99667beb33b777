// Which nodes may have room for a request, without asking each one: per resource, the most a
// node could give a task of it (its future idle amount), kept in a max tree over node ids, so
// a search over a full cluster skips the nodes that cannot fit instead of examining them.
#ifndef LAHAR_SCHEDULER_FRAMEWORK_FREE_INDEX_H_
#define LAHAR_SCHEDULER_FRAMEWORK_FREE_INDEX_H_

#include <cstdint>
#include <vector>

#include "api/cluster_info.h"

namespace lahar {

class FreeIndex {
 public:
  // For a session over `nodes` nodes; trees are built for a resource when first asked of it.
  void Reset(size_t nodes);
  // The node's amounts changed: its leaves are brought up to date at the next question.
  void Touch(NodeId node) {
    if (trees_.empty() || touched_flag_[node]) return;
    touched_flag_[node] = true;
    touched_.push_back(node);
  }
  // The first node id in [from, to) whose future idle amount of `resource` (allocatable less
  // used and promised, plus releasing: an upper bound of what either placement may use) is at
  // least `amount`; `to` when there is none.
  size_t NextWithRoom(const std::vector<NodeInfo>& nodes, ResourceId resource, int64_t amount, size_t from,
                      size_t to);
  // The first node id in [from, to) with room for every amount of `request` in `first` and in
  // the resources a tree is built for already (a node short of any of them cannot fit it); `to`
  // when there is none. Builds `first`'s tree when none is; never another.
  size_t NextWithRoomForAll(const std::vector<NodeInfo>& nodes, const Resources& request, ResourceId first,
                            size_t from, size_t to);
  // Whether a tree is built for any resource (NextWithRoom builds one when first asked of it).
  bool Any() const { return !trees_.empty(); }

 private:
  struct Tree {
    ResourceId resource;
    std::vector<int64_t> max;  // 1-based heap layout: leaves at [leaves_, 2 * leaves_)
  };
  // The amount NextWithRoom compares, of one node as it is now.
  static int64_t Room(const NodeInfo& node, ResourceId resource) {
    return node.allocatable.Get(resource) - node.used.Get(resource) - node.pipelined.Get(resource) +
           node.releasing.Get(resource);
  }
  void Refresh(const std::vector<NodeInfo>& nodes);
  void SetLeaf(Tree& tree, size_t node, int64_t room);
  size_t First(const Tree& tree, size_t from, size_t to, int64_t amount) const;

  size_t nodes_ = 0;
  size_t leaves_ = 1;
  std::vector<Tree> trees_;
  std::vector<NodeId> touched_;
  std::vector<bool> touched_flag_;
};

}  // namespace lahar

#endif  // LAHAR_SCHEDULER_FRAMEWORK_FREE_INDEX_H_
