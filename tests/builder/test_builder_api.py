"""ModelBuilder basics: the file format, determinism, save(), and argument validation."""

import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as schema
from tinyarena import builder


def _small(seed=0, name="m"):
    mb = builder.ModelBuilder(name, seed=seed)
    x = mb.input([1, 10, 10, 3])
    y = mb.conv2d(x, 8, stride=2, activation="RELU")
    y = mb.depthwise_conv2d(y, activation="RELU6")
    mb.output(mb.softmax(mb.fully_connected(mb.mean(y, (1, 2)), 4)))
    return mb


def test_file_header_and_buffers():
    data = _small().build()
    assert data[4:8] == b"TFL3"
    model = schema.ModelT.InitFromPackedBuf(data, 0)
    assert model.version == 3
    assert model.buffers[0].data is None  # the empty sentinel
    graph = model.subgraphs[0]
    constants = [t for t in graph.tensors if t.buffer]
    assert len({t.buffer for t in constants}) == len(constants)
    raw = memoryview(data)
    for t in constants:
        size = int(np.prod(t.shape)) * {schema.TensorType.INT8: 1, schema.TensorType.INT32: 4}[t.type]
        assert len(model.buffers[t.buffer].data) == size
    # buffer data is 16-byte aligned inside the file
    root = schema.Model.GetRootAs(data, 0)
    for i in range(1, root.BuffersLength()):
        buffer = root.Buffers(i)
        if buffer.DataLength():
            assert buffer.DataAsNumpy().ctypes.data % 16 == np.frombuffer(raw, np.uint8).ctypes.data % 16


def test_operator_codes_carry_builtin_and_legacy_code():
    model = schema.ModelT.InitFromPackedBuf(_small().build(), 0)
    codes = {c.builtinCode: c for c in model.operatorCodes}
    assert set(codes) == {3, 4, 40, 9, 25}  # CONV_2D, DEPTHWISE_CONV_2D, MEAN, FULLY_CONNECTED, SOFTMAX
    for code in codes.values():
        assert code.deprecatedBuiltinCode == code.builtinCode and code.version >= 1


def test_tensor_handles_describe_tensors():
    mb = builder.ModelBuilder(seed=0)
    x = mb.input([1, 4, 4, 2], scale=0.5, zero_point=-3, name="image")
    assert (x.name, x.shape, x.dtype, x.scale, x.zero_point, x.rank) == ("image", (1, 4, 4, 2), "int8", 0.5, -3, 4)
    f = mb.input([1, 3], dtype="float32")
    assert f.dtype == "float32" and f.scale is None
    assert "image" in repr(x)


def test_same_arguments_give_identical_bytes():
    assert _small(seed=3).build() == _small(seed=3).build()
    assert builder.mobilenet_v1(seed=1) == builder.mobilenet_v1(seed=1)
    assert builder.demo_model() == builder.demo_model()
    mb = _small(seed=3)
    assert mb.build() == mb.build()


def test_different_seed_gives_different_bytes():
    assert _small(seed=3).build() != _small(seed=4).build()
    assert builder.ds_cnn(seed=0) != builder.ds_cnn(seed=1)
    assert builder.resnet8(seed=0) != builder.resnet8(seed=1)


def test_save_writes_the_built_bytes(tmp_path):
    mb = _small()
    path = tmp_path / "model.tflite"
    data = mb.save(path)
    assert path.read_bytes() == data == mb.build()


def _builder_with_input(shape=(1, 8, 8, 4)):
    mb = builder.ModelBuilder(seed=0)
    return mb, mb.input(list(shape))


