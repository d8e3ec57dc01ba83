"""Every layer type, with option variants, builds a model the reference interpreter runs."""

import numpy as np
import pytest
from tinyarena import builder

NHWC = (1, 9, 11, 5)  # odd sizes and channels on purpose


def _case(id_, fn, expected, in_shape=NHWC, dtype=np.int8):
    return pytest.param(fn, in_shape, expected, dtype, id=id_)


CASES = [
    _case("conv_same", lambda m, x: m.conv2d(x, 7), (1, 9, 11, 7)),
    _case("conv_valid_s2", lambda m, x: m.conv2d(x, 4, kernel=3, stride=2, padding="VALID"), (1, 4, 5, 4)),
    _case("conv_same_s2_relu6", lambda m, x: m.conv2d(x, 3, stride=2, activation="RELU6"), (1, 5, 6, 3)),
    _case("conv_dilated_relu", lambda m, x: m.conv2d(x, 6, dilation=2, activation="RELU"), (1, 9, 11, 6)),
    _case(
        "conv_rect_valid_dil",
        lambda m, x: m.conv2d(x, 2, kernel=(3, 1), dilation=(2, 1), padding="VALID"),
        (1, 5, 11, 2),
    ),
    _case("conv_1x1_n1to1", lambda m, x: m.conv2d(x, 9, kernel=1, activation="RELU_N1_TO_1"), (1, 9, 11, 9)),
    _case("conv_5x5_s13", lambda m, x: m.conv2d(x, 3, kernel=5, stride=(1, 3)), (1, 9, 4, 3)),
    _case("dw_same", lambda m, x: m.depthwise_conv2d(x), (1, 9, 11, 5)),
    _case(
        "dw_valid_s2", lambda m, x: m.depthwise_conv2d(x, stride=2, padding="VALID", activation="RELU6"), (1, 4, 5, 5)
    ),
    _case("dw_mult3", lambda m, x: m.depthwise_conv2d(x, depth_multiplier=3, activation="RELU"), (1, 9, 11, 15)),
    _case("dw_dilated", lambda m, x: m.depthwise_conv2d(x, kernel=(3, 5), dilation=(2, 1)), (1, 9, 11, 5)),
    _case("fc_flatten", lambda m, x: m.fully_connected(x, 10), (1, 10)),
    _case("fc_per_tensor_relu", lambda m, x: m.fully_connected(x, 3, activation="RELU", per_channel=False), (1, 3)),
    _case("fc_keep_dims", lambda m, x: m.fully_connected(x, 4, keep_num_dims=True), (1, 9, 11, 4)),
    _case("fc_2d_batch", lambda m, x: m.fully_connected(x, 6, activation="RELU6"), (3, 6), in_shape=(3, 17)),
    _case("add", lambda m, x: m.add(x, m.conv2d(x, 5, kernel=1)), NHWC),
    _case("add_relu_broadcast", lambda m, x: m.add(x, m.mean(x, (1, 2), keep_dims=True), activation="RELU"), NHWC),
    _case("add_self", lambda m, x: m.add(x, x, activation="RELU6"), NHWC),
    _case("mul", lambda m, x: m.mul(x, m.logistic(x)), NHWC),
    _case("mul_broadcast_relu", lambda m, x: m.mul(x, m.mean(x, (1, 2), keep_dims=True), activation="RELU"), NHWC),
    _case("avgpool_valid", lambda m, x: m.average_pool2d(x, 2), (1, 4, 5, 5)),
    _case(
        "avgpool_same_s1_relu", lambda m, x: m.average_pool2d(x, 3, stride=1, padding="SAME", activation="RELU"), NHWC
    ),
    _case("maxpool_valid", lambda m, x: m.max_pool2d(x, (3, 2), stride=(2, 1)), (1, 4, 10, 5)),
    _case("maxpool_same", lambda m, x: m.max_pool2d(x, 3, stride=2, padding="SAME"), (1, 5, 6, 5)),
    _case("pad", lambda m, x: m.pad(x, [[0, 0], [1, 2], [0, 1], [0, 0]]), (1, 12, 12, 5)),
    _case("pad_channels", lambda m, x: m.pad(x, [[0, 0], [0, 0], [0, 0], [2, 1]]), (1, 9, 11, 8)),
    _case("reshape", lambda m, x: m.reshape(x, [1, -1, 5]), (1, 99, 5)),
    _case("reshape_2d", lambda m, x: m.reshape(x, [9, 55]), (9, 55)),
    _case("squeeze_all", lambda m, x: m.squeeze(m.mean(x, (1, 2), keep_dims=True)), (5,)),
    _case("squeeze_axes", lambda m, x: m.squeeze(m.mean(x, (1, 2), keep_dims=True), axes=[1, 2]), (1, 5)),
    _case("expand_dims", lambda m, x: m.expand_dims(x, 0), (1, 1, 9, 11, 5)),
    _case("expand_dims_neg", lambda m, x: m.expand_dims(x, -1), (1, 9, 11, 5, 1)),
    _case("softmax", lambda m, x: m.softmax(x), NHWC),
    _case("softmax_beta", lambda m, x: m.softmax(m.fully_connected(x, 10), beta=0.5), (1, 10)),
    _case("log_softmax", lambda m, x: m.log_softmax(m.fully_connected(x, 10)), (1, 10)),
    _case("concat_channels", lambda m, x: m.concatenation([x, m.conv2d(x, 3, kernel=1)], axis=3), (1, 9, 11, 8)),
    _case("concat_height_same_q", lambda m, x: m.concatenation([x, x, x], axis=1), (1, 27, 11, 5)),
    _case("concat_neg_axis", lambda m, x: m.concatenation([m.relu(x), m.tanh(x)], axis=-2), (1, 9, 22, 5)),
    _case("mean_hw", lambda m, x: m.mean(x, (1, 2)), (1, 5)),
    _case("mean_keep", lambda m, x: m.mean(x, [1, 2], keep_dims=True), (1, 1, 1, 5)),
    _case("mean_channels", lambda m, x: m.mean(x, -1), (1, 9, 11)),
    _case("resize_up", lambda m, x: m.resize_nearest_neighbor(x, (18, 22)), (1, 18, 22, 5)),
    _case("resize_align", lambda m, x: m.resize_nearest_neighbor(x, (5, 7), align_corners=True), (1, 5, 7, 5)),
    _case("resize_half_pixel", lambda m, x: m.resize_nearest_neighbor(x, 13, half_pixel_centers=True), (1, 13, 13, 5)),
    _case("logistic", lambda m, x: m.logistic(x), NHWC),
    _case("tanh", lambda m, x: m.tanh(x), NHWC),
    _case("hard_swish", lambda m, x: m.hard_swish(m.conv2d(x, 4)), (1, 9, 11, 4)),
    _case("relu", lambda m, x: m.relu(x), NHWC),
    _case("relu6", lambda m, x: m.relu6(m.conv2d(x, 4)), (1, 9, 11, 4)),
    _case("transpose", lambda m, x: m.transpose(x, [0, 3, 1, 2]), (1, 5, 9, 11)),
    _case("transpose_2d", lambda m, x: m.transpose(x, [1, 0]), (17, 3), in_shape=(3, 17)),
    _case("strided_slice", lambda m, x: m.strided_slice(x, [0, 1, 0, 0], [1, 8, 11, 5], [1, 2, 3, 1]), (1, 4, 4, 5)),
    _case(
        "strided_slice_masks",
        lambda m, x: m.strided_slice(x, [0, -3, 5, 2], [1, 0, 0, 0], [1, 1, -1, 1], begin_mask=1, end_mask=0b1010),
        (1, 3, 5, 3),
    ),
    _case(
        "strided_slice_shrink",
        lambda m, x: m.strided_slice(x, [0, 2, 0, 0], [1, 3, 11, 5], shrink_axis_mask=0b0011),
        (11, 5),
    ),
    _case(
        "split_channels",
        lambda m, x: m.concatenation(m.split(m.conv2d(x, 6, kernel=1), 3, axis=3), axis=1),
        (1, 27, 11, 2),
    ),
    _case(
        "split_width_first",
        lambda m, x: m.split(m.pad(x, [[0, 0], [0, 0], [0, 1], [0, 0]]), 2, axis=2)[0],
        (1, 9, 6, 5),
    ),
    _case("fc_rank3_flatten", lambda m, x: m.fully_connected(x, 5), (2, 5), in_shape=(2, 3, 4)),
    _case(
        "fc_rank3_keep_dims", lambda m, x: m.fully_connected(x, 5, keep_num_dims=True), (2, 3, 5), in_shape=(2, 3, 4)
    ),
    _case("resize_down", lambda m, x: m.resize_nearest_neighbor(x, (4, 3)), (1, 4, 3, 5)),
    _case("transpose_5d", lambda m, x: m.transpose(x, [0, 4, 3, 2, 1]), (1, 5, 4, 3, 2), in_shape=(1, 2, 3, 4, 5)),
    _case(
        "pad_5d",
        lambda m, x: m.pad(x, [[0, 0], [1, 0], [0, 1], [1, 1], [0, 0]]),
        (1, 3, 4, 6, 5),
        in_shape=(1, 2, 3, 4, 5),
    ),
    _case("mean_all_axes", lambda m, x: m.mean(x, [0, 1, 2, 3]), ()),
    _case("softmax_rank1", lambda m, x: m.softmax(x), (7,), in_shape=(7,)),
    _case("mul_self", lambda m, x: m.mul(x, x), NHWC),
    _case("quantize_requant", lambda m, x: m.quantize(x, scale=0.05, zero_point=-10), NHWC),
    _case("quantize_calibrated", lambda m, x: m.quantize(m.relu(x)), NHWC),
    _case("float_in_out", lambda m, x: m.dequantize(m.conv2d(m.quantize(x), 4)), (1, 9, 11, 4), dtype=np.float32),
]


