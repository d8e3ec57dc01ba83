"""Stage 4: plan -- liveness, allocation and the per-op report in one call.

``plan(model, ...)`` returns a :class:`Plan`: the chosen offsets, peak SRAM,
lower bound, flash and MACs, as Python objects, a text table, JSON and a chart.
It first tries the transforms (``tinyarena.transforms``) and keeps those that help.
"""

from dataclasses import dataclass

import numpy as np

from . import _core, report
from .allocation import validate
from .reader import load_model
from .schedule import schedule_options
from .sizes import check_alignment, parse_size
from .transforms import TransformReport, io_boundary, parse_transforms

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

    schedule = None  # the ScheduleResult whose order was planned (reorder transform kept, or reorder=True)
    transforms = ()  # a TransformReport per transform tried, in order
    interface = ()  # the io_boundary rewrites (io="int8", input_layout="nhwc"), in op order

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
        """The allocator asked for (``"auto"`` by default)."""
        return self.core.options.allocator

    @property
    def allocation_method(self):
        """The allocator whose placement was kept (for ``"auto"``: the one that won)."""
        return self.core.allocation_method

    @property
    def proven_optimal(self):
        """True when no placement of these buffers is lower (the exact search proved it, or the lower bound is met)."""
        return self.core.proven_optimal

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


def plan_options(sram=None, align=16, allocator="auto", inplace=True, scratch=True, order=None,
                 allocation_seconds=0.3):
    """The core ``PlanOptions`` for these arguments (checked)."""
    sram_limit = parse_size(sram) if sram is not None else 0
    return _core.PlanOptions(
        alignment=check_alignment(align),
        allocator=allocator,
        liveness=_core.LivenessOptions(inplace_depthwise=inplace, inplace_elementwise=inplace, scratch=scratch),
        sram_limit=sram_limit,
        order=list(order or []),
        allocation_seconds=float(allocation_seconds),
    )


@dataclass(frozen=True)
class _Planned:
    """A graph planned in file order, and as it will be planned (reordered when that is kept)."""

    graph: object
    file: object  # core Plan in file order
    best: object  # core Plan in the order kept
    schedule: object = None  # ScheduleResult of the reorder search, if one ran
    reordered: bool = False  # best uses the schedule's order


def _planned(graph, make, schedule, force_reorder):
    file = make(graph, [])
    if schedule is None:
        return _Planned(graph, file, file)
    found = _core.find_schedule(graph, schedule)
    if list(found.order) == list(range(len(graph.ops))):
        return _Planned(graph, file, file, found)
    reordered = make(graph, found.order)
    keep = force_reorder or reordered.peak_bytes <= file.peak_bytes
    return _Planned(graph, file, reordered if keep else file, found, keep)


MAX_SINGLE_TRIALS = 32
"""Rewrites tried one at a time when applying all of them at once raises the peak."""


def _one_at_a_time(current, name, rewrites, plan_graph):
    """Each rewrite alone, from the last op back (PAD folding renumbers the ops after the one it
    removes), kept when the final peak does not grow. Returns the state and the kept rewrites."""
    kept = []
    for rewrite in sorted(rewrites, key=lambda r: -r.op):
        graph, done = _core.apply_transform(current.graph, name, [rewrite.op])
        trial = plan_graph(graph) if done else current
        if done and trial.best.peak_bytes <= current.best.peak_bytes:
            current, kept = trial, list(done) + kept
    return current, tuple(kept)


def _apply_transforms(graph, names, make, schedule, force_reorder):
    """Tries the named graph rewrites in turn, then reordering. A rewrite is kept when the plan
    it leads to (reordered too, if ``reorder`` is named) peaks no higher than without it; when
    all of a transform's rewrites together raise the peak, each is tried alone.
    Returns the final graph, its core plan, one TransformReport per name and the ScheduleResult."""
    schedule = schedule if "reorder" in names else None

    def plan_graph(g):
        return _planned(g, make, schedule, force_reorder)

    current = plan_graph(graph)
    reports = []
    for name in (n for n in names if n != "reorder"):
        candidate_graph, rewrites = _core.apply_transform(current.graph, name)
        candidate = plan_graph(candidate_graph) if rewrites else current
        kept = tuple(rewrites) if rewrites and candidate.best.peak_bytes <= current.best.peak_bytes else ()
        if rewrites and not kept and 1 < len(rewrites) <= MAX_SINGLE_TRIALS:
            single, kept = _one_at_a_time(current, name, rewrites, plan_graph)
            candidate = single if kept else candidate
        changes = tuple(f"op {r.op}: {r.what}" for r in (kept or rewrites))
        reports.append(TransformReport(name, bool(kept), changes, current.file.lower_bound_bytes,
                                       candidate.file.lower_bound_bytes, current.file.peak_bytes,
                                       candidate.file.peak_bytes))
        current = candidate if kept else current
    if schedule is not None:
        found = current.schedule
        changed = list(found.order) != list(range(len(current.graph.ops)))
        after = make(current.graph, found.order) if changed else current.file
        changes = (f"{found.method} search: lower bound {found.file_peak_bytes:,} -> {found.peak_bytes:,} B",)
        reports.append(TransformReport("reorder", current.reordered, changes if changed else (),
                                       current.file.lower_bound_bytes, after.lower_bound_bytes,
                                       current.file.peak_bytes, after.peak_bytes))
    kept_schedule = current.schedule if current.reordered or force_reorder else None
    return current.graph, current.best, tuple(reports), kept_schedule


