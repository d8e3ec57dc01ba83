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
