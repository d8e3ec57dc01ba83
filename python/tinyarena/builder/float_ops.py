"""Float numpy versions of the ops, used to calibrate activation ranges.

They follow TFLite's float semantics (NHWC layout, SAME padding split, average pooling over
the valid cells only) closely enough for choosing quantization ranges; they are not meant to
be bit-exact with anything. They compute in float64 (callers pass float64 samples): summation
order then changes results far below float32 precision, so the stored float32 calibration
values, and hence the model bytes, do not depend on the BLAS library or CPU in practice.
"""

from typing import Iterator, Sequence, Tuple

import numpy as np

from .schema_enums import Activation
from .shapes import WindowAxis

_ACTIVATION_BOUNDS = {
    Activation.NONE: (None, None),
    Activation.RELU: (0.0, None),
    Activation.RELU_N1_TO_1: (-1.0, 1.0),
    Activation.RELU6: (0.0, 6.0),
}


def apply_activation(x: np.ndarray, activation: int) -> np.ndarray:
    """Apply a fused activation (a ``schema_enums.Activation`` value)."""
    low, high = _ACTIVATION_BOUNDS[activation]
    if low is None and high is None:
        return x
    return np.clip(x, low, high)


def _pad_spatial(x: np.ndarray, rows: WindowAxis, cols: WindowAxis, value: float = 0.0) -> np.ndarray:
    pads = ((0, 0), (rows.pad_before, rows.pad_after), (cols.pad_before, cols.pad_after), (0, 0))
    return np.pad(x, pads, constant_values=value)


def _windows(
    padded: np.ndarray,
    kernel: Tuple[int, int],
    stride: Tuple[int, int],
    dilation: Tuple[int, int],
    out_hw: Tuple[int, int],
) -> Iterator[Tuple[int, int, np.ndarray]]:
    """Yield ``(ky, kx, view)``: the input cells that kernel tap (ky, kx) sees at every output."""
    for ky in range(kernel[0]):
        y0 = ky * dilation[0]
        for kx in range(kernel[1]):
            x0 = kx * dilation[1]
            view = padded[
                :,
                y0 : y0 + (out_hw[0] - 1) * stride[0] + 1 : stride[0],
                x0 : x0 + (out_hw[1] - 1) * stride[1] + 1 : stride[1],
                :,
            ]
            yield ky, kx, view


def conv2d(x, weights, bias, rows: WindowAxis, cols: WindowAxis, stride, dilation) -> np.ndarray:
    """CONV_2D: ``weights`` are [out_channels, kh, kw, in_channels]."""
    padded = _pad_spatial(x, rows, cols)
    out_hw = (rows.size, cols.size)
    out = np.zeros((x.shape[0], rows.size, cols.size, weights.shape[0]), np.float64)
    for ky, kx, view in _windows(padded, weights.shape[1:3], stride, dilation, out_hw):
        out += view @ weights[:, ky, kx, :].T
    return out + bias


def depthwise_conv2d(
    x, weights, bias, rows: WindowAxis, cols: WindowAxis, stride, dilation, depth_multiplier
) -> np.ndarray:
    """DEPTHWISE_CONV_2D: ``weights`` are [1, kh, kw, in_channels * depth_multiplier]."""
    if depth_multiplier > 1:
        x = np.repeat(x, depth_multiplier, axis=3)
    padded = _pad_spatial(x, rows, cols)
    out_hw = (rows.size, cols.size)
    out = np.zeros((x.shape[0], rows.size, cols.size, weights.shape[3]), np.float64)
    for ky, kx, view in _windows(padded, weights.shape[1:3], stride, dilation, out_hw):
        out += view * weights[0, ky, kx, :]
    return out + bias


def fully_connected(x, weights, bias, out_shape: Sequence[int]) -> np.ndarray:
    """FULLY_CONNECTED: ``weights`` are [units, depth]; the input is flattened to [-1, depth]."""
    flat = x.reshape(-1, weights.shape[1])
    return (flat @ weights.T + bias).reshape(out_shape)


def max_pool2d(x, rows: WindowAxis, cols: WindowAxis, pool, stride) -> np.ndarray:
    """MAX_POOL_2D (padding cells never win)."""
    padded = _pad_spatial(x, rows, cols, value=-np.inf)
    views = (view for _, _, view in _windows(padded, pool, stride, (1, 1), (rows.size, cols.size)))
    out = next(views).copy()
    for view in views:
        np.maximum(out, view, out=out)
    return out


def average_pool2d(x, rows: WindowAxis, cols: WindowAxis, pool, stride) -> np.ndarray:
    """AVERAGE_POOL_2D, dividing by the number of valid (non-padding) cells."""
    out_hw = (rows.size, cols.size)
    padded = _pad_spatial(x, rows, cols)
    valid = _pad_spatial(np.ones((1,) + x.shape[1:3] + (1,), np.float64), rows, cols)
    total = sum(view for _, _, view in _windows(padded, pool, stride, (1, 1), out_hw))
    count = sum(view for _, _, view in _windows(valid, pool, stride, (1, 1), out_hw))
    return total / count


def softmax(x: np.ndarray, beta: float) -> np.ndarray:
    """SOFTMAX over the last axis."""
    z = beta * (x - np.max(x, axis=-1, keepdims=True))
    e = np.exp(z)
    return e / np.sum(e, axis=-1, keepdims=True)


def log_softmax(x: np.ndarray) -> np.ndarray:
    """LOG_SOFTMAX over the last axis."""
    z = x - np.max(x, axis=-1, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))


def logistic(x: np.ndarray) -> np.ndarray:
    """LOGISTIC (sigmoid)."""
    return 1.0 / (1.0 + np.exp(-x))


def hard_swish(x: np.ndarray) -> np.ndarray:
    """HARD_SWISH: x * relu6(x + 3) / 6."""
    return x * np.clip(x + 3.0, 0.0, 6.0) / 6.0


def _nearest_indices(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool) -> np.ndarray:
    """Source index of every output row/column, as TFLite's nearest-neighbour resize picks it."""
    if align_corners and out_size > 1:
        scale = (in_size - 1) / (out_size - 1)
    else:
        scale = in_size / out_size
    offset = 0.5 if half_pixel_centers else 0.0
    positions = (np.arange(out_size) + offset) * scale
    indices = np.round(positions) if align_corners else np.floor(positions)
    return np.clip(indices.astype(np.int64), 0, in_size - 1)


def resize_nearest_neighbor(
    x: np.ndarray, size: Tuple[int, int], align_corners: bool, half_pixel_centers: bool
) -> np.ndarray:
    """RESIZE_NEAREST_NEIGHBOR on an NHWC tensor."""
    rows = _nearest_indices(x.shape[1], size[0], align_corners, half_pixel_centers)
    cols = _nearest_indices(x.shape[2], size[1], align_corners, half_pixel_centers)
    return x[:, rows][:, :, cols]
