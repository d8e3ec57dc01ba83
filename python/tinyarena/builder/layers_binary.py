"""Element-wise binary layers with numpy broadcasting: ADD, SUB, MUL and SQUARED_DIFFERENCE
(ADD, SUB and MUL also of two float32 tensors, giving float32)."""

import numpy as np

from . import float_ops
from .args import activation_code
from .options import activation_only_options, empty_options
from .schema_enums import BuiltinOptions
from .shapes import broadcast_shapes
from .tensor import Tensor

_ADD_LEFT_SHIFT = 20
_FLOAT_OPS = {"ADD", "SUB", "MUL"}
"""The binary ops that also take two float32 inputs (what quantizers leave in float)."""


def _add_min_output_scale(a: Tensor, b: Tensor) -> float:
    """TFLite's int8 ADD needs ``2 * max_input_scale / (2**20 * output_scale) < 1``."""
    return 1.01 * 2 * max(a.scale, b.scale) / (1 << _ADD_LEFT_SHIFT)


def _squared_difference_min_output_scale(a: Tensor, b: Tensor) -> float:
    """TFLite's int8 SQUARED_DIFFERENCE needs ``(2 * max_input_scale)**2 / (2**14 * output_scale) < 1``."""
    return 1.01 * (2 * max(a.scale, b.scale)) ** 2 / (1 << 14)


def _no_min_output_scale(a: Tensor, b: Tensor) -> float:
    return 0.0


class BinaryLayers:
    """Mixin of ``ModelBuilder``: two-input element-wise ops (joins of a DAG)."""

    def add(self, a: Tensor, b: Tensor, activation: str = "NONE") -> Tensor:
        """ADD (e.g. a residual connection) of two int8 or two float32 tensors; shapes broadcast like numpy."""
        return self._binary("ADD", "add", BuiltinOptions.AddOptions, np.add, a, b, activation, _add_min_output_scale)

    def sub(self, a: Tensor, b: Tensor, activation: str = "NONE") -> Tensor:
        """SUB: ``a - b`` (int8 or float32); shapes broadcast like numpy."""
        return self._binary(
            "SUB", "sub", BuiltinOptions.SubOptions, np.subtract, a, b, activation, _add_min_output_scale
        )

    def squared_difference(self, a: Tensor, b: Tensor) -> Tensor:
        """SQUARED_DIFFERENCE: ``(a - b)**2``; shapes broadcast like numpy (no fused activation)."""
        return self._binary(
            "SQUARED_DIFFERENCE",
            "squared_difference",
            None,
            lambda x, y: np.square(x - y),
            a,
            b,
            "NONE",
            _squared_difference_min_output_scale,
        )

    def mul(self, a: Tensor, b: Tensor, activation: str = "NONE") -> Tensor:
        """MUL (int8 or float32); shapes broadcast like numpy."""
        return self._binary("MUL", "mul", BuiltinOptions.MulOptions, np.multiply, a, b, activation)

    def _binary(
        self,
        op: str,
        what: str,
        options_code: int,
        compute,
        a: Tensor,
        b: Tensor,
        activation,
        min_scale=_no_min_output_scale,
    ) -> Tensor:
        dtype = "float32" if op in _FLOAT_OPS and getattr(a, "dtype", None) == "float32" else "int8"
        a = self._check_tensor(a, f"{what} (first input)", dtype=dtype)
        b = self._check_tensor(b, f"{what} (second input)", dtype=dtype)
        broadcast_shapes(a.shape, b.shape, what)
        act = activation_code(activation)
        sample = float_ops.apply_activation(compute(self._sample(a), self._sample(b)), act)
        if dtype == "float32":
            out = self._new_tensor(self._scope(what), sample, dtype="float32")
        else:
            out = self._new_tensor(self._scope(what), sample, min_scale=min_scale(a, b))
        options = (
            empty_options(BuiltinOptions.SquaredDifferenceOptions)
            if options_code is None
            else activation_only_options(options_code, act)
        )
        self._emit(op, [a, b], [out], options)
        return out
