"""Standalone activation layers: RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH, HARD_SWISH, SOFTMAX,
LOG_SOFTMAX.

LOGISTIC, TANH, SOFTMAX and LOG_SOFTMAX get the fixed output quantization the TFLite int8
kernels require; the others are calibrated.
"""

import numpy as np

from . import float_ops
from .options import empty_options, leaky_relu_options, softmax_options
from .schema_enums import BuiltinOptions
from .tensor import Tensor

SOFTMAX_QPARAMS = (1.0 / 256.0, -128)
LOGISTIC_QPARAMS = (1.0 / 256.0, -128)
TANH_QPARAMS = (1.0 / 128.0, 0)
LOG_SOFTMAX_QPARAMS = (16.0 / 256.0, 127)


class ActivationLayers:
    """Mixin of ``ModelBuilder``: element-wise nonlinearities and softmaxes."""

    def relu(self, x: Tensor) -> Tensor:
        """RELU."""
        return self._unary("RELU", "relu", x, lambda s: np.maximum(s, 0.0))

    def relu6(self, x: Tensor) -> Tensor:
        """RELU6."""
        return self._unary("RELU6", "relu6", x, lambda s: np.clip(s, 0.0, 6.0))

    def leaky_relu(self, x: Tensor, alpha: float = 0.2) -> Tensor:
        """LEAKY_RELU: ``x`` for ``x >= 0``, else ``alpha * x`` (``alpha`` >= 0)."""
        alpha = float(alpha)
        if not np.isfinite(alpha) or alpha < 0:
            raise ValueError(f"leaky_relu alpha must be a non-negative number, got {alpha}")
        alpha = float(np.float32(alpha))
        return self._unary(
            "LEAKY_RELU", "leaky_relu", x, lambda s: np.where(s >= 0, s, alpha * s), options=leaky_relu_options(alpha)
        )

    def logistic(self, x: Tensor) -> Tensor:
        """LOGISTIC (sigmoid); output scale 1/256, zero point -128."""
        return self._unary("LOGISTIC", "logistic", x, float_ops.logistic, LOGISTIC_QPARAMS)

    def tanh(self, x: Tensor) -> Tensor:
        """TANH; output scale 1/128, zero point 0."""
        return self._unary("TANH", "tanh", x, np.tanh, TANH_QPARAMS)

    def hard_swish(self, x: Tensor) -> Tensor:
        """HARD_SWISH: x * relu6(x + 3) / 6."""
        return self._unary(
            "HARD_SWISH", "hard_swish", x, float_ops.hard_swish, options=empty_options(BuiltinOptions.HardSwishOptions)
        )

    def softmax(self, x: Tensor, beta: float = 1.0) -> Tensor:
        """SOFTMAX over the last axis; output scale 1/256, zero point -128."""
        beta = float(beta)
        if not np.isfinite(beta) or beta <= 0:
            raise ValueError(f"softmax beta must be a positive number, got {beta}")
        return self._unary(
            "SOFTMAX", "softmax", x, lambda s: float_ops.softmax(s, beta), SOFTMAX_QPARAMS, softmax_options(beta)
        )

    def log_softmax(self, x: Tensor) -> Tensor:
        """LOG_SOFTMAX over the last axis; output scale 16/256, zero point 127."""
        return self._unary(
            "LOG_SOFTMAX",
            "log_softmax",
            x,
            float_ops.log_softmax,
            LOG_SOFTMAX_QPARAMS,
            empty_options(BuiltinOptions.LogSoftmaxOptions),
        )

    def _unary(self, op: str, what: str, x: Tensor, compute, qparams=None, options=None) -> Tensor:
        """An int8 -> int8 op of one input whose float output is ``compute(sample)``."""
        x = self._check_tensor(x, what)
        out = self._new_tensor(self._scope(what), compute(self._sample(x)), qparams=qparams)
        self._emit(op, [x], [out], options)
        return out
