#include "core/parallel/pairwise_tree.h"

#include "core/error.h"

namespace lockstep {
namespace parallel {

namespace {

int64_t NodeEnd(int64_t groups, int64_t level, int64_t index) {
  const int64_t end = (index + 1) << level;
  return end < groups ? end : groups;
}

// Nodes at `level`: ceil(groups / 2^level).
int64_t LevelCount(int64_t groups, int64_t level) { return (groups + (int64_t{1} << level) - 1) >> level; }

struct Completion {
  int64_t groups;
  const std::vector<GroupRange>& nodes;
  std::vector<TreeStep> steps;
  int64_t next_slot;

  // The slot holding node (level, index), adding the steps that compute it.
  int64_t Slot(int64_t level, int64_t index) {
    const GroupRange range{index << level, NodeEnd(groups, level, index)};
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i] == range) return static_cast<int64_t>(i);
    }
    LOCKSTEP_REQUIRE_KIND(ErrorKind::kInternal, level > 0,
                          "data-parallel reduction: no rank holds group " << range.first);
    const int64_t left = Slot(level - 1, 2 * index);
    if (2 * index + 1 >= LevelCount(groups, level - 1)) return left;  // the odd last one moves up
    const int64_t right = Slot(level - 1, 2 * index + 1);
    steps.push_back({next_slot, left, right});
    return next_slot++;
  }
};

}  // namespace

std::vector<GroupRange> CoverNodes(int64_t groups, int64_t first, int64_t end) {
  std::vector<GroupRange> out;
  int64_t p = first;
  while (p < end) {
    int64_t level = 0;
    // Grow while the node stays aligned, inside [first, end), and actually grows.
    while (true) {
      const int64_t up = level + 1;
      if ((p & ((int64_t{1} << up) - 1)) != 0) break;
      const int64_t up_end = NodeEnd(groups, up, p >> up);
      if (up_end > end || up_end == NodeEnd(groups, level, p >> level)) break;
      level = up;
    }
    const int64_t node_end = NodeEnd(groups, level, p >> level);
    out.push_back({p, node_end});
    p = node_end;
  }
  return out;
}

std::vector<TreeStep> CompletionSteps(int64_t groups, const std::vector<GroupRange>& nodes, int64_t* root) {
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kInternal, groups >= 1, "data-parallel reduction: no groups");
  int64_t top = 0;
  while (LevelCount(groups, top) > 1) ++top;
  Completion c{groups, nodes, {}, static_cast<int64_t>(nodes.size())};
  *root = c.Slot(top, 0);
  return c.steps;
}

}  // namespace parallel
}  // namespace lockstep
