"""Randomized single-op models through the whole pipeline on the host: plan -> compile ->
make -> run -> compare every output byte with TFLite's reference kernels.

The cases are the kernel tests' (tests/kernels/single_op_cases.py: every op and option --
strides, SAME/VALID, dilation, depth multipliers, fused activations, odd channel counts,
batch 2, broadcasting, zero points -128/127, per-tensor and per-channel weights). Each case
runs in one of four variants, cycling with the case number: in-place planning on or off,
times the portable kernels (int8 weights) or the SIMD-structured kernels on packed int16
weights (-DTA_SIMD_EMULATE). Programs are built with -O0, the fastest to compile (the shared
models' tests run the generated -O2 builds). The float32 ADD / SUB / MUL cases also run on
Cortex-M4 under QEMU (its FPU, the generated -O2 build).
"""

import numpy as np
import pytest

from single_op_cases import all_cases, make_case
from tinyarena import builder
from tinyarena.builder import opcodes, options
from tinyarena.builder.flatbuffer_writer import Field
from tinyarena.builder.graph import OptionsTable
from tinyarena.builder.schema_enums import BuiltinOptions
from tinyarena.reader import load_model
from tinyarena.verify import verify

CASES = all_cases()
# (in place, extra C flags), by case number modulo 4
VARIANTS = [(True, ""), (False, "-DTA_SIMD_EMULATE"), (True, "-DTA_SIMD_EMULATE"), (False, "")]


def check(model, seed, variant):
    inplace, cflags = VARIANTS[variant % len(VARIANTS)]
    result = verify(model, target="host", inplace=inplace, seed=seed, cflags=cflags, opt="-O0")
    assert result.bit_exact, f"{result.summary()} (inplace={inplace}, cflags={cflags!r})"


@pytest.mark.parametrize("family,i", CASES, ids=[f"{f}-{i}" for f, i in CASES])
def test_single_op_model_is_bit_exact(family, i):
    model, _ = make_case(family, i)
    check(model, i, i)


# hidden 8 (cell scale 2^-11..2^-15), 16 with cell clip, 8 with batch 2 and clip, 32 keeping the last
# step, 8 CIFG
@pytest.mark.qemu
@pytest.mark.slow
@pytest.mark.parametrize("i", [0, 1, 3, 5, 6])
def test_lstm_is_bit_exact_on_cortex_m4(i, tmp_path):
    model, _ = make_case("lstm", i)
    result = verify(model, target="cortex-m4", seed=i, work_dir=tmp_path)
    assert result.bit_exact, result.summary()


# The elementwise fast paths with the real SMMLAR / SSAT (M4) and on the portable build (M3): ADD of
# equal shapes, ADD / MUL of a map and a [1, 1, 1, C] vector (in2) or a [C] vector (in1), with and
# without an activation; SUB (input2's multiplier negated) and SQUARED_DIFFERENCE on those shapes
@pytest.mark.qemu
@pytest.mark.slow
@pytest.mark.parametrize("target,family,i", [("cortex-m4", "binary_broadcast", 0), ("cortex-m4", "binary_broadcast", 10),
                                             ("cortex-m4", "binary_broadcast", 12), ("cortex-m4", "binary_broadcast", 16),
                                             ("cortex-m4", "binary_broadcast", 22), ("cortex-m3", "binary_broadcast", 6),
                                             ("cortex-m3", "binary_broadcast", 13), ("cortex-m4", "sub", 4),
                                             ("cortex-m3", "squared_difference", 1)])
def test_elementwise_fast_paths_on_cortex_m(target, family, i, tmp_path):
    model, _ = make_case(family, i)
    result = verify(model, target=target, seed=i, work_dir=tmp_path)
    assert result.bit_exact, result.summary()


def _one_dimensional_depthwise(kernel, shape, stride, padding, dilation, activation, seed):
    mb = builder.ModelBuilder("dw_1d", seed=seed)
    x = mb.input(shape, scale=0.02 + 0.01 * seed, zero_point=[-128, 127, 3, -9][seed % 4])
    mb.output(mb.depthwise_conv2d(x, kernel=kernel, stride=stride, padding=padding, dilation=dilation,
                                  activation=activation))
    return mb.build()


