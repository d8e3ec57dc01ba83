"""The allocation chart (one rectangle per buffer, x = op step, y = address in KiB) and the
tiling Pareto plot (peak SRAM against MAC overhead).

The allocation chart labels the largest buffers with their index in ``plan.buffers`` (the
position in the JSON's ``buffers`` list, what ``--pin INDEX=MEMORY`` takes) and their size.
The y-axis follows the peak; an SRAM limit close to it is a line, one far above it an arrow at
the top edge. Op ticks are whole steps. A tiled plan's segments are shaded and its ring and
per-patch buffers hatched. The legend sits below the axes, clear of every label inside them.
"""

import os

import numpy as np

_COLORS = {"activation": "#4c78a8", "scratch": "#f58518", "trainable": "#b279a2", "gradient": "#e45756"}
_OTHER_COLOR = "#54a24b"
_SEGMENT_COLORS = {"rows": "#c7e9c0", "patches": "#fde0b2"}
_SEGMENT_NAMES = {"rows": "row-streamed segment", "patches": "patch segment"}
_HATCHES = {"ring": "///", "patch": ".."}
_MARK_NAMES = {"ring": "ring buffer (row stream)", "patch": "per-patch buffer"}
_MAX_LABELS = 24
_FAR_LIMIT = 1.25  # an SRAM limit more than this times the peak is an arrow, not a line
_HEADROOM = 1.1  # the y-axis ends this far above the peak (or the limit drawn as a line)
_MAX_NAME = 32  # characters of the model's name in the title
PIN_NOTE = "labels: buffer index (--pin INDEX=MEMORY, JSON buffers[INDEX]) and size"
_KIB = 1024.0


def _figure_size(steps):
    return (min(24.0, max(8.0, 6.0 + 0.025 * steps)), 6.0)


def short_name(path, limit=_MAX_NAME):
    """The file name of ``path`` without its extension, its middle elided when longer than ``limit``."""
    stem = os.path.splitext(os.path.basename(str(path)))[0] or "model"
    if len(stem) <= limit:
        return stem
    tail = (limit - 1) // 3
    return stem[:limit - 1 - tail] + "\u2026" + stem[-tail:]


def _size(size):
    """A buffer's size, short: bytes below 1 KiB, else KiB."""
    return f"{size} B" if size < 1024 else f"{size / _KIB:.1f}K"


def _amount(size):
    """Bytes, and KiB from 1 KiB on."""
    return f"{size:,} B" + (f" ({size / _KIB:,.1f} KiB)" if size >= 1024 else "")


def _labelled(sizes, lifetimes, height, steps):
    """Indices of the buffers with room for a label (tall and wide enough), largest first."""
    area = sizes * lifetimes
    min_steps = max(2, steps / 20)
    roomy = [i for i in np.argsort(-area, kind="stable") if sizes[i] >= 0.05 * height and lifetimes[i] >= min_steps]
    return roomy[:_MAX_LABELS]


def _rectangles(first, last, offsets, sizes, chosen):
    from matplotlib.patches import Rectangle

    return [Rectangle((first[i] - 0.45, offsets[i] / _KIB), last[i] - first[i] + 0.9, sizes[i] / _KIB) for i in chosen]


def _draw_buffers(ax, sizes, first, last, offsets, kinds, marks):
    """All buffers in one collection (``ax.collections[0]``), then one hatched overlay per mark."""
    from matplotlib.collections import PatchCollection

    everyone = range(len(sizes))
    colors = [_COLORS.get(k, _OTHER_COLOR) for k in kinds]
    ax.add_collection(PatchCollection(_rectangles(first, last, offsets, sizes, everyone), facecolor=colors,
                                      edgecolor="black", linewidth=0.4, alpha=0.85))
    for mark, hatch in _HATCHES.items():
        chosen = [i for i in everyone if marks[i] == mark]
        if chosen:
            ax.add_collection(PatchCollection(_rectangles(first, last, offsets, sizes, chosen), facecolor="none",
                                              edgecolor="white", linewidth=0, hatch=hatch, label=mark))


def _draw_segments(ax, segments):
    for begin, end, mode in segments:
        ax.axvspan(begin - 0.5, end + 0.5, facecolor=_SEGMENT_COLORS[mode], edgecolor="#888888", alpha=0.6,
                   zorder=0, linewidth=1, label=f"segment {mode}")


