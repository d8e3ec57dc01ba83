"""Stage 1a: transforms -- rewrites that lower the memory a model needs, before planning.

Each transform takes a ``Graph`` and returns a new one (the input is never changed) plus a
record of what it changed; all keep the model's outputs bit for bit:

- ``fold_pads``: a PAD (int8, height/width only, value = the input zero point) read only by
  CONV_2D / DEPTHWISE_CONV_2D (or MAX_POOL_2D when the pad value is -128) becomes their explicit
  padding, so the padded copy is never made (TensorFlow exports a PAD before every stride-2
  depthwise of MobileNetV2).
- ``zero_copy``: a CONCATENATION whose producers can write straight into their slice of its output
  (contiguous slices, or channel slices written by conv/depthwise/pool kernels with a pixel
  stride) and SPLIT / STRIDED_SLICE taking contiguous slices stop copying: the slices are placed
  inside the big tensor (``Tensor.placement``) and the op is elided (``Op.elided``).
- ``reorder``: the op order with the lowest peak (``tinyarena.schedule.find_schedule``).

``tinyarena.plan`` applies them in this order by default and keeps each one only if the plan's
peak does not grow (if all of a transform's rewrites together raise it, each is tried alone);
``plan.transforms`` reports the lower bound and peak before and after each.
"""

import dataclasses

from . import _core
from .reader import load_model

__all__ = ["TRANSFORMS", "TransformReport", "apply_transform", "fold_pads", "parse_transforms", "zero_copy"]

TRANSFORMS = ("fold_pads", "zero_copy", "reorder")
"""Every transform, in the order a plan applies them (graph rewrites first, reordering last)."""


@dataclasses.dataclass(frozen=True)
class TransformReport:
    """One transform's effect on a plan: bytes before and after, and whether the plan kept it."""

    name: str
    applied: bool  # kept: it changed the graph or order and the peak did not grow
    changes: tuple  # what it changed (one line per rewritten op), empty when nothing applied
    lower_bound_before: int
    lower_bound_after: int
    peak_before: int
    peak_after: int

    def to_dict(self):
        return dataclasses.asdict(self) | {"changes": list(self.changes)}


def apply_transform(model, name, only=()):
    """``(graph, rewrites)``: the graph transform ``name`` (``fold_pads`` or ``zero_copy``) of
    ``model`` (path, bytes or ``Graph``), on the ops in ``only`` (default all); each rewrite has
    ``op`` (an op of the input graph) and ``what``."""
    graph, rewrites = _core.apply_transform(load_model(model), name, list(only))
    return graph, tuple(rewrites)


def fold_pads(model):
    """PADs folded into the explicit padding of their readers: ``(graph, rewrites)``."""
    return apply_transform(model, "fold_pads")


def zero_copy(model):
    """Concatenations and contiguous splits/slices without copies: ``(graph, rewrites)``."""
    return apply_transform(model, "zero_copy")


def parse_transforms(value):
    """The transform names ``value`` asks for: ``None`` or ``"all"`` = all, ``()``/``False``/``"none"``
    = none, a comma-separated string or an iterable of names. Raises ``ValueError`` for unknown names."""
    if value is None or value is True or value == "all":
        return TRANSFORMS
    if value is False or value == "none":
        return ()
    names = [n.strip() for n in value.split(",") if n.strip()] if isinstance(value, str) else list(value)
    unknown = [n for n in names if n not in TRANSFORMS]
    if unknown:
        raise ValueError(f"unknown transform {unknown[0]!r}: use {', '.join(TRANSFORMS)} (or all / none)")
    return tuple(n for n in TRANSFORMS if n in names)