# One-dimensional depthwise kernels (K x 1 down a column, 1 x K along a row: Conv1D exports,
# str_ww_ref_model) take the DSP build's channel-parallel path (depthwise_channels.c) in place and
# out of place: channel counts off a multiple of 4 (the last group overlaps the one before), SAME
# padding (taps reading the zero point), strides, dilation, a 2-D map, clamping activations.
@pytest.mark.qemu
@pytest.mark.parametrize("inplace", [True, False])
@pytest.mark.parametrize("seed,kernel,shape,stride,padding,dilation,activation", [
    (0, (5, 1), [1, 28, 1, 128], (1, 1), "VALID", (1, 1), "NONE"),
    (1, (15, 1), [1, 15, 1, 20], (1, 1), "VALID", (1, 1), "NONE"),
    (2, (3, 1), [1, 33, 1, 21], (2, 1), "SAME", (1, 1), "RELU"),
    (3, (1, 7), [1, 1, 40, 7], (1, 1), "SAME", (1, 1), "NONE"),
    (4, (3, 1), [1, 30, 1, 16], (1, 1), "SAME", (2, 1), "RELU6"),
    (5, (1, 5), [1, 6, 10, 4], (2, 2), "SAME", (1, 1), "NONE"),
    (6, (16, 1), [1, 20, 1, 9], (1, 1), "VALID", (1, 1), "NONE"),
])  # fmt: skip
def test_one_dimensional_depthwise_is_bit_exact_on_cortex_m4(seed, kernel, shape, stride, padding, dilation,
                                                              activation, inplace, tmp_path):
    model = _one_dimensional_depthwise(kernel, shape, stride, padding, dilation, activation, seed)
    result = verify(model, target="cortex-m4", inplace=inplace, seed=seed, work_dir=tmp_path)
    assert result.bit_exact, result.summary()


def test_case_count_and_coverage():
    assert len(CASES) >= 500
    assert {f for f, _ in CASES} >= {"conv2d", "depthwise_conv2d", "fully_connected", "add", "mul", "mean", "pad",
                                     "concatenation", "split", "transpose", "strided_slice", "resize_nearest_neighbor",
                                     "logistic", "tanh", "hard_swish", "relu", "relu6", "quantize_f32", "requantize",
                                     "dequantize", "sub", "squared_difference", "leaky_relu", "split_v", "gather",
                                     "pack", "unpack", "shape_fill", "tile", "float_binary", "lstm"}


@pytest.mark.qemu
@pytest.mark.parametrize("i", range(6))
def test_float_binary_is_bit_exact_on_cortex_m4(i):
    # ADD, SUB, MUL on the M4's single-precision FPU (hard-float ABI, no fused multiply-adds),
    # each with a float output and QUANTIZEd (cases i and i + 3 differ in parity).
    model, _ = make_case("float_binary", i)
    result = verify(model, target="cortex-m4", seed=i)
    assert result.bit_exact, result.summary()


@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_relu_n1_to_1(monkeypatch, variant):
    # The builder has no RELU_N1_TO_1 layer: declare the builtin (code 20) and emit it as a unary op.
    monkeypatch.setitem(opcodes.OPCODES, "RELU_N1_TO_1", opcodes.OpCode(20, 1))
    rng = np.random.default_rng(variant)
    mb = builder.ModelBuilder("relu_n1_to_1", seed=variant)
    x = mb.input([1, 3, 4, 5], scale=float(rng.uniform(0.005, 0.05)), zero_point=[-128, 127, 0, 9][variant])
    mb.output(mb._unary("RELU_N1_TO_1", "relu_n1_to_1", x, lambda v: np.clip(v, -1.0, 1.0)))
    check(mb.build(), variant, variant)


def _int32_op(mb, op, inputs, value, options=None):
    """An int32 op of builder tensors/constants whose (static) value is ``value``."""
    out = mb._new_tensor(mb._scope(op.lower()), np.asarray(value, np.float32), dtype="int32")
    mb._emit(op, inputs, [out], options)
    return out


