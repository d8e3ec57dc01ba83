"""Stage 3b: tiling -- row-streamed cascades and patch-based segments under an SRAM limit.

The early, high-resolution layers of a CNN set its peak SRAM. A *segment* of consecutive
spatial ops (conv, depthwise, pools, elementwise, PAD; a MEAN over H,W or a global average pool
at its end) can run

- ``"rows"``: a few rows at a time (a cascade, as Vela streams them); every tensor inside the
  segment is a ring of just the rows its consumers still need, nothing is recomputed
  (1.00x MACs); the model input may be pulled row by row (``stream_input=True``). With
  ``column_strips=n`` the rows run once per column strip of the output, so each ring holds one
  strip's columns (a wide early map's rings shrink about n-fold; the columns neighbouring
  strips share are recomputed);
- ``"patches"``: on an n x m grid of output patches whose halos are recomputed (MCUNetV2),
  each patch written into the whole output tensor.

``search(model, ...)`` chooses segments, modes, stripe heights and patch grids by dynamic
programming over segment boundaries and plans every Pareto point (peak SRAM vs MACs) with the
real liveness and allocator. ``tile(model, segments)`` plans a given segmentation.
``sweep(model, sram_limits=[...])`` gives records for many limits at once. The search works on
the graph after the graph rewrites of ``tinyarena.transforms`` (PAD folding first: a folded PAD
costs neither a copy nor a ring; an unfolded one streams, rows only); elided ops and zero-copy
slices end a segment.
``tinyarena.compile`` compiles tiled plans, both modes and mixed (bit-exact with the
untiled model): a segment becomes a loop replaying its fixed schedule of kernel calls on row
ranges (rows) or on regions (patches, through params copies whose padding fields shift the
region to the origin), with virtual bases into rings and patch buffers; with ``memories`` the
rings, patch buffers and whole tensors are placed across a memory hierarchy like any plan's buffers.

Low-level pieces (``tinyarena._core``): ``input_range`` (the receptive-field algebra),
``stream_rows`` (a segment's rings and fixed step schedule), ``run_patches``.
"""

import dataclasses

from . import _core
from .planner import Plan, plan_options
from .planner import plan as make_plan
from .reader import load_model
from .sizes import parse_size
from .transforms import io_boundary, parse_transforms

__all__ = ["COLUMN_STRIPS", "MODES", "OBJECTIVES", "ParetoPoint", "Segment", "TiledPlan", "TilingResult", "SweepRecord", "input_range",
           "plot_pareto", "search", "sweep", "tile", "transformed_graph"]

MODES = ("none", "auto", "rows", "patches")
OBJECTIVES = ("size", "speed")
"""What :func:`search` minimizes within its budgets: peak SRAM (``size``, the default) or the
predicted instructions of a plan that fits ``sram`` (``speed``)."""
Segment = _core.Segment
PATCH_GRIDS = (2, 3, 4, 5, 6)
"""The n x n patch grids the search tries by default."""
STRIPE_ROWS = (1,)
"""The stripe heights (output rows per round) the search tries by default."""
COLUMN_STRIPS = (2, 3, 4)
"""The column strips the search tries on row segments when it searches patches (both recompute halos)."""
MAX_MAC_OVERHEAD = 1.0
"""Default MAC budget of :func:`search` and :func:`sweep`: no MACs beyond the untiled model's.
Row streaming recomputes nothing, so the smallest peak it reaches costs no speed; patches
(recomputed halos) trade speed for memory and are tried only when the caller raises the budget."""


def input_range(model, op, position=0, axis="rows", begin=0, end=1):
    """Input rows (``axis="rows"``) or columns [a, b) that output [begin, end) of ``op`` reads."""
    return _core.input_range(load_model(model), op, position, axis, begin, end)


