"""Stage 3: allocation -- place buffers (size, inclusive lifetime, alignment) at offsets.

One ``Problem`` type and one ``Solution`` type serve every allocator:

- ``greedy_size_first_fit``: TFLite Micro's rule (size descending, equal sizes
  last-first, first fit), so it predicts TFLM's arena byte for byte;
- ``greedy_size_best_fit``: size descending, best fit (Pisarchyk & Lee 2020).

``lower_bound_bytes`` is the largest total live at one step; ``validate``
lists violations (overlap in time and address, misalignment, pins, height).

Memory hierarchies: ``HierarchyProblem(memories, problem, rules)`` with ``Memory`` entries
fastest first and per-buffer ``BufferRules`` (pinned memory, blocked memories, "lives at
offset k inside buffer j", accessed bytes); ``place_in_hierarchy`` keeps the most accessed
bytes in the fastest memories (exact for small groups of competing buffers);
``place_fastest_first`` is the greedy baseline; ``hierarchy_from_plan`` builds the problem
of a plan, with each buffer's traffic estimated as its size times (1 write + its reads).
"""

import numpy as np

from ._core import (
    Buffer,
    BufferRules,
    HierarchyProblem,
    HierarchySolution,
    Memory,
    Problem,
    Solution,
    allocate,
    allocator_names,
    greedy_size_best_fit,
    greedy_size_first_fit,
    live_bytes_per_step,
    lower_bound_bytes,
    place_fastest_first,
    place_in_hierarchy,
    validate,
    validate_hierarchy,
)

__all__ = [
    "Buffer",
    "BufferRules",
    "HierarchyProblem",
    "HierarchySolution",
    "Memory",
    "hierarchy_from_plan",
    "place_fastest_first",
    "place_in_hierarchy",
    "validate_hierarchy",
    "Problem",
    "Solution",
    "allocate",
    "allocator_names",
    "greedy_size_best_fit",
    "greedy_size_first_fit",
    "live_bytes_per_step",
    "lower_bound_bytes",
    "validate",
]


def accessed_bytes(plan):
    """Estimated traffic per planned buffer: size x (1 write + 1 read per consuming op); scratch 2x."""
    graph = plan.graph
    traffic = []
    for b in plan.buffers:
        reads = sum(len(graph.tensors[t].consumers) for t in b.tensors) if b.tensors else 1
        traffic.append(b.size * (1 + reads))
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


def zero_slack_problem(n, capacity=1 << 20, steps=None, seed=0, aligned=False, pinned=0.0):
    """A hard instance whose optimum is exactly ``capacity``: ``(Problem, offsets)``.

    A ``capacity`` x ``steps`` rectangle is cut (guillotine cuts in time or address,
    chosen by a seeded ``random.Random``) into ``n`` rectangles, one buffer each, listed
    in shuffled order; every step is fully covered, so the lower bound is ``capacity``
    and ``offsets`` (where each rectangle was cut) meets it. ``aligned``: address cuts on
    a 16-byte grid and each buffer an alignment (1..64) its cut offset satisfies.
    ``pinned``: the fraction of buffers pinned at their cut offsets.
    """
    import random

    rng = random.Random(seed)
    steps = steps or max(2, n)
    grid = 16 if aligned else 1
    rects = [(0, steps, 0, capacity)]  # half-open [t0, t1) x [a0, a1)
    while len(rects) < n:
        splittable = [i for i, (t0, t1, a0, a1) in enumerate(rects) if t1 - t0 >= 2 or a1 - a0 >= 2 * grid]
        if not splittable:
            raise ValueError(f"a {capacity} x {steps} rectangle cannot be cut into {n} pieces")
        weights = [(rects[i][1] - rects[i][0]) * (rects[i][3] - rects[i][2]) for i in splittable]
        t0, t1, a0, a1 = rects.pop(rng.choices(splittable, weights)[0])
        can_time, can_address = t1 - t0 >= 2, a1 - a0 >= 2 * grid
        if can_time and (not can_address or rng.random() < 0.5):
            cut = rng.randrange(t0 + 1, t1)
            rects += [(t0, cut, a0, a1), (cut, t1, a0, a1)]
        else:
            cut = a0 + grid * rng.randrange(1, (a1 - a0) // grid)
            rects += [(t0, t1, a0, cut), (t0, t1, cut, a1)]
    rng.shuffle(rects)
    buffers = []
    for i, (t0, t1, a0, a1) in enumerate(rects):
        alignment = 1
        if aligned:
            largest = 64 if a0 == 0 else min(64, a0 & -a0)
            alignment = rng.choice([a for a in (1, 2, 4, 8, 16, 32, 64) if a <= largest])
        fixed = a0 if rng.random() < pinned else None
        buffers.append(Buffer(a1 - a0, t0, t1 - 1, alignment=alignment, fixed_offset=fixed, name=str(i)))
    return Problem(buffers), np.array([r[2] for r in rects], dtype=np.int64)
