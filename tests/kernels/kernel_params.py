"""Test-side derivation of the C kernels' parameters from a TFLite op (quantization + options).

This is the reference for what the product's generator must compute (it will do so
independently in C++). Every function mirrors the Prepare() step of the TFLite kernel the
reference resolver runs, including *where TFLite computes in float32 and where in double*:
those choices change multipliers in their last bit, and so outputs. Notation:

- `f32(x)` is a float32 value, Python floats are doubles. `tf_round` is std::round / roundf
  (half away from zero), not Python's round().
- `quantize_multiplier(d)` is TFLite's QuantizeMultiplier: d = m * 2^(shift-31), m in [2^30, 2^31).

Every function takes an `OpCase` (see model_ops.py) and returns a dict whose keys are the
field names of the matching C params struct in cpp/kernels/include/tinyarena_kernels.h.
"""

import math

import numpy as np

ACT_NONE, ACT_RELU, ACT_RELU_N1_TO_1, ACT_RELU6 = 0, 1, 2, 3
PAD_SAME, PAD_VALID = 0, 1
MAX_DIMS = 6


def f32(x) -> np.float32:
    return np.float32(x)


def tf_round(x: float) -> float:
    """std::round: halves away from zero (exact for the doubles/floats seen here)."""
    return math.copysign(math.floor(abs(x) + 0.5), x)


def quantize_multiplier(d: float):
    """TFLite QuantizeMultiplier (quantization_util.cc), double-rounding build."""
    if d == 0.0:
        return 0, 0
    q, shift = math.frexp(d)
    q_fixed = int(tf_round(q * (1 << 31)))
    assert q_fixed <= (1 << 31)
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        shift, q_fixed = 0, 0
    return q_fixed, shift


def quantize_multipliers(ds):
    pairs = [quantize_multiplier(float(d)) for d in ds]
    return np.array([p[0] for p in pairs], np.int32), np.array([p[1] for p in pairs], np.int32)


def calculate_input_radius(input_integer_bits: int, input_left_shift: int, total_signed_bits: int = 31) -> int:
    """TFLite CalculateInputRadius (double arithmetic, floored)."""
    v = 1.0 * ((1 << input_integer_bits) - 1) * (1 << (total_signed_bits - input_integer_bits)) / (1 << input_left_shift)
    return int(math.floor(v))


def activation_range(act: int, scale, zero_point: int):
    """CalculateActivationRangeQuantized for int8: roundf(f / scale) in float32."""

    def q(f):
        return zero_point + int(tf_round(float(f32(f) / f32(scale))))

    if act == ACT_RELU:
        return max(-128, q(0.0)), 127
    if act == ACT_RELU6:
        return max(-128, q(0.0)), min(127, q(6.0))
    if act == ACT_RELU_N1_TO_1:
        return max(-128, q(-1.0)), min(127, q(1.0))
    return -128, 127


def compute_padding(in_size, filter_size, stride, dilation, padding):
    """TFLite ComputePaddingHeightWidth for one axis: (out_size, pad_before, pad_after)."""
    eff = (filter_size - 1) * dilation + 1
    if padding == PAD_SAME:
        out = (in_size + stride - 1) // stride
    else:
        out = (in_size - eff + stride) // stride
    total = max((out - 1) * stride + eff - in_size, 0)
    return out, total // 2, total - total // 2


def _geometry(case, kh, kw, o):
    x = case.inputs[0]
    _, in_h, in_w, _ = x.shape
    sh, sw = o.get("StrideH", 1), o.get("StrideW", 1)
    dh, dw = o.get("DilationHFactor", 1), o.get("DilationWFactor", 1)
    out_h, pt, pb = compute_padding(in_h, kh, sh, dh, o["Padding"])
    out_w, pl, pr = compute_padding(in_w, kw, sw, dw, o["Padding"])
    y = case.outputs[0]
    assert (out_h, out_w) == tuple(y.shape[1:3]), (out_h, out_w, y.shape)
    return dict(in_h=in_h, in_w=in_w, out_h=out_h, out_w=out_w, stride_h=sh, stride_w=sw, dilation_h=dh,
                dilation_w=dw, pad_top=pt, pad_left=pl, pad_bottom=pb, pad_right=pr)


def _per_channel_multipliers(x, w, y, n):
    """PopulateConvolutionQuantizationParams: double(in_scale) * double(w_scale) / double(out_scale)."""
    scales = w.scales if len(w.scales) > 1 else np.repeat(w.scales[:1], n)
    return quantize_multipliers([float(x.scale) * float(s) / float(y.scale) for s in scales])


