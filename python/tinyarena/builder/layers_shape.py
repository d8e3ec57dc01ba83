"""Layers that move values without changing them: RESHAPE, SQUEEZE, EXPAND_DIMS, TRANSPOSE,
TILE, PAD and RESIZE_NEAREST_NEIGHBOR. All keep the input's quantization (as the int8 kernels need).
And the shape ops: SHAPE (an int32 tensor of a tensor's dimensions) and FILL (a tensor of one
constant int8 value with the dimensions an int32 tensor holds).
"""

import numpy as np

from . import float_ops
from .args import (
    check_shape,
    int_list,
    non_negative_int,
    normalize_axes,
    normalize_axis,
    positive_pair,
)
from .options import (
    empty_options,
    reshape_options,
    resize_nearest_neighbor_options,
    shape_options,
    squeeze_options,
)
from .quantize import QuantParams
from .schema_enums import BuiltinOptions, TensorType
from .tensor import Tensor

MAX_PAD_RANK = 5
"""Highest rank the TFLite PAD kernel accepts."""


class ShapeLayers:
    """Mixin of ``ModelBuilder``: layout and shape changes."""

    def reshape(self, x: Tensor, shape) -> Tensor:
        """RESHAPE to ``shape`` (one dimension may be -1); new shape is an int32 constant input."""
        x = self._check_tensor(x, "reshape")
        shape = self._resolve_reshape(x, int_list(shape, "reshape shape"))
        scope = self._scope("reshape")
        shape_tensor = self._int32_constant(f"{scope}/shape", shape)
        out = self._same_quant_tensor(scope, x, self._sample(x).reshape(shape))
        self._emit("RESHAPE", [x, shape_tensor], [out], reshape_options(shape))
        return out

    def squeeze(self, x: Tensor, axes=None) -> Tensor:
        """SQUEEZE size-1 dimensions (all of them if ``axes`` is None)."""
        x = self._check_tensor(x, "squeeze")
        if axes is None:
            axes = [a for a, d in enumerate(x.shape) if d == 1]
            if not axes:
                raise ValueError(f"squeeze: {x.name} of shape {x.shape} has no size-1 dimension")
        else:
            axes = normalize_axes(axes, x.rank, "squeeze axes")
            wrong = [a for a in axes if x.shape[a] != 1]
            if wrong:
                raise ValueError(f"squeeze: axes {wrong} of shape {x.shape} do not have size 1")
        out = self._same_quant_tensor(self._scope("squeeze"), x, np.squeeze(self._sample(x), axis=tuple(axes)))
        self._emit("SQUEEZE", [x], [out], squeeze_options(axes))
        return out

    def expand_dims(self, x: Tensor, axis: int) -> Tensor:
        """EXPAND_DIMS: insert a size-1 dimension at ``axis`` (in ``[-rank-1, rank]``)."""
        x = self._check_tensor(x, "expand_dims")
        if x.rank >= 6:
            raise ValueError(f"expand_dims: {x.name} already has rank {x.rank}; at most 6 is supported")
        axis = normalize_axis(axis, x.rank + 1, "expand_dims axis")
        scope = self._scope("expand_dims")
        axis_tensor = self._int32_constant(f"{scope}/axis", [axis], shape=())
        out = self._same_quant_tensor(scope, x, np.expand_dims(self._sample(x), axis))
        self._emit("EXPAND_DIMS", [x, axis_tensor], [out], empty_options(BuiltinOptions.ExpandDimsOptions))
        return out

    def transpose(self, x: Tensor, perm) -> Tensor:
        """TRANSPOSE with permutation ``perm`` (an int32 constant input) of an int8 or float32 tensor."""
        x = self._check_tensor(x, "transpose", dtype=None)
        perm = int_list(perm, "transpose perm")
        if sorted(perm) != list(range(x.rank)):
            raise ValueError(f"transpose: perm {perm} is not a permutation of the {x.rank} axes of {x.name}")
        scope = self._scope("transpose")
        perm_tensor = self._int32_constant(f"{scope}/perm", perm)
        sample = np.transpose(self._sample(x), perm)
        out = (self._new_tensor(scope, sample, dtype="float32") if x.dtype == "float32"
               else self._same_quant_tensor(scope, x, sample))
        self._emit("TRANSPOSE", [x, perm_tensor], [out], empty_options(BuiltinOptions.TransposeOptions))
        return out

    def tile(self, x: Tensor, multiples) -> Tensor:
        """TILE: ``x`` repeated ``multiples[d]`` times along each dimension d (an int32 constant
        input, one non-negative value per dimension)."""
        x = self._check_tensor(x, "tile")
        multiples = int_list(multiples, "tile multiples")
        if len(multiples) != x.rank or any(m < 0 for m in multiples):
            raise ValueError(f"tile: multiples {multiples} need one value >= 0 per dimension of {x.name} {x.shape}")
        scope = self._scope("tile")
        multiples_tensor = self._int32_constant(f"{scope}/multiples", multiples)
        out = self._same_quant_tensor(scope, x, np.tile(self._sample(x), multiples))
        self._emit("TILE", [x, multiples_tensor], [out], empty_options(BuiltinOptions.TileOptions))
        return out

    def pad(self, x: Tensor, paddings) -> Tensor:
        """PAD with ``paddings`` = one (before, after) pair per dimension; pads with the zero point."""
        x = self._check_tensor(x, "pad")
        if x.rank > MAX_PAD_RANK:
            raise ValueError(f"pad: rank {x.rank} is above the PAD kernel's limit of {MAX_PAD_RANK}")
        pairs = self._check_paddings(x, paddings)
        scope = self._scope("pad")
        paddings_tensor = self._int32_constant(f"{scope}/paddings", pairs, shape=(x.rank, 2))
        out = self._same_quant_tensor(scope, x, np.pad(self._sample(x), pairs))
        self._emit("PAD", [x, paddings_tensor], [out], empty_options(BuiltinOptions.PadOptions))
        return out

    def resize_nearest_neighbor(
        self, x: Tensor, size, align_corners: bool = False, half_pixel_centers: bool = False
    ) -> Tensor:
        """RESIZE_NEAREST_NEIGHBOR of an NHWC tensor to ``size`` = (height, width)."""
        x = self._check_tensor(x, "resize_nearest_neighbor", rank=4)
        size = positive_pair(size, "resize_nearest_neighbor size")
        if align_corners and half_pixel_centers:
            raise ValueError("resize_nearest_neighbor: align_corners and half_pixel_centers cannot both be True")
        scope = self._scope("resize_nearest_neighbor")
        size_tensor = self._int32_constant(f"{scope}/size", size)
        sample = float_ops.resize_nearest_neighbor(self._sample(x), size, bool(align_corners), bool(half_pixel_centers))
        out = self._same_quant_tensor(scope, x, sample)
        options = resize_nearest_neighbor_options(bool(align_corners), bool(half_pixel_centers))
        self._emit("RESIZE_NEAREST_NEIGHBOR", [x, size_tensor], [out], options)
        return out

    def shape(self, x: Tensor) -> Tensor:
        """SHAPE: the int32 vector of ``x``'s dimensions."""
        x = self._check_tensor(x, "shape", dtype=None)
        out = self._new_tensor(self._scope("shape"), np.asarray(x.shape, np.float32), dtype="int32")
        self._emit("SHAPE", [x], [out], shape_options(TensorType.INT32))
        return out

    def fill(self, dims, value: int, scale: float, zero_point: int) -> Tensor:
        """FILL: an int8 tensor of shape ``dims`` (an int32 vector tensor, e.g. from ``shape``, or a
        list of ints) holding the quantized ``value`` everywhere; its quantization is
        (``scale``, ``zero_point``), that of the scalar constant ``value`` too."""
        scope = self._scope("fill")
        if isinstance(dims, Tensor):
            dims_tensor = self._check_tensor(dims, "fill dims", dtype="int32", rank=1)
            shape = check_shape([int(d) for d in self._sample(dims_tensor)], "fill dims")
        else:
            shape = check_shape(int_list(dims, "fill dims"), "fill dims")
            dims_tensor = self._int32_constant(f"{scope}/dims", list(shape))
        if not -128 <= int(value) <= 127:
            raise ValueError(f"fill: value must be an int8, got {value!r}")
        quant = QuantParams.per_tensor(float(scale), int(zero_point))
        value_tensor = self._constant(f"{scope}/value", np.asarray(int(value), np.int8), "int8", quant)
        sample = np.full(shape, float(scale) * (int(value) - int(zero_point)))
        out = self._new_tensor(scope, sample, qparams=(float(scale), int(zero_point)))
        self._emit("FILL", [dims_tensor, value_tensor], [out], empty_options(BuiltinOptions.FillOptions))
        return out

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _resolve_reshape(x: Tensor, shape):
        size = int(np.prod(x.shape))
        unknown = [i for i, d in enumerate(shape) if d == -1]
        if len(unknown) > 1:
            raise ValueError(f"reshape: at most one dimension may be -1, got {shape}")
        if any(d == 0 or d < -1 for d in shape):
            raise ValueError(f"reshape: invalid dimension in {shape}")
        if unknown:
            known = int(np.prod([d for d in shape if d != -1]))
            if size % known:
                raise ValueError(f"reshape: cannot reshape {x.shape} to {shape}")
            shape[unknown[0]] = size // known
        shape = list(check_shape(shape, "reshape shape"))
        if int(np.prod(shape)) != size:
            raise ValueError(f"reshape: cannot reshape {x.shape} ({size} elements) to {shape}")
        return shape

    @staticmethod
    def _check_paddings(x: Tensor, paddings):
        try:
            pairs = [tuple(p) for p in paddings]
        except TypeError:
            raise ValueError(f"pad: paddings must be (before, after) pairs, got {paddings!r}") from None
        if len(pairs) != x.rank or any(len(p) != 2 for p in pairs):
            raise ValueError(f"pad: need one (before, after) pair per dimension of {x.shape}, got {paddings!r}")
        return [[non_negative_int(v, "pad amount") for v in pair] for pair in pairs]
