// The tiling search: which runs of consecutive tileable ops become segments,
// in which mode (row streaming, patches) and with which parameters, to
// minimise peak SRAM under a MAC budget (Objective::Size), or the predicted
// instructions of a plan that fits the SRAM limit (Objective::Speed). A dynamic program over segment
// boundaries keeps, at each schedule position, the Pareto set of (peak, MACs)
// of the schedule so far; a segment's cost is the bytes live during it
// (every buffer crossing its span, its rings or per-patch buffers, scratch).
// Every Pareto point is then planned exactly (liveness + allocator).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/tiling/tiled_plan.h"

namespace tinyarena::tiling {

// What the search takes from the points within its budgets (choose_point):
// Size: the smallest peak (with an SRAM limit: the fewest MACs whose peak fits);
// Speed: the fewest instructions predicted by the cost model (op_params/cost_model.h) whose peak
// fits the SRAM limit (any peak without one). Either way, when no point fits, the smallest peak.
enum class Objective : uint8_t { Size = 0, Speed = 1 };
Objective parse_objective(const std::string& name);  // "size" or "speed"; else std::invalid_argument
const char* objective_name(Objective objective);

struct SearchOptions {
  TilingOptions tiling;
  bool rows = true;                            // consider row-streamed segments
  bool patches = false;                        // consider patch segments
  double max_mac_overhead = 1.0;               // the chosen schedule's MACs / untiled MACs at most this
  std::vector<int32_t> stripe_rows = {1};      // stripe heights tried (Rows)
  std::vector<int32_t> patch_grids = {2, 3, 4, 5, 6};  // n x n grids tried (Patches)
  int32_t max_front = 48;                      // Pareto points kept per position (spread over MACs)
  std::vector<int32_t> column_strips = {2, 3, 4};  // column strips tried on row segments (with `patches`:
                                                   // like patches, they recompute halos)
  // The chosen schedule's predicted instructions / the untiled schedule's at most this (the cost
  // model, op_params/cost_model.h: stripes and patches add kernel calls); 0 = no limit.
  double max_latency_overhead = 0;
  // Speed: the dynamic program keeps, per position, the Pareto states of (peak, predicted
  // instructions) within the MAC budget instead of (peak, MACs), so it finds the cheap plans that
  // tile only what the limit needs; the final front keeps instructions as a third objective.
  Objective objective = Objective::Size;
};

struct ParetoPoint {
  int64_t peak_bytes = 0;  // exact: the plan's allocated arena
  int64_t macs = 0;
  double mac_overhead = 1.0;
  std::vector<Segment> segments;
  TiledPlan plan;          // the point's plan, made with the search's TilingOptions
};

struct TilingSearch {
  // peak vs MACs, MACs ascending (peaks descending), each planned exactly; with a latency budget
  // also vs predicted instructions (a point stays unless one with no more MACs has no more peak
  // and no more instructions; the untiled point always stays)
  std::vector<ParetoPoint> front;
  // The point chosen (choose_point): with an SRAM limit, the fewest MACs (Speed: predicted
  // instructions) within the MAC (and latency) budget whose peak fits it; else, or when none fits,
  // the lowest peak within the budget (Speed without a limit: the fewest instructions).
  int32_t best_point = 0;
  int64_t untiled_peak_bytes = 0;    // the plain plan's arena
  int64_t candidates = 0;            // segments evaluated
  double seconds = 0;

  const TiledPlan& best() const { return front[best_point].plan; }
};

// The index of the point a search takes from `front` (MACs ascending), as TilingSearch::best_point says.
// With `max_latency_overhead` > 0 only points whose predicted instructions are at most that many
// times the untiled schedule's count (the untiled point always is). Ties go to the earlier point.
int32_t choose_point(const std::vector<ParetoPoint>& front, double max_mac_overhead, int64_t sram_limit,
                     double max_latency_overhead = 0, Objective objective = Objective::Size);

TilingSearch search_tiling(const graph::Graph& graph, const SearchOptions& options = {});

}  // namespace tinyarena::tiling
