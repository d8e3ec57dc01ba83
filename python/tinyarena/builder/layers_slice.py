"""Layers that cut tensors apart or join them: STRIDED_SLICE, SPLIT, SPLIT_V, GATHER, UNPACK,
CONCATENATION and PACK."""

from typing import List, Sequence

import numpy as np

from .args import activation_code, int_list, is_int, normalize_axis, positive_int
from .options import (
    concatenation_options,
    gather_options,
    pack_options,
    split_options,
    split_v_options,
    strided_slice_options,
    unpack_options,
)
from .quantize import qparams_from_range, real_range
from .schema_enums import Activation
from .tensor import Tensor

MAX_SLICE_RANK = 5
"""Highest rank the TFLite STRIDED_SLICE kernel accepts."""


class SliceLayers:
    """Mixin of ``ModelBuilder``: slicing, splitting and concatenation."""

    def strided_slice(
        self, x: Tensor, begin, end, strides=None, begin_mask: int = 0, end_mask: int = 0, shrink_axis_mask: int = 0
    ) -> Tensor:
        """STRIDED_SLICE with Python slice semantics per axis (negative indices count from the end).

        Bit ``i`` of ``begin_mask``/``end_mask`` ignores ``begin[i]``/``end[i]`` (slice from the
        start / to the end); bit ``i`` of ``shrink_axis_mask`` takes the single index
        ``begin[i]`` and drops the axis.
        """
        x = self._check_tensor(x, "strided_slice")
        if x.rank > MAX_SLICE_RANK:
            raise ValueError(f"strided_slice: rank {x.rank} is above the kernel's limit of {MAX_SLICE_RANK}")
        begin, end = int_list(begin, "strided_slice begin"), int_list(end, "strided_slice end")
        strides = [1] * x.rank if strides is None else int_list(strides, "strided_slice strides")
        masks = [
            self._check_mask(m, x.rank, n)
            for m, n in ((begin_mask, "begin_mask"), (end_mask, "end_mask"), (shrink_axis_mask, "shrink_axis_mask"))
        ]
        if not len(begin) == len(end) == len(strides) == x.rank:
            raise ValueError(f"strided_slice: begin, end and strides need {x.rank} entries each for shape {x.shape}")
        if 0 in strides:
            raise ValueError("strided_slice: strides must be non-zero")
        index = tuple(self._axis_index(i, x.shape[i], begin[i], end[i], strides[i], *masks) for i in range(x.rank))
        sample = self._sample(x)[index]
        if 0 in sample.shape:
            raise ValueError(f"strided_slice: the slice {index} of shape {x.shape} is empty")
        scope = self._scope("strided_slice")
        inputs = [x] + [
            self._int32_constant(f"{scope}/{n}", v) for n, v in (("begin", begin), ("end", end), ("strides", strides))
        ]
        out = self._same_quant_tensor(scope, x, sample)
        self._emit("STRIDED_SLICE", inputs, [out], strided_slice_options(*masks))
        return out

    def split(self, x: Tensor, num_splits: int, axis: int) -> List[Tensor]:
        """SPLIT into ``num_splits`` equal parts along ``axis``; returns the list of parts."""
        x = self._check_tensor(x, "split")
        num_splits = positive_int(num_splits, "split num_splits")
        axis = normalize_axis(axis, x.rank, "split axis")
        if x.shape[axis] % num_splits:
            raise ValueError(f"split: dimension {axis} of {x.shape} is not divisible into {num_splits} parts")
        scope = self._scope("split")
        axis_tensor = self._int32_constant(f"{scope}/axis", [axis], shape=())
        parts = np.split(self._sample(x), num_splits, axis=axis)
        outs = [self._same_quant_tensor(f"{scope}/{i}", x, part) for i, part in enumerate(parts)]
        self._emit("SPLIT", [axis_tensor, x], outs, split_options(num_splits))
        return outs

    def split_v(self, x: Tensor, size_splits, axis: int) -> List[Tensor]:
        """SPLIT_V into parts of ``size_splits`` along ``axis`` (one size may be -1: the rest)."""
        x = self._check_tensor(x, "split_v")
        axis = normalize_axis(axis, x.rank, "split_v axis")
        sizes = int_list(size_splits, "split_v size_splits")
        if not sizes or sizes.count(-1) > 1 or any(v < 1 and v != -1 for v in sizes):
            raise ValueError(f"split_v: size_splits must be positive sizes with at most one -1, got {sizes}")
        if -1 in sizes:
            sizes[sizes.index(-1)] = x.shape[axis] - (sum(sizes) + 1)
        if sum(sizes) != x.shape[axis] or min(sizes) < 1:
            raise ValueError(f"split_v: size_splits {size_splits} do not split dimension {axis} of {x.shape}")
        scope = self._scope("split_v")
        inputs = [x, self._int32_constant(f"{scope}/size_splits", list(size_splits)),
                  self._int32_constant(f"{scope}/axis", [axis], shape=())]
        parts = np.split(self._sample(x), np.cumsum(sizes)[:-1], axis=axis)
        outs = [self._same_quant_tensor(f"{scope}/{i}", x, part) for i, part in enumerate(parts)]
        self._emit("SPLIT_V", inputs, outs, split_v_options(len(sizes)))
        return outs

    def gather(self, x: Tensor, indices, axis: int = 0) -> Tensor:
        """GATHER along ``axis`` with constant int32 ``indices`` (any shape; each in range)."""
        x = self._check_tensor(x, "gather")
        axis = normalize_axis(axis, x.rank, "gather axis")
        idx = np.asarray(indices)
        if idx.dtype.kind not in "iu" or idx.size == 0:
            raise ValueError(f"gather: indices must be a non-empty array of integers, got {indices!r}")
        if idx.min() < 0 or idx.max() >= x.shape[axis]:
            raise ValueError(f"gather: indices must lie in [0, {x.shape[axis]}) for axis {axis} of {x.shape}")
        if x.rank + idx.ndim - 1 > 6:
            raise ValueError("gather: the output would have more than 6 dimensions")
        scope = self._scope("gather")
        idx_tensor = self._int32_constant(f"{scope}/indices", idx.astype(np.int32))
        out = self._same_quant_tensor(scope, x, np.take(self._sample(x), idx, axis=axis))
        self._emit("GATHER", [x, idx_tensor], [out], gather_options(axis))
        return out

    def unpack(self, x: Tensor, axis: int = 0) -> List[Tensor]:
        """UNPACK: the ``x.shape[axis]`` slices along ``axis``, each without that dimension."""
        x = self._check_tensor(x, "unpack")
        if x.rank < 2:
            raise ValueError(f"unpack: needs rank >= 2, got shape {x.shape}")
        axis = normalize_axis(axis, x.rank, "unpack axis")
        scope = self._scope("unpack")
        sample = self._sample(x)
        outs = [
            self._same_quant_tensor(f"{scope}/{i}", x, np.take(sample, i, axis=axis)) for i in range(x.shape[axis])
        ]
        self._emit("UNPACK", [x], outs, unpack_options(len(outs), axis))
        return outs

    def pack(self, xs: Sequence[Tensor], axis: int = 0) -> Tensor:
        """PACK (stack) same-shaped tensors along a new ``axis``; inputs with other quantization
        than the common one are requantized first (TFLite's int8 PACK needs them equal)."""
        xs = list(xs) if not isinstance(xs, Tensor) else [xs]
        if not xs:
            raise ValueError("pack needs at least one input")
        xs = [self._check_tensor(x, "pack") for x in xs]
        if any(x.shape != xs[0].shape for x in xs):
            raise ValueError(f"pack: every input needs shape {xs[0].shape}")
        if xs[0].rank >= 6:
            raise ValueError("pack: the output would have more than 6 dimensions")
        axis = normalize_axis(axis, xs[0].rank + 1, "pack axis")
        scale, zero_point = self._common_qparams(xs)
        xs = [x if (x.scale, x.zero_point) == (scale, zero_point) else self.quantize(x, scale, zero_point) for x in xs]
        sample = np.stack([self._sample(x) for x in xs], axis=axis)
        out = self._new_tensor(self._scope("pack"), sample, qparams=(scale, zero_point))
        self._emit("PACK", xs, [out], pack_options(len(xs), axis))
        return out

    def concatenation(self, xs: Sequence[Tensor], axis: int = -1, activation: str = "NONE") -> Tensor:
        """CONCATENATION along ``axis``.

        TFLite's int8 kernel needs every input to share the output's quantization: the output
        covers the union of the inputs' real ranges, and inputs with other parameters are
        requantized first with an int8 -> int8 QUANTIZE op (as the TFLite converter does). The
        int8 kernel only accepts ``activation="NONE"``.
        """
        xs = list(xs) if not isinstance(xs, Tensor) else [xs]
        if not xs:
            raise ValueError("concatenation needs at least one input")
        xs = [self._check_tensor(x, "concatenation") for x in xs]
        axis = normalize_axis(axis, xs[0].rank, "concatenation axis")
        self._check_concat_shapes(xs, axis)
        act = activation_code(activation)
        if act != Activation.NONE:
            raise ValueError(f"concatenation: TFLite's int8 kernel supports no fused activation, got {activation!r}")
        scale, zero_point = self._common_qparams(xs)
        xs = [x if (x.scale, x.zero_point) == (scale, zero_point) else self.quantize(x, scale, zero_point) for x in xs]
        sample = np.concatenate([self._sample(x) for x in xs], axis=axis)
        out = self._new_tensor(self._scope("concatenation"), sample, qparams=(scale, zero_point))
        self._emit("CONCATENATION", xs, [out], concatenation_options(axis, act))
        return out

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _check_mask(mask, rank: int, what: str) -> int:
        if not is_int(mask) or not 0 <= int(mask) < (1 << rank):
            raise ValueError(f"strided_slice {what} must be an integer bit mask below {1 << rank}, got {mask!r}")
        return int(mask)

    @staticmethod
    def _axis_index(axis, dim, begin, end, stride, begin_mask, end_mask, shrink_mask):
        """The numpy index (an int or a slice) that STRIDED_SLICE takes along one axis."""
        if shrink_mask >> axis & 1:
            if not -dim <= begin < dim:
                raise ValueError(f"strided_slice: shrink index {begin} is out of range for axis {axis} of size {dim}")
            return begin % dim
        start = None if begin_mask >> axis & 1 else begin
        stop = None if end_mask >> axis & 1 else end
        return slice(start, stop, stride)

    @staticmethod
    def _check_concat_shapes(xs: Sequence[Tensor], axis: int) -> None:
        first = xs[0].shape
        for x in xs[1:]:
            if x.rank != len(first) or any(a != b for i, (a, b) in enumerate(zip(x.shape, first)) if i != axis):
                raise ValueError(f"concatenation: shapes {first} and {x.shape} differ outside axis {axis}")

    @staticmethod
    def _common_qparams(xs: Sequence[Tensor]):
        """The inputs' parameters if they all agree, else parameters covering all their ranges."""
        params = {(x.scale, x.zero_point) for x in xs}
        if len(params) == 1:
            return params.pop()
        ranges = [real_range(scale, zp) for scale, zp in params]
        return qparams_from_range(min(r[0] for r in ranges), max(r[1] for r in ranges))
