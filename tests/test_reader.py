"""Stage 1: the TFLite reader and the graph IR it returns."""

import numpy as np
import pytest

import tinyarena
from tinyarena import builder
from real_models import REAL_MODEL_NAMES, real_model

# Op types per model, from tests/data/models/SOURCES.md.
EXPECTED_OP_TYPES = {
    "kws_ref_model": {"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"},
    "vww_96_int8": {"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"},
    "pretrainedResnet_quant": {"CONV_2D", "ADD", "AVERAGE_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"},
    "ad01_int8": {"FULLY_CONNECTED"},
    "str_ww_ref_model": {"CONV_2D", "DEPTHWISE_CONV_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"},
    "person_detect": {"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "RESHAPE", "SOFTMAX"},
    "micro_speech_quantized": {"RESHAPE", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "SOFTMAX"},
    "hello_world_int8": {"FULLY_CONNECTED"},
}
# MACs per model, from SOURCES.md.
EXPECTED_MACS = {
    "person_detect": 7_157_888,
    "vww_96_int8": 7_489_664,
    "kws_ref_model": 2_656_768,
    "pretrainedResnet_quant": 12_501_632,
    "micro_speech_quantized": 336_000,
    "hello_world_int8": 288,
}


@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
def test_real_models_load_with_their_op_types(name):
    graph = tinyarena.load_model(real_model(name))
    assert {op.type for op in graph.ops} == EXPECTED_OP_TYPES[name]
    assert graph.inputs and graph.outputs
    input_tensor = graph.tensors[graph.inputs[0]]
    assert input_tensor.dtype == "int8" and not input_tensor.is_constant
    assert input_tensor.producer == -1 and input_tensor.consumers


@pytest.mark.parametrize("name", sorted(EXPECTED_MACS))
def test_macs_match_the_published_figures(name):
    graph = tinyarena.load_model(real_model(name))
    assert sum(op.macs for op in graph.ops) == EXPECTED_MACS[name]


def test_bytes_and_path_give_the_same_graph():
    path = real_model("kws_ref_model")
    a = tinyarena.load_model(path)
    b = tinyarena.load_model(path.read_bytes())
    assert [op.type for op in a.ops] == [op.type for op in b.ops]
    assert [t.shape for t in a.tensors] == [t.shape for t in b.tensors]


def test_options_quantization_and_constants_are_exposed():
    graph = tinyarena.load_model(real_model("vww_96_int8"))
    conv = graph.ops[0]
    assert conv.type == "CONV_2D"
    assert (conv.options.stride_w, conv.options.stride_h, conv.options.padding) == (2, 2, "SAME")
    assert conv.options.activation == "RELU"
    weights = graph.tensors[conv.inputs[1]]
    assert weights.is_constant and weights.shape == (8, 3, 3, 3)
    assert weights.data.dtype == np.int8 and weights.data.shape == (8, 3, 3, 3)
    assert len(weights.scale) == 8 and weights.quantized_axis == 0  # per-channel
    assert not weights.data.flags.writeable
    with pytest.raises(ValueError):
        weights.data[0, 0, 0, 0] = 1
    bias = graph.tensors[conv.inputs[2]]
    assert bias.dtype == "int32" and bias.data.shape == (8,)
    depthwise = graph.ops[1]
    assert depthwise.type == "DEPTHWISE_CONV_2D" and depthwise.options.depth_multiplier == 1
    pool = next(op for op in graph.ops if op.type == "AVERAGE_POOL_2D")
    assert pool.options.filter_w == 3 and pool.options.filter_h == 3
    softmax = graph.ops[-1]
    assert softmax.type == "SOFTMAX" and softmax.options.beta == pytest.approx(1.0)


def test_producer_consumer_links_follow_execution_order():
    graph = tinyarena.load_model(real_model("pretrainedResnet_quant"))
    for op in graph.ops:
        for t in op.outputs:
            assert graph.tensors[t].producer == op.index
        for t in op.inputs:
            if t >= 0 and not graph.tensors[t].is_constant:
                assert op.index in graph.tensors[t].consumers
                assert graph.tensors[t].producer < op.index


def test_graph_data_outlives_the_graph_object():
    data = tinyarena.load_model(real_model("hello_world_int8")).tensors[1].data
    assert data is None or data.sum() is not None  # the view stays valid after the Graph is gone


@pytest.mark.parametrize(
    "payload, message",
    [
        (b"", "not a TFLite model"),
        (b"just some text that is long enough", "not a TFLite model"),
        (b"\x10\x00\x00\x00TFL3" + b"\x00" * 4, "truncated or corrupt"),
    ],
)
def test_malformed_input_raises_model_error(payload, message):
    with pytest.raises(tinyarena.ModelError, match=message) as info:
        tinyarena.load_model(payload)
    assert isinstance(info.value, ValueError)


def test_truncated_model_names_what_is_wrong():
    data = real_model("kws_ref_model").read_bytes()
    with pytest.raises(tinyarena.ModelError, match="outside the .*-byte file"):
        tinyarena.load_model(data[: len(data) // 3])


def test_missing_file_is_a_model_error():
    with pytest.raises(tinyarena.ModelError, match="cannot open"):
        tinyarena.load_model("/nonexistent/model.tflite")


def test_wrong_source_type_is_a_type_error():
    with pytest.raises(TypeError):
        tinyarena.load_model(42)


def test_lstm_options_intermediates_and_state_are_read():
    mb = builder.ModelBuilder("lstm", seed=2)
    mb.output(mb.lstm(mb.input([4, 1, 3]), 6, cell_clip=1.5, time_major=True))
    graph = tinyarena.load_model(mb.build())
    (op,) = graph.ops
    assert op.type == "UNIDIRECTIONAL_SEQUENCE_LSTM" and len(op.inputs) == 24
    assert op.options.cell_clip == 1.5 and op.options.time_major and op.options.proj_clip == 0.0
    assert not op.options.asymmetric_quantize_inputs and not op.options.diagonal_recurrent_tensors
    hidden, cell = (graph.tensors[op.inputs[i]] for i in (18, 19))
    assert hidden.is_variable and cell.is_variable and (hidden.dtype, cell.dtype) == ("int8", "int16")
    assert len(op.intermediates) == 5
    last = graph.tensors[op.intermediates[4]]
    assert (last.dtype, last.scale.tolist(), last.zero_point.tolist()) == (
        "int8", hidden.scale.tolist(), hidden.zero_point.tolist())
    assert all(graph.tensors[t].producer < 0 and not graph.tensors[t].consumers for t in op.intermediates)