def unrolled_lstm(seed, steps=3, features=5, units=4):
    """A Keras-style unrolled LSTM layer: the zero state made by SHAPE -> STRIDED_SLICE -> PACK
    -> FILL (what the converter writes for a dynamic batch), UNPACK over time, per step two
    FULLY_CONNECTED, ADD, SPLIT into gates, LOGISTIC / TANH, MUL, ADD; the outputs PACKed."""
    rng = np.random.default_rng(seed)
    mb = builder.ModelBuilder(f"unrolled_lstm_{seed}", seed=seed)
    x = mb.input([1, steps, features], scale=float(rng.uniform(0.01, 0.05)), zero_point=int(rng.integers(-20, 20)))
    batch = _int32_op(mb, "STRIDED_SLICE", [_int32_op(mb, "SHAPE", [x], [1, steps, features],
                                                      options.shape_options(2)),
                                            mb._int32_constant("begin", [0]), mb._int32_constant("end", [1]),
                                            mb._int32_constant("strides", [1])],
                      1, options.strided_slice_options(0, 0, 1))
    dims = _int32_op(mb, "PACK", [batch, mb._int32_constant("units", [units], shape=())], [1, units],
                     options.pack_options(2, 0))
    h = mb.fill(dims, 0, 1.0 / 128, 0)
    c = mb.fill(dims, 0, 1.0 / 128, 0)
    outs = []
    for x_t in mb.unpack(x, axis=1):
        z = mb.add(mb.fully_connected(x_t, 4 * units), mb.fully_connected(h, 4 * units))
        i, f, g, o = mb.split(z, 4, axis=1)
        c = mb.add(mb.mul(mb.logistic(f), c), mb.mul(mb.logistic(i), mb.tanh(g)))
        h = mb.mul(mb.logistic(o), mb.tanh(c))
        outs.append(h)
    mb.output(mb.pack(outs, axis=1))
    return mb.build()


@pytest.mark.parametrize("seed", range(3))
def test_unrolled_lstm_folds_its_shape_ops_and_is_bit_exact(seed):
    model = unrolled_lstm(seed)
    ops = {op.type for op in load_model(model).ops}
    assert not ops & {"SHAPE", "STRIDED_SLICE", "FILL"}, ops  # folded into constants by the reader
    assert ops >= {"UNPACK", "FULLY_CONNECTED", "ADD", "SPLIT", "LOGISTIC", "TANH", "MUL", "PACK"}
    check(model, seed, seed)


def test_op_support_table_names_every_family_and_reports_what_cannot_compile(monkeypatch):
    from tinyarena import codegen

    supported = set(codegen.supported_op_types())
    assert supported >= {"SUB", "SQUARED_DIFFERENCE", "LEAKY_RELU", "SPLIT_V", "GATHER", "PACK", "UNPACK", "RESHAPE",
                         "TILE"}
    for family in {f for f, _ in CASES}:
        assert codegen.unsupported_ops(make_case(family, 0)[0]) == {}, family
    # ABS (code 101) has no kernel; GATHER has one, but not for batch_dims 1.
    monkeypatch.setitem(opcodes.OPCODES, "ABS", opcodes.OpCode(101, 1))
    mb = builder.ModelBuilder("abs", seed=0)
    mb.output(mb._unary("ABS", "abs", mb.input([1, 4]), np.abs))
    assert codegen.unsupported_ops(mb.build()) == {0: "op 0 (ABS) has no kernel in tinyarena's library"}
    mb = builder.ModelBuilder("gather_batch_dims", seed=0)
    x = mb.input([2, 3])
    out = mb._new_tensor("out", np.zeros((2, 1)), qparams=(x.scale, x.zero_point))
    batch_dims_1 = OptionsTable(BuiltinOptions.GatherOptions, (Field(0, "int32", 1), Field(1, "int32", 1)))
    mb._emit("GATHER", [x, mb._int32_constant("indices", [[0], [2]])], [out], batch_dims_1)
    mb.output(out)
    assert codegen.unsupported_ops(mb.build()) == {0: "op 0 (GATHER): batch_dims other than 0 is not supported"}
