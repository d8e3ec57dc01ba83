"""Stage 3: allocation -- place buffers (size, inclusive lifetime, alignment) at offsets.

One ``Problem`` type and one ``Solution`` type serve every allocator:

- ``greedy_size_first_fit``: TFLite Micro's rule (size descending, equal sizes
  last-first, first fit), so it predicts TFLM's arena byte for byte;
- ``greedy_size_best_fit``: size descending, best fit (Pisarchyk & Lee 2020);
- ``solve_exact``: MiniMalloc-class exact search (canonical placements, timeline
  sections, dominance) for the minimum height within a time/node budget, with the
  nested-cut, time-sweep, pin-repair and skyline searches as its primal heuristics (past 128
  buffers pin repair and the skyline search race the others on a second thread with a budget
  of their own: the plan is still the same on every run); says whether the plan is proven optimal, the proven lower bound, whether ``capacity`` is met or refuted,
  and which search found the plan (``method``);
- ``solve_fixed_capacity``: any plan within ``problem.capacity``, found as fast as possible
  (not the lowest): the greedy plans, then the same depth-first search at that capacity,
  bottom-up and top-down (mirrored, where alignments allow) in turn, raced against the skyline
  search; the first plan that fits wins (the same plan on every run);
  ``capacity_refuted`` when the bound or the search proves nothing fits. ``auto`` and ``exact``
  use it when the problem has a capacity;
- ``local_search``: hill climbing over first-fit orders seeded by the greedy orders;
- ``skyline_search``: skyline best-fit constructions -- fill the lowest floor first, the
  most constrained valley of the floor with buffers that leave no waste (a small
  depth-first search per construction), best fit where none does; several rankings and
  seeded random perturbations, the lowest plan wins (allocator name ``"skyline"``);
- ``guillotine_search(problem, height)``: a plan of ``height`` made of nested cuts with no
  waste between buffers -- a span no buffer crosses splits the buffers in time, a flat layer
  (the same live bytes at every step) goes below or above the rest -- or ``None`` (``complete``:
  every choice within its reach refuted); it applies where the live bytes leave no room to waste;
- ``time_sweep_search(problem, height)``: a plan of ``height`` with no waste between buffers
  found by sweeping the time line -- at each event the buffers starting there fill the holes
  of those ending there, bottom-up -- or ``None``; it finds plans that are not nested (brick
  patterns) where the nested-cut search gives up, and applies where it does;
- ``pin_repair_search(problem, height)``: a plan of ``height`` honouring the pins, made by
  rearranging a nested-cut plan of the problem without its pins: in each stack of layers the
  ones with pins go in the order of their lowest pins, each where its pins land, and the others
  fill the gaps between them exactly -- or ``None``;
- ``allocate(problem, allocator="auto", seconds=...)`` (or ``problem.solve(...)``): any of
  them by name, including ``"auto"`` (greedy; if above the lower bound, the exact search,
  nested-cut and skyline searches included, from the better greedy plan within the budget;
  with a capacity, first fit if it fits, else ``solve_fixed_capacity``; ``method`` names what
  found the plan).

Search budgets are deterministic: ``seconds`` is converted into an amount of search work
(about that many seconds on the reference machine, see ``benchmarks/budget_calibration.py``),
so the same problem and budget give byte-identical plans on every run, on any machine, under
any load. ``wall_seconds`` (default 0: none) adds a hard wall-clock cap; when it binds the
plan depends on the machine and its load.

``zero_slack_problem(n, seed=...)`` generates hard instances with a known optimum;
``slack_problem(n, seed=...)`` instances whose bound lies 2-10 % below a capacity they fit.

``Problem`` is the one problem type: ``Problem(buffers, capacity)``, ``Problem.from_arrays``,
``Problem.from_csv`` (MiniMalloc CSV) or ``plan.problem``; numpy views (``sizes``, ``first``,
``last``, ``alignment``, ``fixed_offsets``), the solvers as methods (``solve``, ``solve_exact``,
``local_search``), ``validate``, ``to_csv`` and ``plot``.

``lower_bound_bytes`` is the largest total live at one step; ``validate``
lists violations (overlap in time and address, misalignment, pins, height).

Memory hierarchies: ``HierarchyProblem(memories, problem, rules)`` with ``Memory`` entries
fastest first and per-buffer ``BufferRules`` (pinned memory, blocked memories, "lives at
offset k inside buffer j", accessed bytes); ``place_in_hierarchy`` keeps the most accessed
bytes in the fastest memories (exact for small groups of competing buffers);
``place_fastest_first`` is the greedy baseline; given an ``allocator`` name, both place each
memory's buffers with it when that lowers the memory's peak (``proven_optimal`` and
``lower_bounds`` per memory); ``place_fewest_bytes`` takes the one of their two plans with the
fewest bytes over all memories (of equal sums, the more accesses in the faster memories); ``hierarchy_from_plan`` builds the problem
of a plan, with each buffer's traffic estimated as its size times (1 write + its reads).
"""

