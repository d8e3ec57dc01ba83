"""Interchange: allocation problems as MiniMalloc CSV, plans as TFLite Micro offline plans.

- ``read_problem_csv`` / ``write_problem_csv``: ``id,lower,upper,size`` with optional
  ``alignment`` and ``offset`` columns; lifetimes in the file are half-open
  ``[lower, upper)`` (inclusive ``[first, last]`` in a ``Problem``); ``offset`` pins.
- ``model_with_offline_plan``: a copy of the model with an ``OfflineMemoryAllocation``
  metadata entry, so TFLite Micro places every activation at our offset.
"""

import os

from . import _core

__all__ = ["model_with_offline_plan", "read_offline_plan", "read_problem_csv", "write_problem_csv"]


def read_problem_csv(source):
    """``(Problem, offsets)`` from CSV text or a path; ``offsets`` is -1 where a row has none."""
    text = source
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source and os.path.exists(source)):
        with open(source) as f:
            text = f.read()
    return _core.parse_problem_csv(text)


def write_problem_csv(problem, solution=None, path=None):
    """CSV text of ``problem`` (with each buffer's offset if ``solution`` is given); also written to ``path``."""
    text = _core.write_problem_csv(problem, solution)
    if path is not None:
        with open(path, "w") as f:
            f.write(text)
    return text


def model_with_offline_plan(plan):
    """The bytes of ``plan``'s model with the plan stored for TFLite Micro.

    TFLM's kernels run out of place and request their own scratch, so the plan
    must be made with ``inplace=False`` (scratch buffers are left out of the
    metadata either way: TFLM plans its scratch around our offsets).
    """
    if any(r.applied for r in plan.transforms):
        raise ValueError("TFLite Micro runs the file's graph in the file's order: make the plan with transforms=() "
                         "(CLI: --no-transforms) to write an offline plan")
    if len(plan.liveness.inplace_ops):
        raise ValueError("TFLite Micro's kernels do not run in place: make the plan with inplace=False "
                         "(CLI: --no-inplace) to write an offline plan")
    if len(plan.liveness.caller_tensors):
        raise ValueError("TFLite Micro holds float inputs and outputs in its arena: make the plan with "
                         "caller_float_io=False to write an offline plan")
    return _core.model_with_offline_plan(plan.graph, plan.core)


def read_offline_plan(model_bytes):
    """The per-tensor offsets stored in a model's ``OfflineMemoryAllocation`` entry (``[]`` if none)."""
    return _core.read_offline_plan(bytes(model_bytes))
