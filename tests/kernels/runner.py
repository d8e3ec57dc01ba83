"""Test-only: run one TFLite op (an OpCase) through the C kernels and return its outputs.

`run_op(kernels, case)` derives the parameters with kernel_params, fills the ctypes struct,
calls the kernel on the interpreter's own input values and returns numpy outputs shaped like
the interpreter's. With the "simd" library variant, CONV/DEPTHWISE/FC run on packed weights.
Extra modes exercise the addressing hooks: row stripes, strided outputs and in-place calls.
"""

import ctypes as C

import numpy as np

import kernel_params as kp
from ckernels import (
    BinaryParams, ConcatParams, ConvParams, DwConvParams, FcParams, HardSwishParams, MeanParams, PadParams,
    PoolParams, RequantParams, ResizeParams, SliceParams, SoftmaxParams, SplitParams, TransposeParams, P8, ptr,
)

NOOP_OPS = {"RESHAPE", "SQUEEZE", "EXPAND_DIMS"}


def _struct(cls, params, keep):
    """Fill a ctypes struct from a params dict; arrays are converted and kept alive in `keep`."""
    s = cls()
    for name, ctype in cls._fields_:
        if name not in params:
            continue
        v = params[name]
        if isinstance(ctype, type) and issubclass(ctype, C.Array):
            arr = list(v) + [0] * (len(ctype()) - len(v))
            setattr(s, name, ctype(*arr))
        elif ctype in (C.c_int32,):
            setattr(s, name, int(v))
        else:  # pointer
            if v is None:
                setattr(s, name, None)
                continue
            base = ctype._type_
            dt = {C.c_int8: np.int8, C.c_int16: np.int16, C.c_int32: np.int32, C.c_double: np.float64}[base]
            arr = np.ascontiguousarray(np.asarray(v, dtype=dt))
            keep.append(arr)
            setattr(s, name, arr.ctypes.data_as(ctype))
    return s


def _i8(a):
    """A private C-contiguous int8 copy (kernels may write in place; never touch golden data)."""
    return np.array(a, dtype=np.int8, order="C", copy=True)


