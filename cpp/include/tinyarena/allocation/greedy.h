// Greedy placement in a fixed order: the classic size-ordered heuristics.
#pragma once

#include <string>
#include <vector>

#include "tinyarena/allocation/problem.h"

namespace tinyarena::allocation {

// Places buffers in the given order; each goes to the lowest aligned offset
// where it fits beside the already placed buffers whose lifetimes overlap
// (first fit) or into the smallest such gap (best fit). Pinned buffers are
// placed first, at their offsets.
Solution place_first_fit(const Problem& problem, const std::vector<int>& order);
Solution place_best_fit(const Problem& problem, const std::vector<int>& order);

// TFLite Micro's GreedyMemoryPlanner order: size descending, equal sizes in
// reverse buffer order (TFLM inserts buffers last-first, then sorts stably).
std::vector<int> size_descending_order(const Problem& problem);

// Other orders to seed searches with (ties: lower index first): area
// (size x lifetime), lifetime, and Vela-style urgency (the most bytes live
// at any step of the buffer's lifetime, then size).
std::vector<int> area_descending_order(const Problem& problem);
std::vector<int> lifetime_descending_order(const Problem& problem);
std::vector<int> urgency_order(const Problem& problem);

// TFLM's rule: size-descending order, first fit.
Solution greedy_size_first_fit(const Problem& problem);
// Pisarchyk & Lee, "Efficient memory management for deep neural net
// inference" (2020): size-descending order, best fit.
Solution greedy_size_best_fit(const Problem& problem);

// The lower of the two greedy plans (first fit at equal height); `method`
// is set to its name.
Solution best_greedy_plan(const Problem& problem, std::string& method);

}  // namespace tinyarena::allocation
