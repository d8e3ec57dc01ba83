"""The allocation chart: one rectangle per buffer, x = op step, y = address (KiB).

Axes scale to the plan (no clipping on 700-op or multi-MB models); the peak
and an SRAM limit are marked; the largest buffers are labelled.
"""

import numpy as np

_COLORS = {"activation": "#4c78a8", "scratch": "#f58518"}
_MAX_LABELS = 24


def _figure_size(steps):
    return (min(24.0, max(8.0, 6.0 + 0.025 * steps)), 5.5)


def _labelled(sizes, lifetimes, height, steps):
    """Indices of the buffers with room for a label (tall and wide enough), largest first."""
    area = sizes * lifetimes
    min_steps = max(2, steps / 20)
    roomy = [i for i in np.argsort(-area, kind="stable") if sizes[i] >= 0.05 * height and lifetimes[i] >= min_steps]
    return roomy[:_MAX_LABELS]


def plot_allocation(
    sizes, first, last, offsets, names=(), kinds=(), sram_limit=None, peak_step=None, ax=None, title=None, path=None
):
    """Draw buffers as rectangles; return the ``Axes``. Also saves to ``path`` when given.

    ``names`` are short labels (the large buffers get one, with their size);
    ``kinds`` ("activation"/"scratch") choose the colours.
    """
    import matplotlib.pyplot as plt
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    sizes, first, last, offsets = (np.asarray(a, dtype=np.int64) for a in (sizes, first, last, offsets))
    kinds = list(kinds) or ["activation"] * len(sizes)
    steps = int(last.max()) + 1 if len(last) else 1
    height = int((offsets + sizes).max()) if len(sizes) else 0
    if ax is None:
        _, ax = plt.subplots(figsize=_figure_size(steps))
    kib = 1024.0
    rects = [Rectangle((f - 0.45, o / kib), l - f + 0.9, s / kib) for f, l, o, s in zip(first, last, offsets, sizes)]
    colors = [_COLORS.get(k, "#54a24b") for k in kinds]
    ax.add_collection(PatchCollection(rects, facecolor=colors, edgecolor="black", linewidth=0.4, alpha=0.85))
    for i in _labelled(sizes, last - first + 1, height, steps):
        label = f"{names[i] if i < len(names) else i}\n{sizes[i] / kib:.1f}K"
        ax.text((first[i] + last[i]) / 2, (offsets[i] + sizes[i] / 2) / kib, label, ha="center", va="center",
                fontsize=6, clip_on=True)
    ax.axhline(height / kib, color="black", linestyle="--", linewidth=1)
    where = ""
    if peak_step is not None and peak_step >= 0:
        where = f" (most in use at step {peak_step})"
        ax.axvline(peak_step, color="gray", linestyle=":", linewidth=1)
    ax.text(0, height / kib, f" peak {height / kib:.1f} KiB{where}", va="bottom", fontsize=8)
    top = height
    if sram_limit:
        ax.axhline(sram_limit / kib, color="red", linewidth=1.2)
        ax.text(steps - 0.5, sram_limit / kib, f"SRAM limit {sram_limit / kib:.1f} KiB ", color="red", ha="right",
                va="bottom", fontsize=8)
        top = max(top, sram_limit)
    if "scratch" in kinds:
        ax.legend(handles=[Rectangle((0, 0), 1, 1, facecolor=c, label=k) for k, c in _COLORS.items()],
                  loc="upper right", fontsize=8, framealpha=0.8)
    ax.set_xlim(-0.5, steps - 0.5)
    ax.set_ylim(0, max(top, 1) / kib * 1.08)
    ax.set_xlabel("op (schedule step)")
    ax.set_ylabel("address (KiB)")
    if title:
        ax.set_title(title)
    if path is not None:
        ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    return ax


def plot_plan(plan, path=None, ax=None, sram_limit=None):
    """The chart of a :class:`tinyarena.Plan`; ``sram_limit`` defaults to the plan's."""
    b = plan.buffers
    step_of_op = {r.index: r.step for r in plan.ops}
    title = f"{plan.model_name or 'model'}: peak {plan.peak_bytes:,} B, lower bound {plan.lower_bound_bytes:,} B"
    return plot_allocation(
        [x.size for x in b],
        [x.first for x in b],
        [x.last for x in b],
        [x.offset for x in b],
        names=[f"t{x.tensors[0]}" if x.tensors else "scratch" for x in b],
        kinds=[x.kind for x in b],
        sram_limit=sram_limit if sram_limit is not None else plan.sram_limit,
        peak_step=step_of_op.get(plan.peak_op),
        ax=ax,
        title=title,
        path=path,
    )