def conv_params(case):
    x, w, b = case.inputs[0], case.inputs[1], case.inputs[2] if len(case.inputs) > 2 else None
    y, o = case.outputs[0], case.options
    out_c, kh, kw, in_c = w.shape
    mult, shift = _per_channel_multipliers(x, w, y, out_c)
    lo, hi = activation_range(o["FusedActivationFunction"], y.scale, y.zero_point)
    p = _geometry(case, kh, kw, o)
    p.update(in_c=in_c, out_c=out_c, kernel_h=kh, kernel_w=kw, input_offset=-x.zero_point,
             output_offset=y.zero_point, act_min=lo, act_max=hi, weights=w.value.astype(np.int8),
             bias=None if b is None else b.value.astype(np.int32), out_mult=mult, out_shift=shift)
    return p


def depthwise_params(case):
    x, w, b = case.inputs[0], case.inputs[1], case.inputs[2] if len(case.inputs) > 2 else None
    y, o = case.outputs[0], case.options
    _, kh, kw, out_c = w.shape
    in_c = x.shape[3]
    mult, shift = _per_channel_multipliers(x, w, y, out_c)
    lo, hi = activation_range(o["FusedActivationFunction"], y.scale, y.zero_point)
    p = _geometry(case, kh, kw, o)
    p.update(in_c=in_c, depth_multiplier=out_c // in_c, kernel_h=kh, kernel_w=kw, input_offset=-x.zero_point,
             output_offset=y.zero_point, act_min=lo, act_max=hi, weights=w.value.astype(np.int8),
             bias=None if b is None else b.value.astype(np.int32), out_mult=mult, out_shift=shift)
    return p


def fully_connected_params(case):
    """FULLY_CONNECTED. The current TFLite reference kernel rescales the int32 accumulator in
    double: round(acc * (double(in_scale) * double(w_scale) / double(out_scale))) -- that is
    `out_scale_f64`. The integer (mult, shift) of older TFLite / TFLM is derived too (per-tensor:
    GetQuantizedConvolutionMultipler's float32 scale product)."""
    x, w, b = case.inputs[0], case.inputs[1], case.inputs[2] if len(case.inputs) > 2 else None
    y, o = case.outputs[0], case.options
    n, k = w.shape
    per_channel = len(w.scales) > 1
    f64 = np.array([float(x.scale) * float(s) / float(y.scale) for s in w.scales], np.float64)
    if per_channel:
        mult, shift = _per_channel_multipliers(x, w, y, n)
    else:
        # GetQuantizedConvolutionMultipler: the scale product is a float32 product.
        m = float(f32(x.scale) * f32(w.scale)) / float(y.scale)
        mult, shift = quantize_multipliers([m])
    lo, hi = activation_range(o["FusedActivationFunction"], y.scale, y.zero_point)
    return dict(batches=int(np.prod(x.shape)) // k, in_depth=k, out_depth=n, input_offset=-x.zero_point,
                weights_offset=-w.zero_point, output_offset=y.zero_point, act_min=lo, act_max=hi,
                per_channel=int(per_channel), weights=w.value.astype(np.int8),
                bias=None if b is None else b.value.astype(np.int32), out_mult=mult, out_shift=shift,
                out_scale_f64=f64)


def pool_params(case):
    x, y, o = case.inputs[0], case.outputs[0], case.options
    fh, fw = o["FilterHeight"], o["FilterWidth"]
    g = _geometry(case, fh, fw, o)
    del g["dilation_h"], g["dilation_w"]
    lo, hi = activation_range(o["FusedActivationFunction"], y.scale, y.zero_point)
    g.update(channels=x.shape[3], filter_h=fh, filter_w=fw, act_min=lo, act_max=hi)
    return g


def _shape6(shape):
    shape = list(shape)
    return [1] * (MAX_DIMS - len(shape)) + shape


def add_params(case):
    a, b, y = case.inputs[0], case.inputs[1], case.outputs[0]
    left_shift = 20
    twice_max = 2.0 * float(max(a.scale, b.scale))  # std::max of floats, then double
    m1, s1 = quantize_multiplier(float(a.scale) / twice_max)
    m2, s2 = quantize_multiplier(float(b.scale) / twice_max)
    mo, so = quantize_multiplier(twice_max / (float(1 << left_shift) * float(y.scale)))
    lo, hi = activation_range(case.options.get("FusedActivationFunction", 0), y.scale, y.zero_point)
    return dict(input1_offset=-a.zero_point, input2_offset=-b.zero_point, output_offset=y.zero_point,
                left_shift=left_shift, input1_mult=m1, input1_shift=s1, input2_mult=m2, input2_shift=s2,
                output_mult=mo, output_shift=so, act_min=lo, act_max=hi, shape1=_shape6(a.shape),
                shape2=_shape6(b.shape), out_shape=_shape6(y.shape))


