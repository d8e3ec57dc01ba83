"""On-device training: the memory plan of one sparse-update training step.

``plan_training(model, spec)`` derives the training step of an int8 model at compile time --
the forward ops as inference runs them, the activations the backward pass reads, the backward
steps pruned to the update, and an SGD update per updated parameter -- and places its buffers
with the allocators inference uses. Policy lives in the core (``cpp/include/tinyarena/training/``);
this module wraps it.

Update specs (the same in the CLI's ``--train SPEC``):

- ``bias``: every bias of every weight layer (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED);
- ``last:K``: weights and biases of the last K weight layers;
- ``layers:I[,J...][@FRACTION]``: weights of the weight layers at op indices I, J, ... (only the
  first ceil(FRACTION * C_out) output channels when FRACTION, 0 < FRACTION <= 1, is given), plus
  every bias;
- ``auto``: under ``sram=`` (and ``flash=``), the fitting spec with the most updated parameters
  among ``bias``; when it fits, ``layers:{the last n weight layers}@1`` for the largest n that fits
  (doubling, then bisection: memory is taken to grow with n) and ``layers:{the last n+1}@F`` for
  the largest F of 0.5, 0.25, 0.125 that fits; and ``last:K`` for the largest K that fits
  (``plan.candidates`` lists every spec tried). When nothing fits, the plan is ``bias``'s, with
  ``fits`` False.

Gradients exist for CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, RELU/RELU6 (fused ones too),
AVERAGE_POOL_2D, MEAN, PAD, RESHAPE/SQUEEZE/EXPAND_DIMS and a final SOFTMAX with cross-entropy (or
cross-entropy on logits; a final DEQUANTIZE is skipped); another op on the backward path raises
``tinyarena.UnsupportedError`` naming its index and type.

Number formats (byte counts follow from them): forward int8 as in inference, saved activations
are those int8 tensors, except a tensor saved only for a RELU/RELU6 derivative: a 1-bit mask,
ceil(n/8) bytes, written by its forward op (``TrainingGraph.masks``; a tensor a weight gradient
reads stays int8); activation gradients int8 with one per-tensor scale chosen at run time;
weight and bias gradients int32 per updated element (with ``reorder_updates=True`` a weight
gradient is computed and applied per output channel in one step, ``TrainingGraph.channel_updates``,
whose scratch is one channel's int32 gradient); trainable tensors in SRAM: int8 weights of
the updated output channels, int32 biases, live for the whole step; backward scratch: a CONV_2D /
DEPTHWISE_CONV_2D / FULLY_CONNECTED input gradient (and an AVERAGE_POOL_2D one with overlapping
windows) is accumulated in int32 and requantized with the scale of its largest value: in two
passes over its rows by default (one int32 row of scratch, W * C * 4 bytes, for twice those
MACs), or with ``single_pass_requant=True`` in one pass over an int32 copy of the whole tensor
(4 bytes per element).

Buffer classes: ``activation``, ``scratch``, ``trainable``, ``gradient``. With
``reorder_updates=True`` (default) each parameter's update runs right after its gradient, which
dies at once; ``compare_update_order`` reports the saving against all updates at the end.
"""

import json
from dataclasses import dataclass

from . import _core
from .reader import load_model
from .sizes import check_alignment, format_bytes, parse_limit

__all__ = ["CLASSES", "SweepRecord", "TrainingPlan", "UpdateOrderComparison", "compare_update_order", "parse_spec",
           "plot_sweep", "plan_training", "sweep", "training_graph"]

CLASSES = ("activation", "scratch", "trainable", "gradient")


def parse_spec(spec):
    """The update spec in canonical form (``"layers:3,5@0.5"``); ``ValueError`` naming the bad part."""
    if not isinstance(spec, str):
        raise TypeError(f"an update spec is a string, not {type(spec).__name__}")
    return _core.canonical_spec(spec)


def training_graph(model, spec):
    """The core ``TrainingGraph`` of ``model`` under ``spec`` (not ``auto``): ``updates``,
    ``values``, ``backward`` steps (loss first; each step's ``kind`` and ``math``: what it computes),
    ``sgd_updates``, ``channel_updates`` (the fused
    per-channel weight gradient + update that replaces the backward step
    ``channel_update_replaces[i]`` when updates are reordered), ``saved`` forward tensors (int8),
    ``masks`` (values: 1-bit masks), ``backward_ops`` (descending) and ``updated_parameters``. The model's graph is not changed."""
    return _core.derive_training_graph(load_model(model), parse_spec(spec))


