// The schedule stage: an op order that lowers the peak of live bytes (the
// allocation lower bound) on branchy graphs. Exact search over the sets of
// ops already run when the graph is small enough; beyond, beam search (up to
// a size) and local improvement (single-op moves, exact search in windows
// around the peak); the answer is measured with the liveness stage and never
// worse than file order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/liveness/liveness.h"

namespace tinyarena::schedule {

enum class Method { Auto, Exact, Beam, Greedy, File, Local };

const char* method_name(Method method);
// Throws std::invalid_argument for a name other than auto, exact, beam, local, greedy, file.
Method parse_method(const std::string& name);

struct ScheduleOptions {
  liveness::LivenessOptions liveness;
  int64_t alignment = 16;        // buffer sizes rounded up to this, as the planner does
  // Auto: exact search up to exact_max_ops ops and within the budgets, else
  // beam search up to beam_max_ops ops, then local improvement; all start from
  // the best of the file order, two greedy orders and the demand-driven order.
  // Local: those orders and local improvement only.
  Method method = Method::Auto;
  int32_t exact_max_ops = 100;
  int64_t max_states = 1000000;      // exact search gives up (falls back to beam) beyond this many states
  double time_limit_seconds = 10.0;  // per search, as deterministic work (WorkBudget; 0 = none)
  int32_t beam_width = 64;           // states kept per level by beam search
  int32_t beam_max_ops = 400;        // Auto: larger graphs skip beam search (its work grows as ops squared)
};

struct ScheduleResult {
  std::vector<int32_t> order;  // op indices, each once, a topological order
  int64_t peak_bytes = 0;      // lower bound of `order`, measured with the liveness stage
  int64_t file_peak_bytes = 0; // the same for the file's order
  // What gave the answer: file (file order only: method file, or one op), greedy (the start
  // orders only), exact (the exact search ran last, or a search completed), beam (beam search ran
  // last without completing) or local (local improvement lowered the peak).
  Method method = Method::File;
  bool proven_optimal = false;   // no order has a lower peak (exact search completed)
  int64_t states = 0;            // states the exact search stored
  double seconds = 0;
};

// Throws std::invalid_argument unless the alignment is a power of two; liveness errors propagate.
ScheduleResult find_schedule(const graph::Graph& graph, const ScheduleOptions& options = {});

// The allocation lower bound of `order` (empty = file order), by the
// liveness stage: what every schedule here is judged by.
int64_t order_peak_bytes(const graph::Graph& graph, const std::vector<int32_t>& order,
                         const liveness::LivenessOptions& liveness, int64_t alignment);

}  // namespace tinyarena::schedule
