"""ctypes view of the C kernel library (cpp/kernels) for the tests.

`build_library(out_dir, variant)` compiles every `cpp/kernels/src/*.c` (and `simd_probe.c`,
which tells whether that build runs the SIMD paths) with the host gcc into a shared object;
`Kernels(path)` loads it and exposes the structs of `tinyarena_kernels.h` (mirrored field by
field below; `MIRRORED_STRUCTS` names each one's C struct, whose size a test checks against the
header's) and typed functions.

Variants:
  "portable" -- the plain C path (what a core without the DSP extension runs).
  "simd"     -- TA_SIMD_EMULATE: the SIMD-structured fast paths (packed weights, column
                buffers, 2x16-bit pairs) with the ACLE intrinsics emulated in C, so the exact
                algorithm the Cortex-M4 build runs is checked bit for bit on the host.
"""

import ctypes as C
import subprocess
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
KERNEL_DIR = REPO / "cpp" / "kernels"
SIMD_PROBE = Path(__file__).resolve().parent / "simd_probe.c"  # ta_test_simd_enabled
MAX_DIMS = 6
CONV_RQ_WORDS = 3  # TA_CONV_RQ_WORDS

EXTRA_FLAGS = []
VARIANT_FLAGS = {"portable": ["-DTA_NO_SIMD"], "simd": ["-DTA_SIMD_EMULATE"]}


def build_library(out_dir: Path, variant: str) -> Path:
    """Compile the kernel library for the host; returns the path of the shared object."""
    sources = [*sorted(str(p) for p in (KERNEL_DIR / "src").glob("*.c")), str(SIMD_PROBE)]
    out = Path(out_dir) / f"libtakernels_{variant}.so"
    cmd = [
        "gcc", "-std=c99", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared",
        "-I", str(KERNEL_DIR / "include"), *VARIANT_FLAGS[variant], *EXTRA_FLAGS, *sources, "-o", str(out), "-lm",
    ]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out


i32 = C.c_int32
P8 = C.POINTER(C.c_int8)
P16 = C.POINTER(C.c_int16)
P32 = C.POINTER(C.c_int32)
Dims = i32 * MAX_DIMS


def _fields(*names, t=i32):
    return [(n, t) for n in names]


class ConvParams(C.Structure):
    _fields_ = _fields(
        "in_h", "in_w", "in_c", "out_h", "out_w", "out_c", "kernel_h", "kernel_w", "stride_h", "stride_w",
        "dilation_h", "dilation_w", "pad_top", "pad_left", "pad_bottom", "pad_right", "in_row_stride",
        "in_pix_stride", "out_row_stride", "out_pix_stride", "input_offset", "output_offset", "act_min", "act_max",
    ) + [("weights", P8), ("packed_weights", P16), ("bias", P32), ("out_mult", P32), ("out_shift", P32),
         ("rq_records", P32), ("packed_doubled", i32), ("packed_s8_weights", P8)]


class DwConvParams(C.Structure):
    _fields_ = _fields(
        "in_h", "in_w", "in_c", "out_h", "out_w", "depth_multiplier", "kernel_h", "kernel_w", "stride_h",
        "stride_w", "dilation_h", "dilation_w", "pad_top", "pad_left", "pad_bottom", "pad_right", "in_row_stride",
        "in_pix_stride", "out_row_stride", "out_pix_stride", "input_offset", "output_offset", "act_min", "act_max",
    ) + [("weights", P8), ("packed_weights", P16), ("bias", P32), ("out_mult", P32), ("out_shift", P32),
         ("simd_int8_weights", i32)]


class FcParams(C.Structure):
    _fields_ = _fields(
        "batches", "in_depth", "out_depth", "input_offset", "weights_offset", "output_offset", "act_min", "act_max",
        "per_channel", "out_row_stride",
    ) + [("weights", P8), ("packed_weights", P16), ("bias", P32), ("out_mult", P32), ("out_shift", P32),
         ("out_scale_f64", C.POINTER(C.c_double)), ("simd_int8_weights", i32),
         ("rescale_mult", P32), ("rescale_shift", P32)]


class PoolParams(C.Structure):
    _fields_ = _fields(
        "in_h", "in_w", "channels", "out_h", "out_w", "filter_h", "filter_w", "stride_h", "stride_w", "pad_top",
        "pad_left", "pad_bottom", "pad_right", "in_row_stride", "in_pix_stride", "out_row_stride", "out_pix_stride",
        "act_min", "act_max",
    )


class BinaryParams(C.Structure):
    _fields_ = _fields(
        "input1_offset", "input2_offset", "output_offset", "left_shift", "input1_mult", "input1_shift",
        "input2_mult", "input2_shift", "output_mult", "output_shift", "act_min", "act_max",
    ) + [("shape1", Dims), ("shape2", Dims), ("out_shape", Dims)]


class SoftmaxParams(C.Structure):
    _fields_ = _fields(
        "outer_size", "depth", "input_multiplier", "input_left_shift", "diff_min", "reverse_scaling_divisor",
        "reverse_scaling_right_shift",
    )