import numpy as np

from ._core import (
    AllocationResult,
    Buffer,
    BufferRules,
    HierarchyProblem,
    HierarchySolution,
    Memory,
    Problem,
    Solution,
    allocate,
    allocator_names,
    describe_capacity,
    greedy_size_best_fit,
    greedy_size_first_fit,
    guillotine_search,
    live_bytes_per_step,
    local_search,
    lower_bound_bytes,
    pin_repair_search,
    place_fastest_first,
    place_fewest_bytes,
    place_in_hierarchy,
    skyline_search,
    solve_exact,
    solve_fixed_capacity,
    time_sweep_search,
    validate,
    validate_hierarchy,
)

__all__ = [
    "AllocationResult",
    "Buffer",
    "BufferRules",
    "HierarchyProblem",
    "HierarchySolution",
    "Memory",
    "hierarchy_from_plan",
    "place_fastest_first",
    "place_fewest_bytes",
    "place_in_hierarchy",
    "validate_hierarchy",
    "Problem",
    "Solution",
    "allocate",
    "allocator_names",
    "describe_capacity",
    "greedy_size_best_fit",
    "greedy_size_first_fit",
    "guillotine_search",
    "live_bytes_per_step",
    "local_search",
    "lower_bound_bytes",
    "pin_repair_search",
    "skyline_search",
    "solve_exact",
    "solve_fixed_capacity",
    "time_sweep_search",
    "validate",
    "slack_problem",
    "zero_slack_problem",
]


def _from_arrays(sizes, first, last, alignment=1, fixed_offsets=None, capacity=0):
    """A ``Problem`` from equal-length arrays (inclusive lifetimes ``[first, last]``);
    ``alignment`` a scalar or an array; ``fixed_offsets`` -1 (or None) where a buffer is free.
    Buffers are named by their index."""
    sizes, first, last = (np.asarray(a, dtype=np.int64).ravel() for a in (sizes, first, last))
    n = len(sizes)
    alignment = np.broadcast_to(np.asarray(alignment, dtype=np.int64), (n,))
    fixed = np.full(n, -1, dtype=np.int64) if fixed_offsets is None else np.asarray(fixed_offsets, dtype=np.int64)
    if not (len(first) == len(last) == len(fixed) == n):
        raise ValueError("sizes, first, last and fixed_offsets must have equal lengths")
    if n and (sizes.min() < 0 or first.min() < 0 or (last < first).any() or alignment.min() < 1):
        raise ValueError("sizes and first must be >= 0, last >= first, alignment >= 1")
    buffers = [Buffer(int(s), int(f), int(l), alignment=int(a), fixed_offset=int(o) if o >= 0 else None, name=str(i))
               for i, (s, f, l, a, o) in enumerate(zip(sizes, first, last, alignment, fixed))]
    return Problem(buffers, int(capacity))


def _from_csv(source, capacity=0):
    """A ``Problem`` from a MiniMalloc CSV (a path or the text); an ``offset`` column pins buffers."""
    import os

    from .interchange import read_problem_csv

    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source):
        if not os.path.exists(source):
            raise FileNotFoundError(f"no such problem file: {source}")
    problem, _ = read_problem_csv(source)
    return Problem(list(problem.buffers), int(capacity))


def _from_plan(plan):
    """The allocation problem of a plan (``plan.problem``)."""
    return plan.problem


