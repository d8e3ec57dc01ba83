// Time-sweep tiling search for plans without waste. Where the live bytes
// of each span no buffer crosses are the same at every one of its steps,
// a plan of that height without waste tiles the span's address range at
// every step: at each event the buffers starting there exactly fill the
// holes the buffers ending there leave. So the search sweeps the events in
// time order, keeping the live buffers in address order, and at each event
// tiles the holes bottom-up with the starting buffers (pins where they are
// pinned, alignments kept, interchangeable buffers tried once, and of two
// free unaligned ones ending at the same event, one right on the other,
// only one order: either way they leave the same hole). Forward
// checking: once every buffer ending at a later event is placed, the holes
// they will leave are known (touching ones merge), and the buffers starting
// there must split into groups that fill them exactly. A failure records
// the events whose choices it depends on (those where the buffers involved
// were placed) and the search returns to the latest of them (conflict-
// directed backjumping); a layout refuted at an event is remembered (the
// event and its buffers in address order decide the rest). Few buffers
// change at each event of a brick pattern, so wrong choices die soon: it
// finds the plans that are not nested, where the nested-cut search
// (guillotine.h) gives up at once. Events where dozens of buffers start
// (nested plans' first steps) leave it little to check.
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
