"""No model compiles into undefined behaviour: the weight layers' int32 accumulators are proven
in range at compile time (worst case per output channel, from weights, bias and any int8 input),
requantization scales the kernels cannot shift are refused, and the requantization of a value
near the int32 limits (output offset added, double rescaling, float input) is defined."""

import shutil
import subprocess

import numpy as np
import pytest

import tinyarena
from real_models import REAL_MODEL_NAMES, real_model
from tinyarena import builder, cli
from tinyarena.codegen import compile as compile_model
from tinyarena.codegen import kernel_library_dir, lower

MODEL = "pretrainedResnet_quant"


def weight_layer(plan, op_type):
    """The first op of `op_type` in the planned graph and its bias tensor."""
    graph = plan.graph
    op = next(op for op in graph.ops if op.type == op_type)
    return op, graph.tensors[op.inputs[2]]


def patched(model_bytes, old, new):
    """The model with the one occurrence of the bytes `old` replaced by `new`."""
    assert model_bytes.count(old) == 1, "the patched bytes must be unique in the file"
    return model_bytes.replace(old, new)


def with_bias(channel, value):
    """pretrainedResnet_quant with bias `channel` of its first CONV_2D set to `value`; its op index."""
    data = real_model(MODEL).read_bytes()
    op, bias = weight_layer(tinyarena.plan(data), "CONV_2D")
    values = np.array(bias.data, dtype="<i4")
    changed = values.copy()
    changed[channel] = value
    return patched(data, values.tobytes(), changed.tobytes()), op.index


@pytest.mark.parametrize("channel", [0, 5])
def test_int32_min_bias_is_refused_naming_op_and_channel(channel, tmp_path):
    model, op_index = with_bias(channel, np.iinfo(np.int32).min)
    with pytest.raises(tinyarena.UnsupportedError,
                       match=rf"^op {op_index} \(CONV_2D\): the int32 accumulator of output channel {channel} "
                             r"can reach -\d+ .*below the int32 range$"):
        compile_model(tinyarena.plan(model), tmp_path)
    assert not (tmp_path / "model.c").exists()


def test_a_bias_at_the_edge_compiles_and_one_past_it_does_not(tmp_path):
    """The proof is tight: the worst case of channel 0 reaches exactly INT32_MIN with the bias
    moved down to the edge, and one below is refused."""
    data = real_model(MODEL).read_bytes()
    plan = tinyarena.plan(data)
    op, bias = weight_layer(plan, "CONV_2D")
    weights = np.array(plan.graph.tensors[op.inputs[1]].data, dtype=np.int64)[0].ravel()
    x_lo, x_hi = -128 - plan.graph.tensors[op.inputs[0]].zero_point[0], 127 - plan.graph.tensors[op.inputs[0]].zero_point[0]
    negative = np.minimum(np.minimum(x_lo * weights, x_hi * weights), 0).sum()
    edge = int(np.iinfo(np.int32).min - negative)
    for value, ok in ((edge, True), (edge - 1, False)):
        model, _ = with_bias(0, value)
        if ok:
            lower(tinyarena.plan(model))
        else:
            with pytest.raises(tinyarena.UnsupportedError, match="output channel 0"):
                lower(tinyarena.plan(model))


def float_relu_model():
    """A model the kernel library cannot run (a float32 RELU): the CLI's other unsupported case."""
    mb = builder.ModelBuilder("float_relu")
    x = mb.input([1, 4], dtype="float32")
    y = mb._new_tensor("relu", np.zeros([1, 4]), dtype="float32")
    mb._emit("RELU", [x], [y])
    mb.output(mb.quantize(y, 0.01, 0))
    return mb.build()


def test_cli_refuses_in_one_line_like_any_unsupported_model(tmp_path, capsys):
    model, op_index = with_bias(3, np.iinfo(np.int32).min)
    overflow, other = tmp_path / "overflow.tflite", tmp_path / "float_relu.tflite"
    overflow.write_bytes(model)
    other.write_bytes(float_relu_model())
    unsupported_status = cli.main(["compile", str(other), "-o", str(tmp_path / "other")])
    assert unsupported_status != 0
    capsys.readouterr()
    for command in (["compile", str(overflow), "-o", str(tmp_path / "c")], ["verify", str(overflow)]):
        status = cli.main(command)
        err = capsys.readouterr().err
        assert status == unsupported_status, command
        assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
        assert f"op {op_index} (CONV_2D)" in err and "output channel 3" in err, err
    assert not (tmp_path / "c" / "model.c").exists()


