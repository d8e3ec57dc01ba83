"""Layers with weights: CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED."""

from typing import Callable, Tuple

import numpy as np

from . import float_ops
from .args import activation_code, padding_code, positive_int, positive_pair
from .options import conv2d_options, depthwise_conv2d_options, fully_connected_options
from .quantize import QuantParams, dequantize_array, quantize_bias, quantize_weights
from .shapes import window_axis
from .tensor import Tensor


class ConvLayers:
    """Mixin of ``ModelBuilder``: weighted layers with int8 weights and int32 biases."""

    def conv2d(
        self,
        x: Tensor,
        filters: int,
        kernel=(3, 3),
        stride=(1, 1),
        padding: str = "SAME",
        dilation=(1, 1),
        activation: str = "NONE",
    ) -> Tensor:
        """CONV_2D on an NHWC tensor; per-channel symmetric weights [filters, kh, kw, in_channels]."""
        x = self._check_tensor(x, "conv2d", rank=4)
        filters = positive_int(filters, "conv2d filters")
        kernel, stride, dilation = (
            positive_pair(v, f"conv2d {w}") for v, w in ((kernel, "kernel"), (stride, "stride"), (dilation, "dilation"))
        )
        pad, act = padding_code(padding), activation_code(activation)
        rows, cols = self._window_axes("conv2d", x, kernel, stride, dilation, pad)
        in_channels = x.shape[3]
        kernel_f = self._weights.kernel((filters,) + kernel + (in_channels,), kernel[0] * kernel[1] * in_channels)
        scope = self._scope("conv2d")
        w, b, y = self._weights_and_bias(
            scope, x, kernel_f, channel_axis=0, per_channel=True,
            compute=lambda s, k: float_ops.conv2d(s, k, 0.0, rows, cols, stride, dilation),
        )  # fmt: skip
        out = self._new_tensor(scope, float_ops.apply_activation(y, act))
        self._emit("CONV_2D", [x, w, b], [out], conv2d_options(pad, stride, act, dilation))
        return out

    def depthwise_conv2d(
        self,
        x: Tensor,
        kernel=(3, 3),
        stride=(1, 1),
        padding: str = "SAME",
        depth_multiplier: int = 1,
        dilation=(1, 1),
        activation: str = "NONE",
    ) -> Tensor:
        """DEPTHWISE_CONV_2D; per-channel weights [1, kh, kw, in_channels * depth_multiplier] (dim 3)."""
        x = self._check_tensor(x, "depthwise_conv2d", rank=4)
        multiplier = positive_int(depth_multiplier, "depthwise_conv2d depth_multiplier")
        kernel, stride, dilation = (
            positive_pair(v, f"depthwise_conv2d {w}")
            for v, w in ((kernel, "kernel"), (stride, "stride"), (dilation, "dilation"))
        )
        pad, act = padding_code(padding), activation_code(activation)
        rows, cols = self._window_axes("depthwise_conv2d", x, kernel, stride, dilation, pad)
        out_channels = x.shape[3] * multiplier
        kernel_f = self._weights.kernel((1,) + kernel + (out_channels,), kernel[0] * kernel[1])
        scope = self._scope("depthwise_conv2d")
        w, b, y = self._weights_and_bias(
            scope, x, kernel_f, channel_axis=3, per_channel=True,
            compute=lambda s, k: float_ops.depthwise_conv2d(s, k, 0.0, rows, cols, stride, dilation, multiplier),
        )  # fmt: skip
        out = self._new_tensor(scope, float_ops.apply_activation(y, act))
        options = depthwise_conv2d_options(pad, stride, multiplier, act, dilation)
        self._emit("DEPTHWISE_CONV_2D", [x, w, b], [out], options)
        return out

    def fully_connected(
        self, x: Tensor, units: int, activation: str = "NONE", keep_num_dims: bool = False, per_channel: bool = True
    ) -> Tensor:
        """FULLY_CONNECTED with weights [units, depth].

        With ``keep_num_dims=False`` every batch row (dim 0) is flattened: depth is the product of
        the other dims and the output is [batch, units]. With ``keep_num_dims=True`` depth is the
        last dim and the output keeps the leading dims. Weights are per-channel (dim 0)
        symmetric, or per-tensor with ``per_channel=False``.
        """
        x = self._check_tensor(x, "fully_connected")
        if x.rank == 0:
            raise ValueError(f"fully_connected: {x.name} is a scalar")
        units = positive_int(units, "fully_connected units")
        act = activation_code(activation)
        if keep_num_dims:
            depth, out_shape = x.shape[-1], x.shape[:-1] + (units,)
        else:
            batch = x.shape[0] if x.rank > 1 else 1
            depth, out_shape = int(np.prod(x.shape)) // batch, (batch, units)
        kernel_f = self._weights.kernel((units, depth), depth)
        scope = self._scope("fully_connected")
        w, b, y = self._weights_and_bias(
            scope, x, kernel_f, channel_axis=0, per_channel=bool(per_channel),
            compute=lambda s, k: float_ops.fully_connected(s, k, 0.0, out_shape),
        )  # fmt: skip
        out = self._new_tensor(scope, float_ops.apply_activation(y, act))
        self._emit("FULLY_CONNECTED", [x, w, b], [out], fully_connected_options(act, bool(keep_num_dims)))
        return out

    # ------------------------------------------------------------------ helpers

    def _window_axes(self, what: str, x: Tensor, kernel, stride, dilation, pad):
        """Output size and implicit padding along height and width."""
        rows = window_axis(x.shape[1], kernel[0], stride[0], dilation[0], pad, f"{what} height")
        cols = window_axis(x.shape[2], kernel[1], stride[1], dilation[1], pad, f"{what} width")
        return rows, cols

    def _weights_and_bias(
        self,
        scope: str,
        x: Tensor,
        kernel_f: np.ndarray,
        channel_axis: int,
        per_channel: bool,
        compute: Callable[[np.ndarray, np.ndarray], np.ndarray],
    ) -> Tuple[int, int, np.ndarray]:
        """Quantize the kernel, fold a random batch norm into it, add weights and bias as constants.

        ``compute(input_sample, kernel)`` gives the layer's pre-bias float output. Folding scales
        each output channel's weight scale (the int8 weights stay the same) and sets the bias.
        Returns the weight and bias tensor indices and the float output (with the quantized bias).
        """
        kernel_q, kernel_scales = quantize_weights(kernel_f, channel_axis if per_channel else None)
        broadcast = [1] * kernel_q.ndim
        broadcast[channel_axis] = -1
        kernel_real = dequantize_array(kernel_q, kernel_scales.reshape(broadcast) if per_channel else kernel_scales[0])
        pre_bias = compute(self._sample(x), kernel_real)
        fold = self._weights.fold_batch_norm(pre_bias, per_channel)
        kernel_scales = (kernel_scales * fold.factors).astype(np.float32)
        pre_bias = pre_bias * fold.factors
        bias_scales = (np.float32(x.scale) * kernel_scales).astype(np.float32)
        bias_q = quantize_bias(fold.bias, bias_scales)
        quant_axis = channel_axis if per_channel else 0
        w = self._constant(f"{scope}/weights", kernel_q, "int8", QuantParams.symmetric(kernel_scales, quant_axis))
        b = self._constant(f"{scope}/bias", bias_q, "int32", QuantParams.symmetric(bias_scales, 0))
        return w, b, pre_bias + dequantize_array(bias_q, bias_scales)