def _solution(problem, offsets):
    """A ``Solution`` from an offsets array or any result with ``offsets``."""
    offsets = np.asarray(getattr(offsets, "offsets", offsets), dtype=np.int64)
    height = int((offsets + problem.sizes).max(initial=0)) if len(offsets) == len(problem) else 0
    return Solution(offsets.tolist(), height)


def _validate(problem, offsets):
    """Violations of a placement (an offsets array or a result with ``offsets``); empty when valid."""
    return validate(problem, _solution(problem, offsets))


def _to_csv(problem, path=None, offsets=None):
    """The problem as MiniMalloc CSV text (``id,lower,upper,size,alignment`` with half-open
    lifetimes, and an ``offset`` column when ``offsets`` -- an array or a result -- is given);
    also written to ``path`` when given."""
    from .interchange import write_problem_csv

    return write_problem_csv(problem, None if offsets is None else _solution(problem, offsets), path)


def _plot(problem, offsets, path=None, ax=None, title=None):
    """The allocation chart of a placement (an offsets array or a result); returns the ``Axes``."""
    from .plotting import plot_allocation

    return plot_allocation(problem.sizes, problem.first, problem.last, _solution(problem, offsets).offsets,
                           sram_limit=problem.capacity or None, ax=ax, title=title, path=path)


# The bound Problem is the one problem type; its conversions and file/chart helpers are these.
Problem.from_arrays = staticmethod(_from_arrays)
Problem.from_csv = staticmethod(_from_csv)
Problem.from_plan = staticmethod(_from_plan)
Problem.validate = _validate
Problem.to_csv = _to_csv
Problem.plot = _plot


def accessed_bytes(plan):
    """Estimated traffic per planned buffer: bytes x (1 write + 1 read per consuming op); scratch 2x.

    The bytes are the buffer's size, or the largest tensor it holds if that is larger: a ring or
    per-patch buffer of a tiled plan is rewritten until the whole tensor has passed through it.
    """
    graph = plan.graph
    traffic = []
    for b in plan.buffers:
        reads = sum(len(graph.tensors[t].consumers) for t in b.tensors) if b.tensors else 1
        passed = max([b.size] + [graph.tensors[t].byte_size for t in b.tensors])
        traffic.append(passed * (1 + reads))
    return np.array(traffic, dtype=np.int64)


def hierarchy_from_plan(plan, memories, rules=None):
    """The ``HierarchyProblem`` of a plan's buffers over ``memories`` (fastest first).

    ``rules`` maps buffer index -> ``BufferRules``; buffers without one get only their
    estimated traffic (``accessed_bytes``).
    """
    rules = dict(rules or {})
    traffic = accessed_bytes(plan)
    all_rules = []
    for i, t in enumerate(traffic):
        r = rules.get(i)
        all_rules.append(BufferRules(memory=r.memory, blocked=list(r.blocked), inside=r.inside,
                                     inside_offset=r.inside_offset,
                                     accessed_bytes=r.accessed_bytes if r.accessed_bytes >= 0 else int(t))
                         if r else BufferRules(accessed_bytes=int(t)))
    return HierarchyProblem(list(memories), plan.problem, all_rules)


def _nested_cuts(rng, n, steps, capacity, grid):
    """Guillotine cuts, each of a random piece (weighted by area), in time or address."""
    return _cut(rng, [(0, steps, 0, capacity)], n, steps, capacity, grid, grid)


