"""Randomized single-op int8 models (built with tinyarena.builder) covering every kernel and option.

`make_case(family, i)` returns (model_bytes, mode) for case number i of a family; the case is
fully determined by (family, i). Shapes are small so that hundreds of cases run in seconds.
Input quantization is random with edge zero points (-128, 127) in the mix; inputs are drawn
over the full int8 range, so saturation paths are hit. `mode` selects an addressing variant
for the kernel call (row stripes, strided output, in-place) -- see runner.run_op.
"""

import sys
import types
import zlib
from pathlib import Path

import numpy as np

try:
    from tinyarena import builder

    builder.ModelBuilder  # noqa: B018 -- an empty namespace package has no ModelBuilder
except (ImportError, AttributeError):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python" / "tinyarena"))
    import builder

    sys.modules.setdefault("tinyarena", types.ModuleType("tinyarena")).builder = builder
    sys.modules["tinyarena.builder"] = builder

ACTS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]

# family -> number of cases (>= 500 in total)
FAMILIES = {
    "conv2d": 110,
    "depthwise_conv2d": 112,
    "fully_connected": 50,
    "average_pool2d": 25,
    "max_pool2d": 25,
    "add": 35,
    "mul": 30,
    "softmax": 20,
    "log_softmax": 15,
    "logistic": 10,
    "tanh": 10,
    "hard_swish": 15,
    "relu": 8,
    "relu6": 8,
    "quantize_f32": 10,
    "requantize": 10,
    "dequantize": 8,
    "mean": 25,
    "pad": 15,
    "concatenation": 15,
    "transpose": 15,
    "strided_slice": 25,
    "split": 10,
    "resize_nearest_neighbor": 20,
    "sub": 24,
    "squared_difference": 20,
    "leaky_relu": 16,
    "split_v": 12,
    "gather": 16,
    "pack": 12,
    "unpack": 12,
    "shape_fill": 8,
    "tile": 16,
    "float_binary": 24,
    "lstm": 20,
    "binary_broadcast": 40,
    "binary_large": 20,
}

# Families the ctypes runner (runner.run_op, kernel_params.py) does not derive params for; they
# run through the whole pipeline only (tests/codegen/test_codegen_single_ops.py, C++ params).
PIPELINE_ONLY = {"sub", "squared_difference", "leaky_relu", "split_v", "gather", "pack", "unpack", "shape_fill",
                 "tile", "float_binary", "lstm"}

MODES = [{}, {"stripes": 3}, {"out_pix_pad": 5}, {"inplace": True}]


def _qparams(rng):
    scale = float(10 ** rng.uniform(-2.5, -0.3))
    zp = int(rng.choice([-128, 127, 0, int(rng.integers(-128, 128))]))
    return scale, zp


def _input(mb, rng, shape):
    scale, zp = _qparams(rng)
    return mb.input(list(shape), scale=scale, zero_point=zp)


def _fast_path_shapes(rng, pattern, large=False):
    """(a, b) shapes of the elementwise kernels' fast paths, by pattern: equal [1, H, W, C]; the map
    against a [1, 1, 1, C] vector; a [C] vector against the map; the map against a scalar [1]; the
    map against [1, H, W, 1]. C is odd half of the time. `large`: at least 1,024 outputs (MUL's
    chunks of 256 pairs, ADD's table over many runs)."""
    r = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    c = r(8, 24) * 2 - (rng.random() < 0.5) if large else r(1, 12) * 2 - (rng.random() < 0.5)
    m = [1, r(8, 14), r(8, 14), c] if large else [1, r(1, 6), r(1, 6), c]
    return [(m, m), (m, [1, 1, 1, c]), ([c], m), (m, [1]), (m, [1, m[1], m[2], 1])][pattern]


def _window_ok(size, k, s, d, padding):
    eff = (k - 1) * d + 1
    return padding == "SAME" or size >= eff


def _float_binary(mb, rng, i, a_shape, b_shape, act):
    """Float32 ADD / SUB / MUL (by i % 3) of a DEQUANTIZEd int8 input and a float input or another
    DEQUANTIZEd one, the odd cases QUANTIZEd after (litert-torch's residual ADDs); the
    even ones output the float result, with every fused activation over i = 0, 2, 4, 6."""
    def dequantized(shape):  # values about +-10: every activation's bounds are crossed
        x = mb.input(list(shape), scale=float(10 ** rng.uniform(-2.0, -1.2)), zero_point=int(rng.integers(-20, 21)))
        return mb.dequantize(x)

    b = dequantized(b_shape) if rng.random() < 0.5 else mb.input(list(b_shape), dtype="float32")
    y = getattr(mb, ["add", "sub", "mul"][i % 3])(dequantized(a_shape), b, activation=act)
    return mb.quantize(y) if i % 2 else y