@pytest.mark.parametrize("fn, in_shape, expected_shape, in_dtype", CASES)
def test_layer_runs_in_reference_interpreter(fn, in_shape, expected_shape, in_dtype, run_model):
    mb = builder.ModelBuilder("layer_test", seed=3)
    x = mb.input(in_shape, dtype=np.dtype(in_dtype).name)
    y = fn(mb, x)
    mb.output(y)
    assert y.shape == expected_shape
    outputs, details = run_model(mb.build())
    assert len(outputs) == 1
    assert outputs[0].shape == expected_shape
    expected_dtype = np.float32 if y.dtype == "float32" else np.int8
    assert outputs[0].dtype == expected_dtype
    if expected_dtype == np.int8:
        scale, zero_point = details[0]["quantization"]
        assert scale == pytest.approx(y.scale) and zero_point == y.zero_point


def test_split_returns_all_parts_as_outputs(run_model):
    mb = builder.ModelBuilder(seed=1)
    parts = mb.split(mb.input([1, 4, 4, 6]), 3, axis=-1)
    mb.output(*parts)
    outputs, _ = run_model(mb.build())
    assert [o.shape for o in outputs] == [(1, 4, 4, 2)] * 3


def test_fixed_output_quantization_of_nonlinearities():
    mb = builder.ModelBuilder(seed=1)
    x = mb.input([1, 8])
    assert (mb.softmax(x).scale, mb.softmax(x).zero_point) == (1 / 256, -128)
    assert (mb.logistic(x).scale, mb.logistic(x).zero_point) == (1 / 256, -128)
    assert (mb.tanh(x).scale, mb.tanh(x).zero_point) == (1 / 128, 0)
    assert (mb.log_softmax(x).scale, mb.log_softmax(x).zero_point) == (16 / 256, 127)