def _scratch(nbytes):
    buf = np.zeros(max(int(nbytes), 4) // 4 + 1, np.int32)  # 4-byte aligned
    return buf, buf.ctypes.data_as(C.c_void_p)


def run_op(k, case, stripes=1, inplace=False, out_pix_pad=0, doubled=True, conv_weights="s8"):
    """Outputs of `case` computed by the kernels in `k`.

    stripes: conv/depthwise/pool output rows computed in this many separate calls.
    inplace: depthwise via ta_depthwise_conv_s8_inplace (when valid), ADD/MUL with out == in1.
    out_pix_pad: conv/depthwise/pool write into a wider tensor (extra channels per pixel) and
      the valid channel slice is returned, exercising out_pix_stride. The SIMD conv gets its
      per-channel records precomputed (and no bias, multipliers or shifts), as generated code.
    doubled: the SIMD conv runs on doubled packed weights where ta_conv_s8_can_double allows
      (as generated code does); False keeps them single (the ta_rq4 requantization).
    conv_weights: the SIMD conv's, depthwise's and fully connected's weight layout, "s8" (int8
      widened in the SIMD path, the generator's default: conv TA_PACKED_S8, depthwise and fully
      connected the model's int8 weights) or "s16" (TA_PACKED_S16).
    """
    t = case.op_type
    keep = []
    ins = case.inputs
    y = case.outputs[0]
    out = np.zeros(y.shape, y.dtype)

    if t in NOOP_OPS:
        return [ins[0].value.reshape(y.shape)]

    if t in ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D"):
        p = {"CONV_2D": kp.conv_params, "DEPTHWISE_CONV_2D": kp.depthwise_params}.get(t, kp.pool_params)(case)
        x = _i8(ins[0].value)
        batches, out_h, out_w, out_c = y.shape
        wide = np.zeros((batches, out_h, out_w, out_c + out_pix_pad), np.int8)
        if out_pix_pad:
            p["out_pix_stride"] = out_c + out_pix_pad
        if t == "CONV_2D":
            s = _struct(ConvParams, p, keep)
            if k.simd and conv_weights == "s8":
                keep.append(k.pack_conv_s8(s, doubled))
                s.packed_s8_weights = ptr(keep[-1], C.c_int8)
            elif k.simd:
                keep.append(k.pack_conv(s, doubled))
                s.packed_weights = ptr(keep[-1], C.c_int16)
            if k.simd:  # records precomputed as generated code passes them (the SIMD paths need them)
                keep.append(k.conv_rq_records(s))
                s.rq_records = ptr(keep[-1], C.c_int32)
                s.bias = s.out_mult = s.out_shift = None  # nor bias, multipliers, shifts: the records hold them
            scratch, sp = _scratch(k.ta_conv_s8_scratch_bytes(C.byref(s)))
            conv = k.ta_conv_s8_packed16 if conv_weights == "s16" else k.ta_conv_s8
            fn = lambda xi, oi, y0, y1: conv(C.byref(s), ptr(xi, C.c_int8), ptr(oi, C.c_int8), y0, y1, sp)
        elif t == "DEPTHWISE_CONV_2D":
            if k.simd and conv_weights == "s8":
                p["simd_int8_weights"] = 1
            elif k.simd:
                p["packed_weights"] = k.pack_dw(p["weights"])
            s = _struct(DwConvParams, p, keep)
            if inplace and p["depth_multiplier"] == 1 and not out_pix_pad and out_h * out_w <= x.shape[1] * x.shape[2]:
                scratch, sp = _scratch(k.ta_depthwise_conv_s8_inplace_scratch_bytes(C.byref(s)))
                for b in range(batches):
                    buf = x[b].copy()
                    k.ta_depthwise_conv_s8_inplace(C.byref(s), ptr(buf, C.c_int8), sp)
                    out[b] = buf.reshape(-1)[: out_h * out_w * out_c].reshape(out_h, out_w, out_c)
                return [out]
            scratch, sp = _scratch(k.ta_depthwise_conv_s8_scratch_bytes(C.byref(s)))
            fn = lambda xi, oi, y0, y1: k.ta_depthwise_conv_s8(C.byref(s), ptr(xi, C.c_int8), ptr(oi, C.c_int8), y0, y1, sp)
        else:
            s = _struct(PoolParams, p, keep)
            f = k.ta_avg_pool_s8 if t == "AVERAGE_POOL_2D" else k.ta_max_pool_s8
            fn = lambda xi, oi, y0, y1: f(C.byref(s), ptr(xi, C.c_int8), ptr(oi, C.c_int8), y0, y1)
        bounds = np.linspace(0, out_h, stripes + 1).astype(int)
        for b in range(batches):
            xi = np.ascontiguousarray(x[b])
            oi = np.ascontiguousarray(wide[b])
            for y0, y1 in zip(bounds[:-1], bounds[1:]):
                if y1 > y0:
                    fn(xi, oi, int(y0), int(y1))
            wide[b] = oi
        return [np.ascontiguousarray(wide[..., :out_c])]

    if t == "FULLY_CONNECTED":
        p = kp.fully_connected_params(case)
        if k.simd and conv_weights == "s8" and p["weights_offset"] == 0:
            p["simd_int8_weights"] = 1
        elif k.simd:
            p["packed_weights"] = k.pack_gemm(p["weights"], p["weights_offset"])
        s = _struct(FcParams, p, keep)
        scratch, sp = _scratch(k.ta_fully_connected_s8_scratch_bytes(C.byref(s)))
        k.ta_fully_connected_s8(C.byref(s), ptr(_i8(ins[0].value), C.c_int8), ptr(out, C.c_int8), sp)
        return [out]

    if t in ("ADD", "MUL"):
        p = (kp.add_params if t == "ADD" else kp.mul_params)(case)
        s = _struct(BinaryParams, p, keep)
        a, b = _i8(ins[0].value), _i8(ins[1].value)
        f = k.ta_add_s8 if t == "ADD" else k.ta_mul_s8
        if inplace and a.shape == y.shape:
            f(C.byref(s), ptr(a, C.c_int8), ptr(b, C.c_int8), ptr(a, C.c_int8))
            return [a]
        if inplace and b.shape == y.shape:
            f(C.byref(s), ptr(a, C.c_int8), ptr(b, C.c_int8), ptr(b, C.c_int8))
            return [b]
        f(C.byref(s), ptr(a, C.c_int8), ptr(b, C.c_int8), ptr(out, C.c_int8))
        return [out]

    if t in ("SOFTMAX", "LOG_SOFTMAX"):
        p = (kp.softmax_params if t == "SOFTMAX" else kp.log_softmax_params)(case)
        s = _struct(SoftmaxParams, p, keep)
        f = k.ta_softmax_s8 if t == "SOFTMAX" else k.ta_log_softmax_s8
        f(C.byref(s), ptr(_i8(ins[0].value), C.c_int8), ptr(out, C.c_int8))
        return [out]

    if t in ("RELU", "RELU6", "RELU_N1_TO_1", "QUANTIZE") and ins[0].dtype == np.int8:
        p = kp.requantize_params(case) if t == "QUANTIZE" else kp.relu_params(case)
        s = _struct(RequantParams, p, keep)
        k.ta_requantize_s8(C.byref(s), ptr(_i8(ins[0].value), C.c_int8), ptr(out, C.c_int8), out.size)
        return [out]

    if t == "QUANTIZE":
        p = kp.quantize_params(case)
        x = np.ascontiguousarray(ins[0].value, np.float32)
        k.ta_quantize_f32_s8(ptr(x, C.c_float), ptr(out, C.c_int8), out.size, p["scale"], p["zero_point"])
        return [out]

    if t == "DEQUANTIZE":
        p = kp.dequantize_params(case)
        k.ta_dequantize_s8_f32(ptr(_i8(ins[0].value), C.c_int8), ptr(out, C.c_float), out.size, p["scale"],
                               p["zero_point"])
        return [out]

    if t in ("LOGISTIC", "TANH"):
        p = kp.lut_params(case)
        lut = k.lut(p["kind"], p["in_scale"], p["in_zp"], p["out_scale"], p["out_zp"])
        k.ta_lut_s8(ptr(lut, C.c_int8), ptr(_i8(ins[0].value), C.c_int8), ptr(out, C.c_int8), out.size)
        return [out]

    if t == "HARD_SWISH":
        s = _struct(HardSwishParams, kp.hard_swish_params(case), keep)
        k.ta_hard_swish_s8(C.byref(s), ptr(_i8(ins[0].value), C.c_int8), ptr(out, C.c_int8), out.size)
        return [out]

    if t == "MEAN":
        s = _struct(MeanParams, kp.mean_params(case), keep)
        k.ta_mean_s8(C.byref(s), ptr(_i8(ins[0].value), C.c_int8), ptr(out, C.c_int8))
        return [out]

    if t in ("PAD", "PADV2"):
        s = _struct(PadParams, kp.pad_params(case), keep)
        k.ta_pad_s8(C.byref(s), ptr(_i8(ins[0].value), C.c_int8), ptr(out, C.c_int8))
        return [out]

    if t == "CONCATENATION":
        p = kp.concat_params(case)
        arrays = [_i8(i.value) for i in ins]
        sizes = np.array(p["copy_sizes"], np.int32)
        s = ConcatParams(p["num_inputs"], p["outer_size"], ptr(sizes, C.c_int32))
        ptrs = (P8 * len(arrays))(*[ptr(a, C.c_int8) for a in arrays])
        k.ta_concat_s8(C.byref(s), ptrs, ptr(out, C.c_int8))
        return [out]

    if t == "SPLIT":
        p = kp.split_params(case)
        outs = [np.zeros(o.shape, np.int8) for o in case.outputs]
        sizes = np.array(p["copy_sizes"], np.int32)
        s = SplitParams(p["num_outputs"], p["outer_size"], ptr(sizes, C.c_int32))
        ptrs = (P8 * len(outs))(*[ptr(a, C.c_int8) for a in outs])
        k.ta_split_s8(C.byref(s), ptr(_i8(ins[1].value), C.c_int8), ptrs)
        return outs

    if t == "TRANSPOSE":
        s = _struct(TransposeParams, kp.transpose_params(case), keep)
        k.ta_transpose_s8(C.byref(s), ptr(_i8(ins[0].value), C.c_int8), ptr(out, C.c_int8))
        return [out]

    if t == "STRIDED_SLICE":
        s = _struct(SliceParams, kp.strided_slice_params(case), keep)
        k.ta_strided_slice_s8(C.byref(s), ptr(_i8(ins[0].value), C.c_int8), ptr(out, C.c_int8))
        return [out]

    if t == "RESIZE_NEAREST_NEIGHBOR":
        s = _struct(ResizeParams, kp.resize_nearest_params(case), keep)
        k.ta_resize_nearest_s8(C.byref(s), ptr(_i8(ins[0].value), C.c_int8), ptr(out, C.c_int8))
        return [out]

    raise NotImplementedError(f"no kernel for {case.label()}")


def compare(k, case, **mode):
    """None if the kernel matches the interpreter byte for byte, else a failure description."""
    got = run_op(k, case, **mode)
    for i, (g, ref) in enumerate(zip(got, case.outputs)):
        want = ref.value
        if g.shape != want.shape:
            return f"{case.label()} [{k.variant}] output {i}: shape {g.shape} != {want.shape}"
        if g.tobytes() != want.tobytes():
            diff = np.flatnonzero(g.reshape(-1).view(np.uint8) != want.reshape(-1).view(np.uint8))
            j = int(diff[0])
            return (f"{case.label()} [{k.variant}] {mode or ''} output {i}: {len(diff)} of {g.size} elements differ; "
                    f"first at flat index {j}: got {g.reshape(-1)[j]} want {want.reshape(-1)[j]}")
    return None
