// Time-sweep tiling search for plans without waste. Where the live bytes
// of each span no buffer crosses are the same at every one of its steps,
// a plan of that height without waste tiles the span's address range at
// every step: at each event the buffers starting there exactly fill the
// holes the buffers ending there leave. So the search sweeps the events in
// time order, keeping the live buffers in address order, and at each event
// tiles the holes bottom-up with the starting buffers (pins where they are
// pinned, alignments kept, interchangeable buffers tried once). A layout
// from which an event was once found untileable is remembered (its event
// and its buffers in address order decide the rest). Few buffers change at
// each event, so wrong choices die at the next event that ends them; it is
// the search for plans that are not nested (brick patterns), where the
// nested-cut search (guillotine.h) gives up at once.
#pragma once

#include <cstdint>
#include <optional>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/common/work_budget.h"

namespace tinyarena::allocation {

struct TimeSweepOptions {
  static constexpr double kDefaultSeconds = 0.05;
  WorkBudget budget{kDefaultSeconds};  // deterministic work (WorkBudget(0): none)
};

struct TimeSweepResult {
  std::optional<Solution> solution;  // a plan of the height asked for, if found
  int64_t work = 0;                  // work units spent
  bool complete = false;             // not found, and every tiling was refuted (the budget did not stop it)
};

// A plan of `height` without waste inside any span no buffer crosses (each
// such span's live bytes the same at every step, its waste on top); none if
// some span's live bytes vary.
TimeSweepResult time_sweep_search(const Problem& problem, int64_t height, TimeSweepOptions options = {});

}  // namespace tinyarena::allocation