def mul_params(case):
    a, b, y = case.inputs[0], case.inputs[1], case.outputs[0]
    real = f32(a.scale) * f32(b.scale) / f32(y.scale)  # all float32 in mul.cc
    mo, so = quantize_multiplier(float(real))
    lo, hi = activation_range(case.options.get("FusedActivationFunction", 0), y.scale, y.zero_point)
    return dict(input1_offset=-a.zero_point, input2_offset=-b.zero_point, output_offset=y.zero_point,
                left_shift=0, input1_mult=0, input1_shift=0, input2_mult=0, input2_shift=0, output_mult=mo,
                output_shift=so, act_min=lo, act_max=hi, shape1=_shape6(a.shape), shape2=_shape6(b.shape),
                out_shape=_shape6(y.shape))


def _softmax_scaling(beta: float, input_scale):
    """PreprocessSoftmaxScaling with 5 integer bits (double arithmetic)."""
    real = min(float(beta) * float(input_scale) * float(1 << (31 - 5)), float((1 << 31) - 1))
    mult, shift = quantize_multiplier(real)
    assert shift >= 0
    return mult, shift


def softmax_params(case):
    x = case.inputs[0]
    beta = float(f32(case.options.get("Beta", 1.0)))
    mult, shift = _softmax_scaling(beta, x.scale)
    depth = x.shape[-1]
    return dict(outer_size=int(np.prod(x.shape)) // depth, depth=depth, input_multiplier=mult,
                input_left_shift=shift, diff_min=-calculate_input_radius(5, shift), reverse_scaling_divisor=0,
                reverse_scaling_right_shift=0)


def log_softmax_params(case):
    x = case.inputs[0]
    mult, shift = _softmax_scaling(1.0, x.scale)
    real_rev = (1 << (31 - shift)) / float(mult)
    rev_mult, rev_shift = quantize_multiplier(real_rev)
    assert rev_shift <= 0
    depth = x.shape[-1]
    return dict(outer_size=int(np.prod(x.shape)) // depth, depth=depth, input_multiplier=mult,
                input_left_shift=shift, diff_min=-calculate_input_radius(5, shift),
                reverse_scaling_divisor=rev_mult, reverse_scaling_right_shift=-rev_shift)


def relu_params(case):
    """ReluPrepare (float32 scale ratio, then double) + QuantizedReluX's clamp (roundf)."""
    x, y = case.inputs[0], case.outputs[0]
    mult, shift = quantize_multiplier(float(f32(x.scale) / f32(y.scale)))
    lo_f, hi_f = {"RELU": (0.0, None), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0),
                  "RELU_0_TO_1": (0.0, 1.0)}[case.op_type]

    def q(f):
        return y.zero_point + int(tf_round(float(f32(f) / f32(y.scale))))

    return dict(input_zero_point=x.zero_point, output_zero_point=y.zero_point, mult=mult, shift=shift,
                act_min=max(-128, q(lo_f)), act_max=127 if hi_f is None else min(127, q(hi_f)))


def requantize_params(case):
    """QUANTIZE int8 -> int8: double(in_scale) / double(out_scale)."""
    x, y = case.inputs[0], case.outputs[0]
    mult, shift = quantize_multiplier(float(x.scale) / float(y.scale))
    return dict(input_zero_point=x.zero_point, output_zero_point=y.zero_point, mult=mult, shift=shift,
                act_min=-128, act_max=127)


def downscale_int32_to_int16_multiplier(m: int) -> int:
    if m >= (1 << 31) - 1 - (1 << 15):
        return 32767
    return (m + (1 << 15)) >> 16


def hard_swish_params(case):
    """HardSwishPrepare: float32 scale arithmetic, int16 fixed-point multipliers."""
    x, y = case.inputs[0], case.outputs[0]
    hires_input_scale = f32(1.0 / 128.0) * f32(x.scale)
    reluish_scale = f32(3.0) / f32(32768.0)
    output_multiplier = hires_input_scale / f32(y.scale)
    om, oe = quantize_multiplier(float(output_multiplier))
    assert oe <= 0
    reluish_multiplier = hires_input_scale / reluish_scale
    rm, re = quantize_multiplier(float(reluish_multiplier))
    return dict(input_zero_point=x.zero_point, output_zero_point=y.zero_point,
                reluish_multiplier_fixedpoint_int16=downscale_int32_to_int16_multiplier(rm),
                reluish_multiplier_exponent=re,
                output_multiplier_fixedpoint_int16=downscale_int32_to_int16_multiplier(om),
                output_multiplier_exponent=oe)


