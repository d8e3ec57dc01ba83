// Deterministic work budgets (common/work_budget.h): lines posted by
// another thread, batched charges, shares and slices of work and wall clock.
#include "allocation_problems.h"
#include "test_framework.h"
#include <atomic>

#include "tinyarena/common/work_budget.h"

using namespace tinyarena::allocation;
using namespace tinyarena::allocation::testing;
using tinyarena::BatchedCharge;
using tinyarena::WorkBudget;

TEST(work_budget_stops_past_a_line_another_thread_posts) {
  WorkBudget budget(1e-6);  // 1,000 units
  std::atomic<int64_t> line{WorkBudget::kUnlimited};
  budget.stop_past(&line);
  CHECK(budget.charge(60));
  line.store(100);
  CHECK(!budget.spent() && budget.charge(40));  // 100 done: not past the line
  CHECK(!budget.charge(1) && budget.spent());
  CHECK(budget.remaining() == 899);  // shares are cut from the limit, not the line
}

TEST(batched_charges_stop_at_the_very_charge_the_budget_would) {
  for (const int64_t units : {1, 3, 7, 250}) {
    WorkBudget direct(1e-4), parent(1e-4);  // 100,000 units
    WorkBudget batched_share = parent.share(0.5);
    WorkBudget direct_share = direct.share(0.5);
    BatchedCharge batched(batched_share);
    int64_t charges = 0;
    while (true) {
      const bool direct_left = direct_share.charge(units);
      CHECK_EQ(batched.charge(units), direct_left);
      if (!direct_left) break;
      ++charges;
    }
    CHECK(charges > 0);
    CHECK_EQ(batched_share.used(), direct_share.used());
    CHECK_EQ(parent.used(), direct.used());
  }
  WorkBudget budget(1.0);  // a line lowered after a batch started is seen within kMaxBatch units
  std::atomic<int64_t> line{WorkBudget::kUnlimited};
  budget.stop_past(&line);
  BatchedCharge batched(budget);
  CHECK(batched.charge(10));
  line.store(20);
  int64_t charged = 10;
  while (batched.charge(10)) charged += 10;
  CHECK(charged + 10 > 20 && charged <= 20 + BatchedCharge::kMaxBatch);
  CHECK(budget.spent());
}

TEST(a_budget_share_splits_the_work_and_the_wall_clock_left) {
  WorkBudget whole(2.0, 10.0);
  WorkBudget half = whole.share(0.5);
  CHECK_EQ(half.remaining(), 1000000000);
  CHECK(half.remaining_wall_seconds() > 4.9 && half.remaining_wall_seconds() <= 5.0);
  WorkBudget quarter = half.share(0.5);
  CHECK(quarter.remaining_wall_seconds() > 2.4 && quarter.remaining_wall_seconds() <= 2.5);
  CHECK_EQ(WorkBudget(1.0).share(0.5).remaining_wall_seconds(), 0.0);  // no cap, none shared
  WorkBudget unlimited(0, 10.0);
  WorkBudget slice = unlimited.slice(1000);  // a set amount even of unlimited work, all the wall clock
  CHECK_EQ(slice.remaining(), 1000);
  CHECK(slice.remaining_wall_seconds() > 9.9);
  slice.charge(1001);
  CHECK(slice.spent() && !unlimited.spent() && unlimited.used() == 1001);
  CHECK_EQ(whole.slice(int64_t{5} << 40).remaining(), 2000000000);  // no more than is left
}