def make_case(family: str, i: int):
    rng = np.random.default_rng([zlib.crc32(family.encode()), i])
    mb = builder.ModelBuilder(f"{family}_{i}", seed=int(rng.integers(1 << 30)))
    mode = MODES[i % len(MODES)]
    r = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    act = ACTS[i % len(ACTS)]

    if family in ("conv2d", "depthwise_conv2d", "average_pool2d", "max_pool2d"):
        while True:
            h, w, c = r(1, 11), r(1, 11), r(1, 9)
            kh, kw = (r(1, 4), r(1, 4)) if family != "conv2d" or i % 5 else (1, 1)
            sh, sw = r(1, 3), r(1, 3)
            dh, dw = (r(1, 3), r(1, 3)) if family in ("conv2d", "depthwise_conv2d") and i % 3 == 0 else (1, 1)
            padding = "SAME" if i % 2 == 0 else "VALID"
            if _window_ok(h, kh, sh, dh, padding) and _window_ok(w, kw, sw, dw, padding):
                break
        if family == "depthwise_conv2d" and i % 7 == 1:
            kh, kw, sh, sw, dh, dw, padding = 3, 3, 1, 1, 1, 1, "SAME"  # the common MobileNet case
            h, w = max(h, 3), max(w, 3)
        if family == "depthwise_conv2d" and i % 7 == 4:  # MCUNet's 5x5 and 7x7, stride 1 or 2
            kh = kw = 5 if i % 14 == 4 else 7
            sh = sw = 1 + (i % 3 == 0)
            dh = dw = 1
            h, w = max(h, kh) + r(0, 6), max(w, kw) + r(0, 6)
        if family == "depthwise_conv2d" and i >= 100:  # 1-D kernels down a one-column map (str_ww): transposed planes
            kh, kw, sh, sw, dh, dw, padding = r(2, 15), 1, 1 + (i % 2), 1, 1, 1, "SAME" if i % 3 == 0 else "VALID"
            h, w, c = kh + r(0, 12), 1, r(1, 9)
        x = _input(mb, rng, (1 + (i % 11 == 5), h, w, c))
        if family == "conv2d":
            y = mb.conv2d(x, r(1, 10), kernel=(kh, kw), stride=(sh, sw), padding=padding, dilation=(dh, dw),
                          activation=act)
        elif family == "depthwise_conv2d":
            y = mb.depthwise_conv2d(x, kernel=(kh, kw), stride=(sh, sw), padding=padding,
                                    depth_multiplier=1 if i % 4 == 3 else r(1, 3), dilation=(dh, dw), activation=act)
        elif family == "average_pool2d":
            y = mb.average_pool2d(x, pool=(kh, kw), stride=(sh, sw), padding=padding, activation=act)
        else:
            y = mb.max_pool2d(x, pool=(kh, kw), stride=(sh, sw), padding=padding, activation=act)
    elif family == "fully_connected":
        rank = r(2, 4)
        shape = [r(1, 3)] + [r(1, 6) for _ in range(rank - 1)]
        x = _input(mb, rng, shape)
        y = mb.fully_connected(x, r(1, 20), activation=act, keep_num_dims=bool(i % 3 == 1), per_channel=bool(i % 2))
    elif family in ("add", "mul", "sub", "squared_difference", "float_binary"):
        rank = r(1, 4)
        out = [r(1, 5) for _ in range(rank)]
        a_shape = [d if rng.random() < 0.7 else 1 for d in out]
        b_shape = [d if rng.random() < 0.7 else 1 for d in out][r(0, rank - 1):]
        if i % 4 == 0:
            a_shape, b_shape = out, out
        if family in ("sub", "squared_difference") and i % 3 == 1:
            a_shape, b_shape = _fast_path_shapes(rng, i // 3 % 5)
        if family == "float_binary":
            y = _float_binary(mb, rng, i, a_shape, b_shape or [1], ACTS[i // 2 % len(ACTS)])
        elif family == "squared_difference":
            y = mb.squared_difference(_input(mb, rng, a_shape), _input(mb, rng, b_shape or [1]))
        else:
            y = getattr(mb, family)(_input(mb, rng, a_shape), _input(mb, rng, b_shape or [1]), activation=act)
    elif family == "binary_broadcast":
        # ADD and MUL on the fast paths' shapes, every pattern in every mode (in place: i % 4 == 3)
        a_shape, b_shape = _fast_path_shapes(rng, i // 8 % 5)
        op = mb.add if i // 4 % 2 == 0 else mb.mul
        y = op(_input(mb, rng, a_shape), _input(mb, rng, b_shape), activation=ACTS[(i // 2 + i // 4) % len(ACTS)])
    elif family == "binary_large":
        # the same on maps of 1,024 outputs and more, each pattern with every activation
        a_shape, b_shape = _fast_path_shapes(rng, i // 4 % 5, large=True)
        op = mb.add if (i + i // 4) % 2 == 0 else mb.mul
        y = op(_input(mb, rng, a_shape), _input(mb, rng, b_shape), activation=ACTS[(i // 2) % len(ACTS)])
    elif family in ("softmax", "log_softmax"):
        shape = [r(1, 3), r(1, 40)] if i % 2 else [1, r(1, 4), r(1, 4), r(1, 12)]
        x = _input(mb, rng, shape)
        y = mb.softmax(x, beta=float(rng.choice([1.0, 0.5, 2.0, 0.1]))) if family == "softmax" else mb.log_softmax(x)
    elif family in ("logistic", "tanh", "hard_swish", "relu", "relu6"):
        x = _input(mb, rng, [1, r(1, 6), r(1, 6), r(1, 8)])
        y = getattr(mb, family)(x)
    elif family == "quantize_f32":
        x = mb.input([1, r(1, 5), r(1, 9)], dtype="float32")
        scale, zp = _qparams(rng)
        y = mb.quantize(x, scale, zp) if i % 2 else mb.quantize(x)
    elif family == "requantize":
        x = _input(mb, rng, [1, r(1, 5), r(1, 9)])
        scale, zp = _qparams(rng)
        y = mb.quantize(x, scale, zp)
    elif family == "dequantize":
        x = _input(mb, rng, [1, r(1, 5), r(1, 9)])
        y = mb.dequantize(x)
    elif family == "mean":
        rank = r(2, 4)
        shape = [r(1, 6) for _ in range(rank)]
        axes = sorted(set(int(a) for a in rng.choice(rank, size=r(1, rank), replace=True)))
        if i % 3 == 0 and rank == 4:
            axes = [1, 2]
        x = _input(mb, rng, shape)
        y = mb.mean(x, axes, keep_dims=bool(i % 2))
    elif family == "pad":
        rank = r(1, 4)
        x = _input(mb, rng, [r(1, 5) for _ in range(rank)])
        y = mb.pad(x, [[r(0, 2), r(0, 2)] for _ in range(rank)])
    elif family == "concatenation":
        rank = r(1, 4)
        base = [r(1, 4) for _ in range(rank)]
        axis = r(0, rank - 1)
        xs = []
        same = i % 2 == 0
        scale, zp = _qparams(rng)
        for _ in range(r(2, 4)):
            s = list(base)
            s[axis] = r(1, 4)
            xs.append(mb.input(s, scale=scale, zero_point=zp) if same else _input(mb, rng, s))
        y = mb.concatenation(xs, axis=axis if i % 3 else axis - rank)
    elif family == "transpose":
        rank = r(2, 5)
        x = _input(mb, rng, [r(1, 4) for _ in range(rank)])
        y = mb.transpose(x, [int(v) for v in rng.permutation(rank)])
    elif family == "strided_slice":
        rank = r(1, 4)
        shape = [r(1, 7) for _ in range(rank)]
        x = _input(mb, rng, shape)
        while True:
            begin, end, strides = [], [], []
            bm = em = sm = 0
            for a, d in enumerate(shape):
                st = int(rng.choice([1, 1, 2, 3, -1, -2]))
                begin.append(r(-d, d - 1))
                end.append(r(-d - 1, d + 1))
                strides.append(st)
                if rng.random() < 0.2:
                    bm |= 1 << a
                if rng.random() < 0.2:
                    em |= 1 << a
                if rng.random() < 0.15 and rank > 1:
                    sm |= 1 << a
                    strides[-1] = 1  # TFLite leaves the output unwritten for a shrunk axis with stride < 0
            try:
                y = mb.strided_slice(x, begin, end, strides, begin_mask=bm, end_mask=em, shrink_axis_mask=sm)
                break
            except ValueError:
                continue
    elif family == "split":
        rank = r(1, 4)
        shape = [r(1, 4) for _ in range(rank)]
        axis = r(0, rank - 1)
        n = r(1, 3)
        shape[axis] *= n
        x = _input(mb, rng, shape)
        y = mb.split(x, n, axis)
    elif family == "leaky_relu":
        x = _input(mb, rng, [1, r(1, 6), r(1, 6), r(1, 8)])
        y = mb.leaky_relu(x, alpha=float(rng.choice([0.0, 0.01, 0.2, 0.3, 1.5, float(rng.uniform(0, 2))])))
    elif family == "split_v":
        rank = r(1, 4)
        shape = [r(1, 4) for _ in range(rank)]
        axis = r(0, rank - 1)
        sizes = [r(1, 4) for _ in range(r(1, 4))]
        shape[axis] = sum(sizes)
        if i % 3 == 1:
            sizes[r(0, len(sizes) - 1)] = -1
        y = mb.split_v(_input(mb, rng, shape), sizes, axis - rank if i % 2 else axis)
    elif family == "gather":
        rank = r(1, 4)
        shape = [r(1, 5) for _ in range(rank)]
        axis = r(0, rank - 1)
        indices = rng.integers(0, shape[axis], size=[r(1, 4) for _ in range(r(0, 2))])
        y = mb.gather(_input(mb, rng, shape), indices, axis - rank if i % 2 else axis)
    elif family == "pack":
        shape = [r(1, 4) for _ in range(r(1, 4))]
        scale, zp = _qparams(rng)
        xs = [mb.input(shape, scale=scale, zero_point=zp) for _ in range(r(1, 4))]
        y = mb.pack(xs, axis=r(-len(shape) - 1, len(shape)))
    elif family == "unpack":
        shape = [r(1, 4) for _ in range(r(2, 4))]
        y = mb.unpack(_input(mb, rng, shape), axis=r(-len(shape), len(shape) - 1))
    elif family == "shape_fill":
        # x + FILL(SHAPE(x), c): the SHAPE and FILL fold into a constant before planning.
        x = _input(mb, rng, [r(1, 3), r(1, 5), r(1, 6)])
        scale, zp = _qparams(rng)
        y = mb.add(x, mb.fill(mb.shape(x), int(rng.integers(-128, 128)), scale, zp), activation=act)
    elif family == "tile":
        if i % 4 == 0:  # Keras 3 UpSampling2D: EXPAND_DIMS, TILE along the new axis, RESHAPE
            n, h, w, c, k = r(1, 2), r(1, 5), r(1, 5), r(1, 6), r(2, 3)
            expanded = mb.expand_dims(_input(mb, rng, [n, h, w, c]), 2)
            y = mb.reshape(mb.tile(expanded, [1, 1, k, 1, 1]), [n, h * k, w, c])
        else:
            rank = r(1, 6)
            shape = [r(1, 4) for _ in range(rank)]
            y = mb.tile(_input(mb, rng, shape), [r(1, 3) if rng.random() < 0.6 else 1 for _ in range(rank)])
    elif family == "resize_nearest_neighbor":
        x = _input(mb, rng, [1 + (i % 5 == 0), r(1, 6), r(1, 6), r(1, 4)])
        flags = [(False, False), (True, False), (False, True)][i % 3]
        y = mb.resize_nearest_neighbor(x, (r(1, 13), r(1, 13)), align_corners=flags[0], half_pixel_centers=flags[1])
    elif family == "lstm":
        # Hidden sizes 8/16/32, with and without cell clip, batch 2 and time-major now and then,
        # cell scales 2^-15 .. 2^-11, CIFG (input gate 1 - forget gate); every third case keeps
        # only the last step (a STRIDED_SLICE the zero_copy transform folds into the LSTM).
        units, steps, batch = [8, 16, 32][i % 3], r(1, 8), 1 + (i % 4 == 3)
        time_major = i % 5 == 4
        x = _input(mb, rng, (steps, batch, r(1, 10)) if time_major else (batch, steps, r(1, 10)))
        clip = float(rng.uniform(0.3, 3.0)) if i % 2 else 0.0
        y = mb.lstm(x, units, cell_clip=clip, time_major=time_major,
                    cell_scale_log2=None if i % 4 else -int(rng.integers(11, 16)), cifg=i % 7 == 6)
        if i % 3 == 2 and batch == 1 and not time_major:
            y = mb.strided_slice(y, [0, -1, 0], [1, steps, units], shrink_axis_mask=2)
    else:
        raise KeyError(family)
    mb.output(*(y if isinstance(y, list) else [y]))
    return mb.build(), mode


def all_cases(families=None):
    """(family, i) of every case, or of the families named in ``families``."""
    return [(f, i) for f, n in FAMILIES.items() for i in range(n) if families is None or f in families]
