// The race of the exact search against the heuristics on a second thread
// (heuristic_race.h): which side wins, ties, and lines past which plans do not count.
#include "allocation_problems.h"
#include "test_framework.h"
#include "tinyarena/allocation/heuristic_race.h"
#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/allocation/validator.h"

using namespace tinyarena::allocation;
using namespace tinyarena::allocation::testing;
using tinyarena::WorkBudget;

TEST(heuristic_race_stops_the_side_that_can_no_longer_win) {
  const Problem p = tight_problem(3, false, 9, 24, false);
  const int64_t bound = lower_bound_bytes(p);
  {  // the skyline meets the bound: the exact side is spent once past the skyline's work
    WorkBudget exact(100.0);
    HeuristicRace race(p, exact, bound);
    while (exact.charge(1000)) {
    }
    CHECK(exact.used() < 100'000'000'000);
    CHECK(race.heuristic_wins(bound + 1, 0) && race.heuristic_plan().solution.height == bound);
    CHECK(race.heuristic_plan().method == "skyline" && exact.used() > race.heuristic_plan().work_to_plan);
    CHECK(validate(p, race.heuristic_plan().solution).empty());
  }
  {  // the exact side's plan at the bound took no work: the skyline cannot win, not even a tie
    WorkBudget exact(100.0);
    HeuristicRace race(p, exact, bound);
    race.stop_heuristics_past(0);
    CHECK(!race.heuristic_wins(bound, 0));
  }
  int64_t work = 0;  // the skyline's to its plan
  {  // a tie at the bound goes to the side that took less work, then to the exact side
    WorkBudget exact(100.0);
    HeuristicRace race(p, exact, bound);
    CHECK(race.heuristic_wins(bound + 1, 0));  // waits for the second thread
    work = race.heuristic_plan().work_to_plan;
    CHECK(race.heuristic_wins(bound, work + 1) && !race.heuristic_wins(bound, work));
  }
  {  // a plan found past the line does not count, whenever the thread saw the line
    WorkBudget exact(100.0);
    HeuristicRace race(p, exact, bound);
    race.stop_heuristics_past(work - 1);
    CHECK(!race.heuristic_wins(bound + 1, 0));
  }
}
