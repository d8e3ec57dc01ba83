"""Choosing int8 scales and zero points, and quantizing weights, biases and activations.

Conventions follow the TFLite int8 quantization spec: activations are asymmetric per-tensor
int8 whose real range always contains 0; weights are symmetric int8 in [-127, 127] (zero point
0), per channel or per tensor; biases are int32 with scale ``input_scale * weight_scale``.
"""

from dataclasses import dataclass
from typing import Tuple

import numpy as np

INT8_MIN, INT8_MAX = -128, 127
_MIN_RANGE = 1e-3
"""Smallest real range of an activation, so that a constant (e.g. all-zero) tensor still gets
a scale the kernels accept."""


@dataclass(frozen=True)
class QuantParams:
    """Quantization parameters of one tensor (``scale``/``zero_point`` are 1-D arrays)."""

    scale: np.ndarray
    zero_point: np.ndarray
    quantized_dimension: int = 0

    @staticmethod
    def per_tensor(scale: float, zero_point: int) -> "QuantParams":
        """Parameters with a single scale and zero point."""
        return QuantParams(np.array([scale], np.float32), np.array([zero_point], np.int64))

    @staticmethod
    def symmetric(scales: np.ndarray, quantized_dimension: int = 0) -> "QuantParams":
        """Zero-point-free parameters, per channel along ``quantized_dimension`` if several scales."""
        scales = np.asarray(scales, np.float32).ravel()
        return QuantParams(scales, np.zeros(scales.size, np.int64), quantized_dimension)


def qparams_from_range(low: float, high: float, min_scale: float = 0.0) -> Tuple[float, int]:
    """Asymmetric int8 ``(scale, zero_point)`` covering ``[low, high]`` widened to include 0.

    The zero point is rounded ("nudged") so that real 0 is exactly representable. A range
    narrower than ``_MIN_RANGE`` or than ``min_scale`` allows is widened upwards.
    """
    low, high = min(float(low), 0.0), max(float(high), 0.0)
    high = max(high, low + _MIN_RANGE, low + min_scale * (INT8_MAX - INT8_MIN))
    scale = (high - low) / (INT8_MAX - INT8_MIN)
    zero_point = int(np.clip(np.round(INT8_MIN - low / scale), INT8_MIN, INT8_MAX))
    return float(np.float32(scale)), zero_point


def qparams_from_sample(sample: np.ndarray, min_scale: float = 0.0) -> Tuple[float, int]:
    """Calibrate ``(scale, zero_point)`` from the observed min/max of a float sample."""
    return qparams_from_range(float(np.min(sample)), float(np.max(sample)), min_scale)


def real_range(scale: float, zero_point: int) -> Tuple[float, float]:
    """The real interval ``[low, high]`` that int8 values with these parameters represent."""
    return scale * (INT8_MIN - zero_point), scale * (INT8_MAX - zero_point)


def quantize_array(values: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """Quantize real values to int8 (round to nearest, saturate)."""
    q = np.round(np.asarray(values, np.float32) / np.float32(scale)) + zero_point
    return np.clip(q, INT8_MIN, INT8_MAX).astype(np.int8)


def dequantize_array(values: np.ndarray, scale, zero_point=0) -> np.ndarray:
    """Real values of quantized integers (``scale``/``zero_point`` may broadcast per channel)."""
    centered = values.astype(np.float32) - np.asarray(zero_point, np.float32)
    return (centered * np.asarray(scale, np.float32)).astype(np.float32)


def fake_quantize(values: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """Round real values through int8 and back, as the integer pipeline sees them."""
    return dequantize_array(quantize_array(values, scale, zero_point), scale, zero_point)


def quantize_weights(weights: np.ndarray, axis=None) -> Tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 weights and their scales, per channel along ``axis`` (or per tensor if None).

    Returns ``(int8 weights in [-127, 127], float32 scales)``; an all-zero channel gets scale 1.
    """
    weights = np.asarray(weights, np.float32)
    broadcast = [1] * weights.ndim
    if axis is None:
        max_abs = np.max(np.abs(weights)).reshape(1)
    else:
        max_abs = np.max(np.abs(weights), axis=tuple(a for a in range(weights.ndim) if a != axis))
        broadcast[axis] = -1
    scales = np.where(max_abs > 0, max_abs / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.round(weights / scales.reshape(broadcast)), -127, 127).astype(np.int8)
    return q, scales


def quantize_bias(bias: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """int32 bias with per-channel (or scalar) ``scales`` = input_scale * weight_scale."""
    q = np.round(np.asarray(bias, np.float64) / np.asarray(scales, np.float64))
    return np.clip(q, np.iinfo(np.int32).min, np.iinfo(np.int32).max).astype(np.int32)
