"""Stage 4: plan -- liveness, allocation and the per-op report in one call.

``plan(model, ...)`` returns a :class:`Plan`: the chosen offsets, peak SRAM,
lower bound, flash and MACs, as Python objects, a text table, JSON and a chart.
"""

from dataclasses import dataclass

import numpy as np

from . import _core, report
from .allocation import validate
from .reader import load_model
from .schedule import schedule_options
from .sizes import parse_size

__all__ = ["Plan", "PlacedBuffer", "plan"]


@dataclass(frozen=True)
class PlacedBuffer:
    """A planned buffer: where it sits and when it lives (inclusive op steps)."""

    name: str
    kind: str  # "activation" or "scratch"
    size: int  # bytes, rounded up to the plan's alignment
    first: int
    last: int
    offset: int
    tensors: tuple  # tensor indices stored in this buffer (empty for scratch)


class Plan:
    """The memory plan of one model. Build it with :func:`tinyarena.plan`."""

    schedule = None  # the ScheduleResult whose order was planned, with reorder=True

    def __init__(self, graph, core_plan, model_name=""):
        self.graph = graph
        self.core = core_plan
        self.model_name = model_name
        live = core_plan.liveness.buffers
        offsets = core_plan.solution.offsets
        self.buffers = tuple(
            PlacedBuffer(b.name, lb.kind, b.size, b.first, b.last, int(offset), lb.tensors)
            for b, lb, offset in zip(core_plan.problem.buffers, live, offsets)
        )

    # Summary figures -----------------------------------------------------
    @property
    def peak_bytes(self):
        """Arena size: the highest address any buffer reaches."""
        return self.core.peak_bytes

    @property
    def peak_op(self):
        """Index of the first op with the most bytes in use, live plus scratch (-1 if no ops)."""
        return self.core.peak_op

    @property
    def lower_bound_bytes(self):
        """The largest total of buffers live at one op: no allocator can go below it."""
        return self.core.lower_bound_bytes

    @property
    def flash_bytes(self):
        return self.core.flash_bytes

    @property
    def macs(self):
        return self.core.macs

    @property
    def sram_limit(self):
        """The limit the plan was made for, or None."""
        return self.core.options.sram_limit or None

    @property
    def fits(self):
        return self.core.fits

    @property
    def allocator(self):
        return self.core.options.allocator

    @property
    def alignment(self):
        return self.core.options.alignment

    @property
    def ops(self):
        """Per-op rows (``OpReport``) in schedule order."""
        return self.core.ops

    @property
    def offsets(self):
        return np.asarray(self.core.solution.offsets)

    @property
    def problem(self):
        return self.core.problem

    @property
    def solution(self):
        return self.core.solution

    @property
    def liveness(self):
        return self.core.liveness

    # Checks and presentation ---------------------------------------------
    def validate(self):
        """Violations of the plan (empty list when valid)."""
        return validate(self.core.problem, self.core.solution)

    def table(self):
        """The per-op report and summary as text."""
        return report.table(self)

    def to_dict(self):
        return report.to_dict(self)

    def to_json(self, path=None, indent=2):
        """The plan as JSON text; also written to ``path`` when given."""
        return report.to_json(self, path, indent)

    def plot(self, path=None, ax=None, sram_limit=None):
        """Draw the allocation chart (one rectangle per buffer); save it to ``path`` if given.

        Returns the matplotlib ``Axes``. Works inline in Jupyter.
        """
        from .plotting import plot_plan

        return plot_plan(self, path=path, ax=ax, sram_limit=sram_limit)

    def write_offline_plan(self, path):
        """Write a copy of the model carrying this plan as TFLite Micro offline-plan metadata."""
        from .interchange import model_with_offline_plan

        data = model_with_offline_plan(self)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def __repr__(self):
        return (
            f"<Plan {self.model_name or 'model'}: peak {self.peak_bytes} B at op {self.peak_op}, "
            f"lower bound {self.lower_bound_bytes} B, {len(self.buffers)} buffers, allocator {self.allocator}>"
        )


def plan_options(sram=None, align=16, allocator="greedy_size_first_fit", inplace=True, scratch=True, order=None):
    """The core ``PlanOptions`` for these arguments (checked)."""
    sram_limit = parse_size(sram) if sram is not None else 0
    if int(align) < 1:
        raise ValueError(f"alignment must be at least 1, got {align}")
    return _core.PlanOptions(
        alignment=int(align),
        allocator=allocator,
        liveness=_core.LivenessOptions(inplace_depthwise=inplace, inplace_elementwise=inplace, scratch=scratch),
        sram_limit=sram_limit,
        order=list(order or []),
    )


def plan(
    model,
    sram=None,
    align=16,
    allocator="greedy_size_first_fit",
    inplace=True,
    scratch=True,
    order=None,
    reorder=False,
):
    """Plan the SRAM of ``model`` (a path, bytes or ``Graph``) and return a :class:`Plan`.

    - ``sram``: limit in bytes or a size string (``"64K"``); the plan reports
      ``fits`` against it (it never silently overshoots: check ``plan.fits``).
    - ``align``: alignment of every buffer's offset and size, bytes (TFLM uses 16).
    - ``allocator``: a name from ``tinyarena.allocation.allocator_names()``.
    - ``inplace``: allow in-place depthwise and elementwise ops.
    - ``scratch``: plan kernel scratch buffers (False: activations only).
    - ``order``: op indices in execution order (default: the file's order).
    - ``reorder``: choose the order with ``tinyarena.schedule.find_schedule`` (lowest
      peak found, never worse than the file's), kept as ``plan.schedule``.
    """
    graph = load_model(model)
    found = None
    if reorder:
        if order:
            raise ValueError("give either order or reorder=True, not both")
        found = _core.find_schedule(graph, schedule_options(align, inplace, scratch))
        order = found.order
    options = plan_options(sram, align, allocator, inplace, scratch, order)
    name = str(model) if not isinstance(model, (bytes, bytearray, memoryview, _core.Graph)) else ""
    result = Plan(graph, _core.make_plan(graph, options), model_name=name)
    result.schedule = found
    return result
