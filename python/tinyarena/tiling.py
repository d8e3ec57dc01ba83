"""Stage 3b: tiling -- row-streamed cascades and patch-based segments under an SRAM limit.

The early, high-resolution layers of a CNN set its peak SRAM. A *segment* of consecutive
spatial ops (conv, depthwise, pools, elementwise) can run

- ``"rows"``: a few rows at a time (a cascade, as Vela streams them); every tensor inside the
  segment is a ring of just the rows its consumers still need, nothing is recomputed
  (1.00x MACs); the model input may be pulled row by row (``stream_input=True``);
- ``"patches"``: on an n x m grid of output patches whose halos are recomputed (MCUNetV2),
  each patch written into the whole output tensor.

``search(model, ...)`` chooses segments, modes, stripe heights and patch grids by dynamic
programming over segment boundaries and plans every Pareto point (peak SRAM vs MACs) with the
real liveness and allocator. ``tile(model, segments)`` plans a given segmentation.
``sweep(model, sram_limits=[...])`` gives records for many limits at once. The search works on
the graph after the graph rewrites of ``tinyarena.transforms`` (PAD folding first: a PAD cannot
stream); elided ops and zero-copy slices end a segment.
``tinyarena.codegen.compile`` compiles tiled plans, both modes and mixed (bit-exact with the
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

__all__ = ["MODES", "Segment", "TiledPlan", "TilingResult", "SweepRecord", "input_range", "plot_pareto", "search",
           "sweep", "tile", "transformed_graph"]

MODES = ("none", "auto", "rows", "patches")
Segment = _core.Segment


def input_range(model, op, position=0, axis="rows", begin=0, end=1):
    """Input rows (``axis="rows"``) or columns [a, b) that output [begin, end) of ``op`` reads."""
    return _core.input_range(load_model(model), op, position, axis, begin, end)


class TiledPlan(Plan):
    """A :class:`Plan` of a tiled schedule (table, chart, JSON and validation as any plan) with
    its segments, MACs and MAC overhead; ``tinyarena.codegen.compile`` accepts it."""

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

    def describe(self):
        """One line per segment: its ops, mode and parameters."""
        lines = []
        for seg in self.segments:
            how = f"{seg.stripe_rows} row stripes" if seg.mode == "rows" else f"{seg.patches_h}x{seg.patches_w} patches"
            lines.append(f"ops {seg.ops[0]}..{seg.ops[-1]} ({len(seg.ops)} ops): {seg.mode}, {how}")
        return "\n".join(lines) or "no segments (untiled)"

    def __repr__(self):
        return (f"<TiledPlan {self.model_name or 'model'}: peak {self.peak_bytes} B, {len(self.segments)} segments, "
                f"MACs x{self.mac_overhead:.3f}>")


@dataclasses.dataclass(frozen=True)
class TilingResult:
    """What :func:`search` found: the best plan within the MAC budget and the Pareto front."""

    best: TiledPlan
    front: tuple  # ParetoPoint (peak_bytes, macs, mac_overhead, segments), MACs ascending
    untiled_peak_bytes: int
    candidates: int
    seconds: float

    @property
    def smallest_peak_bytes(self):
        """The lowest peak of any Pareto point (whatever its MACs)."""
        return min(p.peak_bytes for p in self.front) if self.front else self.best.peak_bytes


@dataclasses.dataclass(frozen=True)
class SweepRecord:
    sram_limit: int
    fits: bool
    peak_bytes: int  # of the chosen point: the fewest MACs that fit, else the smallest peak
    macs: int
    mac_overhead: float


def _options(sram, align, allocator, inplace, scratch, stream_input):
    return _core.TilingOptions(plan=plan_options(sram, align, allocator, inplace, scratch), stream_input=stream_input)


def transformed_graph(model, transforms=None, align=16, allocator="auto", inplace=True,
                      scratch=True, io="model", input_layout="model"):
    """``model``'s graph after the graph rewrites of ``transforms`` (as in ``tinyarena.plan``:
    default all, each kept when the untiled peak does not grow; ``reorder`` is left out, tiled
    schedules run in the graph's order) and the TransformReports. PAD folding comes first so
    that a PAD (which cannot stream) no longer cuts a cascade. ``io`` and ``input_layout``
    choose the interface first (``tinyarena.transforms.io_boundary``)."""
    graph, _ = io_boundary(model, io, input_layout)
    names = tuple(n for n in parse_transforms(transforms) if n != "reorder")
    if not names:
        return graph, ()
    planned = make_plan(graph, align=align, allocator=allocator, inplace=inplace, scratch=scratch, transforms=names)
    return planned.graph, planned.transforms


def tile(model, segments=(), sram=None, align=16, allocator="auto", inplace=True, scratch=True,
         stream_input=False, transforms="none", io="model", input_layout="model"):
    """Plan ``model`` with the given segments (``Segment(ops, mode="rows", stripe_rows=1)`` or
    ``Segment(ops, mode="patches", patches_h=2, patches_w=2)``); returns a :class:`TiledPlan`.
    Op indices are those of the graph after ``io``/``input_layout`` and ``transforms`` (default
    none: the file's graph)."""
    graph, reports = transformed_graph(model, transforms, align, allocator, inplace, scratch, io, input_layout)
    segments = [s if isinstance(s, _core.Segment) else _core.Segment(list(s)) for s in segments]
    core = _core.make_tiled_plan(graph, segments, _options(sram, align, allocator, inplace, scratch, stream_input))
    return _tiled(graph, core, model, reports)


def _tiled(graph, core, model, reports):
    result = TiledPlan(graph, core, _name(model))
    result.transforms = reports
    return result


def search(model, tiling="auto", max_mac_overhead=1.0, stream_input=True, sram=None, align=16,
           allocator="auto", inplace=True, scratch=True, stripe_rows=(1,), patch_grids=(2, 3, 4, 5, 6),
           transforms=None, io="model", input_layout="model"):
    """Choose segments for ``model`` with MACs at most ``max_mac_overhead`` times the untiled
    model's: the smallest peak SRAM, or with ``sram`` the fewest MACs whose peak fits (the
    smallest peak when none fits; ``best.fits`` tells). Returns a :class:`TilingResult`.

    ``tiling``: ``"rows"`` (row streaming only, 1.00x MACs), ``"patches"`` (patches only),
    ``"auto"`` (both, mixed; patches only when the budget allows more MACs), ``"none"``.
    ``transforms``: the graph rewrites applied first (see :func:`transformed_graph`; default all).
    ``io``/``input_layout``: the model's interface, as in ``tinyarena.plan``. With the input
    streamed, an input QUANTIZE and an NCHW -> NHWC TRANSPOSE of it become the first segment's load.
    """
    if tiling not in MODES:
        raise ValueError(f"unknown tiling {tiling!r}: use one of {', '.join(MODES)}")
    if max_mac_overhead < 1.0:
        raise ValueError(f"the MAC overhead budget must be at least 1.0, got {max_mac_overhead}")
    graph, reports = transformed_graph(model, transforms, align, allocator, inplace, scratch, io, input_layout)
    tiling_options = _options(sram, align, allocator, inplace, scratch, stream_input)
    options = _core.TilingSearchOptions(
        tiling=tiling_options,
        rows=tiling in ("auto", "rows"),
        patches=tiling == "patches" or (tiling == "auto" and max_mac_overhead > 1.0),
        max_mac_overhead=float(max_mac_overhead),
        stripe_rows=list(stripe_rows),
        patch_grids=list(patch_grids),
    )
    found = _core.search_tiling(graph, options)
    best = found.best
    fitting = [p for p in found.front if sram is not None and p.peak_bytes <= parse_size(sram)
               and p.mac_overhead <= max_mac_overhead + 1e-12]
    if fitting:  # the fewest MACs that fit
        best = _core.make_tiled_plan(graph, min(fitting, key=lambda p: p.macs).segments, tiling_options)
    return TilingResult(_tiled(graph, best, model, reports), tuple(found.front), found.untiled_peak_bytes,
                        found.candidates, found.seconds)


def sweep(model, sram_limits, tiling="auto", max_mac_overhead=1.3, patches=(2, 3, 4, 5, 6), stream_input=True,
          **plan_kwargs):
    """One record per SRAM limit: the fewest MACs (within ``max_mac_overhead``) whose peak fits,
    or, when none fits, the smallest peak. The Pareto front is searched once."""
    result = search(model, tiling=tiling, max_mac_overhead=max_mac_overhead, stream_input=stream_input,
                    patch_grids=patches, **plan_kwargs)
    front = result.front or ()
    records = []
    for limit in (parse_size(s) for s in sram_limits):
        fitting = [p for p in front if p.peak_bytes <= limit]
        point = min(fitting, key=lambda p: p.macs) if fitting else min(front, key=lambda p: p.peak_bytes)
        records.append(SweepRecord(limit, bool(fitting), point.peak_bytes, point.macs, point.mac_overhead))
    return records


def plot_pareto(result, ax=None, path=None, label=None, sram_limit=None):
    """Peak SRAM (KiB) against MAC overhead for a :class:`TilingResult` (or its ``front``)."""
    import matplotlib.pyplot as plt

    front = result.front if isinstance(result, TilingResult) else result
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    xs = [p.mac_overhead for p in front]
    ys = [p.peak_bytes / 1024 for p in front]
    ax.step(xs, ys, where="post", marker="o", label=label)
    if sram_limit:
        ax.axhline(parse_size(sram_limit) / 1024, color="#e45756", linestyle="--", linewidth=1, label="SRAM limit")
    ax.set_xlabel("MACs / untiled MACs")
    ax.set_ylabel("peak SRAM (KiB)")
    ax.set_title("tiling Pareto front")
    ax.grid(True, alpha=0.3)
    if label or sram_limit:
        ax.legend()
    if path:
        ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    return ax


def _name(model):
    return str(model) if not isinstance(model, (bytes, bytearray, memoryview, _core.Graph)) else ""
