"""Stage 4: plan -- liveness, allocation and the per-op report in one call.

``plan(model, ...)`` returns a :class:`Plan`: the chosen offsets, peak SRAM,
lower bound, flash and MACs, as Python objects, a text table, JSON and a chart.
It runs the core's pipeline (``plan::run_pipeline`` in ``cpp/include/tinyarena/plan/pipeline.h``):
it tries the transforms (``tinyarena.transforms``) and keeps those that do not raise the peak,
and keeps an in-place op only where it does not raise the peak.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import _core, report
from .allocation import validate
from .reader import load_model
from .sizes import check_alignment, parse_limit
from .transforms import TransformReport, interface_options, parse_transforms

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
    def target(self):
        """The code generation target whose build the flash figures are for."""
        return self.core.options.target

    @property
    def flash(self):
        """Flash of the target's build (a ``FlashReport``): ``weights`` (in the build's layout: int8
        conv / FC and packed int16 depthwise for Cortex-M4/M7/M33, int8 for Cortex-M55 (Helium), host
        and Cortex-M3), ``biases``, ``requant``
        (per-channel multipliers and shifts, CONV_2D records in SIMD builds, FULLY_CONNECTED scales),
        ``tables`` (lookup tables, copy sizes), ``constants`` (their sum: what ``compile`` reports as
        const data for the target),
        ``code`` (kernel library code, *estimated* from per-kernel sizes measured with
        arm-none-eabi-gcc for Cortex-M4 by tools/kernel_code_bytes.py; 0 for host) and ``total``.
        Each op's share is ``plan.ops[i].flash``."""
        return self.core.flash

    @property
    def flash_bytes(self):
        """Total flash of the target's build: constant data plus estimated kernel code."""
        return self.core.flash_bytes

    @property
    def inplace_declined(self):
        """Ops that could have written over their input but were planned out of place because
        writing in place raised the peak."""
        return tuple(self.core.inplace_declined)

    @property
    def macs(self):
        return self.core.macs

    @property
    def predicted_instructions(self):
        """Cortex-M instructions of one inference in the target's build, predicted by the cost model
        (the sum of the ops' ``predicted_instructions``; op_params/cost_model.h)."""
        return self.core.predicted_instructions

    @property
    def sram_limit(self):
        """The limit the plan was made for, or None."""
        return self.core.options.sram_limit or None

    @property
    def fits(self):
        return self.core.fits

    @property
    def flash_limit(self):
        """The flash budget the weight layouts were chosen for, or None."""
        return self.core.options.flash_limit or None

    @property
    def flash_fits(self):
        """False when even the most compact build (``compact_flash_bytes``) is above ``flash_limit``."""
        return self.core.flash_fits

    @property
    def compact_flash_bytes(self):
        """Flash of the target's most compact build the budget starts from: every layer at its smallest
        layout, or the default build when that is smaller (op_params::choose_weight_layouts; with a
        budget, else None)."""
        return self.core.weight_layouts.compact_flash_bytes if self.flash_limit else None

    @property
    def weight_layouts(self):
        """``{op index: layout}`` of the layers whose weights are not in their default layout
        (``plain``, ``packed_int8`` or ``packed_int16``; default ``packed_int8`` for conv, depthwise
        and fully connected)."""
        return dict(self.core.weight_layouts.layouts)

    def weight_layout(self, op):
        """The layout of op ``op``'s weights in the SIMD builds (``plain`` for ops without weights)."""
        return _core.weight_layout(self.graph, self.core, op)

    def with_flash(self, flash, target=None):
        """This plan with its weight layouts chosen again under ``flash`` (as in :func:`plan`; ``None``:
        defaults) for ``target`` (default: the plan's); buffers and offsets stay."""
        limit = parse_limit(flash) if flash is not None else 0
        return self._with_core(_core.with_flash_limit(self.graph, self.core, target or self.target, limit))

    def with_layouts(self, layouts):
        """This plan with ``{op index: layout}`` pinned (``plain``, ``packed_int8``: conv only,
        ``packed_int16``; other layers at their default) and no flash budget; ``ValueError`` for a
        layout the op's kernel has no path for."""
        return self._with_core(_core.with_weight_layouts(self.graph, self.core, dict(layouts)))

    def _with_core(self, core):
        if getattr(self, "tiled", None) is not None:
            raise ValueError("weight layouts are chosen for untiled plans only")
        other = Plan(self.graph, core, model_name=self.model_name)
        other.schedule, other.transforms, other.interface = self.schedule, self.transforms, self.interface
        return other

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
        """The alignment (bytes) of every buffer's offset and size."""
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
    @cached_property
    def compile_issues(self):
        """Why ``tinyarena.codegen.compile`` would reject this plan's graph, one message per op the
        kernel library cannot run (e.g. ``"op 3 (ELU) has no kernel in tinyarena's library"``, or
        a float32 input): compile's own lowering, run on the graph. Empty when the graph compiles."""
        return tuple(_core.compile_issues(self.graph))

    def validate(self):
        """Violations of the plan (empty list when valid)."""
        return validate(self.core.problem, self.core.solution)

    def table(self):
        """The per-op report and summary as text."""
        return report.table(self)

    def to_dict(self):
        """The plan as plain Python data, what ``to_json`` writes: ``model``, ``peak_bytes``,
        ``peak_op``, ``lower_bound_bytes``, ``flash_bytes``, ``macs``, ``allocator``,
        ``allocation_method``, ``proven_optimal``, ``alignment``, ``sram_limit``, ``fits``,
        ``transforms`` (one dict per transform tried), ``ops`` (the per-op rows) and ``buffers``
        (name, kind, lifetime, size, offset, tensors and their offsets in the buffer)."""
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