def test_shape_ops_keep_input_quantization():
    mb = builder.ModelBuilder(seed=1)
    x = mb.conv2d(mb.input([1, 6, 6, 4]), 4)
    for y in (
        mb.max_pool2d(x),
        mb.average_pool2d(x),
        mb.reshape(x, [1, 144]),
        mb.transpose(x, [0, 2, 1, 3]),
        mb.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]]),
        mb.resize_nearest_neighbor(x, (3, 3)),
        mb.strided_slice(x, [0, 0, 0, 0], [1, 3, 3, 4]),
    ):
        assert (y.scale, y.zero_point) == (x.scale, x.zero_point)


def test_concatenation_requantizes_inputs_with_other_parameters(run_model):
    mb = builder.ModelBuilder(seed=2)
    x = mb.input([1, 4, 4, 3])
    a, b = mb.conv2d(x, 2), mb.relu(x)
    assert (a.scale, a.zero_point) != (b.scale, b.zero_point)
    y = mb.concatenation([a, b], axis=3)
    mb.output(y)
    model = mb.build()
    interpreter_ops = _op_names(model)
    assert interpreter_ops.count("QUANTIZE") >= 1 and "CONCATENATION" in interpreter_ops
    outputs, _ = run_model(model)
    assert outputs[0].shape == (1, 4, 4, 5)