def mean_params(case):
    x, axes, y = case.inputs[0], case.inputs[1], case.outputs[0]
    nd = len(x.shape)
    mask = 0
    for a in np.asarray(axes.value).reshape(-1):
        mask |= 1 << (int(a) + nd if a < 0 else int(a))
    mult, shift = quantize_multiplier(float(x.scale) / float(y.scale))
    return dict(ndims=nd, in_shape=list(x.shape), reduce_mask=mask, input_zero_point=x.zero_point,
                output_zero_point=y.zero_point, mult=mult, shift=shift)


def pad_params(case):
    x, pads, y = case.inputs[0], case.inputs[1], case.outputs[0]
    pv = np.asarray(pads.value).reshape(-1, 2)
    value = y.zero_point
    if len(case.inputs) > 2 and case.inputs[2] is not None:  # PADV2 constant
        value = int(np.asarray(case.inputs[2].value).reshape(-1)[0])
    return dict(ndims=len(x.shape), in_shape=list(x.shape), before=[int(v) for v in pv[:, 0]],
                after=[int(v) for v in pv[:, 1]], pad_value=value)


def concat_params(case):
    y = case.outputs[0]
    axis = case.options["Axis"]
    nd = len(y.shape)
    axis = axis + nd if axis < 0 else axis
    outer = int(np.prod(y.shape[:axis]))
    inner = int(np.prod(y.shape[axis + 1:]))
    return dict(num_inputs=len(case.inputs), outer_size=outer,
                copy_sizes=[t.shape[axis] * inner for t in case.inputs])


def split_params(case):
    axis_t, x = case.inputs[0], case.inputs[1]
    nd = len(x.shape)
    axis = int(np.asarray(axis_t.value).reshape(-1)[0])
    axis = axis + nd if axis < 0 else axis
    inner = int(np.prod(x.shape[axis + 1:]))
    return dict(num_outputs=len(case.outputs), outer_size=int(np.prod(x.shape[:axis])),
                copy_sizes=[t.shape[axis] * inner for t in case.outputs])


def transpose_params(case):
    x, perm = case.inputs[0], case.inputs[1]
    return dict(ndims=len(x.shape), in_shape=list(x.shape), perm=[int(v) for v in np.asarray(perm.value)])


def strided_slice_params(case):
    """TFLite strided_slice_logic (StartForAxis / StopForAxis) for begin/end/shrink masks."""
    x, begin, end, strides = case.inputs[:4]
    o = case.options
    assert o.get("EllipsisMask", 0) == 0 and o.get("NewAxisMask", 0) == 0 and not o.get("Offset", False)
    nd = len(x.shape)
    begin, end, strides = (np.asarray(t.value).reshape(-1).tolist() for t in (begin, end, strides))
    starts, steps, counts = [], [], []
    for a in range(nd):
        dim, stride = x.shape[a], strides[a]
        if o.get("BeginMask", 0) >> a & 1:
            start = 0 if stride > 0 else dim - 1
        else:
            start = begin[a] + dim if begin[a] < 0 else begin[a]
            start = min(max(start, 0), dim) if stride > 0 else min(max(start, -1), dim - 1)
        if o.get("ShrinkAxisMask", 0) >> a & 1:
            stop = start + 1
        elif o.get("EndMask", 0) >> a & 1:
            stop = dim if stride > 0 else -1
        else:
            stop = end[a] + dim if end[a] < 0 else end[a]
            stop = min(max(stop, 0), dim) if stride > 0 else min(max(stop, -1), dim - 1)
        count = max(0, -((start - stop) // stride)) if stride > 0 else max(0, -((stop - start) // -stride))
        starts.append(start)
        steps.append(stride)
        counts.append(count)
    return dict(ndims=nd, in_shape=list(x.shape), start=starts, step=steps, count=counts)


def resize_nearest_params(case):
    x, y, o = case.inputs[0], case.outputs[0], case.options
    b, ih, iw, c = x.shape
    return dict(batches=b, in_h=ih, in_w=iw, channels=c, out_h=y.shape[1], out_w=y.shape[2],
                align_corners=int(bool(o.get("AlignCorners", False))),
                half_pixel_centers=int(bool(o.get("HalfPixelCenters", False))))


def lut_params(case):
    x, y = case.inputs[0], case.outputs[0]
    return dict(kind="logistic" if case.op_type == "LOGISTIC" else "tanh", in_scale=float(x.scale),
                in_zp=x.zero_point, out_scale=float(y.scale), out_zp=y.zero_point)


def quantize_params(case):
    y = case.outputs[0]
    return dict(scale=float(y.scale), zero_point=y.zero_point)


def dequantize_params(case):
    x = case.inputs[0]
    return dict(scale=float(x.scale), zero_point=x.zero_point)
