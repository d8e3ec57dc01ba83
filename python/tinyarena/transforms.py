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

The model's interface is chosen, not searched: ``io_boundary(model, io, input_layout)`` drops the
boundary ops converters add -- with ``io="int8"`` the QUANTIZE (float32 -> int8) of each input and
the DEQUANTIZE (int8 -> float32) of each output, with ``input_layout="nhwc"`` the TRANSPOSE of an
NCHW input to NHWC -- so the int8 NHWC tensors become the model's inputs and outputs (with their
scale and zero point, which the generated ``model.h`` states). ``plan``, ``tiling.search`` and
``verify`` take the same two arguments and apply it first.

``tinyarena.plan`` applies them in this order by default and keeps each one only if the plan's
peak does not grow (if all of a transform's rewrites together raise it, each is tried alone);
``plan.transforms`` reports the lower bound and peak before and after each.
"""

import dataclasses
import typing

from . import _core
from .reader import load_model

__all__ = ["INPUT_LAYOUTS", "IO_MODES", "TRANSFORMS", "TransformReport", "apply_transform", "fold_pads",
           "interface_options", "io_boundary", "parse_transforms", "zero_copy"]

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

    @classmethod
    def of(cls, core_report):
        """The report of the core's pipeline (``_core.CoreTransformReport``) as this value."""
        return cls(core_report.name, core_report.applied, tuple(core_report.changes), core_report.lower_bound_before,
                   core_report.lower_bound_after, core_report.peak_before, core_report.peak_after)


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
    """Concatenations and contiguous splits/slices without copies: ``(graph, rewrites)``. A
    STRIDED_SLICE of an LSTM's last step goes: the LSTM writes only that step."""
    return apply_transform(model, "zero_copy")


IO_MODES = ("model", "int8")
"""``io``: keep the model's inputs and outputs (``model``), or make them int8 (``int8``)."""
INPUT_LAYOUTS = ("model", "nhwc")
"""``input_layout``: keep the model's input layout (``model``), or fold an NCHW -> NHWC TRANSPOSE (``nhwc``)."""


class Interface(typing.NamedTuple):
    """The ``io``/``input_layout`` arguments as the core's flags."""

    int8_io: bool
    nhwc_input: bool


def interface_options(io="model", input_layout="model"):
    """:class:`Interface` of ``io`` and ``input_layout`` (``ValueError`` for unknown values)."""
    if io not in IO_MODES:
        raise ValueError(f"unknown io {io!r}: use {' or '.join(IO_MODES)}")
    if input_layout not in INPUT_LAYOUTS:
        raise ValueError(f"unknown input layout {input_layout!r}: use {' or '.join(INPUT_LAYOUTS)}")
    return Interface(io == "int8", input_layout == "nhwc")


def io_boundary(model, io="model", input_layout="model"):
    """``(graph, rewrites)``: ``model`` (path, bytes or ``Graph``) with the interface asked for.

    ``io="int8"`` drops the QUANTIZE of each float32 input and the DEQUANTIZE of each output
    (``UnsupportedError`` when an input or output stays float32); ``input_layout="nhwc"`` drops
    the TRANSPOSE (perm [0, 2, 3, 1]) of each NCHW input. The defaults keep the model as it is."""
    interface = interface_options(io, input_layout)
    graph = load_model(model)
    if interface == (False, False):
        return graph, ()
    graph, rewrites = _core.io_boundary(graph, *interface)
    return graph, tuple(rewrites)


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
