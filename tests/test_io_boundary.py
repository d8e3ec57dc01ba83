"""The model's interface: io="int8" drops the input QUANTIZE and output DEQUANTIZE converters add,
input_layout="nhwc" the NCHW -> NHWC TRANSPOSE of the input; with float I/O kept, the input QUANTIZE
runs in place, and the input QUANTIZE and TRANSPOSE become the load of the first row-streamed
segment, and the generated code stays bit-exact in
both interfaces (verify feeds the reference the float NCHW input that gives the program's input)."""

import functools

import numpy as np
import pytest
import tinyarena
from tinyarena import builder, tiling, transforms
from tinyarena.builder import ModelBuilder
from tinyarena.builder.boundary import model_input, model_output
from tinyarena.cli import main
from tinyarena.interchange import model_with_offline_plan
from tinyarena.verify import verify


@functools.lru_cache(maxsize=None)
def mbv2(resolution=32, alpha=0.35, **boundary):
    return builder.mobilenet_v2(alpha=alpha, resolution=resolution, num_classes=10, **boundary)


def small_cnn(float_io=False, nchw_input=False, transpose_first=False, size=16):
    """Conv, depthwise, a residual ADD and a conv head: a few ops behind the boundary ops."""
    mb = ModelBuilder("boundary", seed=3)
    x = model_input(mb, [1, size, size, 3], float_io, nchw_input, transpose_first)
    y = mb.conv2d(x, 8, kernel=3, stride=2, activation="RELU6")
    y = mb.add(y, mb.conv2d(mb.depthwise_conv2d(y, kernel=3, activation="RELU6"), 8, kernel=1))
    model_output(mb, mb.conv2d(y, 4, kernel=1), float_io)
    return mb.build()


def op_types(graph):
    return [op.type for op in graph.ops]


# ----------------------------------------------------------------------------- the transform


def test_int8_io_drops_the_input_quantize_and_output_dequantize():
    original = tinyarena.load_model(mbv2(float_io=True))
    assert original.ops[0].type == "QUANTIZE" and original.ops[-1].type == "DEQUANTIZE"
    graph, rewrites = transforms.io_boundary(original, io="int8")
    assert op_types(graph) == op_types(original)[1:-1]
    assert [r.op for r in rewrites] == [0, len(original.ops) - 1]
    (inp,), (out,) = graph.inputs, graph.outputs
    assert inp == original.ops[0].outputs[0] and out == original.ops[-1].inputs[0]
    assert graph.tensors[inp].dtype == "int8" and graph.tensors[out].dtype == "int8"
    assert graph.tensors[inp].scale[0] == original.tensors[inp].scale[0]
    assert original.tensors[original.inputs[0]].dtype == "float32"  # the input graph stays


def test_nhwc_input_folds_the_transpose_in_either_order_with_the_quantize():
    for transpose_first in (False, True):
        original = tinyarena.load_model(small_cnn(float_io=True, nchw_input=True, transpose_first=transpose_first))
        assert tuple(original.tensors[original.inputs[0]].shape) == (1, 3, 16, 16)
        graph, rewrites = transforms.io_boundary(original, io="int8", input_layout="nhwc")
        assert {r.op for r in rewrites} == {0, 1, len(original.ops) - 1}
        assert "TRANSPOSE" not in op_types(graph) and "QUANTIZE" not in op_types(graph)
        t = graph.tensors[graph.inputs[0]]
        assert tuple(t.shape) == (1, 16, 16, 3) and t.dtype == "int8"
    layout_only, rewrites = transforms.io_boundary(small_cnn(nchw_input=True), input_layout="nhwc")
    assert len(rewrites) == 1 and tuple(layout_only.tensors[layout_only.inputs[0]].shape) == (1, 16, 16, 3)


def test_int8_io_refuses_an_input_that_stays_float():
    with pytest.raises(tinyarena.UnsupportedError, match="input 0 .* stays float32: its reader is op 0 \\(TRANSPOSE\\)"):
        transforms.io_boundary(small_cnn(float_io=True, nchw_input=True, transpose_first=True), io="int8")


def test_the_defaults_and_int8_models_keep_the_graph():
    data = small_cnn()
    for io, layout in (("model", "model"), ("int8", "model"), ("int8", "nhwc")):
        graph, rewrites = transforms.io_boundary(data, io=io, input_layout=layout)
        assert rewrites == () and op_types(graph) == op_types(tinyarena.load_model(data))
    with pytest.raises(ValueError, match="unknown io"):
        transforms.io_boundary(data, io="float")
    with pytest.raises(ValueError, match="unknown input layout"):
        transforms.io_boundary(data, input_layout="nchw")


