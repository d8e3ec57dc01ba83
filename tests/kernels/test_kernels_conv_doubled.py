"""CONV_2D on doubled packed weights (packed_doubled): the layers and channels it must refuse or
treat specially, SIMD (emulated) against the portable kernel on the same parameters.

The single-op and model tests cover ordinary layers against the interpreter; here the channels
are made to hit the edges: dead channels (multiplier 0), channels whose bias is too large for
the weights to move the rounding (constant: zero weights, a constant record, pairs skipped),
a live channel ta_rqd cannot take (shift 0: the layer keeps single weights), and a channel right
at the |accumulator| < 2^30 bound and one past it. Each
layer runs whole and in 3 row stripes, through records from the host and built in scratch, with
the default double rounding and with TA_SINGLE_ROUNDING (records from the double-rounding host,
as generated code gets them).
"""

import ctypes as C

import numpy as np
import pytest

import ckernels
from ckernels import ConvParams, Kernels, build_library, ptr

INT32_MIN = -(1 << 31)


@pytest.fixture(scope="module")
def single_rounding_libs(tmp_path_factory):
    out = tmp_path_factory.mktemp("takernels_single")
    flags = {"portable_single": ["-DTA_NO_SIMD", "-DTA_SINGLE_ROUNDING=1"],
             "simd_single": ["-DTA_SIMD_EMULATE", "-DTA_SINGLE_ROUNDING=1"]}
    saved = dict(ckernels.VARIANT_FLAGS)
    ckernels.VARIANT_FLAGS.update(flags)
    try:
        return {v: Kernels(build_library(out, v), v) for v in flags}
    finally:
        ckernels.VARIANT_FLAGS.clear()
        ckernels.VARIANT_FLAGS.update(saved)


def layer(rng, kind, out_c=10, k=3, in_c=3, full=True):
    """A 3x3 (or 1x1) SAME conv on 9x7 with channels made constant or out of bounds by `kind`."""
    h, w = 9, 7
    weights = rng.integers(-127, 128, (out_c, k, k, in_c), dtype=np.int8)
    bias = rng.integers(-20000, 20000, out_c).astype(np.int32)
    mult = rng.integers(1 << 30, (1 << 31) - 1, out_c).astype(np.int32)
    shift = rng.integers(-11, -1, out_c).astype(np.int32)
    if kind == "constant":
        mult[[0, 1, 5]] = 0  # a dead pair (0, 1) and a dead channel in a live pair
        for c in (2, 3, 7, out_c - 1):  # a constant pair (2, 3), a constant channel in a live pair
            bias[c] = (1 << 30) * (1 if c & 1 else -1) + int(rng.integers(-99, 99))
            shift[c] = -30
            weights[c] //= 64
    elif kind == "refused":
        shift[4] = 0  # a live channel ta_rqd cannot take: the layer keeps single weights
    elif kind == "unfolded":  # a doubled layer's channel whose shift (r = 23 > 22) cannot fold the offset
        mult[4], shift[4], bias[4] = (1 << 31) - 1, -23, 1 << 22  # its range straddles a rounding step
    elif kind in ("bound", "past_bound"):  # |bias| + 255 * sum |w| = 2^30 - 1 or 2^30 (then refused unless constant)
        weights[4] = 127
        bias[4] = (1 << 30) - 255 * 127 * weights[4].size - (kind == "bound")
        shift[4] = -22
    p = dict(in_h=h, in_w=w, in_c=in_c, out_h=h, out_w=w, out_c=out_c, kernel_h=k, kernel_w=k, stride_h=1, stride_w=1,
             dilation_h=1, dilation_w=1, pad_top=k // 2, pad_left=k // 2, pad_bottom=k // 2, pad_right=k // 2,
             input_offset=int(rng.integers(-127, 129)), output_offset=int(rng.integers(-128, 128)),
             act_min=-128 if full else -100, act_max=127 if full else 90)
    arrays = dict(weights=weights.reshape(out_c, -1), bias=bias, out_mult=mult, out_shift=shift)
    return p, arrays


def conv_struct(p, arrays):
    s = ConvParams(**p)
    s.weights = ptr(arrays["weights"], C.c_int8)
    s.bias = ptr(arrays["bias"], C.c_int32)
    s.out_mult = ptr(arrays["out_mult"], C.c_int32)
    s.out_shift = ptr(arrays["out_shift"], C.c_int32)
    return s


