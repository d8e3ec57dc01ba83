"""Interchange: MiniMalloc CSV problems/solutions and TFLite Micro offline plans."""

import subprocess
import sys

import pytest

import tinyarena
from tinyarena import allocation, interchange
from real_models import REAL_MODEL_NAMES, real_model
from tflm_reference import tflm_arena_head

CSV = """id,lower,upper,size,alignment,offset
a,0,2,100,1,
b,1,3,50,16,
c,2,4,100,1,200
"""


def test_csv_round_trip_with_half_open_lifetimes_and_pins():
    problem, offsets = interchange.read_problem_csv(CSV)
    assert [(b.name, b.first, b.last, b.size, b.alignment) for b in problem.buffers] == [
        ("a", 0, 1, 100, 1), ("b", 1, 2, 50, 16), ("c", 2, 3, 100, 1)]
    assert list(offsets) == [-1, -1, 200] and problem.buffers[2].fixed_offset == 200
    solution = allocation.greedy_size_first_fit(problem)
    assert allocation.validate(problem, solution) == [] and solution.offsets[2] == 200
    text = interchange.write_problem_csv(problem, solution)
    again, placed = interchange.read_problem_csv(text)
    assert list(placed) == list(solution.offsets)
    assert [(b.first, b.last, b.size) for b in again.buffers] == [(b.first, b.last, b.size) for b in problem.buffers]


def test_csv_minimal_columns_and_files(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("id,lower,upper,size\n0,0,1,8\n1,0,1,8\n")
    problem, offsets = interchange.read_problem_csv(path)
    assert len(problem) == 2 and list(offsets) == [-1, -1]
    assert allocation.greedy_size_best_fit(problem).height == 16


def test_csv_reads_minimalloc_header_aliases_with_an_inclusive_end():
    problem, _ = interchange.read_problem_csv("buffer,begin,end,size\nx,2,5,8\n")
    assert (problem.buffers[0].name, problem.buffers[0].first, problem.buffers[0].last) == ("x", 2, 5)
    problem, _ = interchange.read_problem_csv("buffer_id,start,upper,size\nx,2,5,8\n")
    assert (problem.buffers[0].name, problem.buffers[0].first, problem.buffers[0].last) == ("x", 2, 4)


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("id,lower,size\n0,0,8\n", "lacks the column 'upper'"),
    ("id,lower,upper,size\n0,0,x,8\n", "line 2: column 'upper' is not an integer"),
    ("id,lower,upper,size\n0,3,3,8\n", "line 2: lifetime"),
    ("id,lower,upper,size\n0,0,1,-8\n", "negative size"),
    ("id,lower,upper,size,alignment\n0,0,1,8,0\n", "alignment"),
])
def test_bad_csv_names_the_line(text, message):
    with pytest.raises(ValueError, match=message):
        interchange.read_problem_csv(text)


def test_plan_problem_exports_to_csv():
    plan = tinyarena.plan(real_model("kws_ref_model"))
    problem, offsets = interchange.read_problem_csv(interchange.write_problem_csv(plan.problem, plan.solution))
    assert list(offsets) == list(plan.offsets) and len(problem) == len(plan.buffers)


@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
def test_offline_plan_round_trips_and_tflm_uses_it(name, tmp_path):
    plan = tinyarena.plan(real_model(name), inplace=False, scratch=False)
    out = tmp_path / "planned.tflite"
    plan.write_offline_plan(out)
    data = out.read_bytes()
    offsets = interchange.read_offline_plan(data)
    graph = tinyarena.load_model(data)  # still a valid model, same graph
    assert len(offsets) == len(graph.tensors) == len(plan.graph.tensors)
    for t, buffer in enumerate(plan.liveness.tensor_buffer):
        assert offsets[t] == (plan.buffers[buffer].offset if buffer >= 0 else -1)
    assert tflm_arena_head(out) == plan.peak_bytes


def test_offline_plan_refuses_inplace_plans():
    plan = tinyarena.plan(real_model("vww_96_int8"), inplace=True)
    with pytest.raises(ValueError, match="do not run in place"):
        interchange.model_with_offline_plan(plan)


def test_cli_writes_offline_plan(tmp_path):
    out = tmp_path / "o.tflite"
    ok = subprocess.run([sys.executable, "-m", "tinyarena.cli", "plan", str(real_model("kws_ref_model")),
                         "--no-inplace", "--write-offline-plan", str(out)], capture_output=True, text=True)
    assert ok.returncode == 0 and len(interchange.read_offline_plan(out.read_bytes())) > 0
    refused = subprocess.run([sys.executable, "-m", "tinyarena.cli", "plan", str(real_model("vww_96_int8")),
                              "--write-offline-plan", str(out)], capture_output=True, text=True)
    assert refused.returncode == 2 and "--no-inplace" in refused.stderr and "Traceback" not in refused.stderr
