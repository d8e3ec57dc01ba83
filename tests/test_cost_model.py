"""The cost model (op_params/cost_model.h): predicted Cortex-M instructions per op.

The coefficients are cpp/data/cost_model.csv (tools/calibrate_cost_model.py writes them); the
QEMU test counts one inference of a model exactly and checks the prediction against it.
"""

import csv
import json
import pathlib
import sys
import tempfile

import pytest

import tinyarena
from tinyarena import _core, cli, tiling
from tinyarena.builder import architectures

from real_models import REAL_MODELS_DIR as MODEL_DIR

REPO = pathlib.Path(__file__).resolve().parents[1]
CSV = REPO / "cpp" / "data" / "cost_model.csv"
TERMS = ("macs", "live_macs", "clamped_macs", "inputs", "outputs", "pixels", "calls")
BUILDS = {"cortex-m4": "simd", "cortex-m3": "portable", "host": "portable"}
WEIGHTED = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


def committed_table():
    """{(build, kernel): [coefficient per TERMS]} of the committed CSV."""
    lines = [line for line in CSV.read_text().splitlines() if line and not line.startswith("#")]
    rows = list(csv.DictReader(lines))
    assert rows and list(rows[0])[:9] == ["build", "kernel", *TERMS]
    return {(r["build"], r["kernel"]): [float(r[t]) for t in TERMS] for r in rows}


def expected_prediction(table, build, graph, op):
    """The prediction recomputed from the CSV: the variant's row, else the type's, else '*'."""
    if graph.ops[op].elided:
        return 0
    kernel = _core.cost_kernel(graph, op)
    row = next(table[(build, k)] for k in (kernel, kernel.split("/")[0], "*") if (build, k) in table)
    terms = _core.cost_terms(graph, op)
    return int(sum(c * getattr(terms, t) for c, t in zip(row, TERMS)) + 0.5)


@pytest.mark.parametrize("target", sorted(BUILDS))
@pytest.mark.parametrize("model", ["kws_ref_model", "vww_96_int8", "ad01_int8"])
def test_committed_coefficients_give_the_plans_predictions(model, target):
    plan = tinyarena.plan(MODEL_DIR / f"{model}.tflite", target=target)
    table = committed_table()
    predicted = [r.predicted_instructions for r in plan.ops]
    assert predicted == [expected_prediction(table, BUILDS[target], plan.graph, r.index) for r in plan.ops]
    assert plan.predicted_instructions == sum(predicted)


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m3"])
@pytest.mark.parametrize("model", ["kws_ref_model", "person_detect", "micro_speech_quantized", "hello_world_int8"])
def test_predictions_are_positive_for_ops_with_weights(model, target):
    plan = tinyarena.plan(MODEL_DIR / f"{model}.tflite", target=target)
    assert all(r.predicted_instructions >= 0 for r in plan.ops)
    weighted = [r for r in plan.ops if r.type in WEIGHTED]
    assert weighted and all(r.predicted_instructions > 0 for r in weighted)


def test_the_portable_build_costs_more_than_the_simd_one():
    path = MODEL_DIR / "kws_ref_model.tflite"
    assert tinyarena.plan(path, target="cortex-m3").predicted_instructions > \
        2 * tinyarena.plan(path, target="cortex-m4").predicted_instructions


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m3"])
def test_predictions_grow_with_macs(tmp_path, target):
    plans = []
    for filters in (8, 16, 32):
        path = tmp_path / f"resnet8_{filters}.tflite"
        path.write_bytes(architectures.resnet8(base_filters=filters))
        plans.append(tinyarena.plan(path, target=target))
    assert plans[0].macs < plans[1].macs < plans[2].macs
    assert plans[0].predicted_instructions < plans[1].predicted_instructions < plans[2].predicted_instructions
    for small, large in zip(plans, plans[1:]):
        for a, b in zip(small.ops, large.ops):
            assert a.type == b.type
            if a.type in ("CONV_2D", "DEPTHWISE_CONV_2D") and b.macs > a.macs:
                assert b.predicted_instructions > a.predicted_instructions, (a.index, a.type)


def test_predictions_are_deterministic():
    path = MODEL_DIR / "person_detect.tflite"
    first, second = tinyarena.plan(path), tinyarena.plan(path)
    assert [r.predicted_instructions for r in first.ops] == [r.predicted_instructions for r in second.ops]