def test_plan_takes_the_interface_and_reports_it():
    plan = tinyarena.plan(mbv2(float_io=True), io="int8")
    assert plan.graph.tensors[plan.graph.inputs[0]].dtype == "int8" and len(plan.interface) == 2
    assert tinyarena.plan(mbv2(float_io=True)).interface == ()


# ------------------------------------------------------------------- in place and streaming


def test_float_io_stays_in_the_callers_arrays(tmp_path):
    data = small_cnn(float_io=True)
    plan = tinyarena.plan(data, transforms="none")
    live, graph = plan.liveness, plan.graph
    float_input, float_output = graph.inputs[0], graph.outputs[0]
    assert live.caller_tensors == (float_input, float_output)
    assert live.tensor_buffer[float_input] == -1 and live.tensor_buffer[float_output] == -1
    assert 0 not in live.inplace_ops  # the QUANTIZE cannot write into the caller's input
    # The arena holds what the int8 interface holds: the int8 copy of the input, never the floats.
    assert plan.peak_bytes == tinyarena.plan(data, transforms="none", io="int8").peak_bytes
    held = tinyarena.plan(data, transforms="none", caller_float_io=False)
    assert held.liveness.caller_tensors == () and held.peak_bytes > plan.peak_bytes
    tinyarena.codegen.compile(plan, tmp_path, target="host", name="m")
    c = (tmp_path / "model.c").read_text()
    assert "memcpy" not in c.split("_invoke(")[1]  # nothing copied in or out
    assert "(float *)(input0 + 0)" in c and "(float *)(output0 + 0)" in c


def test_an_offline_plan_needs_the_float_io_in_the_arena():
    data = small_cnn(float_io=True)
    with pytest.raises(ValueError, match="caller_float_io=False"):
        model_with_offline_plan(tinyarena.plan(data, transforms="none", inplace=False))


def test_the_input_quantize_runs_in_place():
    plan = tinyarena.plan(small_cnn(float_io=True), transforms="none", caller_float_io=False)
    live, graph = plan.liveness, plan.graph
    assert 0 in live.inplace_ops
    quantize_in, quantize_out = graph.ops[0].inputs[0], graph.ops[0].outputs[0]
    assert live.tensor_buffer[quantize_in] == live.tensor_buffer[quantize_out]
    assert live.tensor_offset[quantize_out] == live.tensor_offset[quantize_in]  # the int8 copy starts the float input
    assert live.buffers[live.tensor_buffer[quantize_in]].size == graph.tensors[quantize_in].byte_size
    assert len(graph.ops) - 1 not in live.inplace_ops  # a DEQUANTIZE's float output is 4x its input
    no_inplace = tinyarena.plan(small_cnn(float_io=True), transforms="none", inplace=False, caller_float_io=False)
    assert 0 not in no_inplace.liveness.inplace_ops and plan.peak_bytes < no_inplace.peak_bytes


def loaded_ring(tiled):
    """The first segment's ring its load fills from the model input, running boundary ops."""
    (ring,) = [r for r in tiled.tiled.streams[0].rings if r.source >= 0]
    return ring


def test_the_input_quantize_becomes_the_load_of_the_first_segment():
    data = mbv2(resolution=64, float_io=True)
    found = tiling.search(data, tiling="rows")
    graph = found.best.graph
    assert found.best.segments[0].ops[0] == 0 and graph.ops[0].type == "QUANTIZE"
    ring = loaded_ring(found.best)
    assert ring.source == graph.inputs[0] and ring.tensor == graph.ops[0].outputs[0]
    assert ring.row_bytes == 64 * 3  # int8 rows: the float input is read from the caller's buffer
    int8 = tiling.search(data, tiling="rows", io="int8")
    assert found.best.peak_bytes == int8.best.peak_bytes
    # Kept whole, the float input streams through an ordinary QUANTIZE into an int8 ring.
    resident = tiling.search(data, tiling="rows", stream_input=False)
    assert resident.best.segments[0].ops[0] == 0
    assert all(r.source < 0 for r in resident.best.tiled.streams[0].rings)


@pytest.mark.parametrize("boundary", [dict(nchw_input=True), dict(float_io=True, nchw_input=True),
                                      dict(float_io=True, nchw_input=True, transpose_first=True)])
