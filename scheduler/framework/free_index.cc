#include "scheduler/framework/free_index.h"

#include <algorithm>
#include <limits>

namespace lahar {

void FreeIndex::Reset(size_t nodes) {
  nodes_ = nodes;
  leaves_ = 1;
  while (leaves_ < nodes_) leaves_ *= 2;
  trees_.clear();
  touched_.clear();
  touched_flag_.assign(nodes_, false);
}

void FreeIndex::SetLeaf(Tree& tree, size_t node, int64_t room) {
  size_t at = leaves_ + node;
  tree.max[at] = room;
  for (at /= 2; at >= 1; at /= 2) {
    const int64_t larger = std::max(tree.max[2 * at], tree.max[2 * at + 1]);
    if (tree.max[at] == larger) break;  // the ones above hold as they are
    tree.max[at] = larger;
  }
}

void FreeIndex::Refresh(const std::vector<NodeInfo>& nodes) {
  for (NodeId node : touched_) {
    touched_flag_[node] = false;
    for (Tree& tree : trees_) SetLeaf(tree, static_cast<size_t>(node), Room(nodes[node], tree.resource));
  }
  touched_.clear();
}

size_t FreeIndex::First(const Tree& tree, size_t from, size_t to, int64_t amount) const {
  if (from >= to) return to;
  // Up from the leaf to the first subtree on its right that holds enough, then down its leftmost
  // such leaf.
  size_t at = leaves_ + from;
  if (tree.max[at] < amount) {
    while (true) {
      if (at % 2 == 0 && tree.max[at + 1] >= amount) {
        ++at;
        break;
      }
      at /= 2;
      if (at <= 1) return to;  // past the root: none to the right
    }
    while (at < leaves_) at = tree.max[2 * at] >= amount ? 2 * at : 2 * at + 1;
  }
  return std::min(at - leaves_, to);
}

size_t FreeIndex::NextWithRoom(const std::vector<NodeInfo>& nodes, ResourceId resource, int64_t amount,
                               size_t from, size_t to) {
  auto tree = std::find_if(trees_.begin(), trees_.end(), [resource](const Tree& t) { return t.resource == resource; });
  if (tree == trees_.end()) {
    Refresh(nodes);  // the trees built before are brought up to date first
    Tree built{resource, std::vector<int64_t>(2 * leaves_, std::numeric_limits<int64_t>::min())};
    for (size_t n = 0; n < nodes_; ++n) built.max[leaves_ + n] = Room(nodes[n], resource);
    for (size_t at = leaves_ - 1; at >= 1; --at) built.max[at] = std::max(built.max[2 * at], built.max[2 * at + 1]);
    trees_.push_back(std::move(built));
    tree = trees_.end() - 1;
  } else {
    Refresh(nodes);
  }
  return First(*tree, from, to, amount);
}

size_t FreeIndex::NextWithRoomForAll(const std::vector<NodeInfo>& nodes, const Resources& request, ResourceId first,
                                     size_t from, size_t to) {
  size_t at = NextWithRoom(nodes, first, request.Get(first), from, to);  // the trees are up to date now
  // Each tree in turn moves `at` to its first node with room from there, until none moves it:
  // then `at` has room in every one, and no node before it does.
  for (bool moved = true; moved && at < to;) {
    moved = false;
    for (const Tree& tree : trees_) {
      const int64_t amount = request.Get(tree.resource);
      if (amount <= 0) continue;
      const size_t next = First(tree, at, to, amount);
      if (next == at) continue;
      at = next;
      moved = true;
      if (at >= to) return to;
    }
  }
  return at;
}

}  // namespace lahar
