#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "numpy_views.h"
#include "tinyarena/allocation/allocators.h"
#include "tinyarena/allocation/exact.h"
#include "tinyarena/allocation/fixed_capacity.h"
#include "tinyarena/allocation/local_search.h"
#include "tinyarena/allocation/greedy.h"
#include "tinyarena/allocation/guillotine.h"
#include "tinyarena/allocation/pin_repair.h"
#include "tinyarena/allocation/time_sweep.h"
#include "tinyarena/allocation/hierarchy.h"
#include "tinyarena/allocation/lower_bound.h"
#include "tinyarena/allocation/skyline.h"
#include "tinyarena/allocation/validator.h"

namespace py = pybind11;

namespace tinyarena::bindings {
namespace {

using allocation::Buffer;
using allocation::Problem;
using allocation::Solution;

// `name` as a function of a Problem (tinyarena.allocation.name(problem, ...)) and as its method.
template <class F, class... Extra>
void def_function_and_method(py::module_& m, py::class_<Problem>& problem, const char* name, F&& f,
                             const Extra&... extra) {
  m.def(name, f, py::arg("problem"), extra...);
  problem.def(name, f, extra...);
}

// The outcome of a search for a plan without waste: its plan (None if not
// found), whether it found one, its work, and whether it refuted them all.
template <class Result>
py::class_<Result> bind_waste_free_result(py::module_& m, const char* name, const char* doc) {
  return py::class_<Result>(m, name, doc)
      .def_property_readonly("solution", [](const Result& r) { return r.solution; })
      .def_property_readonly("found", [](const Result& r) { return r.solution.has_value(); })
      .def_readonly("work", &Result::work)
      .def_readonly("complete", &Result::complete)
      .def("__repr__", [name](const Result& r) {
        return "<" + std::string(name) + (r.solution ? " found height " + std::to_string(r.solution->height) + " B"
                                                      : std::string(r.complete ? " refuted" : " not found")) + ">";
      });
}

py::class_<Problem> bind_types(py::module_& m) {
  py::class_<Buffer>(m, "Buffer", "A buffer to place: size, inclusive lifetime [first, last], alignment, pin.")
      .def(py::init([](int64_t size, int32_t first, int32_t last, int64_t alignment, std::optional<int64_t> offset,
                       std::string name) { return Buffer{std::move(name), size, first, last, alignment, offset}; }),
           py::arg("size"), py::arg("first"), py::arg("last"), py::arg("alignment") = 1,
           py::arg("fixed_offset") = py::none(), py::arg("name") = "")
      .def_readonly("name", &Buffer::name)
      .def_readonly("size", &Buffer::size)
      .def_readonly("first", &Buffer::first)
      .def_readonly("last", &Buffer::last)
      .def_readonly("alignment", &Buffer::alignment)
      .def_readonly("fixed_offset", &Buffer::fixed_offset)
      .def("__repr__", [](const Buffer& b) {
        return "<Buffer '" + b.name + "' " + std::to_string(b.size) + " B [" + std::to_string(b.first) + ", " +
               std::to_string(b.last) + "]>";
      });
  py::class_<Problem> problem(m, "Problem",
                      "An allocation problem: buffers to place (size, inclusive lifetime [first, last], alignment, "
                      "optional pin) and a capacity (0: unlimited). Build it from Buffers, "
                      "Problem.from_arrays, Problem.from_csv or plan.problem; solve it with solve(), solve_exact() "
                      "or local_search().");
  problem.def(py::init([](std::vector<Buffer> buffers, int64_t capacity) { return Problem{std::move(buffers), capacity}; }),
           py::arg("buffers"), py::arg("capacity") = 0)
      .def_readonly("buffers", &Problem::buffers)
      .def_readonly("capacity", &Problem::capacity)
      .def_property_readonly("sizes", [](const Problem& p) {
        std::vector<int64_t> v;
        for (const auto& b : p.buffers) v.push_back(b.size);
        return readonly_array(v);
      })
      .def_property_readonly("first", [](const Problem& p) {
        std::vector<int32_t> v;
        for (const auto& b : p.buffers) v.push_back(b.first);
        return readonly_array(v);
      })
      .def_property_readonly("last", [](const Problem& p) {
        std::vector<int32_t> v;
        for (const auto& b : p.buffers) v.push_back(b.last);
        return readonly_array(v);
      })
      .def_property_readonly("alignment", [](const Problem& p) {
        std::vector<int64_t> v;
        for (const auto& b : p.buffers) v.push_back(b.alignment);
        return readonly_array(v);
      })
      .def_property_readonly("fixed_offsets", [](const Problem& p) {
        std::vector<int64_t> v;
        for (const auto& b : p.buffers) v.push_back(b.fixed_offset.value_or(-1));
        return readonly_array(v);
      }, "The pinned offset of every buffer, -1 where it is free.")
      .def_property_readonly("lower_bound", &allocation::lower_bound_bytes,
                             "The largest total size live at one step: no placement is lower.")
      .def("__len__", [](const Problem& p) { return p.buffers.size(); })
      .def("__repr__", [](const Problem& p) {
        int64_t total = 0;
        for (const auto& b : p.buffers) total += b.size;
        return "<Problem " + std::to_string(p.buffers.size()) + " buffers, " + std::to_string(total) +
               " B in all, lower bound " + std::to_string(allocation::lower_bound_bytes(p)) + " B" +
               (p.capacity ? ", capacity " + std::to_string(p.capacity) + " B>" : ">");
      });
  py::class_<Solution>(m, "Solution", "An offset per buffer and the resulting height.")
      .def(py::init([](std::vector<int64_t> offsets, int64_t height) { return Solution{std::move(offsets), height}; }),
           py::arg("offsets"), py::arg("height"))
      .def_property_readonly("offsets", [](const Solution& s) { return readonly_array(s.offsets); })
      .def_readonly("height", &Solution::height)
      .def("__repr__", [](const Solution& s) {
        return "<Solution height " + std::to_string(s.height) + " B, " + std::to_string(s.offsets.size()) + " offsets>";
      });
  return problem;
}

void bind_exact(py::module_& m, py::class_<Problem>& problem) {
  using allocation::ExactResult;
  using allocation::SearchBudget;
  py::class_<ExactResult>(m, "ExactResult", "Best plan found, proven lower bound, and whether it is optimal.")
      .def_readonly("solution", &ExactResult::solution)
      .def_readonly("method", &ExactResult::method)
      .def_readonly("lower_bound", &ExactResult::lower_bound)
      .def_readonly("proven_optimal", &ExactResult::proven_optimal)
      .def_readonly("capacity_met", &ExactResult::capacity_met)
      .def_readonly("capacity_refuted", &ExactResult::capacity_refuted)
      .def_readonly("nodes", &ExactResult::nodes)
      .def_readonly("work", &ExactResult::work)
      .def_readonly("work_to_plan", &ExactResult::work_to_plan)
      .def_readonly("seconds", &ExactResult::seconds)
      .def_property_readonly("gap", &ExactResult::gap)
      .def_property_readonly("offsets", [](const ExactResult& r) { return readonly_array(r.solution.offsets); })
      .def_property_readonly("height", [](const ExactResult& r) { return r.solution.height; })
      .def("__repr__", [](const ExactResult& r) {
        return "<ExactResult height " + std::to_string(r.solution.height) + " B by " + r.method + ", lower bound " +
               std::to_string(r.lower_bound) + " B" + (r.proven_optimal ? ", proven optimal>" : ">");
      });
  const auto exact = [](const Problem& p, double seconds, int64_t node_limit, std::optional<Solution> start,
                        double wall_seconds) {
    py::gil_scoped_release release;
    return allocation::solve_exact(p, SearchBudget{WorkBudget(seconds, wall_seconds), node_limit},
                                   start ? &*start : nullptr);
  };
  const char* exact_doc =
      "The exact search (MiniMalloc-class: canonical placements, timeline sections, dominance, with the "
      "nested-cut, time-sweep, pin-repair and skyline searches as primal heuristics) for the lowest plan "
      "within `seconds` of deterministic work (same plan on every run) and `node_limit` nodes (0: none); "
      "`start`: a Solution to improve on; `wall_seconds` > 0 adds a wall-clock cap (load-dependent). Returns "
      "an ExactResult: solution, lower_bound, proven_optimal, capacity_met/refuted and the method that found it.";
  def_function_and_method(m, problem, "solve_exact", exact, py::arg("seconds") = 1.0, py::arg("node_limit") = 0,
                          py::arg("start") = py::none(), py::arg("wall_seconds") = 0.0, exact_doc);
  const auto fixed = [](const Problem& p, double seconds, int64_t node_limit, std::optional<Solution> start,
                        double wall_seconds) {
    py::gil_scoped_release release;
    return allocation::solve_fixed_capacity(p, SearchBudget{WorkBudget(seconds, wall_seconds), node_limit},
                                            start ? &*start : nullptr);
  };
  const char* fixed_doc =
      "Any plan within the problem's capacity (> 0), found as fast as possible: the greedy plans, then the "
      "depth-first search over canonical placements at the capacity (bottom-up and, where alignments allow, "
      "top-down) raced against the skyline search (where a buffer is pinned: pin repair, then hill climbing over "
      "first-fit orders with a repair of each climb's offsets, and the skyline search, in rounds); the "
      "first plan that fits wins (same plan on every run). Not minimized. Returns an ExactResult: "
      "capacity_met, capacity_refuted (proven: nothing fits), the method and lower bound.";
  def_function_and_method(m, problem, "solve_fixed_capacity", fixed, py::arg("seconds") = 1.0,
                          py::arg("node_limit") = 0, py::arg("start") = py::none(), py::arg("wall_seconds") = 0.0,
                          fixed_doc);
  using allocation::LocalSearchOptions;
  using allocation::LocalSearchResult;
  py::class_<LocalSearchResult>(m, "LocalSearchResult", "Best plan of the hill climbing and its order.")
      .def_readonly("solution", &LocalSearchResult::solution)
      .def_property_readonly("offsets", [](const LocalSearchResult& r) { return readonly_array(r.solution.offsets); })
      .def_property_readonly("height", [](const LocalSearchResult& r) { return r.solution.height; })
      .def_property_readonly("order", [](const LocalSearchResult& r) { return readonly_array(r.order); })
      .def_readonly("iterations", &LocalSearchResult::iterations)
      .def_readonly("work", &LocalSearchResult::work)
      .def_readonly("seconds", &LocalSearchResult::seconds)
      .def("__repr__", [](const LocalSearchResult& r) {
        return "<LocalSearchResult height " + std::to_string(r.solution.height) + " B after " +
               std::to_string(r.iterations) + " iterations>";
      });
  def_function_and_method(
      m, problem, "local_search",
      [](const Problem& p, int64_t iterations, double seconds, uint64_t seed, double wall_seconds) {
        py::gil_scoped_release release;
        return allocation::local_search(p, LocalSearchOptions{iterations, WorkBudget(seconds, wall_seconds), seed});
      },
      py::arg("iterations") = LocalSearchOptions{}.iterations, py::arg("seconds") = LocalSearchOptions::kDefaultSeconds,
      py::arg("seed") = 1, py::arg("wall_seconds") = 0.0,
      "Hill climbing over first-fit orders, seeded by the greedy orders: at most `iterations` moves (0: no limit) "
      "within `seconds` of deterministic work; `seed` picks the moves; `wall_seconds` > 0 adds a wall-clock cap. "
      "Returns a LocalSearchResult (solution, order, iterations).");
  using allocation::SkylineOptions;
  using allocation::SkylineResult;
  py::class_<SkylineResult>(m, "SkylineResult", "Lowest plan of the skyline constructions.")
      .def_readonly("solution", &SkylineResult::solution)
      .def_property_readonly("offsets", [](const SkylineResult& r) { return readonly_array(r.solution.offsets); })
      .def_property_readonly("height", [](const SkylineResult& r) { return r.solution.height; })
      .def_readonly("constructions", &SkylineResult::constructions)
      .def_readonly("work", &SkylineResult::work)
      .def_readonly("work_to_best", &SkylineResult::work_to_best)
      .def_readonly("seconds", &SkylineResult::seconds)
      .def("__repr__", [](const SkylineResult& r) {
        return "<SkylineResult height " + std::to_string(r.solution.height) + " B from " +
               std::to_string(r.constructions) + " constructions>";
      });
  m.def("skyline_search",
        [](const Problem& p, int64_t constructions, int64_t backtracks, double seconds, uint64_t seed,
           double wall_seconds) {
          py::gil_scoped_release release;
          return allocation::skyline_search(
              p, SkylineOptions{constructions, backtracks, WorkBudget(seconds, wall_seconds), seed});
        },
        py::arg("problem"), py::arg("constructions") = SkylineOptions{}.constructions,
        py::arg("backtracks") = SkylineOptions{}.backtracks, py::arg("seconds") = SkylineOptions::kDefaultSeconds,
        py::arg("seed") = 1,
        py::arg("wall_seconds") = 0.0,
        "Skyline best-fit constructions (waste-free search per construction, then greedy); the lowest plan.");
  using allocation::GuillotineOptions;
  using allocation::GuillotineResult;
  bind_waste_free_result<GuillotineResult>(m, "GuillotineResult", "Outcome of the nested-cut search for a plan without waste.")
      .def_readonly("parts", &GuillotineResult::parts);
  m.def("guillotine_search",
        [](const Problem& p, int64_t height, double seconds, int32_t max_choices) {
          py::gil_scoped_release release;
          return allocation::guillotine_search(p, height, GuillotineOptions{WorkBudget(seconds), max_choices});
        },
        py::arg("problem"), py::arg("height"), py::arg("seconds") = GuillotineOptions::kDefaultSeconds,
        py::arg("max_choices") = GuillotineOptions{}.max_choices,
        "A nested-cut plan of `height` with no waste between buffers, if one is found (`solution` is None "
        "otherwise; `complete`: every choice within its reach was refuted).");
  using allocation::TimeSweepOptions;
  using allocation::TimeSweepResult;
  bind_waste_free_result<TimeSweepResult>(m, "TimeSweepResult",
                                          "Outcome of the time-sweep tiling search for a plan without waste.");
  m.def("time_sweep_search",
        [](const Problem& p, int64_t height, double seconds) {
          py::gil_scoped_release release;
          return allocation::time_sweep_search(p, height, TimeSweepOptions{WorkBudget(seconds)});
        },
        py::arg("problem"), py::arg("height"), py::arg("seconds") = TimeSweepOptions::kDefaultSeconds,
        "A plan of `height` with no waste between buffers found by sweeping the time line (the buffers "
        "starting at each event fill the holes of those ending there), if one is found (`solution` is None "
        "otherwise; `complete`: every tiling was refuted).");
  using allocation::PinRepairResult;
  py::class_<PinRepairResult>(m, "PinRepairResult", "Outcome of pin repair: a plan honouring the pins, if found.")
      .def_property_readonly("solution", [](const PinRepairResult& r) { return r.solution; })
      .def_property_readonly("found", [](const PinRepairResult& r) { return r.solution.has_value(); })
      .def_readonly("work", &PinRepairResult::work);
  m.def("pin_repair_search",
        [](const Problem& p, int64_t height, double seconds) {
          py::gil_scoped_release release;
          return allocation::pin_repair_search(p, height, WorkBudget(seconds));
        },
        py::arg("problem"), py::arg("height"), py::arg("seconds") = allocation::kPinRepairDefaultSeconds,
        "A plan of `height` honouring the pins, made by rearranging the layers of a nested-cut plan of the "
        "problem without its pins (`solution` is None if none is found).");
  m.def("describe_capacity", &allocation::describe_capacity, py::arg("problem"), py::arg("result"));
}

void bind_hierarchy(py::module_& m) {
  using allocation::BufferRules;
  using allocation::HierarchyProblem;
  using allocation::HierarchySolution;
  using allocation::Memory;
  py::class_<Memory>(m, "Memory", "One memory of a hierarchy: name, size, alignment, base address.")
      .def(py::init([](std::string name, int64_t size, int64_t alignment, uint64_t base_address) {
             Memory memory{std::move(name), size, alignment, base_address};
             allocation::check_memory(memory);
             return memory;
           }),
           py::arg("name"), py::arg("size"), py::arg("alignment") = 16, py::arg("base_address") = 0)
      .def_readonly("name", &Memory::name)
      .def_readonly("size", &Memory::size)
      .def_readonly("alignment", &Memory::alignment)
      .def_readonly("base_address", &Memory::base_address)
      .def("__repr__", [](const Memory& mem) {
        return "<Memory '" + mem.name + "' " + std::to_string(mem.size) + " B, alignment " +
               std::to_string(mem.alignment) + ">";
      });
  py::class_<BufferRules>(m, "BufferRules", "Placement rules of one buffer in a hierarchy.")
      .def(py::init([](int32_t memory, std::vector<int32_t> blocked, int32_t inside, int64_t inside_offset,
                       int64_t accessed_bytes) {
             return BufferRules{memory, std::move(blocked), inside, inside_offset, accessed_bytes};
           }),
           py::arg("memory") = -1, py::arg("blocked") = std::vector<int32_t>{}, py::arg("inside") = -1,
           py::arg("inside_offset") = 0, py::arg("accessed_bytes") = -1)
      .def_readonly("memory", &BufferRules::memory)
      .def_readonly("blocked", &BufferRules::blocked)
      .def_readonly("inside", &BufferRules::inside)
      .def_readonly("inside_offset", &BufferRules::inside_offset)
      .def_readonly("accessed_bytes", &BufferRules::accessed_bytes);
  py::class_<HierarchyProblem>(m, "HierarchyProblem", "Buffers, memories (fastest first) and per-buffer rules.")
      .def(py::init([](std::vector<Memory> memories, Problem problem, std::vector<BufferRules> rules) {
             return HierarchyProblem{std::move(memories), std::move(problem), std::move(rules)};
           }),
           py::arg("memories"), py::arg("problem"), py::arg("rules") = std::vector<BufferRules>{})
      .def_readonly("memories", &HierarchyProblem::memories)
      .def_readonly("problem", &HierarchyProblem::problem)
      .def_readonly("rules", &HierarchyProblem::rules);
  py::class_<HierarchySolution>(m, "HierarchySolution", "Memory and offset of every buffer; per-memory peaks.")
      .def_property_readonly("memory", [](const HierarchySolution& s) { return readonly_array(s.memory); })
      .def_property_readonly("offsets", [](const HierarchySolution& s) { return readonly_array(s.offsets); })
      .def_property_readonly("heights", [](const HierarchySolution& s) { return readonly_array(s.heights); })
      .def_property_readonly("accessed_bytes",
                             [](const HierarchySolution& s) { return readonly_array(s.accessed_bytes); })
      .def_property_readonly("proven_optimal",
                             [](const HierarchySolution& s) { return std::vector<bool>(s.proven_optimal); })
      .def_property_readonly("lower_bounds", [](const HierarchySolution& s) { return readonly_array(s.lower_bounds); })
      .def("__repr__", [](const HierarchySolution& s) {
        std::string heights;
        for (int64_t h : s.heights) heights += (heights.empty() ? "" : ", ") + std::to_string(h);
        return "<HierarchySolution " + std::to_string(s.offsets.size()) + " buffers, heights [" + heights + "] B>";
      });
  const auto refined = [](auto place) {
    return [place](const HierarchyProblem& h, const std::string& allocator, double seconds, double wall_seconds) {
      py::gil_scoped_release release;
      allocation::AllocatorOptions options;
      options.seconds = seconds;
      options.wall_seconds = wall_seconds;
      return place(h, allocator, options);
    };
  };
  m.def("place_in_hierarchy", refined(&allocation::place_in_hierarchy), py::arg("problem"), py::arg("allocator") = "",
        py::arg("seconds") = 0.3, py::arg("wall_seconds") = 0.0,
        "Place buffers across memories, keeping the most accessed bytes in the fastest ones. With `allocator` "
        "(a name of allocator_names(), e.g. 'auto'), each memory's buffers are then placed by it (within "
        "`seconds` of deterministic work) when that lowers the memory's peak.");
  m.def("place_fastest_first", refined(&allocation::place_fastest_first), py::arg("problem"), py::arg("allocator") = "",
        py::arg("seconds") = 0.3, py::arg("wall_seconds") = 0.0,
        "Baseline: largest first, each into the fastest allowed memory where it fits (then, with `allocator`, "
        "each memory's buffers placed by it when that lowers the peak).");
  m.def("place_fewest_bytes", refined(&allocation::place_fewest_bytes), py::arg("problem"), py::arg("allocator") = "",
        py::arg("seconds") = 0.3, py::arg("wall_seconds") = 0.0,
        "Of place_in_hierarchy's and place_fastest_first's plans (each memory placed by `allocator`), the one with "
        "the fewest bytes summed over the memories; of equal sums, the one with more bytes accessed in the faster "
        "memories.");
  m.def("validate_hierarchy", &allocation::validate_hierarchy, py::arg("problem"), py::arg("solution"));
}

}  // namespace

void bind_allocation(py::module_& m) {
  py::class_<Problem> problem = bind_types(m);
  bind_hierarchy(m);
  bind_exact(m, problem);
  m.def("greedy_size_first_fit", &allocation::greedy_size_first_fit, py::arg("problem"),
        "TFLite Micro's greedy planner: size descending (ties last-first), first fit.");
  m.def("greedy_size_best_fit", &allocation::greedy_size_best_fit, py::arg("problem"),
        "Size descending, best fit (Pisarchyk & Lee 2020).");
  using allocation::AllocationResult;
  py::class_<AllocationResult>(m, "AllocationResult", "A plan, the allocator that made it, and whether it is optimal.")
      .def_readonly("solution", &AllocationResult::solution)
      .def_property_readonly("offsets", [](const AllocationResult& r) { return readonly_array(r.solution.offsets); })
      .def_property_readonly("height", [](const AllocationResult& r) { return r.solution.height; })
      .def_readonly("method", &AllocationResult::method)
      .def_readonly("proven_optimal", &AllocationResult::proven_optimal)
      .def_readonly("lower_bound", &AllocationResult::lower_bound)
      .def_property_readonly("gap", [](const AllocationResult& r) { return r.solution.height - r.lower_bound; })
      .def("__repr__", [](const AllocationResult& r) {
        return "<AllocationResult height " + std::to_string(r.solution.height) + " B by " + r.method + ", lower bound " +
               std::to_string(r.lower_bound) + " B" + (r.proven_optimal ? ", proven optimal>" : ">");
      });
  const auto run = [](const Problem& p, const std::string& allocator, double seconds, int64_t node_limit, uint64_t seed,
                      double wall_seconds) {
    py::gil_scoped_release release;
    return allocation::run_allocator(p, allocator, allocation::AllocatorOptions{seconds, node_limit, seed, wall_seconds});
  };
  const char* run_doc =
      "Place the buffers with the allocator named `allocator` (one of allocator_names(); 'auto': greedy first "
      "fit, and if it misses the lower bound the exact search from the better greedy plan). `seconds`: budget "
      "of the searching allocators as deterministic work (about that many seconds on the reference machine: "
      "the same plan on every run); `node_limit`: exact-search nodes (0: none); `seed`: of the randomised "
      "searches; `wall_seconds` > 0 adds a wall-clock cap (the plan then depends on load). Returns an "
      "AllocationResult: solution, height, method (what found the plan), lower_bound, proven_optimal.";
  m.def("allocate", run, py::arg("problem"), py::arg("allocator") = "auto", py::arg("seconds") = 0.3,
        py::arg("node_limit") = 0, py::arg("seed") = 1, py::arg("wall_seconds") = 0.0, run_doc);
  problem.def("solve", run, py::arg("allocator") = "auto", py::arg("seconds") = 0.3, py::arg("node_limit") = 0,
              py::arg("seed") = 1, py::arg("wall_seconds") = 0.0, run_doc);
  m.def("allocator_names", &allocation::allocator_names);
  m.def("lower_bound_bytes", &allocation::lower_bound_bytes, py::arg("problem"),
        "The largest total size live at one step: no allocation can be lower.");
  m.def("live_bytes_per_step", [](const Problem& p) { return readonly_array(allocation::live_bytes_per_step(p)); },
        py::arg("problem"));
  m.def("validate", &allocation::validate, py::arg("problem"), py::arg("solution"), py::arg("max_errors") = 20,
        "Violations of the solution (overlap in time and address, alignment, pins, height); empty if valid.");
}

}  // namespace tinyarena::bindings