def run(k, s, x, stripes, records=None):
    """The conv in `stripes` row stripes; with `records` as generated code calls it: the records
    alone, bias, multipliers and shifts NULL (the SIMD paths must not read them)."""
    out = np.zeros((s.out_h, s.out_w, s.out_c), np.int8)
    s.rq_records = None if records is None else ptr(records, C.c_int32)
    channel_arrays = [C.cast(a, C.POINTER(C.c_int32)) for a in (s.bias, s.out_mult, s.out_shift)]  # copies
    if records is not None:
        s.bias = s.out_mult = s.out_shift = None
    scratch = np.zeros(k.ta_conv_s8_scratch_bytes(C.byref(s)) // 4 + 1, np.int32)
    bounds = np.linspace(0, s.out_h, stripes + 1).astype(int)
    for y0, y1 in zip(bounds[:-1], bounds[1:]):
        conv = k.ta_conv_s8 if s.packed_s8_weights else k.ta_conv_s8_packed16
        conv(C.byref(s), ptr(x, C.c_int8), ptr(out, C.c_int8), int(y0), int(y1), scratch.ctypes.data_as(C.c_void_p))
    s.bias, s.out_mult, s.out_shift = channel_arrays
    return out


CASES = [("constant", 10, 3, True), ("constant", 9, 3, True), ("constant", 10, 1, True), ("constant", 10, 3, False),
         ("refused", 10, 3, True), ("unfolded", 10, 3, True), ("plain", 7, 3, True), ("bound", 6, 1, True), ("past_bound", 6, 1, True)]


@pytest.mark.parametrize("layout", ["s8", "s16"])
@pytest.mark.parametrize("kind,out_c,k,full", CASES,
                         ids=[f"{c[0]}-{c[1]}ch-{c[2]}x{c[2]}-{'full' if c[3] else 'clamped'}" for c in CASES])
def test_doubled_conv_matches_portable(kernel_libs, single_rounding_libs, kind, out_c, k, full, layout):
    rng = np.random.default_rng(out_c * 10 + k + full)
    p, arrays = layer(rng, kind, out_c, k, 128 if k == 1 else 3, full)
    x = rng.integers(-128, 128, (p["in_h"], p["in_w"], p["in_c"]), dtype=np.int8)
    simd = kernel_libs["simd"]
    s = conv_struct(p, arrays)
    want = run(kernel_libs["portable"], s, x, 1)
    packed = simd.pack_conv_s8(s) if layout == "s8" else simd.pack_conv(s)
    if kind != "past_bound":
        assert s.packed_doubled == (kind != "refused")
    if kind == "unfolded":  # its record: the general form, c = TA_CONV_RQ_GENERAL + shift
        assert p["output_offset"] != 0 and simd.conv_rq_records(s).reshape(out_c, -1)[4, 1] == INT32_MIN + (1 << 29) - 23
    if layout == "s8":
        s.packed_s8_weights = ptr(packed, C.c_int8)
    else:
        s.packed_weights = ptr(packed, C.c_int16)
    records = simd.conv_rq_records(s)  # as the generator makes them (double rounding)
    if kind == "constant":
        rec = records.reshape(out_c, -1)
        assert rec[0, 2] == rec[2, 2] == INT32_MIN and rec[5, 2] != INT32_MIN  # pairs marked (bias word), a lone one not
        # the dead pair (0, 1) is packed as zeros: 2 channels x Kq values
        assert not packed.reshape(-1)[: 2 * 4 * ((p["kernel_h"] * p["kernel_w"] * p["in_c"] + 3) // 4)].any()
        assert packed.reshape(-1).any()
    for stripes in (1, 3):
        assert np.array_equal(run(simd, s, x, stripes, records), want), stripes
    single = conv_struct(p, arrays)
    want_single = run(single_rounding_libs["portable_single"], single, x, 1)
    single.packed_doubled, single.packed_weights = s.packed_doubled, s.packed_weights
    single.packed_s8_weights = s.packed_s8_weights
    simd_single = single_rounding_libs["simd_single"]
    assert np.array_equal(run(simd_single, single, x, 3, records), want_single)
    # records a single-rounding build makes: the general requantization everywhere, its shift in
    # the records' second word (TA_CONV_RQ_GENERAL + shift)
    assert np.array_equal(run(simd_single, single, x, 1, simd_single.conv_rq_records(single)), want_single)