def test_table_and_json_carry_the_predictions():
    plan = tinyarena.plan(MODEL_DIR / "kws_ref_model.tflite")
    data = json.loads(plan.to_json())
    assert data["predicted_instructions"] == plan.predicted_instructions > 0
    assert [op["predicted_instructions"] for op in data["ops"]] == [r.predicted_instructions for r in plan.ops]
    text = plan.table()
    assert "instr (pred.)" in text.splitlines()[0]
    assert f"instructions  {plan.predicted_instructions:,} predicted for cortex-m4" in text


def test_cost_terms_of_a_pointwise_conv():
    plan = tinyarena.plan(MODEL_DIR / "person_detect.tflite")
    graph = plan.graph
    op = next(r for r in plan.ops if r.type == "CONV_2D" and graph.tensors[graph.ops[r.index].inputs[1]].shape[1:3] == (1, 1))
    terms = _core.cost_terms(graph, op.index)
    out = graph.tensors[graph.ops[op.index].outputs[0]]
    assert _core.cost_kernel(graph, op.index) == "CONV_2D/1x1"
    assert terms.macs == op.macs and 0 <= terms.live_macs <= terms.macs
    assert terms.outputs == out.element_count and terms.pixels == out.element_count / out.shape[-1]
    assert terms.calls == 1


@pytest.mark.qemu
@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m3"])
def test_prediction_within_10_percent_of_the_counted_instructions(target):
    sys.path.insert(0, str(REPO / "benchmarks"))  # the benchmarks' exact QEMU counting
    from codegen_bench import build_plugin
    from op_counts import compile_for_counts, invoke_count

    build = BUILDS[target]
    plan = tinyarena.plan(MODEL_DIR / "kws_ref_model.tflite", target=target)
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        compile_for_counts(plan, work / "kws", build)
        counted = invoke_count(work / "kws", build_plugin(work), build)
    assert abs(plan.predicted_instructions - counted) <= 0.10 * counted, (plan.predicted_instructions, counted)


def test_row_stripes_cost_predicted_instructions_at_the_same_macs():
    found = tiling.search(MODEL_DIR / "vww_96_int8.tflite", tiling="rows")
    best = found.best
    assert best.segments and best.mac_overhead == 1.0
    assert best.untiled_predicted_instructions == tinyarena.plan(MODEL_DIR / "vww_96_int8.tflite").predicted_instructions
    assert best.predicted_instructions > best.untiled_predicted_instructions  # one call per stripe
    assert best.latency_overhead == best.predicted_instructions / best.untiled_predicted_instructions
    assert f"{best.latency_overhead:.3f}x the untiled schedule's" in best.table()


def test_a_latency_budget_keeps_the_chosen_plan_within_it():
    path = MODEL_DIR / "vww_96_int8.tflite"
    free = tiling.search(path, tiling="rows").best
    bounded = tiling.search(path, tiling="rows", max_latency_overhead=1.0).best
    assert free.latency_overhead > 1.0
    assert bounded.latency_overhead <= 1.0 and bounded.peak_bytes >= free.peak_bytes
    with pytest.raises(ValueError, match="latency overhead budget"):
        tiling.search(path, tiling="rows", max_latency_overhead=0.5)


