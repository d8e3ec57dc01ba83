"""Quantization is realistic: calibrated ranges fit, weights and biases follow the int8 spec."""

import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as schema
from builder_test_support import Interpreter, OpResolverType, random_inputs
from tinyarena import builder
from tinyarena.builder import quantize


def _all_int8_activations(model: bytes, seed: int):
    """Every int8 op output of ``model`` on one random input."""
    interpreter = Interpreter(
        model_content=model,
        experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
        experimental_preserve_all_tensors=True,
    )
    interpreter.allocate_tensors()
    for detail, value in zip(interpreter.get_input_details(), random_inputs(interpreter, seed)):
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    for op in interpreter._get_ops_details():
        for index in op["outputs"]:
            value = interpreter.get_tensor(index)
            if value.dtype == np.int8:
                yield op["op_name"], value


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_conv_outputs_neither_saturate_nor_collapse(seed, run_model):
    mb = builder.ModelBuilder(seed=seed)
    x = mb.input([1, 16, 16, 8])
    y = mb.conv2d(mb.conv2d(x, 16, activation="RELU"), 16, kernel=3)
    mb.output(y)
    (out,), _ = run_model(mb.build(), seed=100 + seed)  # not the calibration input
    saturated = np.mean((out == -128) | (out == 127))
    assert saturated < 0.02
    assert len(np.unique(out)) > 100


def test_deep_network_activations_stay_in_range():
    """In a 65-op MobileNetV2 no sizeable tensor saturates much or uses few levels."""
    model = builder.mobilenet_v2(0.35, 96, 10)
    checked = 0
    for op_name, value in _all_int8_activations(model, seed=5):
        if value.size < 512:
            continue
        checked += 1
        assert np.mean(value == 127) < 0.08, op_name
        if op_name in ("CONV_2D", "DEPTHWISE_CONV_2D", "ADD"):
            assert len(np.unique(value)) >= 64, op_name
            assert np.mean(value == -128) < 0.7, op_name
    assert checked > 50


def test_relu_outputs_use_minus_128_for_zero():
    mb = builder.ModelBuilder(seed=1)
    y = mb.conv2d(mb.input([1, 8, 8, 3]), 8, activation="RELU")
    assert y.zero_point == -128
    y6 = mb.conv2d(mb.input([1, 8, 8, 3]), 8, activation="RELU6")
    assert y6.zero_point == -128 and y6.scale <= 6 / 255 + 1e-7


def test_softmax_outputs_are_probabilities(run_model):
    mb = builder.ModelBuilder(seed=4)
    mb.output(mb.softmax(mb.fully_connected(mb.input([1, 32]), 10)))
    (out,), details = run_model(mb.build())
    scale, zero_point = details[0]["quantization"]
    assert (out.astype(float) - zero_point).sum() * scale == pytest.approx(1.0, abs=0.05)


def _tensor_quant(tensor):
    return np.array(tensor.quantization.scale), tensor.quantization.quantizedDimension


@pytest.mark.parametrize("layer, dim", [("conv2d", 0), ("depthwise_conv2d", 3), ("fully_connected", 0)])
def test_weights_are_per_channel_symmetric_and_bias_matches(layer, dim):
    mb = builder.ModelBuilder(seed=2)
    x = mb.input([1, 6, 6, 5], scale=0.02, zero_point=3)
    y = getattr(mb, layer)(x, 7) if layer != "depthwise_conv2d" else mb.depthwise_conv2d(x, depth_multiplier=2)
    mb.output(y)
    model = schema.ModelT.InitFromPackedBuf(mb.build(), 0)
    graph = model.subgraphs[0]
    op = graph.operators[0]
    weights, bias = graph.tensors[op.inputs[1]], graph.tensors[op.inputs[2]]
    w_scale, w_dim = _tensor_quant(weights)
    b_scale, b_dim = _tensor_quant(bias)
    assert w_dim == dim and b_dim == 0
    channels = weights.shape[dim]
    assert len(w_scale) == channels == bias.shape[0] and len(set(w_scale)) == channels
    assert not np.any(weights.quantization.zeroPoint) and not np.any(bias.quantization.zeroPoint)
    np.testing.assert_allclose(b_scale, 0.02 * w_scale, rtol=1e-6)
    data = np.frombuffer(bytes(model.buffers[weights.buffer].data), np.int8).reshape(weights.shape)
    assert data.min() >= -127
    max_abs = np.abs(data.astype(int)).max(axis=tuple(a for a in range(data.ndim) if a != dim))
    assert np.all(max_abs == 127)
    assert bias.type == schema.TensorType.INT32 and weights.type == schema.TensorType.INT8


def test_per_tensor_fully_connected_has_one_scale():
    mb = builder.ModelBuilder(seed=2)
    mb.output(mb.fully_connected(mb.input([1, 12]), 4, per_channel=False))
    graph = schema.ModelT.InitFromPackedBuf(mb.build(), 0).subgraphs[0]
    weights, bias = (graph.tensors[i] for i in graph.operators[0].inputs[1:])
    assert len(weights.quantization.scale) == 1 and len(bias.quantization.scale) == 1


def test_qparams_from_range_includes_zero_and_nudges():
    scale, zero_point = quantize.qparams_from_range(0.5, 3.0)
    assert zero_point == -128 and scale == pytest.approx(3.0 / 255)
    scale, zero_point = quantize.qparams_from_range(-1.0, 1.0)
    assert scale == pytest.approx(2 / 255) and zero_point in (-1, 0)
    scale, zero_point = quantize.qparams_from_range(-4.0, -1.0)
    assert zero_point == 127
    scale, zero_point = quantize.qparams_from_range(0.0, 0.0)
    assert scale > 0


def test_calibration_sample_round_trip(run_model):
    """Feeding the calibration input gives outputs close to the calibrated float outputs."""
    mb = builder.ModelBuilder(seed=8)
    x = mb.input([1, 12, 12, 3])
    y = mb.add(mb.conv2d(x, 8), mb.depthwise_conv2d(mb.conv2d(x, 8, activation="RELU6")))
    mb.output(y)
    interpreter = Interpreter(model_content=mb.build(), experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    interpreter.set_tensor(
        interpreter.get_input_details()[0]["index"],
        quantize.quantize_array(mb.calibration_sample(x), x.scale, x.zero_point),
    )
    interpreter.invoke()
    got = quantize.dequantize_array(
        interpreter.get_tensor(interpreter.get_output_details()[0]["index"]), y.scale, y.zero_point
    )
    assert np.max(np.abs(got - mb.calibration_sample(y))) <= 3 * y.scale
