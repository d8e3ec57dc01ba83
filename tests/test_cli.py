"""The tinyarena command, run as a user runs it (a subprocess)."""

import json
import subprocess
import sys

import pytest

import tinyarena

from real_models import real_model


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "tinyarena.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_plan_writes_chart_and_json(tmp_path):
    chart, js = tmp_path / "a.png", tmp_path / "a.json"
    result = run("plan", real_model("vww_96_int8"), "--sram", "64K", "--chart", chart, "--json", js)
    assert result.returncode == 0, result.stderr
    assert chart.stat().st_size > 10_000
    data = json.loads(js.read_text())
    assert data["peak_bytes"] <= 65536 and data["fits"]
    assert "peak SRAM" in result.stdout


def test_plan_over_the_limit_exits_2_with_needed_bytes():
    result = run("plan", real_model("vww_96_int8"), "--sram", "32K")
    assert result.returncode == 2
    needed = tinyarena.plan(real_model("vww_96_int8")).peak_bytes  # the CLI plans with the same defaults
    assert needed > 32_768
    assert f"needs {needed:,} bytes" in result.stderr and "32,768 bytes" in result.stderr


def test_tflm_comparison_flags():
    result = run("plan", real_model("vww_96_int8"), "--allocator", "greedy_size_first_fit", "--no-inplace",
                 "--no-scratch", "--alignment", "16")
    assert result.returncode == 0
    assert "peak SRAM     73,728 B" in result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["plan", "MODEL", "--sram", "lots"], "invalid size"),
        (["plan", "MODEL", "--alignment", "0"], "alignment must be a power of two"),
        (["plan", "MODEL", "--alignment", "24"], "alignment must be a power of two"),
        (["compile", "MODEL", "--memory", "tcm:64K:3"], "ALIGN must be a power of two"),
        (["plan", "MODEL", "--allocator", "magic"], "invalid choice"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(args, message):
    args = [real_model("hello_world_int8") if a == "MODEL" else a for a in args]
    result = run(*args)
    assert result.returncode == 2 and message in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_model_exits_1_with_a_message(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"garbage")
    result = run("plan", bad)
    assert result.returncode == 1 and "error: not a TFLite model" in result.stderr
    assert "Traceback" not in result.stderr
    missing = run("plan", tmp_path / "missing.tflite")
    assert missing.returncode == 1 and "cannot open" in missing.stderr


def test_help_lists_the_commands():
    result = run("--help")
    assert result.returncode == 0 and "plan" in result.stdout and "demo" in result.stdout
    plan_help = run("plan", "--help")
    for flag in ("--sram", "--alignment", "--allocator", "--no-inplace", "--no-scratch", "--chart", "--json"):
        assert flag in plan_help.stdout


def test_demo_writes_model_chart_and_report(tmp_path):
    result = run("demo", "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    for name in ("demo_model.tflite", "allocation.png", "report.txt", "plan.json", "c/model.h", "c/model.c",
                 "c/Makefile", "c/kernels/src/conv.c"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    data = json.loads((tmp_path / "out" / "plan.json").read_text())
    assert data["peak_bytes"] >= data["lower_bound_bytes"] > 0 and len(data["ops"]) >= 10