def _y_top(height, sram_limit):
    """The y-axis' upper end in bytes: the peak, or the limit when it is not far above the peak."""
    top = max(height, 1)
    if sram_limit and sram_limit <= _FAR_LIMIT * top:
        top = max(top, sram_limit)
    return top * _HEADROOM


def _draw_limit(ax, sram_limit, steps, top):
    """The limit as a line with its label, or, when above the axis, an arrow at the top edge."""
    text = f"SRAM limit {_amount(sram_limit)}"
    if sram_limit <= top:
        ax.axhline(sram_limit / _KIB, color="red", linewidth=1.2)
        return ax.text(steps - 0.5, sram_limit / _KIB, text + " ", color="red", ha="right", va="bottom", fontsize=8,
                       gid="sram_limit")
    return ax.annotate(f"{text} (above the chart)", xy=(0.985, 1.0), xycoords="axes fraction", xytext=(0.97, 0.95),
                       textcoords="axes fraction", ha="right", va="center", color="red", fontsize=8,
                       arrowprops=dict(arrowstyle="-|>", color="red", linewidth=1.2, relpos=(1.0, 0.5)),
                       gid="sram_limit")


def _legend_handles(kinds, marks, segments):
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=c, edgecolor="black", linewidth=0.4, label=k) for k, c in _COLORS.items() if k in kinds]
    handles += [Patch(facecolor="#777777", edgecolor="white", hatch=_HATCHES[m], label=_MARK_NAMES[m])
                for m in _HATCHES if m in marks]
    modes = {mode for _, _, mode in segments}
    handles += [Patch(facecolor=_SEGMENT_COLORS[m], label=_SEGMENT_NAMES[m]) for m in _SEGMENT_COLORS if m in modes]
    return handles


def _legend_below(ax, handles, note):
    """The legend under the x-axis label: offset by the x-axis' height in points (tick, tick
    label, label), so it stays clear of them whatever the figure's size."""
    from matplotlib import rcParams
    from matplotlib.transforms import ScaledTranslation

    tick_label = ax.xaxis.get_major_ticks()[0].label1.get_size()
    below = (rcParams["xtick.major.size"] + rcParams["xtick.major.pad"] + 1.25 * tick_label + ax.xaxis.labelpad
             + 1.25 * ax.xaxis.label.get_size() + 2)
    shift = ScaledTranslation(0, -below / 72, ax.figure.dpi_scale_trans)
    return ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=ax.transAxes + shift,
                     ncol=_columns(ax, [h.get_label() for h in handles], 8), fontsize=8, title=note, title_fontsize=7,
                     frameon=False)


def _columns(ax, labels, fontsize):
    """How many legend entries fit side by side under the axes (widths estimated from the label lengths)."""
    width = ax.get_position().width * ax.figure.get_figwidth() * 72
    entries = sorted((fontsize * (4.5 + 0.6 * len(label)) for label in labels), reverse=True)
    fitting = [k for k in range(1, len(entries) + 1) if sum(entries[:k]) <= width]
    return max(fitting, default=1)


