"""Pooling and reduction layers: AVERAGE_POOL_2D, MAX_POOL_2D and MEAN."""

import numpy as np

from . import float_ops
from .args import activation_code, normalize_axes, padding_code, positive_pair
from .options import pool2d_options, reducer_options
from .shapes import window_axis
from .tensor import Tensor


class PoolLayers:
    """Mixin of ``ModelBuilder``: pooling windows and means."""

    def average_pool2d(
        self, x: Tensor, pool=(2, 2), stride=None, padding: str = "VALID", activation: str = "NONE"
    ) -> Tensor:
        """AVERAGE_POOL_2D; ``stride`` defaults to ``pool``. Keeps the input's quantization."""
        return self._pool2d(
            "AVERAGE_POOL_2D", "average_pool2d", float_ops.average_pool2d, x, pool, stride, padding, activation
        )

    def max_pool2d(
        self, x: Tensor, pool=(2, 2), stride=None, padding: str = "VALID", activation: str = "NONE"
    ) -> Tensor:
        """MAX_POOL_2D; ``stride`` defaults to ``pool``. Keeps the input's quantization."""
        return self._pool2d("MAX_POOL_2D", "max_pool2d", float_ops.max_pool2d, x, pool, stride, padding, activation)

    def mean(self, x: Tensor, axes, keep_dims: bool = False) -> Tensor:
        """MEAN over ``axes`` (an int or a sequence); e.g. ``axes=(1, 2)`` is global average pooling."""
        x = self._check_tensor(x, "mean")
        axes = normalize_axes(axes, x.rank, "mean axes")
        scope = self._scope("mean")
        sample = np.mean(self._sample(x), axis=tuple(axes), keepdims=bool(keep_dims))
        out = self._new_tensor(scope, sample)
        axes_tensor = self._int32_constant(f"{scope}/axes", axes)
        self._emit("MEAN", [x, axes_tensor], [out], reducer_options(bool(keep_dims)))
        return out

    def _pool2d(self, op: str, what: str, compute, x: Tensor, pool, stride, padding, activation) -> Tensor:
        x = self._check_tensor(x, what, rank=4)
        pool = positive_pair(pool, f"{what} pool")
        stride = pool if stride is None else positive_pair(stride, f"{what} stride")
        pad, act = padding_code(padding), activation_code(activation)
        rows = window_axis(x.shape[1], pool[0], stride[0], 1, pad, f"{what} height")
        cols = window_axis(x.shape[2], pool[1], stride[1], 1, pad, f"{what} width")
        sample = float_ops.apply_activation(compute(self._sample(x), rows, cols, pool, stride), act)
        out = self._same_quant_tensor(self._scope(what), x, sample)
        self._emit(op, [x], [out], pool2d_options(pad, stride, pool, act))
        return out
