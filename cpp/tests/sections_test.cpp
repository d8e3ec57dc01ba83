// The exact search's sections (sections.h): the overlapping pairs counted
// up front equal those the sections list.
#include "allocation_problems.h"
#include "test_framework.h"
#include "tinyarena/allocation/sections.h"

using namespace tinyarena::allocation;
using namespace tinyarena::allocation::testing;

TEST(overlapping_pairs_counts_the_pairs_the_sections_list) {
  // The exact search charges its set-up by this count before building the
  // sections (which list every pair): they must agree.
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    Problem p = small_problem(seed * 131, 60);
    if (seed % 3 == 0) p.buffers[0].size = 0;  // takes no space, overlaps nothing
    int64_t listed = 0;
    for (const auto& others : make_sections(p).overlaps) listed += static_cast<int64_t>(others.size());
    CHECK_EQ(2 * overlapping_pairs(p), listed);
  }
}
