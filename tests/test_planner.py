"""Stages 2-4 on the real models: liveness, allocation, the plan and its report."""

import json
import re
import shutil
import subprocess
import sys

import pytest

import tinyarena
from real_models import REPO, REAL_MODEL_NAMES, TFLM_ARENA_BYTES, real_model
from tinyarena import builder, liveness
from tinyarena.builder import ModelBuilder
from tinyarena.codegen import compile as compile_model
from tinyarena.codegen import kernel_library_dir

VWW_LOWER_BOUND = 55_296
# int32 words of a CONV_2D channel's requantization record in SIMD builds
CONV_RQ_WORDS = int(re.search(r"#define TA_CONV_RQ_WORDS (\d+)",
                              (kernel_library_dir() / "include" / "tinyarena_kernels.h").read_text()).group(1))


@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
def test_greedy_first_fit_predicts_tflite_micro_arena(name):
    plan = tinyarena.plan(real_model(name), allocator="greedy_size_first_fit", inplace=False, scratch=False, alignment=16)
    assert plan.validate() == []
    assert plan.peak_bytes == TFLM_ARENA_BYTES[name]
    if name == "vww_96_int8":
        assert plan.lower_bound_bytes == VWW_LOWER_BOUND  # greedy is 33 % above it here
    else:
        assert plan.peak_bytes == plan.lower_bound_bytes


def test_best_fit_also_misses_the_vww_lower_bound():
    plan = tinyarena.plan(real_model("vww_96_int8"), allocator="greedy_size_best_fit", inplace=False, scratch=False)
    assert plan.validate() == []
    assert plan.peak_bytes > VWW_LOWER_BOUND


@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
@pytest.mark.parametrize("allocator", tinyarena.allocation.allocator_names())
@pytest.mark.parametrize("inplace", [True, False])
@pytest.mark.parametrize("scratch", [True, False])
@pytest.mark.parametrize("align", [1, 16])
def test_every_plan_validates(name, allocator, inplace, scratch, align):
    plan = tinyarena.plan(real_model(name), allocator=allocator, inplace=inplace, scratch=scratch, alignment=align)
    assert plan.validate() == []
    assert plan.peak_bytes >= plan.lower_bound_bytes > 0
    assert all(b.offset % align == 0 and b.size % align == 0 for b in plan.buffers)
    assert max(r.live_bytes + r.scratch_bytes for r in plan.ops) == plan.lower_bound_bytes


@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
def test_inplace_never_raises_the_lower_bound(name):
    off = tinyarena.plan(real_model(name), inplace=False, scratch=False)
    on = tinyarena.plan(real_model(name), inplace=True, scratch=False)
    assert on.lower_bound_bytes <= off.lower_bound_bytes
    assert len(on.buffers) <= len(off.buffers)


def test_inplace_depthwise_shares_its_input_buffer():
    plan = tinyarena.plan(real_model("vww_96_int8"), inplace=True)
    graph = plan.graph
    depthwise = [op for op in graph.ops if op.type == "DEPTHWISE_CONV_2D"]
    in_place = [op for op in depthwise if op.index in plan.liveness.inplace_ops]
    assert len(in_place) >= len(depthwise) - 1 and depthwise[0] in in_place
    assert set(op.index for op in depthwise) <= set(plan.liveness.inplace_ops) | set(plan.inplace_declined)
    buffer_of = plan.liveness.tensor_buffer
    for op in depthwise:
        assert (buffer_of[op.inputs[0]] == buffer_of[op.outputs[0]]) == (op in in_place)
    # ...and asks for the in-place kernel's scratch (ta_depthwise_conv_s8_inplace_scratch_bytes):
    # for the 48x48 3x3 layer the int16 plane its SIMD path builds, (48 + 2) rows x 52 columns
    # (51 rounded up to even, so rows stay word-aligned) + 2 values, and 48 + 1 int32
    # accumulators -- more than the 48x48 int8 plane the portable path copies -- rounded up to
    # the plan's 16-byte alignment.
    scratch = {b.name: b for b in plan.buffers if b.kind == "scratch"}
    first = depthwise[0]
    assert graph.tensors[first.inputs[0]].shape == (1, 48, 48, 8)
    assert scratch[f"scratch@{first.index} DEPTHWISE_CONV_2D"].size == (((48 + 2) * 52 + 2) * 2 + 49 * 4 + 15) // 16 * 16


