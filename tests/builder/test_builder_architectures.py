"""The bundled architectures build, load and run, with the structure of their reference models."""

from collections import Counter

import numpy as np
import pytest
from builder_test_support import load
from real_models import real_model
from tinyarena import builder


def _ops(model: bytes):
    return [op["op_name"] for op in load(model)._get_ops_details()]


def _structure(model: bytes):
    """(op name, input shapes, output shapes) of every op: what a reference export must match."""
    interpreter = load(model)
    shapes = {t["index"]: tuple(int(d) for d in t["shape"]) for t in interpreter.get_tensor_details()}
    return [
        (op["op_name"], [shapes[i] for i in op["inputs"] if i >= 0], [shapes[i] for i in op["outputs"]])
        for op in interpreter._get_ops_details()
    ]


@pytest.mark.parametrize(
    "make, num_ops, in_shape, out_shape",
    [
        pytest.param(lambda: builder.mobilenet_v1(), 31, (1, 96, 96, 3), (1, 2), id="mobilenet_v1"),
        pytest.param(
            lambda: builder.mobilenet_v1(0.5, 64, channels=1, num_classes=5),
            31,
            (1, 64, 64, 1),
            (1, 5),
            id="mobilenet_v1_gray",
        ),
        pytest.param(lambda: builder.mobilenet_v2(0.35, 96, 10), 65, (1, 96, 96, 3), (1, 10), id="mobilenet_v2_small"),
        pytest.param(
            lambda: builder.mobilenet_v2(0.35, 97, 10, explicit_pad=True),
            69,
            (1, 97, 97, 3),
            (1, 10),
            id="mobilenet_v2_pad_odd",
        ),
        pytest.param(lambda: builder.ds_cnn(), 13, (1, 49, 10, 1), (1, 12), id="ds_cnn"),
        pytest.param(lambda: builder.resnet8(), 16, (1, 32, 32, 3), (1, 10), id="resnet8"),
        pytest.param(lambda: builder.demo_model(), 20, (1, 48, 48, 3), (1, 10), id="demo"),
        pytest.param(lambda: builder.chain(50), 50, (1, 8, 8, 8), (1, 8, 8, 16), id="chain50"),
    ],
)
def test_architecture_runs(make, num_ops, in_shape, out_shape, run_model):
    model = make()
    interpreter = load(model)
    assert len(interpreter._get_ops_details()) == num_ops
    assert tuple(interpreter.get_input_details()[0]["shape"]) == in_shape
    outputs, details = run_model(model)
    assert [o.shape for o in outputs] == [out_shape]
    assert outputs[0].dtype == np.int8


def test_mobilenet_v2_explicit_pad_puts_pad_before_each_stride2_depthwise():
    structure = _structure(builder.mobilenet_v2(0.35, 96, 10, explicit_pad=True))
    pads = [i for i, (name, _, _) in enumerate(structure) if name == "PAD"]
    assert len(pads) == 4
    for i in pads:
        name, inputs, outputs = structure[i + 1]
        assert name == "DEPTHWISE_CONV_2D"
        assert outputs[0][1] == (inputs[0][1] - 3) // 2 + 1  # VALID stride 2 on the padded input
    plain = Counter(op for op, _, _ in _structure(builder.mobilenet_v2(0.35, 96, 10)))
    assert plain["ADD"] == 10 and plain["PAD"] == 0 and plain["DEPTHWISE_CONV_2D"] == 17


@pytest.mark.slow
def test_mobilenet_v2_full_size_builds_and_runs(run_model):
    model = builder.mobilenet_v2(1.0, 224)
    ops = Counter(_ops(model))
    assert sum(ops.values()) == 65
    assert ops["CONV_2D"] == 35 and ops["DEPTHWISE_CONV_2D"] == 17 and ops["ADD"] == 10
    outputs, _ = run_model(model)
    assert outputs[0].shape == (1, 1000)
    assert 3_400_000 < len(model) < 4_500_000  # ~3.5 M int8 weights


def test_chain_of_1000_ops_builds_and_runs(run_model):
    model = builder.chain(1000)
    assert len(_ops(model)) == 1000
    outputs, _ = run_model(model)
    assert outputs[0].shape == (1, 8, 8, 16)


def test_demo_model_mixes_the_promised_ops():
    ops = set(_ops(builder.demo_model()))
    assert {
        "CONV_2D",
        "DEPTHWISE_CONV_2D",
        "ADD",
        "MAX_POOL_2D",
        "AVERAGE_POOL_2D",
        "CONCATENATION",
        "FULLY_CONNECTED",
        "SOFTMAX",
    } <= ops


@pytest.mark.parametrize(
    "make, reference",
    [
        (lambda: builder.ds_cnn(), "kws_ref_model"),
        (lambda: builder.resnet8(), "pretrainedResnet_quant"),
        (lambda: builder.mobilenet_v1(), "vww_96_int8"),
    ],
    ids=["ds_cnn", "resnet8", "mobilenet_v1"],
)
def test_matches_mlperf_tiny_reference_structure(make, reference):
    assert _structure(make()) == _structure(real_model(reference).read_bytes())