class RequantParams(C.Structure):
    _fields_ = _fields("input_zero_point", "output_zero_point", "mult", "shift", "act_min", "act_max")


class HardSwishParams(C.Structure):
    _fields_ = _fields(
        "input_zero_point", "output_zero_point", "reluish_multiplier_fixedpoint_int16", "reluish_multiplier_exponent",
        "output_multiplier_fixedpoint_int16", "output_multiplier_exponent",
    )


class MeanParams(C.Structure):
    _fields_ = [("ndims", i32), ("in_shape", Dims)] + _fields(
        "reduce_mask", "input_zero_point", "output_zero_point", "mult", "shift"
    )


class PadParams(C.Structure):
    _fields_ = [("ndims", i32), ("in_shape", Dims), ("before", Dims), ("after", Dims), ("pad_value", i32)]


class ConcatParams(C.Structure):
    _fields_ = [("num_inputs", i32), ("outer_size", i32), ("copy_sizes", P32)]


class SplitParams(C.Structure):
    _fields_ = [("num_outputs", i32), ("outer_size", i32), ("copy_sizes", P32)]


class TransposeParams(C.Structure):
    _fields_ = [("ndims", i32), ("in_shape", Dims), ("perm", Dims)]


class SliceParams(C.Structure):
    _fields_ = [("ndims", i32), ("in_shape", Dims), ("start", Dims), ("step", Dims), ("count", Dims)]


class ResizeParams(C.Structure):
    _fields_ = _fields("batches", "in_h", "in_w", "channels", "out_h", "out_w", "align_corners", "half_pixel_centers")


MIRRORED_STRUCTS = {
    ConvParams: "ta_conv_params", DwConvParams: "ta_dwconv_params", FcParams: "ta_fc_params",
    PoolParams: "ta_pool_params", BinaryParams: "ta_binary_params", SoftmaxParams: "ta_softmax_params",
    RequantParams: "ta_requant_params", HardSwishParams: "ta_hard_swish_params", MeanParams: "ta_mean_params",
    PadParams: "ta_pad_params", ConcatParams: "ta_concat_params", SplitParams: "ta_split_params",
    TransposeParams: "ta_transpose_params", SliceParams: "ta_slice_params", ResizeParams: "ta_resize_params",
}
"""Each ctypes mirror and the C struct of tinyarena_kernels.h it copies."""


def ptr(arr: np.ndarray, ctype):
    """Pointer to a C-contiguous numpy array (None for None)."""
    if arr is None:
        return None
    assert arr.flags["C_CONTIGUOUS"]
    return arr.ctypes.data_as(C.POINTER(ctype))


