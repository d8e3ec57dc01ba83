// Fixed-capacity allocation: any plan within problem.capacity, found as fast
// as possible (MiniMalloc's question), rather than the lowest plan. Where the
// lower bound lies below the capacity (slack), a search aimed at the bound
// spends its budget on plans nobody asked for; this one stops at the first
// plan that fits.
//
// 1. The greedy plans (first fit, best fit; or `start`): the lower one if it
//    fits -- done.
// 2. The lower bound (live bytes, pinned tops) above the capacity: refuted --
//    nothing fits, and the result says so (capacity_refuted).
// 3. The depth-first search over canonical placements at the capacity
//    (canonical_search.h: each buffer at the lowest offset in canonical
//    order, pruned by the section and cut bounds, dominance, remembered
//    failed states; buffer orders in turn under limited discrepancies, then
//    complete), bottom-up and -- where every alignment divides its buffer's
//    size and the capacity -- top-down on the problem mirrored in the
//    capacity, in turn, in rounds of doubling work from 2^20 units (pins high
//    up are ceilings the bottom-up search packs under blindly; mirrored they
//    are floors), raced against pin repair and the skyline search aimed at
//    the capacity -- half its budget on the problem, half on its mirror --
//    on a second thread (heuristic_race.h); where a buffer is pinned, after
//    pin repair the second thread runs hill climbing over first-fit orders
//    (local_search.h: first fit places each buffer clear of every pin; a
//    plan is judged by its bytes above the capacity; two-sided: a buffer may
//    go to the highest offset where it fits below the capacity, and a move
//    may turn one the other way up), each climb short of the capacity
//    followed by the offset repair of its plan (offset_repair.h), and the
//    skyline search, each on the problem and on its mirror, in rounds of
//    doubling work (from 2^22 units; each round's climb from another random
//    seed and another seed order: size, area, lifetime, urgency in turn).
//    The side that finds a
//    plan within the capacity first, counted in work, wins, and the other
//    stops past that work: the same plan on every run.
// 4. A complete search without a plan refutes the capacity; a spent budget
//    returns the lowest plan seen (capacity_met false, not refuted).
// Limits: the plan is not minimized (proven_optimal only where it meets the
// bound); below 1 ms of budget or where the search's set-up does not fit the
// budget (thousands of long-lived buffers), only the heuristics run.
#pragma once

#include "tinyarena/allocation/exact.h"
#include "tinyarena/allocation/problem.h"

namespace tinyarena::allocation {

// A plan within problem.capacity (which must be > 0; std::invalid_argument
// otherwise, and for contradictory pins) within the budget. `start`, if
// given, is a valid plan to begin from (else the greedy plans).
ExactResult solve_fixed_capacity(const Problem& problem, SearchBudget budget = {}, const Solution* start = nullptr);

}  // namespace tinyarena::allocation
