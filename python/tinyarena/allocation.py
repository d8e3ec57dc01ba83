"""Stage 3: allocation -- place buffers (size, inclusive lifetime, alignment) at offsets.

One ``Problem`` type and one ``Solution`` type serve every allocator:

- ``greedy_size_first_fit``: TFLite Micro's rule (size descending, equal sizes
  last-first, first fit), so it predicts TFLM's arena byte for byte;
- ``greedy_size_best_fit``: size descending, best fit (Pisarchyk & Lee 2020).

``lower_bound_bytes`` is the largest total live at one step; ``validate``
lists violations (overlap in time and address, misalignment, pins, height).
"""

from ._core import (
    Buffer,
    Problem,
    Solution,
    allocate,
    allocator_names,
    greedy_size_best_fit,
    greedy_size_first_fit,
    live_bytes_per_step,
    lower_bound_bytes,
    validate,
)

__all__ = [
    "Buffer",
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