class Kernels:
    """The loaded library with argument types declared."""

    def __init__(self, path, variant: str):
        self.variant = variant
        lib = self.lib = C.CDLL(str(path))
        vp = C.c_void_p
        sig = {
            "ta_conv_s8": [C.POINTER(ConvParams), P8, P8, i32, i32, vp],
            "ta_conv_s8_packed16": [C.POINTER(ConvParams), P8, P8, i32, i32, vp],
            "ta_conv_s8_scratch_bytes": [C.POINTER(ConvParams)],
            "ta_conv_s8_rq_records": [C.POINTER(ConvParams), P32],
            "ta_depthwise_conv_s8": [C.POINTER(DwConvParams), P8, P8, i32, i32, vp],
            "ta_depthwise_conv_s8_scratch_bytes": [C.POINTER(DwConvParams)],
            "ta_depthwise_conv_s8_inplace": [C.POINTER(DwConvParams), P8, vp],
            "ta_depthwise_conv_s8_inplace_scratch_bytes": [C.POINTER(DwConvParams)],
            "ta_fully_connected_s8": [C.POINTER(FcParams), P8, P8, vp],
            "ta_fully_connected_s8_scratch_bytes": [C.POINTER(FcParams)],
            "ta_avg_pool_s8": [C.POINTER(PoolParams), P8, P8, i32, i32],
            "ta_max_pool_s8": [C.POINTER(PoolParams), P8, P8, i32, i32],
            "ta_add_s8": [C.POINTER(BinaryParams), P8, P8, P8],
            "ta_mul_s8": [C.POINTER(BinaryParams), P8, P8, P8],
            "ta_softmax_s8": [C.POINTER(SoftmaxParams), P8, P8],
            "ta_log_softmax_s8": [C.POINTER(SoftmaxParams), P8, P8],
            "ta_requantize_s8": [C.POINTER(RequantParams), P8, P8, i32],
            "ta_lut_s8": [P8, P8, P8, i32],
            "ta_lut_logistic_s8": [C.c_float, i32, C.c_float, i32, P8],
            "ta_lut_tanh_s8": [C.c_float, i32, C.c_float, i32, P8],
            "ta_hard_swish_s8": [C.POINTER(HardSwishParams), P8, P8, i32],
            "ta_quantize_f32_s8": [C.POINTER(C.c_float), P8, i32, C.c_float, i32],
            "ta_dequantize_s8_f32": [P8, C.POINTER(C.c_float), i32, C.c_float, i32],
            "ta_mean_s8": [C.POINTER(MeanParams), P8, P8],
            "ta_pad_s8": [C.POINTER(PadParams), P8, P8],
            "ta_concat_s8": [C.POINTER(ConcatParams), C.POINTER(P8), P8],
            "ta_split_s8": [C.POINTER(SplitParams), P8, C.POINTER(P8)],
            "ta_transpose_s8": [C.POINTER(TransposeParams), P8, P8],
            "ta_strided_slice_s8": [C.POINTER(SliceParams), P8, P8],
            "ta_resize_nearest_s8": [C.POINTER(ResizeParams), P8, P8],
            "ta_conv_s8_can_double": [C.POINTER(ConvParams)],
            "ta_conv_s8_pack_weights": [C.POINTER(ConvParams), P16],
            "ta_conv_s8_pack_weights_s8_bytes": [i32, i32],
            "ta_conv_s8_pack_weights_s8": [C.POINTER(ConvParams), P8],
            "ta_pack_gemm_weights_s16_bytes": [i32, i32],
            "ta_pack_gemm_weights_s16": [P8, i32, i32, i32, P16],
            "ta_pack_dw_weights_s16_bytes": [i32, i32, i32],
            "ta_pack_dw_weights_s16": [P8, i32, i32, i32, P16],
            "ta_test_simd_enabled": [],
            "ta_test_struct_bytes": [C.c_char_p],
        }
        for name, args in sig.items():
            fn = getattr(lib, name)
            fn.argtypes = args
            returns_int = name in ("ta_test_simd_enabled", "ta_conv_s8_can_double")
            fn.restype = C.c_size_t if name.endswith("_bytes") else (C.c_int if returns_int else None)
        self.simd = bool(lib.ta_test_simd_enabled())

    def __getattr__(self, name):
        return getattr(self.lib, name)

    # -------------------------------------------------------------- packing helpers
    def conv_rq_records(self, params) -> np.ndarray:
        """The per-channel records of a ConvParams, as the generator precomputes them."""
        out = np.zeros(params.out_c * CONV_RQ_WORDS, np.int32)
        self.lib.ta_conv_s8_rq_records(C.byref(params), ptr(out, C.c_int32))
        return out

    def pack_conv(self, params, doubled=True) -> np.ndarray:
        """A ConvParams' packed int16 weights (TA_PACKED_S16), as the generator makes them: doubled
        (and params.packed_doubled set) when `doubled` and ta_conv_s8_can_double allow it."""
        params.packed_doubled = int(doubled and self.lib.ta_conv_s8_can_double(C.byref(params)) != 0)
        k = params.kernel_h * params.kernel_w * params.in_c
        out = np.zeros(self.lib.ta_pack_gemm_weights_s16_bytes(params.out_c, k) // 2, np.int16)
        self.lib.ta_conv_s8_pack_weights(C.byref(params), ptr(out, C.c_int16))
        return out

    def pack_conv_s8(self, params, doubled=True) -> np.ndarray:
        """A ConvParams' int8 weights in the TA_PACKED_S8 layout, params.packed_doubled set as
        pack_conv sets it (the column is then doubled, the weights never)."""
        params.packed_doubled = int(doubled and self.lib.ta_conv_s8_can_double(C.byref(params)) != 0)
        k = params.kernel_h * params.kernel_w * params.in_c
        out = np.zeros(self.lib.ta_conv_s8_pack_weights_s8_bytes(params.out_c, k), np.int8)
        self.lib.ta_conv_s8_pack_weights_s8(C.byref(params), ptr(out, C.c_int8))
        return out

    def pack_gemm(self, w: np.ndarray, weights_offset: int = 0) -> np.ndarray:
        n = w.shape[0]
        k = int(np.prod(w.shape[1:]))
        w = np.ascontiguousarray(w.reshape(n, k), np.int8)
        out = np.zeros(self.lib.ta_pack_gemm_weights_s16_bytes(n, k) // 2, np.int16)
        self.lib.ta_pack_gemm_weights_s16(ptr(w, C.c_int8), n, k, weights_offset, ptr(out, C.c_int16))
        return out

    def pack_dw(self, w: np.ndarray) -> np.ndarray:
        _, kh, kw, oc = w.shape
        w = np.ascontiguousarray(w, np.int8)
        out = np.zeros(self.lib.ta_pack_dw_weights_s16_bytes(oc, kh, kw) // 2, np.int16)
        self.lib.ta_pack_dw_weights_s16(ptr(w, C.c_int8), oc, kh, kw, ptr(out, C.c_int16))
        return out

    def lut(self, kind: str, in_scale, in_zp, out_scale, out_zp) -> np.ndarray:
        table = np.zeros(256, np.int8)
        fn = self.lib.ta_lut_logistic_s8 if kind == "logistic" else self.lib.ta_lut_tanh_s8
        fn(float(in_scale), int(in_zp), float(out_scale), int(out_zp), ptr(table, C.c_int8))
        return table