def test_reshape_output_is_a_view_of_its_input():
    plan = tinyarena.plan(real_model("kws_ref_model"), inplace=False, scratch=False)
    reshape = next(op for op in plan.graph.ops if op.type == "RESHAPE")
    buffer_of = plan.liveness.tensor_buffer
    assert buffer_of[reshape.inputs[0]] == buffer_of[reshape.outputs[0]]


def test_graph_inputs_live_from_the_start_and_outputs_to_the_end():
    plan = tinyarena.plan(real_model("pretrainedResnet_quant"))
    graph, last_step = plan.graph, len(plan.graph.ops) - 1
    by_tensor = {t: b for b in plan.buffers for t in b.tensors}
    assert by_tensor[graph.inputs[0]].first == 0
    assert by_tensor[graph.outputs[0]].last == last_step


def test_conv_scratch_is_what_the_kernel_library_asks_on_resnet():
    # ta_conv_s8_scratch_bytes with the per-channel records precomputed into flash (as the
    # generated code passes them): a column buffer of 4 pixels x (K + 2) int16 (K = kh*kw*in_c
    # rounded up to 4; + 2: the end-mark word of each pixel) only -- the int8-weight path's 2x4
    # MAC blocks. The largest is the 3x3 64 -> 64 convolution: 4 * 2 * 578 = 4,624 B (2,304 B
    # with int16 weights and 2 pixels; CMSIS-NN asks 2 * 576 * 2 B).
    plan = tinyarena.plan(real_model("pretrainedResnet_quant"), inplace=False, scratch=True)
    assert max(r.scratch_bytes for r in plan.ops) == 4 * 2 * (3 * 3 * 64 + 2)
    assert plan.peak_bytes == 50_320  # 49,728 with the 2-pixel column; 50,304 with records in scratch


def test_report_rows_and_summary():
    plan = tinyarena.plan(real_model("vww_96_int8"))
    assert len(plan.ops) == len(plan.graph.ops)
    assert sum(r.macs for r in plan.ops) == plan.macs == 7_489_664
    assert sum(r.flash_bytes for r in plan.ops) == plan.flash_bytes == plan.flash.total
    # CONV_2D 8x3x3x3 in the Cortex-M4 build: int8 weights (TA_PACKED_S8), K = 27 rounded up to 28 per channel
    first = plan.ops[0].flash
    # the SIMD path's records alone: they hold bias, multiplier and shift (no plain arrays)
    assert first.weights == 8 * 28 and first.biases == 0
    assert first.requant == 8 * 4 * CONV_RQ_WORDS
    assert plan.ops[0].output_shape == (1, 48, 48, 8)
    peak_row = next(r for r in plan.ops if r.index == plan.peak_op)
    assert peak_row.live_bytes + peak_row.scratch_bytes == plan.lower_bound_bytes
    text = plan.table()
    assert "DEPTHWISE_CONV_2D" in text and f"{plan.peak_bytes:,}" in text and "lower bound" in text


def test_json_has_the_documented_keys(tmp_path):
    plan = tinyarena.plan(real_model("kws_ref_model"), sram="64K")
    path = tmp_path / "plan.json"
    data = json.loads(plan.to_json(path))
    assert json.loads(path.read_text()) == data
    for key in ("peak_bytes", "lower_bound_bytes", "flash_bytes", "flash", "target", "macs", "ops", "buffers"):
        assert key in data
    assert data["flash"]["total"] == data["flash_bytes"] == data["flash"]["constants"] + data["flash"]["code"]
    assert sum(op["flash"]["constants"] for op in data["ops"]) == data["flash"]["constants"]
    assert data["peak_bytes"] == plan.peak_bytes and data["fits"] is True and data["sram_limit"] == 65536
    assert set(data["buffers"][0]) >= {"index", "name", "first", "last", "size", "offset"}
    assert [b["index"] for b in data["buffers"]] == list(range(len(data["buffers"])))
    assert len(data["ops"]) == len(plan.graph.ops)


def test_sram_limit_is_reported_never_silently_exceeded():
    plan = tinyarena.plan(real_model("vww_96_int8"), sram="32K")
    assert not plan.fits and plan.sram_limit == 32 * 1024 and plan.peak_bytes > plan.sram_limit
    assert "DOES NOT FIT" in plan.table() and f"{plan.peak_bytes:,}" in plan.table()


def test_plans_are_deterministic():
    a = tinyarena.plan(real_model("person_detect")).to_json()
    b = tinyarena.plan(real_model("person_detect")).to_json()
    assert a == b


