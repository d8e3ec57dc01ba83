"""Type-changing layers: QUANTIZE (float32 -> int8, or int8 -> int8 requantize) and DEQUANTIZE."""

from typing import Optional

from .args import check_qparams
from .options import empty_options
from .schema_enums import BuiltinOptions
from .tensor import Tensor


class QuantLayers:
    """Mixin of ``ModelBuilder``: the model's float boundaries and requantization."""

    def quantize(self, x: Tensor, scale: Optional[float] = None, zero_point: Optional[int] = None) -> Tensor:
        """QUANTIZE a float32 tensor to int8, or requantize an int8 tensor.

        Without ``scale``/``zero_point`` the parameters are calibrated from the input's range.
        """
        x = self._check_tensor(x, "quantize", dtype=None)
        if (scale is None) != (zero_point is None):
            raise ValueError("quantize: give both scale and zero_point, or neither")
        qparams = None if scale is None else check_qparams(scale, zero_point, "quantize")
        out = self._new_tensor(self._scope("quantize"), self._sample(x), qparams=qparams)
        self._emit("QUANTIZE", [x], [out], empty_options(BuiltinOptions.QuantizeOptions))
        return out

    def dequantize(self, x: Tensor) -> Tensor:
        """DEQUANTIZE an int8 tensor to float32 (typically at a model output)."""
        x = self._check_tensor(x, "dequantize")
        out = self._new_tensor(self._scope("dequantize"), self._sample(x), dtype="float32")
        self._emit("DEQUANTIZE", [x], [out], empty_options(BuiltinOptions.DequantizeOptions))
        return out