def test_cli_takes_max_latency_overhead_with_tiling_only(tmp_path, capsys):
    model = str(MODEL_DIR / "kws_ref_model.tflite")
    assert cli.main(["plan", model, "--max-latency-overhead", "1.2"]) == 2
    assert "--max-latency-overhead applies to tiled schedules only" in capsys.readouterr().err
    out = tmp_path / "plan.json"
    assert cli.main(["plan", model, "--tiling", "rows", "--max-latency-overhead", "1.5", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["predicted_instructions"] == sum(op["predicted_instructions"] for op in data["ops"])


@pytest.mark.slow  # plans the 15 calibration models twice
def test_refitting_the_committed_counts_gives_the_committed_table(tmp_path):
    """tools/cost_model_counts.json (the QEMU counts the table was fitted to) refits to
    cpp/data/cost_model.csv byte for byte: the fit is deterministic and the table is its output."""
    sys.path.insert(0, str(REPO / "tools"))
    import calibrate_cost_model

    out = tmp_path / "cost_model.csv"
    calibrate_cost_model.main(["--counts", str(REPO / "tools" / "cost_model_counts.json"), "--out", str(out)])
    assert out.read_text() == CSV.read_text()


CALLS_CSV = REPO / "cpp" / "data" / "cost_model_calls.csv"
CALL_TERMS = ("calls", "channels", "window", "leftover_macs", "strip_macs", "strip_channels")


def committed_call_table():
    """{(build, kernel): [coefficient per CALL_TERMS]} of the committed per-call CSV."""
    lines = [line for line in CALLS_CSV.read_text().splitlines() if line and not line.startswith("#")]
    rows = list(csv.DictReader(lines))
    assert rows and list(rows[0])[:8] == ["build", "kernel", *CALL_TERMS]
    return {(r["build"], r["kernel"]): [float(r[t]) for t in CALL_TERMS] for r in rows}


def test_tiled_predictions_add_the_call_table_to_the_scaled_untiled_ones():
    """A segment op: its untiled prediction with the work scaled by tiled / untiled MACs, plus the
    call terms of its calls beyond the first times the committed per-call coefficients."""
    sys.path.insert(0, str(REPO / "tools"))
    from calibrate_cost_model import segment_op_calls

    path = MODEL_DIR / "vww_96_int8.tflite"
    plan = tiling.search(path, tiling="auto", max_mac_overhead=1.15).best
    assert any(s.column_strips > 1 for s in plan.segments)
    table, calls_table = committed_table(), committed_call_table()
    graph = plan.graph
    reports = {r.index: r for r in plan.ops}
    for op, (calls, share, macs) in segment_op_calls(plan).items():
        kernel = _core.cost_kernel(graph, op)
        row = next(table[("simd", k)] for k in (kernel, kernel.split("/")[0], "*") if ("simd", k) in table)
        call_row = next((calls_table[("simd", k)] for k in (kernel, kernel.split("/")[0], "*")
                         if ("simd", k) in calls_table), [0.0] * len(CALL_TERMS))
        scale = macs / graph.ops[op].macs if graph.ops[op].macs else 1.0
        terms = _core.cost_terms(graph, op)
        call_terms = _core.call_terms(graph, op, calls, share, scale)
        work = sum(c * getattr(terms, t) for c, t in zip(row[:-1], TERMS[:-1]))
        expected = work * scale + row[-1] + sum(c * getattr(call_terms, t) for c, t in zip(call_row, CALL_TERMS))
        assert abs(reports[op].predicted_instructions - expected) <= 1, (op, kernel)


def test_call_terms_are_zero_for_one_call_and_grow_with_calls():
    plan = tinyarena.plan(MODEL_DIR / "vww_96_int8.tflite")
    graph = plan.graph
    op = next(r.index for r in plan.ops if r.type == "DEPTHWISE_CONV_2D")
    one = _core.call_terms(graph, op, 1.0, 1.0)
    assert all(getattr(one, t) == 0 for t in CALL_TERMS)
    rows, strips = _core.call_terms(graph, op, 48.0, 1.0), _core.call_terms(graph, op, 96.0, 0.5, 1.1)
    assert rows.calls == 47 and rows.channels > 0 and rows.window > 0 and rows.strip_macs == 0
    assert strips.calls == 95 and strips.strip_macs > 0 and strips.strip_channels == strips.channels


@pytest.mark.qemu
def test_tiled_prediction_within_10_percent_of_the_counted_instructions():
    sys.path.insert(0, str(REPO / "benchmarks"))
    from codegen_bench import build_plugin
    from op_counts import compile_for_counts, invoke_count

    plan = tiling.search(MODEL_DIR / "kws_ref_model.tflite", tiling="rows").best
    assert plan.segments
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        compile_for_counts(plan, work / "kws", "simd")
        counted = invoke_count(work / "kws", build_plugin(work), "simd")
    assert abs(plan.predicted_instructions - counted) <= 0.10 * counted, (plan.predicted_instructions, counted)


@pytest.mark.slow  # plans the tiled calibration's 21 plans
def test_refitting_the_committed_tiled_counts_gives_the_committed_call_table(tmp_path):
    sys.path.insert(0, str(REPO / "tools"))
    import calibrate_cost_model

    out = tmp_path / "cost_model_calls.csv"
    calibrate_cost_model.main(["--tiled", "--counts", str(REPO / "tools" / "cost_model_tiled_counts.json"),
                               "--out", str(out)])
    assert out.read_text() == CALLS_CSV.read_text()
