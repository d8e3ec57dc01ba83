// Allocation problems and solutions as CSV, MiniMalloc's interchange format:
// a header naming the columns `id,lower,upper,size` with optional
// `alignment` and `offset` (as MiniMalloc's reader: `begin`/`start` name
// `lower`, `buffer`/`buffer_id` name `id`, and an `end` column is an
// inclusive end), then one buffer per line. Lifetimes in the file
// are half-open [lower, upper); in a Problem they are inclusive [first, last].
// `offset` in a problem pins the buffer; in a solution it is the placement.
#pragma once

#include <string>

#include "tinyarena/allocation/problem.h"

namespace tinyarena::interchange {

struct CsvProblem {
  allocation::Problem problem;
  // Offsets given in the file (a solution), -1 where a row has none.
  std::vector<int64_t> offsets;
};

// Throws std::invalid_argument naming the line and column that is wrong.
CsvProblem parse_problem_csv(const std::string& text);

// With `solution`, every row gets its offset; else pinned offsets only.
std::string write_problem_csv(const allocation::Problem& problem, const allocation::Solution* solution = nullptr);

}  // namespace tinyarena::interchange