class TiledPlan(Plan):
    """A :class:`Plan` of a tiled schedule (table, chart, JSON and validation as any plan) with
    its segments, MACs and MAC overhead; ``tinyarena.compile`` accepts it."""

    def __init__(self, graph, core_tiled, model_name=""):
        super().__init__(graph, core_tiled.plan, model_name)
        self.tiled = core_tiled

    @property
    def segments(self):
        return self.tiled.segments

    @property
    def macs(self):
        return self.tiled.macs

    @property
    def untiled_macs(self):
        return self.tiled.untiled_macs

    @property
    def mac_overhead(self):
        return self.tiled.mac_overhead

    @property
    def untiled_predicted_instructions(self):
        """Instructions the cost model predicts for the untiled schedule (``target``'s build)."""
        return self.tiled.untiled_predicted_instructions

    @property
    def latency_overhead(self):
        """Predicted instructions of this tiled schedule / of the untiled one (stripes and
        patches add kernel calls, patches recompute halos)."""
        return self.tiled.latency_overhead

    def describe(self):
        """One line per segment: its ops, mode and parameters."""
        lines = []
        for seg in self.segments:
            how = f"{seg.stripe_rows} row stripes" if seg.mode == "rows" else f"{seg.patches_h}x{seg.patches_w} patches"
            how += f" on {seg.column_strips} column strips" if seg.mode == "rows" and seg.column_strips > 1 else ""
            lines.append(f"ops {seg.ops[0]}..{seg.ops[-1]} ({len(seg.ops)} ops): {seg.mode}, {how}")
        return "\n".join(lines) or "no segments (untiled)"

    def __repr__(self):
        return (f"<TiledPlan {self.model_name or 'model'}: peak {self.peak_bytes:,} B, MACs x{self.mac_overhead:.3f}, "
                f"{_core.describe_segments(self.segments)}>")


@dataclasses.dataclass(frozen=True, eq=False)
class ParetoPoint:
    """One point of the tiling front (peak SRAM against MACs), planned exactly.

    ``plan`` is its :class:`TiledPlan` (table, chart, ``tinyarena.compile``); ``options`` the
    keywords of :func:`tile` it was made with, so ``tile(model, point.segments, **point.options)``
    plans it again (op indices are those of ``point.plan.graph``, after the transforms)."""

    peak_bytes: int
    macs: int
    mac_overhead: float
    segments: tuple
    plan: TiledPlan
    options: dict

    def __repr__(self):
        return (f"<ParetoPoint peak {self.peak_bytes:,} B, MACs x{self.mac_overhead:.3f}, "
                f"{_core.describe_segments(self.segments)}>")


@dataclasses.dataclass(frozen=True, eq=False)
class TilingResult:
    """What :func:`search` found: the best plan within the MAC budget and the Pareto front."""

    best: TiledPlan
    front: tuple  # ParetoPoint, MACs ascending
    untiled_peak_bytes: int
    candidates: int
    seconds: float

    @property
    def smallest_peak_bytes(self):
        """The lowest peak of any Pareto point (whatever its MACs)."""
        return min(p.peak_bytes for p in self.front) if self.front else self.best.peak_bytes

    def __repr__(self):
        return (f"<TilingResult best peak {self.best.peak_bytes:,} B at MACs x{self.best.mac_overhead:.3f} "
                f"(untiled {self.untiled_peak_bytes:,} B), {len(self.front)} Pareto points>")


@dataclasses.dataclass(frozen=True, eq=False)
class SweepRecord:
    """The point :func:`sweep` chose for one SRAM limit and its plan."""

    sram_limit: int
    fits: bool
    peak_bytes: int  # of the chosen point: the fewest MACs that fit, else the smallest peak
    macs: int
    mac_overhead: float
    plan: TiledPlan

    def __repr__(self):
        return (f"<SweepRecord limit {self.sram_limit:,} B: {'fits' if self.fits else 'does not fit'}, peak "
                f"{self.peak_bytes:,} B, MACs x{self.mac_overhead:.3f}>")


def _options(sram, alignment, allocator, inplace, scratch, stream_input, seconds, target):
    return _core.TilingOptions(plan=plan_options(sram, alignment, allocator, inplace, scratch, seconds=seconds,
                                                 target=target),
                               stream_input=stream_input)