def test_pad_fills_with_zero_point(run_model):
    mb = builder.ModelBuilder(seed=2)
    x = mb.input([1, 2, 2, 1], scale=0.1, zero_point=-7)
    mb.output(mb.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]]))
    (out,), _ = run_model(mb.build())
    border = np.concatenate([out[0, 0, :, 0], out[0, -1, :, 0], out[0, :, 0, 0], out[0, :, -1, 0]])
    assert np.all(border == -7)


def _op_names(model: bytes):
    from builder_test_support import load

    interpreter = load(model)
    return [op["op_name"] for op in interpreter._get_ops_details()]


@pytest.mark.parametrize("fn, in_shape, expected_shape, in_dtype", CASES)
def test_builder_float_semantics_match_interpreter(fn, in_shape, expected_shape, in_dtype):
    """Feeding the calibration input reproduces the calibration output within one LSB.

    This checks that the builder's float model of each op (padding split, slicing, resize,
    depthwise channel order, ...) is the op TFLite runs, so calibrated ranges are the real ones.
    """
    from builder_test_support import load

    mb = builder.ModelBuilder("semantics", seed=5)
    x = mb.input(in_shape, dtype=np.dtype(in_dtype).name)
    y = fn(mb, x)
    mb.output(y)
    interpreter = load(mb.build())
    sample_in = mb.calibration_sample(x)
    if in_dtype == np.int8:
        sample_in = np.clip(np.round(sample_in / x.scale) + x.zero_point, -128, 127).astype(np.int8)
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], sample_in)
    interpreter.invoke()
    got = interpreter.get_tensor(interpreter.get_output_details()[0]["index"]).astype(np.float64)
    want = mb.calibration_sample(y).astype(np.float64)
    if y.dtype == "int8":
        got, lsb = (got - y.zero_point) * y.scale, y.scale
    else:
        lsb = np.max(np.abs(want)) / 127
    assert np.max(np.abs(got - want)) <= 1.5 * lsb


@pytest.mark.parametrize("seed, time_major, cifg, cell_clip", [(0, False, False, 0.0), (1, True, False, 0.0),
                                                               (2, False, False, 0.8), (3, True, True, 0.0)])
def test_lstm_float_model_matches_the_integer_kernel(seed, time_major, cifg, cell_clip):
    """The builder's float LSTM (its calibration) and TFLite's integer LSTM agree within 2 LSB on
    the calibration input, so the quantization it writes fits what the op computes."""
    from builder_test_support import load

    mb = builder.ModelBuilder("lstm", seed=seed)
    x = mb.input([6, 1, 5] if time_major else [1, 6, 5], scale=0.04, zero_point=3)
    y = mb.lstm(x, 8, time_major=time_major, cifg=cifg, cell_clip=cell_clip)
    mb.output(y)
    interpreter = load(mb.build())
    sample_in = np.clip(np.round(mb.calibration_sample(x) / x.scale) + x.zero_point, -128, 127).astype(np.int8)
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], sample_in)
    interpreter.invoke()
    got = interpreter.get_tensor(interpreter.get_output_details()[0]["index"]).astype(np.float64)
    want = mb.calibration_sample(y).astype(np.float64) / y.scale + y.zero_point
    assert got.shape == ((6, 1, 8) if time_major else (1, 6, 8))
    assert np.max(np.abs(got - want)) <= 2.0 + 1e-4


def test_lstm_arguments_are_checked():
    mb = builder.ModelBuilder("lstm", seed=0)
    with pytest.raises(ValueError, match="rank-3"):
        mb.lstm(mb.input([1, 2, 3, 4]), 4)
    with pytest.raises(ValueError, match="cell_clip"):
        mb.lstm(mb.input([1, 2, 3]), 4, cell_clip=-1.0)