def test_an_nchw_input_transpose_becomes_the_load_of_the_input(boundary):
    data = small_cnn(size=64, **boundary)
    found = tiling.search(data, tiling="rows")
    graph = found.best.graph
    ring = loaded_ring(found.best)
    first_conv = next(op for op in graph.ops if op.type == "CONV_2D")
    assert ring.source == graph.inputs[0] and ring.tensor == first_conv.inputs[0] and ring.row_bytes == 64 * 3
    nhwc = tiling.search(data, tiling="rows", input_layout="nhwc")
    assert found.best.peak_bytes == nhwc.best.peak_bytes
    assert found.best.peak_bytes < found.untiled_peak_bytes / 2
    # A transpose whose input is kept whole does not stream.
    resident = tiling.search(data, tiling="rows", stream_input=False)
    transpose = next(op.index for op in graph.ops if op.type == "TRANSPOSE")
    assert all(transpose not in s.ops for s in resident.best.segments)


# ------------------------------------------------------------------------- generated code


def io_defines(out_dir):
    text = (out_dir / "model.h").read_text()
    return {line.split()[1]: line.split()[2] for line in text.splitlines()
            if line.startswith("#define ") and len(line.split()) == 3}


def test_model_h_states_the_int8_io_scale_and_zero_point(tmp_path):
    plan = tinyarena.plan(small_cnn(float_io=True), io="int8")
    tinyarena.codegen.compile(plan, tmp_path, name="m")
    defines = io_defines(tmp_path)
    graph = plan.graph
    for kind, t in (("INPUT0", graph.inputs[0]), ("OUTPUT0", graph.outputs[0])):
        tensor = graph.tensors[t]
        assert float(defines[f"TINYARENA_M_{kind}_SCALE"].rstrip("f")) == pytest.approx(tensor.scale[0], rel=1e-6)
        assert int(defines[f"TINYARENA_M_{kind}_ZERO_POINT"]) == tensor.zero_point[0]
        assert int(defines[f"TINYARENA_M_{kind}_BYTES"]) == tensor.byte_size
    assert "const int8_t *input0" in (tmp_path / "model.h").read_text()
    float_io = tmp_path / "float"
    tinyarena.codegen.compile(tinyarena.plan(small_cnn(float_io=True)), float_io, name="m")
    assert "TINYARENA_M_INPUT0_SCALE" not in io_defines(float_io)  # float32 I/O has no quantization
    assert "const float *input0" in (float_io / "model.h").read_text()


@pytest.mark.parametrize("io", ["model", "int8"])
def test_verify_is_bit_exact_in_both_io_modes(io, tmp_path):
    result = verify(small_cnn(float_io=True), target="host", io=io, work_dir=tmp_path)
    assert result.bit_exact, result.summary()
    assert result.outputs[0].dtype == (np.float32 if io == "model" else np.int8)


@pytest.mark.parametrize("transpose_first", [False, True])
def test_verify_is_bit_exact_with_nhwc_input_and_int8_io(transpose_first, tmp_path):
    data = small_cnn(float_io=True, nchw_input=True, transpose_first=transpose_first)
    result = verify(data, target="host", io="int8", input_layout="nhwc", work_dir=tmp_path)
    assert result.bit_exact, result.summary()


@pytest.mark.parametrize("boundary", [dict(float_io=True), dict(nchw_input=True), dict(float_io=True, nchw_input=True),
                                      dict(float_io=True, nchw_input=True, transpose_first=True)])
@pytest.mark.parametrize("stream_input", [True, False])
def test_verify_is_bit_exact_with_the_boundary_ops_streamed(boundary, stream_input, tmp_path):
    data = small_cnn(**boundary)
    tiled = tiling.search(data, tiling="rows", stream_input=stream_input).best
    if stream_input:
        assert tiled.segments[0].ops[0] == 0 and loaded_ring(tiled).source == tiled.graph.inputs[0]
    if not stream_input and boundary.get("transpose_first"):
        return  # the float TRANSPOSE then runs on the whole input: no kernel takes float
    result = verify(data, target="host", plan=tiled, work_dir=tmp_path)
    assert result.bit_exact, result.summary()


def test_cli_takes_io_and_input_layout(tmp_path, capsys):
    path = tmp_path / "m.tflite"
    path.write_bytes(small_cnn(float_io=True, nchw_input=True, transpose_first=True))
    assert main(["plan", str(path), "--io", "int8", "--input-layout", "nhwc", "--json", str(tmp_path / "p.json")]) == 0
    assert main(["verify", str(path), "--io", "int8", "--input-layout", "nhwc"]) == 0
    assert "bit-exact" in capsys.readouterr().out
    assert main(["plan", str(path), "--io", "int8"]) == 1  # the TRANSPOSE keeps the input float
    assert "stays float32" in capsys.readouterr().err
