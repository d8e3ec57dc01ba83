#include "tinyarena/allocation/heuristic_race.h"

#include <algorithm>

#include "tinyarena/allocation/local_search.h"
#include "tinyarena/allocation/offset_repair.h"
#include "tinyarena/allocation/pin_repair.h"
#include "tinyarena/allocation/skyline.h"

namespace tinyarena::allocation {

namespace {

constexpr double kPinRepairShare = 0.5;  // of the second thread's budget, where a buffer is pinned
constexpr int64_t kFirstRoundWork = 1 << 22;  // of each search in the first round of search_in_rounds

bool any_pinned(const Problem& problem) {
  return std::any_of(problem.buffers.begin(), problem.buffers.end(),
                     [](const Buffer& b) { return b.fixed_offset.has_value() && b.size > 0; });
}

}  // namespace

HeuristicRace::HeuristicRace(const Problem& problem, WorkBudget& exact_budget, int64_t target,
                             const Problem* upside_down, bool climb_around_pins)
    : climb_around_pins_(climb_around_pins), target_(target) {
  thread_ = std::thread([this, &problem, upside_down, budget = exact_budget.detached(), target]() mutable {
    budget.stop_past(&heuristic_line_);
    try {
      search(problem, upside_down, budget, target);
    } catch (...) {
      error_ = std::current_exception();
    }
  });
  exact_budget.stop_past(&exact_line_);  // once the thread runs (a line posted before is read then)
}

HeuristicRace::~HeuristicRace() {
  heuristic_line_.store(-1);  // an exception left the exact search: nothing waits for this thread
  join();
}

void HeuristicRace::search(const Problem& problem, const Problem* upside_down, WorkBudget budget, int64_t target) {
  // Without pins it finds nothing and spends nothing.
  const PinRepairResult repaired = pin_repair_search(problem, target, budget.share(kPinRepairShare));
  if (repaired.solution) keep(*repaired.solution, "pin_repair", budget.used());
  if (climb_around_pins_ && any_pinned(problem))
    search_in_rounds(problem, upside_down, budget, target);
  else
    search_skylines(problem, upside_down, budget, target);
  if (plan_.solution.height <= target) exact_line_.store(plan_.work_to_plan);
}

bool HeuristicRace::open(const WorkBudget& budget, int64_t target) const {
  return !budget.spent() && (plan_.method.empty() || plan_.solution.height > target);
}

// The skyline search, with `upside_down` half of the budget on each in turn.
void HeuristicRace::search_skylines(const Problem& problem, const Problem* upside_down, WorkBudget& budget,
                                    int64_t target) {
  if (open(budget, target)) run_skyline(problem, nullptr, budget.share(upside_down ? 0.5 : 1.0), budget, target);
  if (upside_down && open(budget, target)) run_skyline(*upside_down, &problem, budget.share(1.0), budget, target);
}

// Hill climbing over first-fit orders (local_search.h: first fit places each
// buffer clear of every pin, where the skyline floor jumps over a pin and
// wastes the room below it; two-sided, so a buffer may also sit under the
// target, out of the way of those a pin leaves room for below it; each
// climb short of the target followed by the repair of its offsets) and the
// skyline search, each on the problem and on its mirror, in rounds of
// doubling work: whichever suits the instance finds its plan after about
// twice the work it needs alone, times the six searches of a round.
void HeuristicRace::search_in_rounds(const Problem& problem, const Problem* upside_down, WorkBudget& budget,
                                     int64_t target) {
  const auto original_of = [&](const Problem* side) { return side == &problem ? nullptr : &problem; };
  uint64_t seed = 1;  // each round climbs from other moves: a trajectory stuck on a plateau is not repeated
  for (int64_t units = kFirstRoundWork; open(budget, target);
       units = units > WorkBudget::kUnlimited / 2 ? units : 2 * units, ++seed) {
    for (const Problem* side : {&problem, upside_down})
      if (side && open(budget, target))
        run_local_search(*side, original_of(side), units, budget, target, seed);
    for (const Problem* side : {&problem, upside_down})
      if (side && open(budget, target)) run_skyline(*side, original_of(side), budget.slice(units), budget, target);
  }
}

// One skyline search of `side` (the problem, or its mirror with `original`
// the problem) with `part` of `budget`; its plan kept as the problem's.
void HeuristicRace::run_skyline(const Problem& side, const Problem* original, WorkBudget part, WorkBudget& budget,
                                int64_t target) {
  SkylineOptions options;
  options.target_height = target;
  options.budget = part;
  const int64_t before = budget.used();
  const SkylineResult found = skyline_search(side, options);
  keep_side(original, found.solution, "skyline", before + found.work_to_best, target);
}

// One climb of `side` (as run_skyline) from `seed`, aiming at `target`, with
// `units` of `budget`; short of the target, the offset repair of its plan
// (offset_repair.h) with as many more.
void HeuristicRace::run_local_search(const Problem& side, const Problem* original, int64_t units, WorkBudget& budget,
                                     int64_t target, uint64_t seed) {
  LocalSearchOptions options;
  options.seed = seed;
  options.iterations = 0;
  options.budget = budget.slice(units);
  options.target_height = target;
  options.two_sided = true;
  options.start_order = static_cast<int>(seed);  // each round from another seed order too
  const int64_t before = budget.used();
  const LocalSearchResult found = local_search(side, options);
  // A climb that ended past a line is not kept (where it stopped depends on when the line was set).
  if (budget.units_to_line() < 0) return;
  const int64_t work = before + found.work;  // it stops once at the target: the work to that plan
  keep_side(original, found.solution, "local_search", work, target);
  if (found.solution.height <= target || !open(budget, target)) return;
  const OffsetRepairResult repaired = repair_offsets(side, found.solution, target, budget.slice(units), seed);
  if (budget.units_to_line() < 0) return;
  keep_side(original, repaired.solution, "offset_repair", work + repaired.work, target);
}

// A plan of a side (the problem, or its mirror with `original` the problem;
// a mirrored plan counts only within `target`) kept as the problem's.
void HeuristicRace::keep_side(const Problem* original, const Solution& plan, const char* method, int64_t work_to_plan,
                              int64_t target) {
  if (!original) keep(plan, method, work_to_plan);
  else if (plan.height <= target) keep(mirror_plan(*original, plan, target), method, work_to_plan);
}

// A search's plan, found after `work_to_plan` units of this thread's work, if lower.
void HeuristicRace::keep(const Solution& solution, const char* method, int64_t work_to_plan) {
  if (!plan_.method.empty() && solution.height >= plan_.solution.height) return;
  plan_ = HeuristicPlan{solution, method, work_to_plan};
}

void HeuristicRace::join() {
  if (thread_.joinable()) thread_.join();
}

bool HeuristicRace::heuristic_wins(int64_t height, int64_t work_to_plan) {
  join();
  if (error_) std::rethrow_exception(error_);
  // A plan found past the other side's line does not count: how far past it
  // that side got before it saw the line depends on timing.
  if (plan_.method.empty() || plan_.work_to_plan > heuristic_line_.load()) return false;
  if (plan_.solution.height <= target_ && work_to_plan > plan_.work_to_plan) return true;  // past exact_line_
  return plan_.solution.height < height || (plan_.solution.height == height && plan_.work_to_plan < work_to_plan);
}

}  // namespace tinyarena::allocation