def transformed_graph(model, transforms=None, alignment=16, allocator="auto", inplace=True, scratch=True,
                      seconds=0.3, io="model", input_layout="model"):
    """``model``'s graph after the graph rewrites of ``transforms`` (as in ``tinyarena.plan``:
    default all, each kept when the untiled peak does not grow; ``reorder`` is left out, tiled
    schedules run in the graph's order) and the TransformReports. PAD folding comes first: a
    folded PAD costs neither a copy nor a ring in a cascade. ``io`` and ``input_layout`` choose
    the interface first (``tinyarena.transforms.io_boundary``)."""
    graph, _ = io_boundary(model, io, input_layout)
    names = tuple(n for n in parse_transforms(transforms) if n != "reorder")
    if not names:
        return graph, ()
    planned = make_plan(graph, alignment=alignment, allocator=allocator, inplace=inplace, scratch=scratch,
                        transforms=names, seconds=seconds)
    return planned.graph, planned.transforms


def tile(model, segments=(), sram=None, alignment=16, allocator="auto", inplace=True, scratch=True,
         stream_input=True, transforms=None, seconds=0.3, target="cortex-m4", io="model", input_layout="model"):
    """Plan ``model`` with the given segments (``Segment(ops, mode="rows", stripe_rows=1,
    column_strips=1)`` or ``Segment(ops, mode="patches", patches_h=2, patches_w=2)``); returns a
    :class:`TiledPlan`.

    The defaults are :func:`search`'s, so ``tile(model, point.segments)`` plans a front point
    of a default search again. Op indices are those of the graph after ``io``/``input_layout``
    and ``transforms`` (default all that help, as in ``search``: see :func:`transformed_graph`;
    ``"none"`` for the file's graph). ``stream_input``: pull the model input row by row (or patch
    by patch) when a segment reads it first."""
    graph, reports = transformed_graph(model, transforms, alignment, allocator, inplace, scratch, seconds, io,
                                       input_layout)
    segments = [s if isinstance(s, _core.Segment) else _core.Segment(list(s)) for s in segments]
    options = _options(sram, alignment, allocator, inplace, scratch, stream_input, seconds, target)
    return _tiled(graph, _core.make_tiled_plan(graph, segments, options), model, reports)


def _tiled(graph, core, model, reports):
    result = TiledPlan(graph, core, _name(model))
    result.transforms = reports
    return result


def _check_grid(name, values):
    values = tuple(int(v) for v in values)
    if not values or min(values) < 1:
        raise ValueError(f"{name} must be one or more positive integers, got {values}")
    return values


