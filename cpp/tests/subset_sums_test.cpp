// Subset sums (subset_sums.h): exact sums within a node budget, rooms
// next to pins, and the listed totals up to a limit.
#include "allocation_problems.h"
#include "test_framework.h"
#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include "tinyarena/allocation/subset_sums.h"
#include "tinyarena/common/random.h"

using namespace tinyarena::allocation;
using namespace tinyarena::allocation::testing;

TEST(sums_to_decides_exact_sums_within_its_nodes) {
  int64_t nodes = 100;
  CHECK(sums_to({9, 5, 3}, 8, nodes) == std::optional<bool>(true));
  CHECK(sums_to({9, 5, 3}, 13, nodes) == std::optional<bool>(false));  // 0 3 5 8 9 12 14 17: no 13
  CHECK(sums_to({9, 5, 3}, 18, nodes) == std::optional<bool>(false));  // more than all of them
  CHECK(sums_to({}, 0, nodes) == std::optional<bool>(true));
  nodes = 2;
  CHECK(!sums_to({8, 8, 8, 8, 8, 8}, 41, nodes).has_value());  // odd: refuted only by the whole tree
  CHECK(nodes < 0);
  tinyarena::SplitMix64 random{5};
  for (int trial = 0; trial < 300; ++trial) {  // against the listed subset sums
    std::vector<int64_t> sizes;
    for (uint64_t i = 0, n = random.next() % 9; i < n; ++i) sizes.push_back(1 + static_cast<int64_t>(random.next() % 40));
    std::sort(sizes.begin(), sizes.end(), std::greater<>());
    const int64_t target = static_cast<int64_t>(random.next() % 120);
    SubsetSums sums(1 << 12);
    sums.reset(target);
    for (int64_t size : sizes) sums.add(size);
    nodes = 1 << 12;
    CHECK(sums_to(sizes, target, nodes) == std::optional<bool>(sums.reaches(target, target)));
  }
}

TEST(may_fill_room_sorts_and_counts_a_search_out_of_nodes_as_fillable) {
  std::vector<int64_t> sizes{3, 9, 5};
  int64_t used = 0;
  CHECK(may_fill_room(sizes, 8, used) && used > 0);
  CHECK(sizes == (std::vector<int64_t>{9, 5, 3}));  // sorted, largest first
  CHECK(!may_fill_room(sizes, 13, used));           // 0 3 5 8 9 12 14 17: no 13
  std::vector<int64_t> even(20, 8);                 // an odd room: refuted only by more than kRoomNodes nodes
  CHECK(may_fill_room(even, 81, used));
  CHECK_EQ(used, kRoomNodes);
}

TEST(subset_sums_list_the_totals_up_to_the_limit) {
  SubsetSums sums(8);
  sums.reset(12);
  for (int64_t size : {3, 5, 9}) CHECK(sums.add(size));
  CHECK_EQ(sums.count(), 6u);  // 0 3 5 8 9 12 (14 and 17 pass the limit)
  CHECK(sums.reaches(8, 8));
  CHECK(!sums.reaches(10, 11));
  CHECK(sums.reaches(10, 12));
  CHECK(!sums.add(1));  // 0 1 3 4 5 6 8 9 10 12: more than 8
  CHECK(sums.add_may_reach(2, 11, 11));  // gave up: unknown counts as reachable
  sums.reset(12);
  CHECK(!sums.add_may_reach(3, 4, 5) && sums.add_may_reach(2, 4, 5));  // {3}: no; {2, 3}: 5
  sums.reset(4);
  CHECK_EQ(sums.count(), 1u);
  CHECK(!sums.reaches(1, 4));
}
