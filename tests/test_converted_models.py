"""The converter-made corpus in tests/data/converted (made by tools/make_converted_corpus.py,
one row per file in its SOURCES.md): what tinyarena does today with the graphs that
TFLiteConverter and litert-torch produce: read, planned, tiled, compiled and bit-exact with
TFLite's reference kernels on the host and on Cortex-M4 (QEMU), untiled and tiled."""

import collections
import pathlib
import re

import pytest

import tinyarena
from tinyarena import _core, codegen, tiling
from tinyarena.verify import verify

CONVERTED_DIR = pathlib.Path(__file__).resolve().parent / "data" / "converted"
CONVERTED = sorted(p.name for p in CONVERTED_DIR.glob("*.tflite"))
MAX_FILE_BYTES = 1 << 20


def sources_rows():
    """SOURCES.md's table as {file: {column: cell}}."""
    lines = [l for l in (CONVERTED_DIR / "SOURCES.md").read_text().splitlines() if l.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = [dict(zip(header, (c.strip() for c in l.strip("|").split("|")))) for l in lines[1:]]
    return {row["file"]: row for row in rows}


SOURCES = sources_rows()


def op_counts(cell):
    """'CONV_2D x5, ADD' -> Counter({'CONV_2D': 5, 'ADD': 1})."""
    counts = collections.Counter()
    for item in cell.split(", "):
        name, _, times = item.partition(" x")
        counts[name] += int(times or 1)
    return counts


def io_cells(cell):
    """'int8 [1, 49, 10], int8 [1, 12]' -> [('int8', (1, 49, 10)), ('int8', (1, 12))]."""
    return [(dtype, tuple(int(n) for n in dims.split(", "))) for dtype, dims in
            re.findall(r"(\w+) \[([\d, ]+)\]", cell)]


def path(name):
    return CONVERTED_DIR / name


def test_sources_lists_every_file_and_its_size():
    assert CONVERTED and sorted(SOURCES) == CONVERTED
    for name in CONVERTED:
        size = path(name).stat().st_size
        assert size < MAX_FILE_BYTES
        assert int(SOURCES[name]["bytes"].replace(",", "")) == size


@pytest.mark.parametrize("name", CONVERTED)
def test_reader_sees_the_ops_and_io_the_converter_wrote(name):
    graph = tinyarena.load_model(path(name))
    read, written = collections.Counter(op.type for op in graph.ops), op_counts(SOURCES[name]["ops"])
    # The reader folds compile-time shape arithmetic (SHAPE, FILL of constants and the int32
    # STRIDED_SLICE / PACK / CONCATENATION between them) into constants; every other op stays.
    folding = {"SHAPE", "FILL", "STRIDED_SLICE", "PACK", "CONCATENATION"}
    assert read["SHAPE"] == read["FILL"] == 0
    assert all(read[op] <= count for op, count in written.items() if op in folding)
    assert {op: n for op, n in read.items() if op not in folding} == {
        op: n for op, n in written.items() if op not in folding}
    io = lambda indices: [(graph.tensors[i].dtype, tuple(graph.tensors[i].shape)) for i in indices]
    assert io(graph.inputs) == io_cells(SOURCES[name]["input"])
    assert io(graph.outputs) == io_cells(SOURCES[name]["output"])


@pytest.mark.parametrize("name", CONVERTED)
def test_plan_validates_and_respects_its_lower_bound(name):
    plan = tinyarena.plan(path(name))
    assert plan.validate() == []
    assert plan.peak_bytes >= plan.lower_bound_bytes > 0


@pytest.mark.parametrize("name", CONVERTED)
def test_macs_agree_with_sources(name):
    assert tinyarena.plan(path(name)).macs == int(SOURCES[name]["MACs"].replace(",", ""))


@pytest.mark.parametrize("name", CONVERTED)
def test_tiled_plan_validates_and_peaks_at_most_the_untiled_one(name):
    found = tiling.search(path(name))
    assert found.best.validate() == []
    assert found.best.peak_bytes >= found.best.lower_bound_bytes > 0
    assert found.best.peak_bytes <= found.untiled_peak_bytes


@pytest.mark.parametrize("name", CONVERTED)
def test_every_op_has_a_kernel_that_takes_it(name):
    assert codegen.unsupported_ops(tinyarena.load_model(path(name))) == {}


def test_litert_torch_residual_adds_compute_in_float():
    # litert-torch leaves the ADDs of its 3-block stages in float32 (SOURCES.md); they run as
    # ta_add_f32 between DEQUANTIZE and QUANTIZE.
    graph = tinyarena.load_model(path("mobilenet_v2_torch_64.tflite"))
    float_adds = [op for op in graph.ops if op.type == "ADD" and graph.tensors[op.inputs[0]].dtype == "float32"]
    assert len(float_adds) == 9
    assert all(graph.tensors[op.outputs[0]].dtype == "float32" for op in float_adds)


def test_upsampling2d_reshape_gets_the_shape_its_folded_input_gives():
    # The file stores [1, 1, 10, 32] for the second RESHAPE of UpSampling2D (shape signature
    # [-1, -1, 10, 32]); its folded shape input says [1, 8, 10, 32], as TFLite's Prepare computes.
    graph = tinyarena.load_model(path("yolo_tiny_upsampling2d_128x160_int8io.tflite"))
    concats = [op for op in graph.ops if op.type == "CONCATENATION"]
    assert [tuple(graph.tensors[op.inputs[0]].shape) for op in concats] == [(1, 8, 10, 32), (1, 16, 20, 24)]
    assert [op.type for op in graph.ops].count("TILE") == 4


def test_reference_copy_names_tile_at_a_version_the_reference_resolver_registers():
    # TFLite's reference resolver registers TILE's kernel for versions 1-2, the builtin one 1-3
    # (3: int8); verify's reference gets a copy with version 2, every other byte unchanged.
    model = path("yolo_tiny_upsampling2d_128x160_int8io.tflite").read_bytes()
    versions = lambda data: {(op.type, op.version) for op in tinyarena.load_model(data).ops}  # noqa: E731
    patched = _core.with_reference_op_versions(model)
    assert ("TILE", 3) in versions(model) and len(patched) == len(model)
    assert versions(patched) == versions(model) - {("TILE", 3)} | {("TILE", 2)}
    assert sum(a != b for a, b in zip(model, patched)) == 1


def tiled_plans(name, **keywords):
    """The tiled search's best plans at 1.00x MACs (row streams) and at <= 1.10x (also column
    strips and patches), the second only when its segments differ."""
    plans = [tiling.search(path(name), max_mac_overhead=budget, **keywords).best for budget in (1.0, 1.1)]
    return plans[:1] if plans[0].segments == plans[1].segments else plans


def verify_untiled_and_tiled(name, target, work_dir):
    untiled = verify(path(name), target=target, work_dir=work_dir / "untiled")
    assert untiled.bit_exact, untiled.summary()
    for i, plan in enumerate(tiled_plans(name)):
        tiled = verify(None, plan=plan, target=target, work_dir=work_dir / f"tiled{i}")
        assert tiled.bit_exact, f"{plan}: {tiled.summary()}"


@pytest.mark.slow
@pytest.mark.parametrize("name", CONVERTED)
def test_verify_is_bit_exact_untiled_and_tiled(name, tmp_path):
    verify_untiled_and_tiled(name, "host", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["host", pytest.param("cortex-m4", marks=pytest.mark.qemu)])
@pytest.mark.parametrize("name", [n for n in CONVERTED if "_floatio" in n])
def test_float_io_models_with_int8_io_are_bit_exact_untiled_and_tiled(name, target, tmp_path):
    untiled = verify(path(name), io="int8", target=target, work_dir=tmp_path / "untiled")
    assert untiled.bit_exact, untiled.summary()
    for i, plan in enumerate(tiled_plans(name, io="int8")):
        tiled = verify(None, plan=plan, target=target, work_dir=tmp_path / f"tiled{i}")
        assert tiled.bit_exact, f"{plan}: {tiled.summary()}"


@pytest.mark.qemu
@pytest.mark.slow
@pytest.mark.parametrize("name", CONVERTED)
def test_verify_on_cortex_m4_is_bit_exact_untiled_and_tiled(name, tmp_path):
    verify_untiled_and_tiled(name, "cortex-m4", tmp_path)


@pytest.mark.parametrize("name", ["lstm_kws_unrolled_int8io.tflite", "gru_kws_unrolled_int8io.tflite"])
def test_unrolled_recurrent_models_tile_no_higher_than_their_reordered_plan(name):
    # The converter computes all 49 input projections first; in that order the plan is ~4x one
    # step's working set. The tiled search's untiled point runs in the order the schedule finds.
    planned = tinyarena.plan(path(name))
    found = tiling.search(path(name))
    assert found.best.peak_bytes <= planned.peak_bytes
    file_order = tinyarena.plan(path(name), transforms="none")
    assert found.best.peak_bytes * 3 < file_order.peak_bytes


FUSED_LSTM = ["lstm_kws_fused_int8io.tflite", "lstm_kws_fused_floatio.tflite"]


def test_fused_lstm_files_compile():
    for name in FUSED_LSTM:
        assert not tinyarena.plan(path(name)).compile_issues


@pytest.mark.parametrize("name", FUSED_LSTM)
def test_fused_lstm_plan_holds_one_step_not_the_sequence(name):
    # LSTM(32) over 49 steps of 10 features. The STRIDED_SLICE of the last step goes (zero_copy):
    # the LSTM writes only that step, so the 49 x 32 sequence (1,568 B) is never stored. At the
    # LSTM the arena holds the whole int8 input (490 -> 496 B), the hidden (int8) and cell
    # (int16) state and the last step's output (the kernel runs cell by cell: no scratch).
    plan = tinyarena.plan(path(name), io="int8")
    types = [op.type for op in plan.graph.ops]
    assert types == ["UNIDIRECTIONAL_SEQUENCE_LSTM", "FULLY_CONNECTED", "SOFTMAX"]
    assert tuple(plan.graph.tensors[plan.graph.ops[0].outputs[0]].shape) == (1, 32)
    state = 32 + 2 * 32
    assert plan.peak_bytes == 496 + state + 32
    assert plan.macs == 49 * 4 * 32 * (10 + 32) + 32 * 12
    untransformed = tinyarena.plan(path(name), io="int8", transforms="none")
    assert untransformed.peak_bytes == 496 + state + 49 * 32


def test_fused_lstm_with_float_io_quantizes_one_step_at_a_time():
    # With the float I/O kept, zero_copy folds the input QUANTIZE into the LSTM: it reads the
    # caller's float sequence and quantizes one step's 10 values into its scratch, so the arena
    # holds one step's working set (scratch, hidden and cell state, the last step's output),
    # not the 490-B int8 sequence.
    plan = tinyarena.plan(path("lstm_kws_fused_floatio.tflite"))
    assert [op.type for op in plan.graph.ops][0] == "UNIDIRECTIONAL_SEQUENCE_LSTM"
    lstm = plan.graph.ops[0]
    assert plan.graph.tensors[lstm.inputs[0]].dtype == "float32"
    assert any("QUANTIZE of the LSTM's input" in change for report in plan.transforms for change in report.changes)
    step = 16 + 32 + 2 * 32 + 32  # scratch (10 -> 16 B), hidden, cell, output
    assert plan.peak_bytes == step
    assert plan.peak_bytes < tinyarena.plan(path("lstm_kws_fused_floatio.tflite"), io="int8").peak_bytes
    unfolded = tinyarena.plan(path("lstm_kws_fused_floatio.tflite"), transforms="fold_pads,reorder")
    assert unfolded.peak_bytes == 496 + 32 + 2 * 32 + 49 * 32


@pytest.mark.parametrize("target", ["host", pytest.param("cortex-m4", marks=pytest.mark.qemu)])
def test_fused_lstm_with_its_input_quantize_folded_in_is_bit_exact(target, tmp_path):
    plan = tinyarena.plan(path("lstm_kws_fused_floatio.tflite"))
    assert plan.graph.ops[0].type == "UNIDIRECTIONAL_SEQUENCE_LSTM"
    result = verify(None, plan=plan, target=target, work_dir=tmp_path)
    assert result.bit_exact, result.summary()


@pytest.mark.qemu
@pytest.mark.slow
@pytest.mark.parametrize("name", FUSED_LSTM)
def test_fused_lstm_is_bit_exact_on_cortex_m4(name, tmp_path):
    result = verify(path(name), target="cortex-m4", work_dir=tmp_path)
    assert result.bit_exact, result.summary()
