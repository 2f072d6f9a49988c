// The contract's pairwise tree over batch groups (docs/numerics.md, rule 4), as ranges of groups:
// level 0 holds the groups' partial sums; each level adds adjacent pairs, an odd last one moving up
// unchanged. Node j of level l covers groups [j * 2^l, min((j + 1) * 2^l, groups)). A rank that holds
// the groups of a node computes that node alone; the root needs every rank's nodes.
#ifndef LOCKSTEP_CORE_PARALLEL_PAIRWISE_TREE_H_
#define LOCKSTEP_CORE_PARALLEL_PAIRWISE_TREE_H_

#include <stdint.h>

#include <vector>

namespace lockstep {
namespace parallel {

struct GroupRange {
  int64_t first = 0, end = 0;  // groups [first, end)
  bool operator==(const GroupRange& o) const { return first == o.first && end == o.end; }
};

// The fewest tree nodes that together cover groups [first, end) of a tree over `groups` groups,
// left to right (empty when first == end). Each is a whole subtree: the pairwise combination of its
// groups in order (CombinePairwise over them) is that node's value in the full tree.
std::vector<GroupRange> CoverNodes(int64_t groups, int64_t first, int64_t end);

// One addition of the tree: slot `out` = slot `left` + slot `right`. Slots [0, given) hold the given
// nodes' values; later slots are intermediate results.
struct TreeStep {
  int64_t out, left, right;
};

// The additions that finish the tree from `nodes` (ranges that partition [0, groups), in order), in
// the contract's order; *root receives the slot that holds the root. Throws kInternal when the
// nodes do not partition the groups.
std::vector<TreeStep> CompletionSteps(int64_t groups, const std::vector<GroupRange>& nodes, int64_t* root);

}  // namespace parallel
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_PARALLEL_PAIRWISE_TREE_H_