def _cut(rng, rects, n, steps, capacity, grid, min_size):
    """Cuts random pieces of ``rects`` (half-open [t0, t1) x [a0, a1), chosen weighted by area) in
    time or address, at multiples of ``grid`` leaving pieces of at least ``min_size`` bytes,
    until there are ``n``."""
    while len(rects) < n:
        splittable = [i for i, (t0, t1, a0, a1) in enumerate(rects) if t1 - t0 >= 2 or a1 - a0 >= 2 * min_size]
        if not splittable:
            raise ValueError(f"a {capacity} x {steps} rectangle cannot be cut into {n} pieces of {min_size} B")
        weights = [(rects[i][1] - rects[i][0]) * (rects[i][3] - rects[i][2]) for i in splittable]
        t0, t1, a0, a1 = rects.pop(rng.choices(splittable, weights)[0])
        can_time, can_address = t1 - t0 >= 2, a1 - a0 >= 2 * min_size
        if can_time and (not can_address or rng.random() < 0.5):
            cut = rng.randrange(t0 + 1, t1)
            rects += [(t0, cut, a0, a1), (cut, t1, a0, a1)]
        else:
            cut = a0 + grid * rng.randrange(-(-min_size // grid), (a1 - a0 - min_size) // grid + 1)
            rects += [(t0, t1, a0, cut), (t0, t1, cut, a1)]
    return rects


def _sweep_cuts(rng, n, steps, capacity, grid):
    """Pieces live in address order; at an event a run of 1-3 neighbours ends and their hole is
    cut afresh into 1-3 pieces (so the count grows by those), until there are ``n``."""
    def cut(a0, a1, pieces):
        units = (a1 - a0) // grid
        points = sorted(rng.sample(range(1, units), min(pieces, units) - 1))
        bounds = [a0] + [a0 + grid * p for p in points] + [a1]
        return list(zip(bounds, bounds[1:]))

    live = [(a0, a1, 0) for a0, a1 in cut(0, capacity, min(3, n))]  # (a0, a1, first step)
    rects = []
    for t in range(1, steps):
        need = n - len(rects) - len(live)
        if need <= 0:
            break
        if need < steps - t and rng.random() >= need / (1.5 * (steps - t)):
            continue
        i = rng.randrange(len(live))
        ended = live[i:i + rng.randint(1, min(3, len(live) - i))]
        rects += [(t0, t, a0, a1) for a0, a1, t0 in ended]
        pieces = min(rng.randint(1, 3), need)
        live[i:i + len(ended)] = [(a0, a1, t) for a0, a1 in cut(ended[0][0], ended[-1][1], pieces)]
    rects += [(t0, steps, a0, a1) for a0, a1, t0 in live]
    if len(rects) != n:
        raise ValueError(f"the sweep over {steps} steps made {len(rects)} pieces, not {n}: give more steps")
    return rects


def zero_slack_problem(n, capacity=1 << 20, steps=None, seed=0, aligned=False, pinned=0.0, grid=None, nested=True):
    """A hard instance whose optimum is exactly ``capacity``: ``(Problem, offsets)``.

    A ``capacity`` x ``steps`` (default ``n``) rectangle is cut into ``n`` rectangles, one
    buffer each, listed in shuffled order; every step is fully covered, so the lower bound is
    ``capacity`` and ``offsets`` (where each rectangle was cut) meets it. ``nested`` (default):
    guillotine cuts in time or address, so a plan of nested cuts exists; ``nested=False``: a
    sweep over the steps where a run of neighbouring pieces ends and the hole is cut afresh,
    so cuts need not nest (brick patterns). Choices come from a seeded ``random.Random``.
    Address cuts fall on a ``grid`` of bytes (default 1, or 16 when ``aligned``): the finer
    the grid, the fewer packings tie with the cut one and the harder the search.
    ``aligned``: each buffer an alignment (1..64) its cut offset satisfies. ``pinned``: the
    fraction of buffers pinned at their cut offsets.
    """
    import random

    rng = random.Random(seed)
    steps = steps or max(2, n)
    grid = (16 if aligned else 1) if grid is None else int(grid)
    if grid < 1 or capacity % grid:
        raise ValueError(f"grid {grid} must be >= 1 and divide the capacity {capacity}")
    rects = (_nested_cuts if nested else _sweep_cuts)(rng, n, steps, capacity, grid)
    rng.shuffle(rects)
    return Problem(_cut_buffers(rng, rects, aligned, pinned)), np.array([r[2] for r in rects], dtype=np.int64)


def _cut_buffers(rng, rects, aligned, pinned, step_time=lambda t: t):
    """One buffer per rectangle (t0, t1, a0, a1): steps [t0, t1) (as times ``step_time``), bytes
    [a0, a1); aligned to a power of two dividing a0 (at most 64) when ``aligned``, pinned at a0
    with probability ``pinned``."""
    buffers = []
    for i, (t0, t1, a0, a1) in enumerate(rects):
        alignment = 1
        if aligned:
            largest = 64 if a0 == 0 else min(64, a0 & -a0)
            alignment = rng.choice([a for a in (1, 2, 4, 8, 16, 32, 64) if a <= largest])
        fixed = a0 if rng.random() < pinned else None
        buffers.append(Buffer(a1 - a0, step_time(t0), step_time(t1) - 1, alignment=alignment, fixed_offset=fixed,
                              name=str(i)))
    return buffers


def _trace_cuts(rng, n, steps, capacity, grid, min_size):
    """Nested cuts shaped like a real trace: first 1-3 large long-lived buffers (address bands of
    12-30 % of the height over 60-100 % of the steps), then pieces cut in time or address,
    each piece of at least ``min_size`` bytes."""
    rects, done = [(0, steps, 0, capacity)], []
    for _ in range(rng.randint(1, 3)):
        t0, t1, a0, a1 = rects.pop(max(range(len(rects)), key=lambda i: rects[i][3] - rects[i][2]))
        band = grid * max(1, int((a1 - a0) * rng.uniform(0.12, 0.3)) // grid)
        length = max(1, int((t1 - t0) * rng.uniform(0.6, 1.0)))
        start = rng.randrange(t0, t1 - length + 1)
        done.append((start, start + length, a0, a0 + band))
        rects += [r for r in ((t0, start, a0, a0 + band), (start + length, t1, a0, a0 + band), (t0, t1, a0 + band, a1))
                  if r[1] > r[0]]
    return _cut(rng, rects, n - len(done), steps, capacity, grid, min_size) + done


def _drop_until_slack(rng, rects, n, capacity, slack):
    """Removes pieces at random until every step's live bytes are at most ``(1 - slack) *
    capacity``, then random pieces not live at the most loaded step (the bound stays) until
    ``n`` are left: those, or None where fewer are left or the bound fell below 90 %; and how
    many were left before the second removal, less ``n``."""
    steps = max(r[1] for r in rects)
    load = np.zeros(steps + 1, dtype=np.int64)
    for t0, t1, a0, a1 in rects:
        load[t0:t1] += a1 - a0
    kept = list(rects)
    while load.max() > (1 - slack) * capacity:
        t0, t1, a0, a1 = kept.pop(rng.randrange(len(kept)))
        load[t0:t1] -= a1 - a0
    t = int(load.argmax())
    spare = [i for i, r in enumerate(kept) if not r[0] <= t < r[1]]
    surplus = len(kept) - n
    if surplus < 0 or surplus > len(spare) or load[t] < 0.9 * capacity:
        return None, surplus
    dropped = set(rng.sample(spare, surplus))
    return [r for i, r in enumerate(kept) if i not in dropped], surplus


def slack_problem(n, capacity=1 << 20, seed=0, aligned=False, pinned=0.0, horizon=1 << 20, min_size=1024):
    """An instance whose bound lies 2-10 % below ``capacity``, packable within it: ``(Problem, offsets)``.

    A zero-slack instance cut like a real trace (1-3 large long-lived buffers, many short-lived
    pieces of at least ``min_size`` bytes, nested cuts on a 1-byte grid, 16 when ``aligned``)
    loses pieces at random until the lower bound is a random 2-10 % below ``capacity``, then
    others not live where the most bytes are (the bound stays) until ``n`` buffers are left:
    ``offsets`` (where each piece was cut) still fits ``capacity``, the problem's capacity.
    Steps are spread over ``[0, horizon)`` (sorted random times, like trace timestamps).
    ``aligned`` and ``pinned`` as in ``zero_slack_problem``.
    """
    import random

    rng = random.Random(seed)
    grid = 16 if aligned else 1
    total = 2 * n
    for _ in range(200):
        slack = rng.uniform(0.02, 0.1)
        steps = max(2, total // 2)
        rects, surplus = _drop_until_slack(rng, _trace_cuts(rng, total, steps, capacity, grid, min_size), n, capacity,
                                           slack)
        if rects is not None:
            break
        total = max(n + 1, total + max(1, -surplus))
    else:
        raise ValueError(f"no slack instance of {n} buffers found from seed {seed}")
    rng.shuffle(rects)
    times = sorted(rng.sample(range(horizon), steps + 1))
    buffers = _cut_buffers(rng, rects, aligned, pinned, times.__getitem__)
    return Problem(buffers, capacity), np.array([r[2] for r in rects], dtype=np.int64)