def search(model, tiling="auto", max_mac_overhead=MAX_MAC_OVERHEAD, stream_input=True, sram=None, alignment=16,
           allocator="auto", inplace=True, scratch=True, stripe_rows=STRIPE_ROWS, patch_grids=PATCH_GRIDS,
           column_strips=COLUMN_STRIPS, transforms=None, seconds=0.3, target="cortex-m4", io="model",
           input_layout="model", max_latency_overhead=None, objective="size"):
    """Choose segments for ``model`` with MACs at most ``max_mac_overhead`` times the untiled
    model's (default 1.0, see ``MAX_MAC_OVERHEAD``). ``objective="size"`` (default): the smallest
    peak SRAM, or with ``sram`` the fewest MACs whose peak fits; ``objective="speed"``: the fewest
    instructions predicted by the cost model for ``target`` (``best.predicted_instructions``) whose
    peak fits ``sram`` (any peak without a limit; the search then keeps peak against predicted
    instructions, not MACs, so it finds plans that tile only what the limit needs). Either way the
    smallest peak when none fits (``best.fits`` tells). The policy is the C++ search's
    (``tiling::choose_point``). Returns a :class:`TilingResult` whose ``front`` points carry their plans.

    ``tiling``: ``"rows"`` (row streaming only, 1.00x MACs), ``"patches"`` (patches only),
    ``"auto"`` (both, mixed; patches only when the budget allows more MACs), ``"none"``.
    ``stripe_rows``: stripe heights tried; ``patch_grids``: n x n patch grids tried;
    ``column_strips``: column strips tried on row segments (with patches: both recompute halos).
    ``max_latency_overhead``: the chosen plan's instructions predicted by the cost model for
    ``target`` (stripes and patches add kernel calls) at most this many times the untiled model's
    (``best.latency_overhead``; default None: no limit).
    ``transforms``: the graph rewrites applied first (see :func:`transformed_graph`; default all).
    ``io``/``input_layout``: the model's interface, as in ``tinyarena.plan``. With the input
    streamed, an input QUANTIZE and an NCHW -> NHWC TRANSPOSE of it become the first segment's load.
    The other keywords are :func:`tinyarena.plan`'s.
    """
    if tiling not in MODES:
        raise ValueError(f"unknown tiling {tiling!r}: use one of {', '.join(MODES)}")
    if max_mac_overhead < 1.0:
        raise ValueError(f"the MAC overhead budget must be at least 1.0, got {max_mac_overhead}")
    if max_latency_overhead is not None and max_latency_overhead < 1.0:
        raise ValueError(f"the latency overhead budget must be at least 1.0, got {max_latency_overhead}")
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}: use one of {', '.join(OBJECTIVES)}")
    stripe_rows, patch_grids = _check_grid("stripe_rows", stripe_rows), _check_grid("patch_grids", patch_grids)
    column_strips = _check_grid("column_strips", column_strips)
    graph, reports = transformed_graph(model, transforms, alignment, allocator, inplace, scratch, seconds, io,
                                       input_layout)
    options = _core.TilingSearchOptions(
        tiling=_options(sram, alignment, allocator, inplace, scratch, stream_input, seconds, target),
        rows=tiling in ("auto", "rows"),
        patches=tiling == "patches" or (tiling == "auto" and max_mac_overhead > 1.0),
        max_mac_overhead=float(max_mac_overhead),
        stripe_rows=list(stripe_rows),
        patch_grids=list(patch_grids),
        column_strips=list(column_strips),
        max_latency_overhead=float(max_latency_overhead or 0.0),
        objective=objective,
    )
    found = _core.search_tiling(graph, options)
    tile_options = dict(sram=sram, alignment=alignment, allocator=allocator, inplace=inplace, scratch=scratch,
                        stream_input=stream_input, transforms=transforms, seconds=seconds, target=target, io=io,
                        input_layout=input_layout)
    front = tuple(ParetoPoint(p.peak_bytes, p.macs, p.mac_overhead, tuple(p.segments),
                              _tiled(graph, p.plan, model, reports), tile_options) for p in found.front)
    best = front[found.best_point].plan  # the core's choice (tiling::choose_point)
    return TilingResult(best, front, found.untiled_peak_bytes, found.candidates, found.seconds)


def sweep(model, sram_limits, tiling="auto", max_mac_overhead=MAX_MAC_OVERHEAD, patch_grids=PATCH_GRIDS,
          stream_input=True, **plan_kwargs):
    """One :class:`SweepRecord` per SRAM limit: the fewest MACs (within ``max_mac_overhead``,
    default 1.0 as in :func:`search`) whose peak fits, or, when none fits, the smallest peak;
    each record carries that point's plan. The Pareto front is searched once; other keywords
    go to :func:`search`."""
    result = search(model, tiling=tiling, max_mac_overhead=max_mac_overhead, stream_input=stream_input,
                    patch_grids=patch_grids, **plan_kwargs)
    front = [p for p in result.front if p.mac_overhead <= max_mac_overhead + 1e-12]
    records = []
    for limit in (parse_size(s) for s in sram_limits):
        fitting = [p for p in front if p.peak_bytes <= limit]
        point = min(fitting, key=lambda p: p.macs) if fitting else min(front, key=lambda p: p.peak_bytes)
        records.append(SweepRecord(limit, bool(fitting), point.peak_bytes, point.macs, point.mac_overhead, point.plan))
    return records


def plot_pareto(result, ax=None, path=None, label=None, sram_limit=None):
    """Peak SRAM (KiB) against MAC overhead for a :class:`TilingResult` (with the untiled model's
    peak as its own point) or a ``front``; returns the ``Axes`` and saves to ``path`` if given."""
    from .plotting import plot_pareto as draw

    if isinstance(result, TilingResult):
        return draw(result.front, result.untiled_peak_bytes, ax=ax, path=path, label=label, sram_limit=sram_limit)
    return draw(result, ax=ax, path=path, label=label, sram_limit=sram_limit)


def _name(model):
    return str(model) if not isinstance(model, (bytes, bytearray, memoryview, _core.Graph)) else ""