def plot_allocation(sizes, first, last, offsets, labels=(), kinds=(), sram_limit=None, peak_step=None, ax=None,
                    title=None, path=None, marks=(), segments=(), label_note="box labels: buffer index and size"):
    """Draw buffers as rectangles; return the ``Axes``. Also saves to ``path`` when given.

    ``labels`` name the buffers (default: their index; the large ones get a label, with their
    size, explained by ``label_note`` in the legend); ``kinds`` ("activation"/"scratch", and for training
    steps "trainable"/"gradient") choose the colours; ``marks`` ("ring"/"patch"/"") hatch buffers; ``segments`` are
    ``(first step, last step, mode)`` ranges shaded behind them.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    sizes, first, last, offsets = (np.asarray(a, dtype=np.int64) for a in (sizes, first, last, offsets))
    kinds = list(kinds) or ["activation"] * len(sizes)
    marks = list(marks) or [""] * len(sizes)
    steps = int(last.max()) + 1 if len(last) else 1
    height = int((offsets + sizes).max()) if len(sizes) else 0
    if ax is None:
        _, ax = plt.subplots(figsize=_figure_size(steps), layout="constrained")
    _draw_segments(ax, segments)
    _draw_buffers(ax, sizes, first, last, offsets, kinds, marks)
    for i in _labelled(sizes, last - first + 1, height, steps):
        ax.text((first[i] + last[i]) / 2, (offsets[i] + sizes[i] / 2) / _KIB,
                f"{labels[i] if i < len(labels) else i}\n{_size(sizes[i])}", ha="center", va="center", fontsize=6,
                clip_on=True, bbox=dict(boxstyle="round,pad=0.15", facecolor="white", alpha=0.7, linewidth=0))
    ax.axhline(height / _KIB, color="black", linestyle="--", linewidth=1)
    where = ""
    if peak_step is not None and peak_step >= 0:
        where = f" (most in use at step {peak_step})"
        ax.axvline(peak_step, color="gray", linestyle=":", linewidth=1)
    ax.text(-0.5, height / _KIB, f" peak {_amount(height)}{where}", va="bottom", fontsize=8, gid="peak")
    top = _y_top(height, sram_limit)
    if sram_limit:
        _draw_limit(ax, sram_limit, steps, top)
    ax.set_xlim(-0.5, steps - 0.5)
    ax.set_ylim(0, top / _KIB)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("op (schedule step)")
    ax.set_ylabel("address (KiB)")
    if title:
        ax.set_title(title, fontsize=11)
    _legend_below(ax, _legend_handles(kinds, marks, segments), label_note)
    if path is not None:
        ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    return ax


def tiled_parts(plan):
    """(a mark per buffer: "ring", "patch" or "", [(first step, last step, mode) per segment]) of a
    tiled plan; no marks and no segments for an untiled one."""
    marks = [""] * len(plan.buffers)
    tiled = getattr(plan, "tiled", None)
    if tiled is None:
        return marks, []
    step_of_op = {r.index: r.step for r in plan.ops}
    segments = []
    for seg, stream, run in zip(tiled.segments, tiled.streams, tiled.patch_runs):
        begin, end = step_of_op[seg.ops[0]], step_of_op[seg.ops[-1]]
        segments.append((begin, end, seg.mode))
        mark, own = ("ring", stream.rings) if seg.mode == "rows" else ("patch", run.buffers)
        tensors = {b.tensor for b in own}
        for i, b in enumerate(plan.buffers):
            if b.tensors and set(b.tensors) <= tensors and begin <= b.first and b.last <= end:
                marks[i] = mark
    return marks, segments


def plot_plan(plan, path=None, ax=None, sram_limit=None):
    """The chart of a :class:`tinyarena.Plan`; ``sram_limit`` defaults to the plan's."""
    b = plan.buffers
    step_of_op = {r.index: r.step for r in plan.ops}
    marks, segments = tiled_parts(plan)
    tiled = f", {len(segments)} tiled segment{'s' * (len(segments) != 1)}" if segments else ""
    title = (f"{short_name(plan.model_name or 'model')}: peak {plan.peak_bytes:,} B, "
             f"lower bound {plan.lower_bound_bytes:,} B{tiled}")
    return plot_allocation(
        [x.size for x in b],
        [x.first for x in b],
        [x.last for x in b],
        [x.offset for x in b],
        kinds=[x.kind for x in b],
        sram_limit=sram_limit if sram_limit is not None else plan.sram_limit,
        peak_step=step_of_op.get(plan.peak_op),
        ax=ax,
        title=title,
        path=path,
        marks=marks,
        segments=segments,
        label_note=PIN_NOTE,
    )


def plot_pareto(front, untiled_peak_bytes=None, ax=None, path=None, label=None, sram_limit=None):
    """Peak SRAM (KiB) against MAC overhead of Pareto points (MACs ascending), with the untiled
    model's peak as its own point at 1.00x when ``untiled_peak_bytes`` is given."""
    import matplotlib.pyplot as plt

    from .sizes import parse_size

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    ax.step([p.mac_overhead for p in front], [p.peak_bytes / _KIB for p in front], where="post", marker="o",
            label=label or "tiled (Pareto front)")
    if untiled_peak_bytes is not None:
        ax.plot([1.0], [untiled_peak_bytes / _KIB], marker="s", markersize=8, linestyle="none", color="gray",
                label=f"untiled: {untiled_peak_bytes:,} B", gid="untiled")
    if sram_limit:
        ax.axhline(parse_size(sram_limit) / _KIB, color="#e45756", linestyle="--", linewidth=1, label="SRAM limit")
    ax.set_xlabel("MACs / untiled MACs")
    ax.set_ylabel("peak SRAM (KiB)")
    ax.set_title("tiling Pareto front")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    if path:
        ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    return ax
