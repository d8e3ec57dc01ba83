"""The backward kernels of on-device training (cpp/kernels/src/training.c) against a float64 numpy
reference of the same quantized arithmetic, written here.

Integer results (masks, int32 accumulators, weight and bias gradients, SGD steps) must be equal.
The int8 input gradient is a power-of-two requantization, itself exact integer arithmetic, so it
must be equal too; against the real-valued gradient it may be off by at most half an output
step (the rounding), which is also checked. Index conventions are checked independently by the
adjoint identities <conv(x), g> = <x, grad_in> and <conv(x; W), g> = <W, grad_W>.
"""

import ctypes as C
import math

import numpy as np
import pytest
from ckernels import P8, P32, build_library

i32 = C.c_int32
PU8 = C.POINTER(C.c_uint8)


class ConvGradParams(C.Structure):
    _fields_ = [(n, i32) for n in ("in_h", "in_w", "in_c", "out_h", "out_w", "out_c", "kernel_h", "kernel_w",
                                   "stride_h", "stride_w", "pad_top", "pad_left", "input_zero_point")] + [
        ("weights", P8), ("bias", P32), ("channel_mult", P32), ("frozen_weights", P8), ("trainable_channels", i32)]


class DwConvGradParams(C.Structure):
    _fields_ = [(n, i32) for n in ("in_h", "in_w", "in_c", "out_h", "out_w", "depth_multiplier", "kernel_h",
                                   "kernel_w", "stride_h", "stride_w", "pad_top", "pad_left", "input_zero_point")] + [
        ("weights", P8), ("bias", P32), ("channel_mult", P32)]


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    lib = C.CDLL(str(build_library(tmp_path_factory.mktemp("tatrain"), "portable")))
    PP, DP = C.POINTER(ConvGradParams), C.POINTER(DwConvGradParams)
    sigs = {
        "ta_relu_mask_write": (None, [P8, i32, i32, i32, PU8]),
        "ta_relu_mask_apply": (None, [P8, i32, PU8]),
        "ta_grad_shift_for": (i32, [i32]),
        "ta_grad_requantize_s8": (None, [P32, i32, i32, P8]),
        "ta_sgd_step": (i32, [i32, i32, i32]),
        "ta_sgd_multiplier": (None, [C.c_double, P32, P32]),
        "ta_conv_grad_input_row_s32": (None, [PP, P8, i32, P32]),
        "ta_conv_grad_input_s8": (i32, [PP, P8, P8, P32]),
        "ta_conv_grad_weight_channel_s32": (None, [PP, P8, P8, i32, P32]),
        "ta_conv_grad_bias_s32": (None, [PP, P8, P32]),
        "ta_conv_backward_update": (None, [PP, P8, P8, C.c_float, C.c_float, C.c_float,
                                           C.POINTER(C.c_float), P32, P32]),
        "ta_fc_grad_params": (None, [i32, i32, i32, i32, P8, P32, PP]),
        "ta_sgd_update_weights_s8": (None, [P8, i32, i32, P32, i32, i32, C.c_float, C.c_float, C.c_float,
                                            C.POINTER(C.c_float)]),
        "ta_dwconv_grad_input_row_s32": (None, [DP, P8, i32, P32]),
        "ta_dwconv_grad_input_s8": (i32, [DP, P8, P8, P32]),
        "ta_dwconv_grad_weight_channel_s32": (None, [DP, P8, P8, i32, P32]),
        "ta_dwconv_backward_update": (None, [DP, P8, P8, C.c_float, C.c_float, C.c_float,
                                             C.POINTER(C.c_float), P32, P32]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def ptr(a, t):
    assert a.flags["C_CONTIGUOUS"]
    return a.ctypes.data_as(t)


# ---------------------------------------------------------------- reference arithmetic

def round_shift(a, s):
    """round(a / 2^s), ties away from zero, exact in float64 for |a| < 2^52."""
    a = np.asarray(a, np.float64)
    return np.sign(a) * np.floor(np.abs(a) / 2.0 ** s + 0.5)


def ref_shift(max_abs):
    s = 0
    while s < 31 and round_shift(max_abs, s) > 127:
        s += 1
    return s


def ref_multiplier(factor):
    if not factor > 0:
        return 0, 0
    q, e = math.frexp(factor)
    m = math.floor(q * 2.0 ** 31 + 0.5)
    if m == 2 ** 31:
        m, e = m // 2, e + 1
    return m, e


def ref_step(g, m, e):
    p = int(g) * m
    right = 31 - e
    if p == 0 or right >= 63:
        return 0
    if right > 0:
        mag = (abs(p) + (1 << (right - 1))) >> right
    else:
        mag = abs(p) << -right
    step = mag if p > 0 else -mag
    return max(-2 ** 31, min(2 ** 31 - 1, step))


def padded_extent(size, out, k, s, pad):
    need = s * (out - 1) + k
    return pad, max(0, need - pad - size)


def ref_conv_forward(x, w, s, pt, pl, oh, ow):
    """Float64 conv (zero point already removed from x): y[oy, ox, co]."""
    kh, kw = w.shape[1:3]
    xp = np.pad(x, (padded_extent(x.shape[0], oh, kh, s, pt), padded_extent(x.shape[1], ow, kw, s, pl), (0, 0)))
    y = np.zeros((oh, ow, w.shape[0]))
    for ky in range(kh):
        for kx in range(kw):
            patch = xp[ky:ky + s * (oh - 1) + 1:s, kx:kx + s * (ow - 1) + 1:s]
            y += np.einsum("yxc,oc->yxo", patch, w[:, ky, kx, :].astype(np.float64))
    return y


def ref_grad_input(g, w, s, pt, pl, h, wd):
    kh, kw = w.shape[1:3]
    oh, ow = g.shape[:2]
    (pt_, pb), (pl_, pr) = padded_extent(h, oh, kh, s, pt), padded_extent(wd, ow, kw, s, pl)
    gin = np.zeros((h + pt_ + pb, wd + pl_ + pr, w.shape[3]))
    for ky in range(kh):
        for kx in range(kw):
            gin[ky:ky + s * (oh - 1) + 1:s, kx:kx + s * (ow - 1) + 1:s] += np.einsum(
                "yxo,oc->yxc", g.astype(np.float64), w[:, ky, kx, :].astype(np.float64))
    return gin[pt:pt + h, pl:pl + wd]


def ref_grad_weight(g, xs, s, pt, pl, kh, kw):
    oh, ow = g.shape[:2]
    xp = np.pad(xs, (padded_extent(xs.shape[0], oh, kh, s, pt), padded_extent(xs.shape[1], ow, kw, s, pl), (0, 0)))
    gw = np.zeros((g.shape[2], kh, kw, xs.shape[2]))
    for ky in range(kh):
        for kx in range(kw):
            patch = xp[ky:ky + s * (oh - 1) + 1:s, kx:kx + s * (ow - 1) + 1:s]
            gw[:, ky, kx, :] = np.einsum("yxo,yxc->oc", g.astype(np.float64), patch)
    return gw


# ---------------------------------------------------------------- masks

@pytest.mark.parametrize("n,zp,hi", [(1, -128, 128), (13, -5, 128), (64, -128, 20), (37, 3, 90), (200, -20, 127)])
def test_relu_mask_write_and_apply(lib, n, zp, hi):
    rng = np.random.default_rng(n)
    out = rng.integers(-128, 128, n, dtype=np.int8)
    out[: min(n, 3)] = [zp, hi if hi < 128 else 127, zp + 1][: min(n, 3)]  # the range ends themselves
    mask = np.full((n + 7) // 8 + 1, 0xFF, np.uint8)  # the extra byte must stay untouched
    lib.ta_relu_mask_write(ptr(out, P8), n, zp, hi, ptr(mask, PU8))
    active = (out.astype(int) > zp) & (out.astype(int) < hi)
    expected = np.packbits(active, bitorder="little")  # unused bits of the last byte are 0
    assert mask[:-1].tolist() == expected.tolist()
    assert mask[-1] == 0xFF
    grad = rng.integers(-127, 128, n + 1, dtype=np.int8)  # one guard element
    before = grad.copy()
    lib.ta_relu_mask_apply(ptr(grad, P8), n, ptr(mask, PU8))
    assert grad[:n].tolist() == np.where(active, before[:n], 0).tolist()
    assert grad[n] == before[n]


# ---------------------------------------------------------------- requantization and the SGD step

@pytest.mark.parametrize("max_abs", [0, 1, 127, 128, 254, 255, 256, 1000, 32767, 2 ** 31 - 1])
def test_grad_shift_is_the_smallest_that_fits(lib, max_abs):
    s = lib.ta_grad_shift_for(max_abs)
    assert s == ref_shift(max_abs)
    assert round_shift(max_abs, s) <= 127
    assert s == 0 or round_shift(max_abs, s - 1) > 127


@pytest.mark.parametrize("factor", [0.0, 1e-9, 3.7e-4, 0.5, 0.9999999999, 1.0, 3.25, 1e5])
def test_sgd_multiplier_and_step(lib, factor):
    m, e = i32(), i32()
    lib.ta_sgd_multiplier(factor, C.byref(m), C.byref(e))
    assert (m.value, e.value) == ref_multiplier(factor)
    rng = np.random.default_rng(7)
    for g in [0, 1, -1, 2 ** 31 - 1, -2 ** 31, *rng.integers(-2 ** 24, 2 ** 24, 40).tolist()]:
        step = lib.ta_sgd_step(g, m.value, e.value)
        assert step == ref_step(g, m.value, e.value)
        exact = g * factor
        if abs(exact) < 2 ** 31 - 1:  # unsaturated: the stated rounding of the real step
            assert abs(step - exact) <= 0.5 + abs(exact) * 2.0 ** -30


# ---------------------------------------------------------------- conv / fully connected

CONV_CASES = [  # (h, w, cin, cout, k, stride, padding)
    (5, 5, 3, 4, 3, 1, "same"),
    (6, 7, 2, 5, 3, 2, "same"),
    (7, 6, 4, 3, 3, 2, "valid"),
    (8, 8, 3, 2, 5, 2, "same"),
    (4, 5, 5, 6, 1, 1, "valid"),
    (9, 7, 2, 3, 1, 2, "valid"),
    (6, 6, 1, 8, 2, 2, "valid"),
    (5, 8, 3, 3, 4, 1, "same"),
]


def conv_geometry(h, w, k, s, padding):
    if padding == "valid":
        return (h - k) // s + 1, (w - k) // s + 1, 0, 0
    oh, ow = -(-h // s), -(-w // s)
    return oh, ow, max(0, (oh - 1) * s + k - h) // 2, max(0, (ow - 1) * s + k - w) // 2


def make_case(h, w, cin, cout, k, s, padding, seed):
    rng = np.random.default_rng(seed)
    oh, ow, pt, pl = conv_geometry(h, w, k, s, padding)
    zp = int(rng.integers(-20, 20))
    x = rng.integers(-128, 128, (h, w, cin), dtype=np.int8)
    wt = rng.integers(-127, 128, (cout, k, k, cin), dtype=np.int8)
    g = rng.integers(-127, 128, (oh, ow, cout), dtype=np.int8)
    g[rng.random(g.shape) < 0.3] = 0  # masked gradients
    bias = rng.integers(-5000, 5000, cout, dtype=np.int32)
    p = ConvGradParams(h, w, cin, oh, ow, cout, k, k, s, s, pt, pl, zp, ptr(wt, P8), ptr(bias, P32))
    return p, x, wt, g, bias, (oh, ow, pt, pl, zp)


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv_grad_input(lib, case):
    h, w, cin, cout, k, s, padding = CONV_CASES[case]
    p, _, wt, g, _, (oh, ow, pt, pl, _) = make_case(h, w, cin, cout, k, s, padding, case)
    ref = ref_grad_input(g, wt, s, pt, pl, h, w)
    # independent check of the reference's index convention: <conv(x), g> = <x, grad_in>
    xr = np.random.default_rng(99).standard_normal((h, w, cin))
    assert np.isclose(np.sum(ref_conv_forward(xr, wt, s, pt, pl, oh, ow) * g), np.sum(xr * ref))
    row = np.zeros(w * cin, np.int32)
    for iy in range(h):
        lib.ta_conv_grad_input_row_s32(C.byref(p), ptr(g, P8), iy, ptr(row, P32))
        assert row.tolist() == ref[iy].reshape(-1).astype(np.int64).tolist()
    gin = np.zeros((h, w, cin), np.int8)
    shift = lib.ta_conv_grad_input_s8(C.byref(p), ptr(g, P8), ptr(gin, P8), ptr(row, P32))
    assert shift == ref_shift(np.abs(ref).max())
    assert shift > 0  # these cases need requantizing: the shift matters
    assert gin.tolist() == round_shift(ref, shift).astype(np.int64).tolist()
    # against the real-valued gradient (in accumulator units): at most half an output step
    assert np.abs(gin * 2.0 ** shift - ref).max() <= 2.0 ** shift / 2


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv_grad_weight_and_bias(lib, case):
    h, w, cin, cout, k, s, padding = CONV_CASES[case]
    p, x, wt, g, _, (oh, ow, pt, pl, zp) = make_case(h, w, cin, cout, k, s, padding, 100 + case)
    xs = x.astype(np.float64) - zp
    ref = ref_grad_weight(g, xs, s, pt, pl, k, k)
    # independent check: the forward is linear in W, so <conv(x; W), g> = <W, grad_W>
    wr = np.random.default_rng(98).standard_normal(wt.shape)
    assert np.isclose(np.sum(ref_conv_forward(xs, wr, s, pt, pl, oh, ow) * g), np.sum(wr * ref))
    grad = np.zeros(k * k * cin, np.int32)
    for co in range(cout):
        lib.ta_conv_grad_weight_channel_s32(C.byref(p), ptr(g, P8), ptr(x, P8), co, ptr(grad, P32))
        assert grad.tolist() == ref[co].reshape(-1).astype(np.int64).tolist()
    bgrad = np.zeros(cout, np.int32)
    lib.ta_conv_grad_bias_s32(C.byref(p), ptr(g, P8), ptr(bgrad, P32))
    assert bgrad.tolist() == g.astype(np.int64).sum(axis=(0, 1)).tolist()


def ref_update(wt, bias, gw, gb, lr, sg, sx, sw):
    w_new, b_new = wt.astype(np.int64).copy(), bias.astype(np.int64).copy()
    for co in range(wt.shape[0]):
        m, e = ref_multiplier(lr * sg * sx / sw[co])
        flat = w_new[co].reshape(-1)
        for j, gv in enumerate(gw[co].reshape(-1)):
            flat[j] = min(127, max(-127, flat[j] - ref_step(int(gv), m, e)))
        m, e = ref_multiplier(lr * sg / (sx * sw[co]))
        b_new[co] = min(2 ** 31 - 1, max(-2 ** 31, b_new[co] - ref_step(int(gb[co]), m, e)))
    return w_new, b_new


def check_fused_update(lib, p, x, wt, bias, g, gw, seed, update="ta_conv_backward_update", layout=None):
    """The fused update of `wt` against ref_update; `layout(w)` views the weights as [out_c, ...]."""
    layout = layout or (lambda w: w)
    rng = np.random.default_rng(seed)
    cout = layout(wt).shape[0]
    sw = rng.uniform(0.002, 0.02, cout).astype(np.float32)
    sg, sx = np.float32(0.01), np.float32(0.05)
    # a learning rate that moves the largest-gradient weight by about 40 int8 steps
    lr = np.float32(40 * sw.min() / (sg * sx * max(1.0, np.abs(gw).max())))
    w_ref, b_ref = ref_update(layout(wt), bias, gw, g.reshape(-1, cout).astype(np.int64).sum(axis=0), float(lr), float(sg), float(sx), sw.astype(np.float64))
    scratch = np.zeros(gw[0].size, np.int32)
    bgrad = np.zeros(cout, np.int32)
    w_before = wt.copy()
    getattr(lib, update)(C.byref(p), ptr(g, P8), ptr(x, P8), lr, sg, sx, ptr(sw, C.POINTER(C.c_float)),
                         ptr(scratch, P32), ptr(bgrad, P32))
    assert layout(wt).tolist() == w_ref.tolist()
    assert bias.tolist() == b_ref.tolist()
    assert (wt != w_before).mean() > 0.3  # the update did move most weights
    assert bgrad.tolist() == g.reshape(-1, cout).astype(np.int64).sum(axis=0).tolist()


@pytest.mark.parametrize("case", [0, 1, 3, 6])
def test_conv_fused_channel_update(lib, case):
    h, w, cin, cout, k, s, padding = CONV_CASES[case]
    p, x, wt, g, bias, (_, _, pt, pl, zp) = make_case(h, w, cin, cout, k, s, padding, 200 + case)
    gw = ref_grad_weight(g, x.astype(np.float64) - zp, s, pt, pl, k, k)
    check_fused_update(lib, p, x, wt, bias, g, gw, case)


@pytest.mark.parametrize("case", [1, 3])
def test_a_partial_update_reads_frozen_channels_from_flash_and_updates_the_trainable_ones(lib, case):
    h, w, cin, cout, k, s, padding = CONV_CASES[case]
    full, x, wt, g, bias, (_, _, pt, pl, zp) = make_case(h, w, cin, cout, k, s, padding, 300 + case)
    channels = cout // 2
    trainable = wt[:channels].copy()  # the SRAM copy of the updated channels
    p = ConvGradParams(h, w, cin, full.out_h, full.out_w, cout, k, k, s, s, pt, pl, zp, ptr(trainable, P8),
                       ptr(bias, P32), None, ptr(wt, P8), channels)
    row = np.zeros(w * cin, np.int32)
    trainable[:] = -trainable  # the input gradient must read these, not wt's first channels
    reference = np.concatenate([trainable, wt[channels:]])
    for iy in range(h):
        lib.ta_conv_grad_input_row_s32(C.byref(p), ptr(g, P8), iy, ptr(row, P32))
        assert row.tolist() == ref_grad_input(g, reference, s, pt, pl, h, w)[iy].reshape(-1).astype(np.int64).tolist()
    frozen = wt.copy()
    gw = ref_grad_weight(g, x.astype(np.float64) - zp, s, pt, pl, k, k)
    sw = np.full(cout, 0.01, np.float32)
    lr = np.float32(40 * 0.01 / (0.01 * 0.05 * np.abs(gw).max()))
    w_ref, b_ref = ref_update(reference, bias, gw, g.reshape(-1, cout).astype(np.int64).sum(axis=0), float(lr), 0.01,
                              0.05, sw.astype(np.float64))
    scratch, bgrad = np.zeros(gw[0].size, np.int32), np.zeros(cout, np.int32)
    lib.ta_conv_backward_update(C.byref(p), ptr(g, P8), ptr(x, P8), lr, 0.01, 0.05, ptr(sw, C.POINTER(C.c_float)),
                                ptr(scratch, P32), ptr(bgrad, P32))
    assert trainable.tolist() == w_ref[:channels].tolist()  # the trainable channels moved as a whole update's
    assert (trainable != -wt[:channels]).mean() > 0.3
    assert wt.tolist() == frozen.tolist()  # the frozen channels are never written
    assert bias.tolist() == b_ref.tolist()  # every bias channel is updated


@pytest.mark.parametrize("depthwise", [False, True])
def test_updates_at_the_end_match_the_fused_per_channel_update(lib, depthwise):
    rng = np.random.default_rng(7)
    cout, cw = 6, 12
    grad = rng.integers(-30000, 30000, (cout, cw), dtype=np.int32)
    start = rng.integers(-127, 128, (cout, cw), dtype=np.int8)
    sw = rng.uniform(0.002, 0.02, cout).astype(np.float32)
    lr, sg, sx = np.float32(0.5), np.float32(0.01), np.float32(0.05)
    expected, _ = ref_update(start, np.zeros(cout, np.int32), grad, np.zeros(cout), float(lr), float(sg), float(sx),
                             sw.astype(np.float64))
    weights = np.ascontiguousarray(start.T) if depthwise else start.copy()  # depthwise: [taps][out_c]
    channel_stride, element_stride = (1, cout) if depthwise else (cw, 1)
    lib.ta_sgd_update_weights_s8(ptr(weights, P8), channel_stride, element_stride, ptr(grad, P32), cout - 1, cw, lr,
                                 sg, sx, ptr(sw, C.POINTER(C.c_float)))
    updated = weights.T if depthwise else weights
    assert updated[:cout - 1].tolist() == expected[:cout - 1].tolist()
    assert updated[cout - 1].tolist() == start[cout - 1].tolist()  # past `channels`: untouched
    assert (updated[:cout - 1] != start[:cout - 1]).mean() > 0.3


@pytest.mark.parametrize("batches,n_in,n_out", [(1, 10, 4), (3, 20, 7), (4, 64, 10)])
def test_fully_connected_backward(lib, batches, n_in, n_out):
    rng = np.random.default_rng(n_in)
    zp = -7
    x = rng.integers(-128, 128, (batches, n_in), dtype=np.int8)
    wt = rng.integers(-127, 128, (n_out, n_in), dtype=np.int8)
    g = rng.integers(-127, 128, (batches, n_out), dtype=np.int8)
    bias = rng.integers(-5000, 5000, n_out, dtype=np.int32)
    p = ConvGradParams()
    lib.ta_fc_grad_params(batches, n_in, n_out, zp, ptr(wt, P8), ptr(bias, P32), C.byref(p))
    acc = g.astype(np.int64) @ wt.astype(np.int64)  # dense reference: grad_in = g W
    gin = np.zeros((batches, n_in), np.int8)
    row = np.zeros(n_in, np.int32)
    shift = lib.ta_conv_grad_input_s8(C.byref(p), ptr(g, P8), ptr(gin, P8), ptr(row, P32))
    assert shift == ref_shift(np.abs(acc).max()) and shift > 0
    assert gin.tolist() == round_shift(acc, shift).astype(np.int64).tolist()
    gw = g.astype(np.int64).T @ (x.astype(np.int64) - zp)  # grad_W[k][i] = sum_b g[b][k] (x[b][i] - zp)
    grad = np.zeros(n_in, np.int32)
    for k in range(n_out):
        lib.ta_conv_grad_weight_channel_s32(C.byref(p), ptr(g, P8), ptr(x, P8), k, ptr(grad, P32))
        assert grad.tolist() == gw[k].tolist()
    check_fused_update(lib, p, x, wt, bias, g, gw.reshape(n_out, 1, 1, n_in).astype(np.float64), n_out)


def test_grad_requantize_rounds_half_away_and_clamps_symmetric(lib):
    acc = np.array([0, 1, 2, 3, -1, -2, -3, 5, -5, 6, -6, 254, 255, -254, -255, 300, -300, 2 ** 31 - 1, -2 ** 31],
                   np.int32)
    out = np.zeros(acc.size, np.int8)
    lib.ta_grad_requantize_s8(ptr(acc, P32), acc.size, 1, ptr(out, P8))
    assert out.tolist() == np.clip(round_shift(acc, 1), -127, 127).astype(np.int64).tolist()
    assert out.min() == -127  # the gradient format is symmetric: -128 never appears


# ---------------------------------------------------------------- depthwise

DW_CASES = [  # (h, w, cin, depth_multiplier, k, stride, padding)
    (6, 6, 4, 1, 3, 1, "same"),
    (7, 8, 3, 2, 3, 2, "same"),
    (9, 7, 5, 1, 3, 2, "valid"),
    (8, 8, 2, 3, 5, 1, "same"),
    (5, 6, 6, 1, 2, 2, "valid"),
]


def make_dw_case(case, seed):
    h, w, cin, dm, k, s, padding = DW_CASES[case]
    rng = np.random.default_rng(seed)
    oh, ow, pt, pl = conv_geometry(h, w, k, s, padding)
    zp = int(rng.integers(-20, 20))
    x = rng.integers(-128, 128, (h, w, cin), dtype=np.int8)
    wt = rng.integers(-127, 128, (k, k, cin * dm), dtype=np.int8)
    g = rng.integers(-127, 128, (oh, ow, cin * dm), dtype=np.int8)
    g[rng.random(g.shape) < 0.3] = 0
    bias = rng.integers(-5000, 5000, cin * dm, dtype=np.int32)
    p = DwConvGradParams(h, w, cin, oh, ow, dm, k, k, s, s, pt, pl, zp, ptr(wt, P8), ptr(bias, P32))
    return p, x, wt, g, bias, (h, w, cin, dm, k, s, oh, ow, pt, pl, zp)


def dw_patches(xs, dm, k, s, pt, pl, oh, ow):
    """(ky, kx) -> the input window values [oh, ow, out_c] each output channel reads."""
    xp = np.pad(xs, (padded_extent(xs.shape[0], oh, k, s, pt), padded_extent(xs.shape[1], ow, k, s, pl), (0, 0)))
    return {(ky, kx): np.repeat(xp[ky:ky + s * (oh - 1) + 1:s, kx:kx + s * (ow - 1) + 1:s], dm, axis=2)
            for ky in range(k) for kx in range(k)}


def ref_dw_forward(xs, wt, dm, s, pt, pl, oh, ow):
    k = wt.shape[0]
    return sum(patch * wt[ky, kx] for (ky, kx), patch in dw_patches(xs, dm, k, s, pt, pl, oh, ow).items())


def ref_dw_grad_input(g, wt, dm, s, pt, pl, h, w):
    k, oh, ow = wt.shape[0], g.shape[0], g.shape[1]
    (_, pb), (_, pr) = padded_extent(h, oh, k, s, pt), padded_extent(w, ow, k, s, pl)
    cin = wt.shape[2] // dm
    gin = np.zeros((h + pt + pb, w + pl + pr, cin))
    for ky in range(k):
        for kx in range(k):
            contrib = (g.astype(np.float64) * wt[ky, kx]).reshape(oh, ow, cin, dm).sum(axis=3)
            gin[ky:ky + s * (oh - 1) + 1:s, kx:kx + s * (ow - 1) + 1:s] += contrib
    return gin[pt:pt + h, pl:pl + w]


def ref_dw_grad_weight(g, xs, dm, k, s, pt, pl):
    oh, ow = g.shape[:2]
    gw = np.zeros((k, k, g.shape[2]))
    for (ky, kx), patch in dw_patches(xs, dm, k, s, pt, pl, oh, ow).items():
        gw[ky, kx] = np.einsum("yxc,yxc->c", g.astype(np.float64), patch)
    return gw


@pytest.mark.parametrize("case", range(len(DW_CASES)))
def test_depthwise_grad_input(lib, case):
    p, _, wt, g, _, (h, w, cin, dm, _, s, oh, ow, pt, pl, _) = make_dw_case(case, 300 + case)
    ref = ref_dw_grad_input(g, wt, dm, s, pt, pl, h, w)
    xr = np.random.default_rng(97).standard_normal((h, w, cin))
    assert np.isclose(np.sum(ref_dw_forward(xr, wt, dm, s, pt, pl, oh, ow) * g), np.sum(xr * ref))
    row = np.zeros(w * cin, np.int32)
    for iy in range(h):
        lib.ta_dwconv_grad_input_row_s32(C.byref(p), ptr(g, P8), iy, ptr(row, P32))
        assert row.tolist() == ref[iy].reshape(-1).astype(np.int64).tolist()
    gin = np.zeros((h, w, cin), np.int8)
    shift = lib.ta_dwconv_grad_input_s8(C.byref(p), ptr(g, P8), ptr(gin, P8), ptr(row, P32))
    assert shift == ref_shift(np.abs(ref).max()) and shift > 0
    assert gin.tolist() == round_shift(ref, shift).astype(np.int64).tolist()
    assert np.abs(gin * 2.0 ** shift - ref).max() <= 2.0 ** shift / 2


@pytest.mark.parametrize("case", range(len(DW_CASES)))
def test_depthwise_grad_weight_and_update(lib, case):
    p, x, wt, g, bias, (_, _, cin, dm, k, s, oh, ow, pt, pl, zp) = make_dw_case(case, 400 + case)
    xs = x.astype(np.float64) - zp
    ref = ref_dw_grad_weight(g, xs, dm, k, s, pt, pl)
    wr = np.random.default_rng(96).standard_normal(wt.shape)
    assert np.isclose(np.sum(ref_dw_forward(xs, wr, dm, s, pt, pl, oh, ow) * g), np.sum(wr * ref))
    grad = np.zeros(k * k, np.int32)
    for co in range(cin * dm):
        lib.ta_dwconv_grad_weight_channel_s32(C.byref(p), ptr(g, P8), ptr(x, P8), co, ptr(grad, P32))
        assert grad.tolist() == ref[:, :, co].reshape(-1).astype(np.int64).tolist()
    check_fused_update(lib, p, x, wt, bias, g, ref.transpose(2, 0, 1), case, update="ta_dwconv_backward_update",
                       layout=lambda a: a.transpose(2, 0, 1))