def plan_options(sram=None, alignment=16, allocator="auto", inplace=True, scratch=True, order=None, seconds=0.3,
                 target="cortex-m4", caller_float_io=True, flash=None):
    """The core ``PlanOptions`` for these arguments (checked)."""
    sram_limit = parse_limit(sram) if sram is not None else 0
    flash_limit = parse_limit(flash) if flash is not None else 0
    if seconds < 0:
        raise ValueError(f"the allocation budget must not be negative, got {seconds} seconds")
    return _core.PlanOptions(
        alignment=check_alignment(alignment),
        allocator=allocator,
        liveness=_core.LivenessOptions(inplace_depthwise=inplace, inplace_elementwise=inplace, scratch=scratch,
                                       caller_float_io=caller_float_io),
        sram_limit=sram_limit,
        order=list(order or []),
        allocation_seconds=float(seconds),
        target=target,
        flash_limit=flash_limit,
    )


def plan(
    model,
    sram=None,
    alignment=16,
    allocator="auto",
    inplace=True,
    scratch=True,
    order=None,
    reorder=False,
    transforms=None,
    seconds=0.3,
    target="cortex-m4",
    io="model",
    input_layout="model",
    caller_float_io=True,
    flash=None,
):
    """Plan the SRAM of ``model`` (a path, bytes or ``Graph``) and return a :class:`Plan`.

    - ``sram``: limit in bytes or a size string (``"64K"``), at least 1 (``None``: no limit); the
      plan reports ``fits`` against it (it never silently overshoots: check ``plan.fits``).
      ``ValueError`` for 0, negative or malformed sizes and sizes above ``tinyarena.sizes.MAX_BYTES``.
    - ``alignment``: alignment of every buffer's offset and size, bytes, a power of two (TFLM uses 16).
    - ``allocator``: a name from ``tinyarena.allocation.allocator_names()``; ``"auto"``
      (default) keeps greedy first fit when it meets the lower bound, else searches
      exactly within ``seconds`` (``plan.allocation_method`` and
      ``plan.proven_optimal`` say what won); ``"greedy_size_first_fit"`` is TFLite Micro's rule.
    - ``seconds``: budget of the searching allocators, as deterministic search work (about
      that many seconds on the reference machine): the same plan on every run (CLI ``--seconds``).
    - ``inplace``: allow in-place depthwise and elementwise ops. Each is kept only where it does
      not raise the peak (``plan.inplace_declined`` lists the others), so the plan is never above
      the one with ``inplace=False`` (when the transforms and order chosen without in-place ops end
      lower, those are kept and ``plan.transforms`` reports that path).
    - ``target``: the build whose flash ``plan.flash`` reports (``"cortex-m4"``, ``"cortex-m7"``,
      ``"cortex-m33"``: SIMD kernels, int8 conv / FC and packed int16 depthwise weights;
      ``"cortex-m55"``: Helium kernels, int8 weights; ``"host"``,
      ``"cortex-m3"``: portable kernels, int8 weights).
    - ``flash``: a flash budget for the ``target`` build (bytes or a size string, as ``sram``;
      ``None``: every layer at its default weight layout). Each CONV_2D, DEPTHWISE_CONV_2D and
      FULLY_CONNECTED layer of a SIMD build gets the weight layout (``plain``: int8, portable loop;
      ``packed_int8``: conv only; ``packed_int16``: fastest) that minimizes predicted instructions
      within the budget (``plan.weight_layouts``, ``plan.flash``); when even every layer at its
      smallest layout is above it, ``plan.flash_fits`` is False and ``plan.compact_flash_bytes``
      says what is needed.
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
    - ``caller_float_io``: a float32 input that only QUANTIZE ops read, and a float32 output a
      DEQUANTIZE writes, stay in the caller's arrays (the invoke arguments), outside the arena
      (``plan.liveness.caller_tensors``); False holds them in the arena, as TFLite Micro does.
    Op indices (``order``, the report) are those of the graph after ``io`` and ``input_layout``.
    """
    interface = interface_options(io, input_layout)
    options = plan_options(sram, alignment, allocator, inplace, scratch, order, seconds, target, caller_float_io,
                           flash)
    names = parse_transforms(() if order and transforms is None else transforms)
    core_options = _core.PipelineOptions(plan=options, int8_io=interface.int8_io, nhwc_input=interface.nhwc_input,
                                         transforms=list(names), force_reorder=bool(reorder))
    graph, result = _core.run_pipeline(load_model(model), core_options)
    name = str(model) if not isinstance(model, (bytes, bytearray, memoryview, _core.Graph)) else ""
    planned = Plan(graph, result.plan, model_name=name)
    planned.schedule = result.schedule
    planned.transforms = tuple(TransformReport.of(report) for report in result.transforms)
    planned.interface = tuple(result.interface)
    return planned