def plan(
    model,
    sram=None,
    align=16,
    allocator="auto",
    inplace=True,
    scratch=True,
    order=None,
    reorder=False,
    transforms=None,
    allocation_seconds=0.3,
    io="model",
    input_layout="model",
):
    """Plan the SRAM of ``model`` (a path, bytes or ``Graph``) and return a :class:`Plan`.

    - ``sram``: limit in bytes or a size string (``"64K"``); the plan reports
      ``fits`` against it (it never silently overshoots: check ``plan.fits``).
    - ``align``: alignment of every buffer's offset and size, bytes, a power of two (TFLM uses 16).
    - ``allocator``: a name from ``tinyarena.allocation.allocator_names()``; ``"auto"``
      (default) keeps greedy first fit when it meets the lower bound, else searches
      exactly within ``allocation_seconds`` (``plan.allocation_method`` and
      ``plan.proven_optimal`` say what won); ``"greedy_size_first_fit"`` is TFLite Micro's rule.
    - ``allocation_seconds``: budget of the searching allocators, as deterministic search
      work (about that many seconds on the reference machine): the same plan on every run.
    - ``inplace``: allow in-place depthwise and elementwise ops.
    - ``scratch``: plan kernel scratch buffers (False: activations only).
    - ``transforms``: which of ``tinyarena.transforms.TRANSFORMS`` (``fold_pads``, ``zero_copy``,
      ``reorder``) to try, in that order: default all (none when ``order`` is given); ``()`` or
      ``"none"`` for none; names as a list or comma-separated string. Each is kept only if the
      final peak does not grow (a rewrite is judged after reordering, when that is asked for);
      ``plan.transforms`` reports every one (lower bound and peak in file order before and after
      it; for ``reorder``, file order against the order found) and ``plan.graph`` is the
      transformed graph.
    - ``order``: op indices in execution order (default: the file's order).
    - ``reorder``: plan the order ``tinyarena.schedule.find_schedule`` finds (lowest lower bound
      found, never worse than the file's) even if the allocator's peak grows; kept as
      ``plan.schedule`` (also set when the default ``reorder`` transform is kept).
    - ``io``: ``"model"`` keeps the model's inputs and outputs; ``"int8"`` drops the QUANTIZE of
      each float32 input and the DEQUANTIZE of each output, so the model takes and gives the int8
      tensors (``tinyarena.transforms.io_boundary``; ``plan.interface`` lists what went).
    - ``input_layout``: ``"model"``, or ``"nhwc"`` to drop the TRANSPOSE of an NCHW input to NHWC.
    Op indices (``order``, the report) are those of the graph after ``io`` and ``input_layout``.
    """
    graph, interface = io_boundary(model, io, input_layout)
    plan_options(sram, align, allocator, inplace, scratch)  # checks the arguments once
    if order and reorder:
        raise ValueError("give either order or reorder=True, not both")
    names = parse_transforms(() if order and transforms is None else transforms)
    if order and names:
        raise ValueError("give either order or transforms (they renumber and reorder ops), not both")
    if reorder and "reorder" not in names:
        names += ("reorder",)

    def make(g, op_order):
        return _core.make_plan(g, plan_options(sram, align, allocator, inplace, scratch, op_order, allocation_seconds))

    if order:
        graph, core, reports, found = graph, make(graph, order), (), None
    else:
        graph, core, reports, found = _apply_transforms(graph, names, make, schedule_options(align, inplace, scratch),
                                                        reorder)
    name = str(model) if not isinstance(model, (bytes, bytearray, memoryview, _core.Graph)) else ""
    result = Plan(graph, core, model_name=name)
    result.schedule = found
    result.transforms = reports
    result.interface = interface
    return result