@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
def test_real_models_pass_the_proof(name):
    program = lower(tinyarena.plan(real_model(name)))  # raises on any refusal
    weight_ops = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"}
    assert any(call.op_type in weight_ops for call in program.calls)


@pytest.mark.parametrize("scale,why", [
    (1e-30, r"is \d\.\d+e\+\d+, at least 2\^30: too large for the kernel's fixed-point shift"),
    (0.0, r"is inf; it must be finite and not negative"),
    (-0.5, r"is -\d.*; it must be finite and not negative"),
])
def test_a_requantization_scale_the_kernel_cannot_apply_is_refused(scale, why, tmp_path):
    """The first conv's output scale changed: in*w/out >= 2^30 would shift by more than the
    fixed-point kernels can (TFLite assumes shift <= 30); 0 or negative gives no multiplier."""
    data = real_model(MODEL).read_bytes()
    plan = tinyarena.plan(data)
    op, _ = weight_layer(plan, "CONV_2D")
    old = np.float32(plan.graph.tensors[op.outputs[0]].scale[0])
    model = patched(data, old.tobytes(), np.float32(scale).tobytes())
    with pytest.raises(tinyarena.UnsupportedError, match=rf"^op {op.index} \(CONV_2D\): the output multiplier .*{why}"):
        compile_model(tinyarena.plan(model), tmp_path)


def test_an_int8_zero_point_outside_int8_is_refused(tmp_path):
    """The kernels add zero points to int8 values in int32; TFLite keeps them in [-128, 127]."""
    mb = builder.ModelBuilder("zero_point")
    x = mb.input([1, 4, 4, 3], scale=0.02, zero_point=-77)
    mb.output(mb.conv2d(x, 4, kernel=1))
    model = patched(mb.build(), np.int64(-77).tobytes(), np.int64(300).tobytes())
    with pytest.raises(tinyarena.UnsupportedError,
                       match=r"op 0 \(CONV_2D\): zero point 300 of the input is outside the int8 range"):
        compile_model(tinyarena.plan(model), tmp_path)


UB_PROGRAM = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include "tinyarena_kernels.h"

int main(void) {
  /* a requantized accumulator near INT32_MAX plus output offset 127: clamps, no overflow */
  const int8_t r = ta_requant_acc(INT32_MAX, INT32_MAX, 0, 127, -128, 127);
  const int8_t s = ta_requant_acc(INT32_MIN + 1, INT32_MAX, 0, -128, -128, 127);
  /* FULLY_CONNECTED's double rescaling of a product far outside int32 */
  static const int8_t weights[1] = {127};
  static const double scale[1] = {1e12};
  static const int8_t input[1] = {127};
  int8_t fc = 0, q[3];
  static const float big[3] = {3e38f, -3e38f, INFINITY};
  ta_fc_params p = {0};
  p.batches = 1, p.in_depth = 1, p.out_depth = 1, p.act_min = -128, p.act_max = 127, p.output_offset = 5;
  p.weights = weights, p.out_scale_f64 = scale;
  ta_fully_connected_s8(&p, input, &fc, NULL);
  /* QUANTIZE of floats far outside int32 */
  ta_quantize_f32_s8(big, q, 3, 0.5f, 3);
  printf("%d %d %d %d %d %d\n", r, s, fc, q[0], q[1], q[2]);
  return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_requantization_at_the_int32_limits_is_defined(tmp_path):
    """Under UBSan (any report aborts): the saturated values TFLite's arithmetic means."""
    library = kernel_library_dir()
    (tmp_path / "ub.c").write_text(UB_PROGRAM)
    sources = [str(library / "src" / f) for f in ("fully_connected.c", "activations.c")]
    subprocess.run(["gcc", "-std=c99", "-O1", "-fsanitize=undefined", "-fno-sanitize-recover=all",
                    "-I", str(library / "include"), str(tmp_path / "ub.c"), *sources, "-lm", "-o",
                    str(tmp_path / "ub")], check=True)
    run = subprocess.run([str(tmp_path / "ub")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["127", "-128", "127", "127", "-128", "127"]
