// The timeline cut into sections: maximal step ranges over which the set of
// live buffers does not change. Exact search reasons per section (its floor,
// its unplaced bytes) and splits the problem where no buffer crosses a cut.
#pragma once

#include <cstdint>
#include <vector>

#include "tinyarena/allocation/problem.h"

namespace tinyarena::allocation {

struct Sections {
  std::vector<int32_t> lo, hi;                 // per buffer: its sections [lo, hi) (empty for size 0)
  std::vector<std::vector<int32_t>> members;   // per section: the buffers live in it, ascending
  std::vector<std::vector<int32_t>> pins;      // per section: its pinned buffers, ascending offsets
  std::vector<int32_t> crossings;              // per cut k (between sections k and k+1): buffers spanning it
  std::vector<std::vector<int32_t>> overlaps;  // per buffer: the other buffers sharing a section with it
};

// Sections of the buffers with a positive size (others take no space).
Sections make_sections(const Problem& problem);

// Pairs of buffers with a positive size live at a common step (what
// make_sections lists in `overlaps`, each pair once), counted in
// O(n log n) without listing them.
int64_t overlapping_pairs(const Problem& problem);

// Buffers grouped into independent partitions: maximal section ranges with no
// zero-crossing cut inside; each group ascending, groups in timeline order.
std::vector<std::vector<int32_t>> partitions(const Problem& problem, const Sections& sections);

}  // namespace tinyarena::allocation