@dataclass(frozen=True)
class TrainingBuffer:
    """A buffer of the training step: its class, inclusive step lifetime and place."""

    name: str
    cls: str  # "activation", "scratch", "trainable" or "gradient"
    size: int  # bytes, rounded up to the alignment
    first: int
    last: int
    offset: int


class TrainingPlan:
    """The memory plan of one training step. Build it with :func:`plan_training`."""

    def __init__(self, core_plan, model_name=""):
        self.core = core_plan
        self.model_name = model_name
        classes = core_plan.buffer_class
        self.buffers = tuple(TrainingBuffer(b.name, c, b.size, b.first, b.last, int(o))
                             for b, c, o in zip(core_plan.problem.buffers, classes, core_plan.solution.offsets))

    spec = property(lambda self: self.core.spec, doc="The spec planned (for ``auto``: the one chosen).")
    peak_bytes = property(lambda self: self.core.peak_bytes, doc="Arena height of the step.")
    lower_bound_bytes = property(lambda self: self.core.lower_bound_bytes,
                                 doc="The most bytes live at one step: no placement is lower.")
    peak_step = property(lambda self: self.core.peak_step, doc="First step with the most bytes live.")
    trainable_bytes = property(lambda self: self.core.trainable_bytes,
                               doc="SRAM of the trainable tensors (live at every step).")
    gradient_bytes = property(lambda self: self.core.gradient_bytes,
                              doc="The most gradient bytes (activation and parameter gradients) live at one step.")
    class_bytes = property(lambda self: dict(self.core.class_bytes),
                           doc="Bytes of all buffers of each class (``CLASSES``), aligned.")
    flash_bytes = property(lambda self: self.core.flash_bytes,
                           doc="Constant data of the inference build (the trainables' initial copy stays there).")
    fits = property(lambda self: self.core.fits, doc="Within ``sram`` and ``flash`` (True without limits).")
    sram_limit = property(lambda self: self.core.options.sram_limit or None)
    flash_limit = property(lambda self: self.core.options.flash_limit or None)
    reorder_updates = property(lambda self: self.core.options.reorder_updates)
    steps = property(lambda self: self.core.steps, doc="Per-step rows: kind, op, what, live bytes per class.")
    forward_steps = property(lambda self: self.core.forward_steps, doc="Steps [0, n) run the forward ops.")
    updates = property(lambda self: self.core.training.updates, doc="What each updated weight layer updates.")
    updated_parameters = property(lambda self: self.core.training.updated_parameters)
    candidates = property(lambda self: tuple(self.core.candidates), doc="Specs ``auto`` tried (empty otherwise).")
    macs = property(lambda self: None, doc="Not counted for training steps (None; empty in a --summary line).")
    problem = property(lambda self: self.core.problem)
    solution = property(lambda self: self.core.solution)

    def validate(self):
        """Violations of the placement (empty list when valid)."""
        from .allocation import validate

        return validate(self.core.problem, self.core.solution)

    def table(self):
        """One row per step (live bytes per class, arena top) and the summary."""
        header = ("step", "kind", "op", "what", *(f"{c} B" for c in CLASSES), "total B", "arena top B")
        rows = [(str(s.step), s.kind, str(s.op), s.what, *(f"{s.live[c]:,}" for c in CLASSES), f"{s.total:,}",
                 f"{s.arena_top:,}") for s in self.steps]
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
        left = {1, 3}
        lines = ["  ".join(v.ljust(w) if i in left else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths)))
                 for r in [header, *rows]]
        return "\n".join(lines + [""] + self.summary_lines())

    def summary_lines(self):
        order = "each right after its gradient" if self.reorder_updates else "all after the backward pass"
        lines = [
            (f"training spec {self.spec}: {self.updated_parameters:,} parameters updated in "
             f"{len(self.updates)} weight layers, updates {order}"),
            f"peak SRAM     {self.peak_bytes:,} B ({format_bytes(self.peak_bytes)}) at step {self.peak_step}",
            f"lower bound   {self.lower_bound_bytes:,} B",
            f"trainable     {self.trainable_bytes:,} B",
            f"gradient      {self.gradient_bytes:,} B at most live",
            "by class      " + ", ".join(f"{c} {self.class_bytes[c]:,} B" for c in CLASSES),
            f"flash         {self.flash_bytes:,} B constant data ({self.core.options.target})",
        ]
        for limit, what, need in ((self.sram_limit, "SRAM", self.peak_bytes), (self.flash_limit, "flash",
                                                                               self.flash_bytes)):
            if limit:
                verdict = "fits" if need <= limit else f"DOES NOT FIT: needs {need:,} B, limit {limit:,} B"
                lines.append(f"{what + ' limit':13s} {limit:,} B: {verdict}")
        return lines

    def to_dict(self):
        """Plain data, what ``to_json`` writes: the summary figures (``peak_bytes``,
        ``trainable_bytes``, ``gradient_bytes``, ``class_bytes``, ...), ``updates``, ``candidates``,
        ``steps`` and ``buffers``."""
        return {
            "model": self.model_name, "spec": self.spec, "reorder_updates": self.reorder_updates,
            "peak_bytes": self.peak_bytes, "lower_bound_bytes": self.lower_bound_bytes,
            "peak_step": self.peak_step, "trainable_bytes": self.trainable_bytes,
            "gradient_bytes": self.gradient_bytes, "class_bytes": self.class_bytes,
            "flash_bytes": self.flash_bytes, "sram_limit": self.sram_limit, "flash_limit": self.flash_limit,
            "fits": self.fits, "updated_parameters": self.updated_parameters,
            "updates": [{"op": u.op, "type": u.type, "weight_channels": u.weight_channels,
                         "out_channels": u.out_channels, "bias": u.bias, "parameters": u.parameters}
                        for u in self.updates],
            "candidates": [{"spec": c.spec, "parameters": c.parameters, "peak_bytes": c.peak_bytes, "fits": c.fits,
                            "error": c.error} for c in self.candidates],
            "steps": [{"step": s.step, "kind": s.kind, "op": s.op, "what": s.what, "live": s.live,
                       "arena_top": s.arena_top} for s in self.steps],
            "buffers": [b.__dict__.copy() for b in self.buffers],
        }

    def to_json(self, path=None, indent=2):
        """The plan as JSON text; also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=indent)
        if path:
            with open(path, "w") as f:
                f.write(text + "\n")
        return text

    def plot(self, path=None, ax=None):
        """The allocation chart: trainable, gradient, activation and scratch buffers in their own colours."""
        from .plotting import plot_allocation, short_name

        b = self.buffers
        title = (f"{short_name(self.model_name or 'model')} training step ({self.spec}): peak {self.peak_bytes:,} B, "
                 f"trainable {self.trainable_bytes:,} B")
        ax = plot_allocation([x.size for x in b], [x.first for x in b], [x.last for x in b], [x.offset for x in b],
                             kinds=[x.cls for x in b], sram_limit=self.sram_limit, peak_step=self.peak_step, ax=ax,
                             title=title)
        ax.set_xlabel(f"training step (forward 0-{self.forward_steps - 1}, then loss, backward and updates)")
        if path is not None:
            ax.figure.savefig(path, dpi=120, bbox_inches="tight")
        return ax

    def __repr__(self):
        return (f"<TrainingPlan {self.model_name or 'model'} {self.spec}: peak {self.peak_bytes} B, "
                f"trainable {self.trainable_bytes} B, gradient {self.gradient_bytes} B>")


def training_options(sram=None, flash=None, reorder_updates=True, alignment=16, allocator="auto", seconds=0.3,
                     inplace=True, scratch=True, target="cortex-m4", single_pass_requant=False):
    """The core ``TrainingOptions`` for these arguments (checked)."""
    if seconds < 0:
        raise ValueError(f"the allocation budget must not be negative, got {seconds} seconds")
    return _core.TrainingOptions(alignment=check_alignment(alignment), allocator=allocator, seconds=float(seconds),
                                 reorder_updates=bool(reorder_updates), inplace=bool(inplace), scratch=bool(scratch),
                                 single_pass_requant=bool(single_pass_requant),
                                 sram_limit=parse_limit(sram) if sram is not None else 0,
                                 flash_limit=parse_limit(flash) if flash is not None else 0, target=target)


def plan_training(model, spec, sram=None, flash=None, reorder_updates=True, alignment=16, allocator="auto",
                  seconds=0.3, inplace=True, scratch=True, target="cortex-m4", single_pass_requant=False):
    """Plan one training step of ``model`` (a path, bytes or ``Graph``; its file order, no transforms)
    updating ``spec`` (see the module's docstring) and return a :class:`TrainingPlan`.

    ``sram`` / ``flash``: limits (sizes as ``tinyarena.plan`` takes them); ``plan.fits`` says whether
    the plan keeps them, and ``auto`` needs one of them. ``reorder_updates``: each SGD update right
    after its gradient (default) or all after the backward pass. ``inplace``: forward in-place ops
    (never over a saved activation) and in-place backward elementwise steps. ``single_pass_requant``:
    backward scratch of a whole int32 input gradient instead of one row (see the module's
    docstring). ``alignment``,
    ``allocator``, ``seconds``, ``scratch``, ``target`` as for ``tinyarena.plan``.
    Raises ``ValueError`` for a bad spec or a listed op that is not a weight layer,
    ``tinyarena.UnsupportedError`` naming the op index and type of an op on the backward path
    without a gradient.
    """
    options = training_options(sram, flash, reorder_updates, alignment, allocator, seconds, inplace, scratch, target,
                               single_pass_requant)
    core = _core.plan_training(load_model(model), parse_spec(spec), options)
    name = str(model) if not isinstance(model, (bytes, bytearray, memoryview, _core.Graph)) else ""
    return TrainingPlan(core, model_name=name)


@dataclass(frozen=True)
class UpdateOrderComparison:
    """The same spec planned with updates reordered and at the end."""

    reordered: TrainingPlan
    at_end: TrainingPlan

    @property
    def saving_bytes(self):
        """Peak bytes the reordering saves (at_end.peak_bytes - reordered.peak_bytes)."""
        return self.at_end.peak_bytes - self.reordered.peak_bytes


def compare_update_order(model, spec, **options):
    """Plan ``spec`` (not ``auto``: its choice depends on the order) with updates reordered and at
    the end; ``options`` as for :func:`plan_training`."""
    if parse_spec(spec) == "auto":
        raise ValueError("compare_update_order needs a spec that does not depend on the order: plan 'auto' first and "
                         "compare its plan.spec")
    graph = load_model(model)
    plans = [plan_training(graph, spec, reorder_updates=r, **options) for r in (True, False)]
    for p in plans:
        p.model_name = str(model) if isinstance(model, str) else ""
    return UpdateOrderComparison(*plans)


@dataclass(frozen=True)
class SweepRecord:
    """One point of :func:`sweep`: a spec (or ``auto`` under a limit) and its plan's figures."""

    spec: str  # as asked ("auto" for a limit's point)
    sram_limit: object  # the limit in bytes (auto points), else None
    chosen: str  # the spec planned (auto: the one chosen)
    updated_parameters: int
    peak_bytes: int
    trainable_bytes: int
    gradient_bytes: int
    fits: bool
    plan: TrainingPlan


def sweep(model, specs=("bias", "last:1", "last:2", "last:4"), sram_limits=(), **options):
    """A :class:`SweepRecord` per spec (no limit), then one per SRAM limit for ``auto`` under it;
    ``options`` as for :func:`plan_training`. Draw them with :func:`plot_sweep`."""
    graph = load_model(model)
    runs = [(spec, None) for spec in specs] + [("auto", parse_limit(limit)) for limit in sram_limits]
    records = []
    for spec, limit in runs:
        plan = plan_training(graph, spec, sram=limit, **options)
        records.append(SweepRecord(spec, limit, plan.spec, plan.updated_parameters, plan.peak_bytes,
                                   plan.trainable_bytes, plan.gradient_bytes, plan.fits, plan))
    return records


def plot_sweep(records, ax=None, path=None, title=None):
    """Peak SRAM (KiB) against updated parameters of :func:`sweep`'s records (``auto`` points
    marked, each limit a dashed line); returns the ``Axes`` and saves to ``path`` if given."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    for auto, marker, label in ((False, "o", "spec"), (True, "s", "auto under the limit")):
        chosen = [r for r in records if (r.sram_limit is not None) == auto]
        if chosen:
            ax.plot([r.updated_parameters for r in chosen], [r.peak_bytes / 1024 for r in chosen], marker=marker,
                    linestyle="none", label=label)
            for r in chosen:
                ax.annotate(r.chosen if len(r.chosen) <= 24 else r.chosen[:23] + "\u2026",
                            (r.updated_parameters, r.peak_bytes / 1024), fontsize=7, xytext=(4, 4),
                            textcoords="offset points")
    for limit in sorted({r.sram_limit for r in records if r.sram_limit}):
        ax.axhline(limit / 1024, color="#e45756", linestyle="--", linewidth=1)
    ax.set_xscale("symlog", linthresh=1000)
    ax.set_xlabel("updated parameters")
    ax.set_ylabel("training-step peak SRAM (KiB)")
    ax.set_title(title or "training step: memory against updated parameters")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    if path:
        ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    return ax