BAD_CALLS = {
    "conv_kernel_too_big_valid": lambda mb, x: mb.conv2d(x, 4, kernel=9, padding="VALID"),
    "conv_dilated_too_big_valid": lambda mb, x: mb.conv2d(x, 4, kernel=3, dilation=4, padding="VALID"),
    "conv_zero_filters": lambda mb, x: mb.conv2d(x, 0),
    "conv_bad_padding": lambda mb, x: mb.conv2d(x, 4, padding="FULL"),
    "conv_bad_activation": lambda mb, x: mb.conv2d(x, 4, activation="GELU"),
    "conv_bad_stride": lambda mb, x: mb.conv2d(x, 4, stride=(1, 0)),
    "conv_bad_kernel_tuple": lambda mb, x: mb.conv2d(x, 4, kernel=(3, 3, 3)),
    "conv_rank2": lambda mb, x: mb.conv2d(mb.reshape(x, [1, -1]), 4),
    "dw_bad_multiplier": lambda mb, x: mb.depthwise_conv2d(x, depth_multiplier=0),
    "pool_too_big_valid": lambda mb, x: mb.max_pool2d(x, 9),
    "avg_pool_bad_stride": lambda mb, x: mb.average_pool2d(x, 2, stride=-1),
    "add_shape_mismatch": lambda mb, x: mb.add(x, mb.conv2d(x, 3)),
    "mul_shape_mismatch": lambda mb, x: mb.mul(x, mb.max_pool2d(x)),
    "reshape_wrong_size": lambda mb, x: mb.reshape(x, [1, 100]),
    "reshape_two_unknowns": lambda mb, x: mb.reshape(x, [-1, -1]),
    "squeeze_non_unit": lambda mb, x: mb.squeeze(x, axes=[1]),
    "squeeze_nothing": lambda mb, x: mb.squeeze(mb.reshape(x, [2, 128])),
    "expand_dims_axis": lambda mb, x: mb.expand_dims(x, 6),
    "transpose_not_perm": lambda mb, x: mb.transpose(x, [0, 1, 1, 2]),
    "pad_wrong_rank": lambda mb, x: mb.pad(x, [[1, 1], [1, 1]]),
    "pad_negative": lambda mb, x: mb.pad(x, [[0, 0], [-1, 0], [0, 0], [0, 0]]),
    "softmax_beta": lambda mb, x: mb.softmax(x, beta=0),
    "concat_shape": lambda mb, x: mb.concatenation([x, mb.max_pool2d(x)], axis=3),
    "concat_axis": lambda mb, x: mb.concatenation([x, x], axis=4),
    "concat_empty": lambda mb, x: mb.concatenation([], axis=0),
    "concat_activation": lambda mb, x: mb.concatenation([x, x], axis=3, activation="RELU"),
    "mean_dup_axes": lambda mb, x: mb.mean(x, [1, 1]),
    "mean_bad_axis": lambda mb, x: mb.mean(x, [4]),
    "resize_both_modes": lambda mb, x: mb.resize_nearest_neighbor(x, 4, align_corners=True, half_pixel_centers=True),
    "resize_zero": lambda mb, x: mb.resize_nearest_neighbor(x, (0, 4)),
    "slice_empty": lambda mb, x: mb.strided_slice(x, [0, 4, 0, 0], [1, 2, 8, 4]),
    "slice_zero_stride": lambda mb, x: mb.strided_slice(x, [0, 0, 0, 0], [1, 8, 8, 4], [1, 0, 1, 1]),
    "slice_wrong_length": lambda mb, x: mb.strided_slice(x, [0, 0], [1, 8]),
    "slice_bad_mask": lambda mb, x: mb.strided_slice(x, [0] * 4, [1, 8, 8, 4], begin_mask=16),
    "slice_shrink_out_of_range": lambda mb, x: mb.strided_slice(x, [0, 9, 0, 0], [1, 10, 8, 4], shrink_axis_mask=2),
    "split_not_divisible": lambda mb, x: mb.split(x, 3, axis=3),
    "split_bad_axis": lambda mb, x: mb.split(x, 2, axis=-5),
    "quantize_half_params": lambda mb, x: mb.quantize(x, scale=0.1),
    "quantize_bad_scale": lambda mb, x: mb.quantize(x, scale=-1.0, zero_point=0),
    "dequantize_float": lambda mb, x: mb.dequantize(mb.dequantize(x)),
    "conv_on_float": lambda mb, x: mb.conv2d(mb.dequantize(x), 4),
    "foreign_tensor": lambda mb, x: mb.relu(builder.ModelBuilder().input([1, 2])),
    "not_a_tensor": lambda mb, x: mb.relu(np.zeros((1, 2))),
    "fc_zero_units": lambda mb, x: mb.fully_connected(x, 0),
    "output_twice": lambda mb, x: mb.output(x, x),
    "output_nothing": lambda mb, x: mb.output(),
}


@pytest.mark.parametrize("call", BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_bad_arguments_raise_value_error(call):
    mb, x = _builder_with_input()
    with pytest.raises(ValueError):
        call(mb, x)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"shape": [1, 0, 3]},
        {"shape": []},
        {"shape": [1] * 7},
        {"shape": [1, 4], "dtype": "int16"},
        {"shape": [1, 4], "scale": 0.0},
        {"shape": [1, 4], "zero_point": 200},
        {"shape": [1, 4], "zero_point": 1.5},
    ],
)
def test_bad_inputs_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        builder.ModelBuilder().input(**kwargs)


def test_build_needs_inputs_and_outputs():
    with pytest.raises(ValueError):
        builder.ModelBuilder().build()
    mb = builder.ModelBuilder()
    mb.input([1, 4])
    with pytest.raises(ValueError):
        mb.build()


@pytest.mark.parametrize(
    "call",
    [
        lambda: builder.mobilenet_v2(alpha=0),
        lambda: builder.mobilenet_v1(resolution=0),
        lambda: builder.ds_cnn(num_blocks=0),
        lambda: builder.resnet8(num_classes=0),
        lambda: builder.chain(0),
        lambda: builder.chain(5, shape=(1, 8)),
        lambda: builder.mobilenet_v1(channels=0),
        lambda: builder.mobilenet_v2(0.35, 96, num_classes=-3),
    ],
)
def test_bad_architecture_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_bytes_do_not_depend_on_blas_kernel_or_threads():
    """Calibration math runs in float64, so another BLAS code path gives the same file."""
    import subprocess
    import sys
    from pathlib import Path

    package_dir = Path(builder.__file__).resolve().parents[1]
    script = (
        f"import sys; sys.path.insert(0, {str(package_dir)!r}); import builder; "
        "sys.stdout.buffer.write(builder.mobilenet_v1(0.25, 64, seed=5))"
    )
    env = {"OPENBLAS_CORETYPE": "Sandybridge", "OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}
    other = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, check=True).stdout
    assert other == builder.mobilenet_v1(0.25, 64, seed=5)