def test_bad_options_are_clear_errors():
    path = real_model("hello_world_int8")
    with pytest.raises(ValueError, match="unknown allocator 'magic'"):
        tinyarena.plan(path, allocator="magic")
    for align in (0, 3, 24):  # a 16-aligned arena keeps offsets aligned to powers of two only
        with pytest.raises(ValueError, match="alignment must be a power of two"):
            tinyarena.plan(path, alignment=align)
    with pytest.raises(ValueError, match="invalid size"):
        tinyarena.plan(path, sram="lots")


@pytest.mark.parametrize("text, expected", [("65536", 65536), ("64K", 65536), ("64KiB", 65536), ("1.5M", 1572864),
                                            (1000, 1000), ("2mb", 2 * 1024**2)])
def test_parse_size(text, expected):
    assert tinyarena.parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "-5", "64Q", "0.5", "K"])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError):
        tinyarena.parse_size(text)


def test_chart_draws_every_buffer_and_the_limit(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plan = tinyarena.plan(real_model("vww_96_int8"), sram="64K")
    ax = plan.plot(tmp_path / "a.png")
    assert (tmp_path / "a.png").stat().st_size > 10_000
    assert len(ax.collections[0].get_paths()) == len(plan.buffers)
    assert ax.get_ylim()[1] >= 64.0 and ax.get_xlim()[1] >= len(plan.ops) - 1
    plt.close(ax.figure)


# In-place ops never raise the peak --------------------------------------------------------


def ds_cnn_large():
    """Arm's large DS-CNN for keyword spotting (ML-zoo): a 10x4 conv with (2, 1) strides to
    25x10x276, a stride-2 depthwise block to 13x5x276, four more blocks, pool, FC, softmax."""
    mb = ModelBuilder("ds_cnn_large", seed=0)
    x = mb.conv2d(mb.input([1, 49, 10, 1]), 276, kernel=(10, 4), stride=(2, 1), activation="RELU")
    for stride in (2, 1, 1, 1, 1):
        x = mb.depthwise_conv2d(x, kernel=3, stride=stride, activation="RELU")
        x = mb.conv2d(x, 276, kernel=1, activation="RELU")
    x = mb.average_pool2d(x, pool=x.shape[1:3])
    mb.output(mb.softmax(mb.fully_connected(mb.reshape(x, [1, -1]), 12)))
    return mb.build()


def test_inplace_that_keeps_a_large_input_alive_is_declined():
    # Written over its 69,000 B input, the first (stride-2) depthwise's 17,940 B output would keep
    # that whole buffer alive through the next conv: 89,184 B there (with its 4-pixel column
    # scratch), against 87,648 B out of place.
    model = ds_cnn_large()
    on, off = tinyarena.plan(model), tinyarena.plan(model, inplace=False)
    assert on.inplace_declined == (1,) and on.liveness.inplace_ops == (3, 5, 7, 9)
    assert on.peak_bytes == off.peak_bytes == 87_648 and on.validate() == []
    everywhere = liveness.analyze_liveness(on.graph)  # every allowed op in place
    assert 1 in everywhere.inplace_ops and _lower_bound(everywhere, on.alignment) == 89_184


def _lower_bound(liveness, alignment):
    sizes = [(-(-b.size // alignment) * alignment, b.first, b.last) for b in liveness.buffers]
    steps = max(last for _, _, last in sizes) + 1
    return max(sum(size for size, first, last in sizes if first <= s <= last) for s in range(steps))


@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
def test_inplace_never_raises_the_peak_of_a_real_model(name):
    on, off = tinyarena.plan(real_model(name)), tinyarena.plan(real_model(name), inplace=False)
    assert on.peak_bytes <= off.peak_bytes and on.validate() == []
    assert not set(on.inplace_declined) & set(on.liveness.inplace_ops)


@pytest.mark.parametrize("transforms", [(), None])
def test_inplace_never_raises_the_peak_of_a_random_dag(transforms):
    declined = 0
    for seed in [*range(60), 223, 270]:  # 223 and 270 decline an in-place op after the default transforms
        for max_ops in (16, 40):
            data = builder.random_dag(seed, max_ops=max_ops)
            on = tinyarena.plan(data, transforms=transforms)
            off = tinyarena.plan(data, inplace=False, transforms=transforms)
            assert on.peak_bytes <= off.peak_bytes and on.validate() == [], (seed, max_ops)
            declined += bool(on.inplace_declined)
    assert declined >= 1  # the choice per op was exercised


# Flash of the build the plan targets -------------------------------------------------------


@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
def test_plan_flash_is_the_const_data_compile_reports(name, tmp_path):
    m4 = tinyarena.plan(real_model(name))  # target cortex-m4, as compile's default
    host = tinyarena.plan(real_model(name), target="host")
    compiled = compile_model(m4, tmp_path, target="cortex-m4")
    assert m4.target == "cortex-m4" and m4.flash.constants == compiled.const_bytes["dsp"]
    # FULLY_CONNECTED-only models: the same int8 weights in both builds
    assert host.flash.constants == compiled.const_bytes["portable"] <= m4.flash.constants
    m55 = tinyarena.plan(real_model(name), target="cortex-m55")  # Helium: int8 weights
    # (not always below the DSP build's: Helium's records pad channels to groups of 4, the DSP's are
    # 12 B per channel, person_detect 241,360 B against 240,824 B)
    assert m55.flash.constants == compiled.const_bytes["helium"]
    for plan in (m4, host):
        f = plan.flash
        assert f.constants == f.weights + f.biases + f.requant + f.tables and f.total == f.constants + f.code
        for key in ("weights", "biases", "requant", "tables", "code", "total"):
            assert sum(getattr(r.flash, key) for r in plan.ops) == getattr(f, key)
    assert m4.flash.code > 0 == host.flash.code
    assert m4.flash_bytes == m4.flash.total


def test_unknown_target_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown target 'cortex-m0'"):
        tinyarena.plan(real_model("hello_world_int8"), target="cortex-m0")


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="arm-none-eabi-gcc missing")
def test_kernel_code_estimate_is_the_measured_size():
    sys.path.insert(0, str(REPO / "tools"))
    from kernel_code_bytes import measure

    functions, sources, variants = measure()
    # hello_world: three FULLY_CONNECTED ops, one kernel.
    assert tinyarena.plan(real_model("hello_world_int8")).flash.code == functions["ta_fully_connected_s8"]
    # DS-CNN-L (the first depthwise out of place, the others in place): both depthwise kernels,
    # which share most of depthwise.c, and of its variant families only the 3x3 rows of both
    # strides (its depthwise layers are 3x3, one of stride 2) with their assembly and the SIMD path
    # they share.
    plan = tinyarena.plan(ds_cnn_large())
    depthwise = (min(functions["ta_depthwise_conv_s8"] + functions["ta_depthwise_conv_s8_inplace"],
                     sources["depthwise.c"]) + sum(variants[f"TA_DW_3X3_S{s}{asm}"] for s in (1, 2)
                                                   for asm in ("", "_ASM")) + variants["depthwise.c SIMD path"])
    expected = (functions["ta_conv_s8"] + depthwise + functions["ta_avg_pool_s8"] +
                functions["ta_fully_connected_s8"] + functions["ta_softmax_s8"])
    assert plan.flash.code == expected  # else: python tools/kernel_code_bytes.py --write


def test_the_makefile_compiles_only_the_kernel_families_the_layers_reach(tmp_path):
    """kws_ref_model's convs have packed int8 weights (a small patch, then pointwise; doubled, all of
    int8 as range, every channel's record with its fast form), its depthwise layers are all 3x3
    stride 1 (SIMD path, int8 weights; ReLU with output zero point -128: all of int8 as range,
    their channels run the assembly) and its fully connected layer has int8 weights without offset: its Makefile
    leaves conv's portable path, one-pixel column builder and general loop, the 5x5/7x7, generic,
    portable and one-dimensional depthwise rows and fully connected's packed int16 quads and portable
    path out; a 5x5
    layer brings its family and the generic rows back, and a 3x3 stride 2 layer whose activation
    range is not all of int8 brings its stride's rows without the assembly."""
    tinyarena.compile(tinyarena.plan(real_model("kws_ref_model")), tmp_path / "kws")
    makefile = (tmp_path / "kws" / "Makefile").read_text()
    assert ("KERNEL_VARIANTS := -DTA_CONV_PORTABLE=0 -DTA_CONV_COL_PIXEL=0 -DTA_CONV_S8W_GENERAL=0 -DTA_DW_3X3_S2=0 "
            "-DTA_DW_3X3_S2_ASM=0 -DTA_DW_WIDE5_S1=0 -DTA_DW_WIDE5_S2=0 -DTA_DW_WIDE7_S1=0 -DTA_DW_WIDE7_S2=0 "
            "-DTA_DW_GENERIC=0 -DTA_DW_PORTABLE=0 -DTA_DW_CHANNELS=0 -DTA_FC_PACKED16=0 -DTA_FC_PORTABLE=0\n") in makefile
    assert "$(KERNEL_VARIANTS) $(EXTRA_CFLAGS)" in makefile
    mb = ModelBuilder("dw5", seed=0)
    x = mb.depthwise_conv2d(mb.input([1, 12, 12, 8]), kernel=5, stride=1, activation="RELU")
    x = mb.depthwise_conv2d(x, kernel=3, stride=2, activation="RELU_N1_TO_1")  # act_min -127
    mb.output(mb.fully_connected(x, units=8))
    tinyarena.compile(tinyarena.plan(mb.build()), tmp_path / "dw5")
    assert ("KERNEL_VARIANTS := -DTA_DW_3X3_S1=0 -DTA_DW_3X3_S1_ASM=0 -DTA_DW_3X3_S2_ASM=0 -DTA_DW_WIDE5_S2=0 "
            "-DTA_DW_WIDE7_S1=0 -DTA_DW_WIDE7_S2=0 -DTA_DW_PORTABLE=0 -DTA_DW_CHANNELS=0 -DTA_FC_PACKED16=0 "
            "-DTA_FC_PORTABLE=0\n" in (tmp_path / "dw5" / "Makefile").read_text())


def test_compile_and_verify_are_top_level_and_results_print_what_they_hold(tmp_path):
    from tinyarena import codegen
    from tinyarena.verify import verify as verify_function

    assert tinyarena.compile is codegen.compile and tinyarena.verify is verify_function
    plan = tinyarena.plan(real_model("kws_ref_model"))
    compiled = tinyarena.compile(plan, tmp_path)
    assert compiled.arena_bytes == plan.peak_bytes and (tmp_path / "model.c").exists()
    core = repr(plan.core)
    assert core.startswith("<CorePlan peak ") and f"{plan.peak_bytes} B" in core and plan.allocation_method in core
    problem = repr(plan.problem)
    assert f"<Problem {len(plan.buffers)} buffers" in problem and f"lower bound {plan.lower_bound_bytes} B" in problem
    assert f"height {plan.peak_bytes} B" in repr(plan.solution)
    assert f"<Program kws_ref_model: {len(compiled.program.calls)} kernel calls" in repr(compiled.program)
    assert f"<Liveness {len(plan.buffers)} buffers" in repr(plan.liveness)
    assert repr(plan.ops[0]).startswith(f"<OpReport op {plan.ops[0].index} {plan.ops[0].type}: live ")
    assert "allocator auto" in repr(plan.core.options)
    for documented in (tinyarena.Plan.to_dict, tinyarena.Problem.solve, tinyarena.Problem.solve_exact,
                       tinyarena.Problem.local_search, tinyarena.Problem.to_csv, tinyarena.tiling.Segment):
        assert documented.__doc__ and len(documented.__doc__) > 60, documented


def test_verify_names_the_extra_when_the_interpreter_is_missing(monkeypatch):
    import importlib
    import pathlib
    import tomllib

    module = importlib.import_module("tinyarena.verify")
    real_import = importlib.import_module

    def without_interpreter(name, *args):
        if name.endswith(".interpreter"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args)

    monkeypatch.setattr(importlib, "import_module", without_interpreter)
    with pytest.raises(module.VerifyError, match=r"pip install 'tinyarena\[verify\]'"):
        tinyarena.verify(real_model("kws_ref_model"))
    assert "bit-exact" in module.VerifyResult.summary.__doc__
    pyproject = tomllib.loads((pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["optional-dependencies"]["verify"] == ["ai-edge-litert"]


def test_verify_command_names_the_extra_when_the_interpreter_is_missing(tmp_path):
    import os
    import subprocess
    import sys

    for package in ("ai_edge_litert", "tflite_runtime"):  # stand-ins that fail to import, first on the path
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("raise ImportError('not installed')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-m", "tinyarena.cli", "verify", real_model("kws_ref_model")],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 1 and "pip install 'tinyarena[verify]'" in run.stderr
    assert "Traceback" not in run.stderr


def test_verify_runs_the_plan_that_plan_makes():
    """One default allocator: `tinyarena.verify(model)` compiles `tinyarena.plan(model)` (auto), as
    the `plan` and `alloc` commands default to auto."""
    path = real_model("vww_96_int8")
    planned = tinyarena.plan(path, inplace=False)
    assert planned.allocation_method != "greedy_size_first_fit"  # auto did better than greedy here
    result = tinyarena.verify(path, inplace=False)
    assert result.bit_exact and result.arena_bytes == planned.peak_bytes
