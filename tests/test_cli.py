"""The tinyarena command, run as a user runs it (a subprocess)."""

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

import tinyarena
from tinyarena import builder
from tinyarena.builder import opcodes

from real_models import REAL_MODEL_NAMES, real_model


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
    assert result.stderr == ""  # compile plans its own scratch: no not-compilable warning for --no-scratch


@pytest.mark.parametrize(
    "args, message",
    [
        (["plan", "MODEL", "--sram", "lots"], "invalid size"),
        (["plan", "MODEL", "--alignment", "0"], "alignment must be a power of two"),
        (["plan", "MODEL", "--alignment", "24"], "alignment must be a power of two"),
        (["compile", "MODEL", "--memory", "tcm:64K:3"], "ALIGN must be a power of two"),
        (["plan", "MODEL", "--allocator", "magic"], "invalid choice"),
        (["frobnicate"], "invalid choice"),
        (["plan", "MODEL", "--sram", "9223372036854775808"], "too large: at most 9,223,372,036,854,775,807 bytes"),
        (["plan", "MODEL", "--sram", "99999999999999999999G"], "too large"),
        (["plan", "MODEL", "--sram", "0"], "a limit must be at least 1 byte"),
        (["plan", "MODEL", "--sram", "-5"], "invalid size"),
        (["plan", "MODEL", "--sram", "0.3K"], "not a whole number of bytes"),
        (["plan", "MODEL", "--alignment", str(2**62)], "alignment must be a power of two"),
        (["plan", "MODEL", "--max-mac-overhead", "1.2"], "--max-mac-overhead applies to tiled schedules only"),
        (["plan", "MODEL", "--no-stream-input"], "--no-stream-input applies to tiled schedules only"),
        (["plan", "MODEL", "--stripe-rows", "2"], "--stripe-rows applies to tiled schedules only"),
        (["plan", "MODEL", "--tiling", "rows", "--max-mac-overhead", "0.5"], "must be at least 1.0"),
        (["plan", "MODEL", "--tiling", "rows", "--max-mac-overhead", "nan"], "must be at least 1.0"),
        (["plan", "MODEL", "--tiling", "rows", "--max-mac-overhead", "x"], "expected a number"),
        (["verify", "MODEL", "--max-mac-overhead", "1.5"], "applies to tiled schedules only: give --tiling"),
        (["verify", "MODEL", "--seed", "-1"], "must be at least 0"),
        (["compile", "MODEL", "-o", "OUT", "--memory", "tcm:0"], "a limit must be at least 1 byte"),
        (["compile", "MODEL", "-o", "OUT", "--memory", "tcm:64K:16:0xffffffffffffffff"], "end within 2^64"),
        (["compile", "MODEL", "-o", "OUT", "--memory", "tcm"], "expected NAME:SIZE[:ALIGN[:BASE]]"),
        (["compile", "MODEL", "-o", "OUT", "--memory", "tcm:64K", "--pin", "0=tcm:-16"], "OFFSET bytes >= 0"),
        (["compile", "MODEL", "-o", "OUT", "--memory", "tcm:64K", "--pin", "nonsense"], "expected BUFFER=MEMORY"),
        (["compile", "MODEL", "-o", "OUT", "--memory", "tcm:64K", "--pin", "99=tcm"], "no buffer 99"),
        (["compile", "MODEL", "-o", "OUT", "--pin", "0=tcm"], "give --memory"),
        (["compile", "MODEL", "-o", "OUT", "--memory", "tcm:64K", "--block", "0="], "expected BUFFER=MEMORY"),
        (["compile", "MODEL"], "the following arguments are required: -o/--output"),
        (["plan", "MODEL", "--transforms", "fold"], "unknown transform 'fold'"),
        (["plan", "MODEL", "--transforms", ""], "give transform names (or --no-transforms)"),
        (["compile", "MODEL", "-o", "OUT", "--name", " "], "argument --name: give a name"),
        (["plan", "missing.tflite"], "cannot open 'missing.tflite': no such file"),
        (["plan", "."], "'.' is a directory, not a file"),
        (["alloc", "missing.csv"], "cannot open 'missing.csv': no such file"),
        (["alloc", "PROBLEM", "--capacity", "0"], "a limit must be at least 1 byte"),
        (["alloc", "PROBLEM", "--seconds", "0"], "must be above 0.0"),
        (["alloc", "PROBLEM", "--seconds", "inf"], "must be above 0.0 and at most 1e+06"),
        (["alloc", "PROBLEM", "--wall-seconds", "-1"], "must be at least 0.0"),
        (["plan", "MODEL", "-q", "-v"], "not allowed with argument"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args, message, tmp_path):
    problem = tmp_path / "problem.csv"
    problem.write_text("id,lower,upper,size\n0,0,2,64\n")
    given = {"MODEL": real_model("hello_world_int8"), "OUT": tmp_path / "out", "PROBLEM": problem}
    result = run(*[given.get(a, a) for a in args], cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr  # no usage block, no traceback
    assert result.stdout == ""


def test_exact_sizes_up_to_the_core_limit():
    assert tinyarena.parse_size("9007199254740993") == 9007199254740993  # 2^53 + 1: no float on the way
    assert tinyarena.parse_size("9223372036854775807") == 2**63 - 1
    assert tinyarena.parse_size("1.5K") == 1536 and tinyarena.parse_size("0.5K") == 512
    assert tinyarena.parse_size("2G") == 2 * 1024**3 and tinyarena.parse_size("1.25GiB") == 1342177280
    for bad in ("9223372036854775808", 2**63, "8589934592G", "0.1K"):
        with pytest.raises(ValueError):
            tinyarena.parse_size(bad)
    result = run("plan", real_model("hello_world_int8"), "--sram", "9223372036854775807")
    assert result.returncode == 0 and "SRAM limit    9,223,372,036,854,775,807 B: fits" in result.stdout


def test_python_limits_are_value_errors():
    path = real_model("hello_world_int8")
    for sram, message in ((0, "at least 1 byte"), ("0K", "at least 1 byte"), (2**63, "too large"),
                          (10**30, "too large"), (-1, "must not be negative")):
        with pytest.raises(ValueError, match=message):
            tinyarena.plan(path, sram=sram)
    assert tinyarena.plan(path, sram=2**63 - 1).fits


def test_output_folders_are_created_and_bad_outputs_are_one_line(tmp_path):
    model = real_model("hello_world_int8")
    chart, js, summary = tmp_path / "a" / "b.png", tmp_path / "c" / "d" / "e.json", tmp_path / "f" / "s.csv"
    result = run("plan", model, "--chart", chart, "--json", js, "--summary", summary)
    assert result.returncode == 0, result.stderr
    assert chart.stat().st_size > 0 and json.loads(js.read_text())["peak_bytes"] > 0
    assert len(summary.read_text().splitlines()) == 2
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for args, message in [(["compile", model, "-o", a_file], f"-o '{a_file}' exists and is not a directory"),
                          (["demo", "-o", a_file], "exists and is not a directory"),
                          (["plan", model, "--json", tmp_path], "is a directory: give a file path"),
                          (["plan", model, "--chart", a_file / "x.png"], "--chart: cannot create folder"),
                          (["alloc", __file__, "-o", a_file / "s.csv"], "-o: cannot create folder")]:
        result = run(*args)
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert len(result.stderr.splitlines()) == 1 and "Errno" not in result.stderr
    assert a_file.read_text() == "x"


def _unsupported_models(monkeypatch):
    """{name: model bytes} of models compile rejects and the op and reason each names."""
    monkeypatch.setitem(opcodes.OPCODES, "ELU", opcodes.OpCode(111, 1))
    monkeypatch.setitem(opcodes.OPCODES, "ABS", opcodes.OpCode(101, 1))
    monkeypatch.setitem(opcodes.OPCODES, "BUILTIN_250", opcodes.OpCode(250, 1))
    models = {}
    for op, code in (("ELU", 111), ("BUILTIN_250", 250)):
        mb = builder.ModelBuilder(op.lower())
        y = mb.relu(mb.input([1, 4, 4, 3], scale=0.02, zero_point=-3))
        mb.output(mb._unary(op, op.lower(), y, np.abs))
        models[op] = (mb.build(), f"op 1 ({op}) has no kernel")
    mb = builder.ModelBuilder("abs")
    x = mb.relu(mb.input([1, 8], scale=0.02, zero_point=-3))
    out = mb._new_tensor("abs", np.zeros([1, 8]))
    mb._emit("ABS", [x], [out])
    mb.output(out)
    models["ABS"] = (mb.build(), "op 1 (ABS) has no kernel")
    mb = builder.ModelBuilder("float_relu")
    x = mb.input([1, 4], dtype="float32")
    y = mb._new_tensor("relu", np.zeros([1, 4]), dtype="float32")
    mb._emit("RELU", [x], [y])
    mb.output(mb.quantize(y, 0.01, 0))
    models["float32"] = (mb.build(), "op 0 (RELU): the input is float32")
    return models


def test_plan_says_what_compile_would_reject(monkeypatch, tmp_path):
    for name, (data, reason) in _unsupported_models(monkeypatch).items():
        path = tmp_path / f"{name}.tflite"
        path.write_bytes(data)
        compiled = run("compile", path, "-o", tmp_path / name)
        assert compiled.returncode == 1 and reason in compiled.stderr, compiled.stderr
        result = run("plan", path, "--json", tmp_path / f"{name}.json")
        assert result.returncode == 0, result.stderr
        assert f"warning: not compilable: {reason}" in result.stderr
        # the same message compile prints, from the same lowering
        assert compiled.stderr.strip().removeprefix("error: ") in result.stderr
        data = json.loads((tmp_path / f"{name}.json").read_text())
        assert data["compilable"] is False and any(reason in r for r in data["not_compilable_reasons"])
        assert tinyarena.plan(path).compile_issues and run("plan", path, "-q").stderr == ""
    result = run("plan", real_model("vww_96_int8"), "--json", tmp_path / "vww.json")
    assert "warning" not in result.stderr
    data = json.loads((tmp_path / "vww.json").read_text())
    assert data["compilable"] is True and data["not_compilable_reasons"] == []


@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
def test_real_models_have_no_compile_issues(name):
    assert tinyarena.plan(real_model(name)).compile_issues == ()  # compile takes all eight (tests/codegen)


def test_summary_csv_appends_one_line_per_run(tmp_path):
    summary, model = tmp_path / "runs.csv", real_model("vww_96_int8")
    first = run("plan", model, "--summary", summary, "--sram", "64K")
    second = run("compile", model, "-o", tmp_path / "c", "--summary=" + str(summary), "--no-inplace")
    third = run("plan", model, "--summary", summary, "--sram", "32K", "-q")
    assert (first.returncode, second.returncode, third.returncode) == (0, 0, 2)
    rows = list(csv.DictReader(summary.open()))
    assert list(rows[0]) == list(tinyarena.report.SUMMARY_COLUMNS) and len(rows) == 3
    plans = [tinyarena.plan(model, sram="64K"), tinyarena.plan(model, inplace=False), tinyarena.plan(model)]
    for row, plan, command in zip(rows, plans, ("plan", "compile", "plan")):
        assert row["command"] == command and row["model"] == str(model) and row["tiling"] == "none"
        assert (int(row["peak_bytes"]), int(row["lower_bound_bytes"]), int(row["flash_bytes"]), int(row["macs"])) == (
            plan.peak_bytes, plan.lower_bound_bytes, plan.flash_bytes, plan.macs)
        assert float(row["seconds"]) > 0
    assert [r["options"] for r in rows] == ["--sram 64K", f"-o {tmp_path / 'c'} --no-inplace", "--sram 32K -q"]
    assert [r["exit_status"] for r in rows] == ["0", "0", "2"]
    assert summary.read_text().count("command,model") == 1
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    refused = run("plan", model, "--summary", other)
    assert refused.returncode == 2 and "other columns" in refused.stderr and other.read_text() == "a,b\n1,2\n"


def test_summary_of_verify(tmp_path):
    summary, model = tmp_path / "runs.csv", real_model("hello_world_int8")
    result = run("verify", model, "--summary", summary, "--seed", "3")
    assert result.returncode == 0 and "bit-exact on host" in result.stdout, result.stderr
    row = next(csv.DictReader(summary.open()))
    plan = tinyarena.plan(model, allocator="greedy_size_first_fit")  # verify's plan
    assert (row["command"], row["options"], row["exit_status"]) == ("verify", "--seed 3", "0")
    assert (int(row["peak_bytes"]), int(row["macs"])) == (plan.peak_bytes, plan.macs)


def test_summary_of_a_tiled_plan(tmp_path):
    summary = tmp_path / "runs.csv"
    result = run("plan", real_model("vww_96_int8"), "--tiling", "rows", "--summary", summary)
    assert result.returncode == 0, result.stderr
    row = next(csv.DictReader(summary.open()))
    best = tinyarena.tiling.search(real_model("vww_96_int8"), tiling="rows").best
    assert int(row["peak_bytes"]) == best.peak_bytes
    assert row["tiling"] == f"rows ({len(best.segments)} segments, 1.000x MACs)"


def test_quiet_and_verbose(tmp_path):
    model = real_model("hello_world_int8")
    quiet = run("plan", model, "-q", "--json", tmp_path / "a.json")
    assert quiet.returncode == 0 and quiet.stdout == "" and quiet.stderr == ""
    assert (tmp_path / "a.json").stat().st_size > 0
    failing = run("plan", model, "-q", "--sram", "16")
    assert failing.returncode == 2 and failing.stdout == "" and "error: the plan needs" in failing.stderr
    normal, verbose = run("plan", model), run("plan", model, "-v")
    assert verbose.stdout.startswith(normal.stdout)
    timing = verbose.stdout[len(normal.stdout):].strip()
    assert timing.startswith("time: plan ") and "compile check" in timing and "total" in timing
    compiled = run("compile", model, "-o", tmp_path / "c", "-v")
    assert compiled.returncode == 0 and "compile " in compiled.stdout.splitlines()[-1]


def test_bad_model_exits_1_with_a_message(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"garbage")
    result = run("plan", bad)
    assert result.returncode == 1 and "error: not a TFLite model" in result.stderr
    assert "Traceback" not in result.stderr
    missing = run("plan", tmp_path / "missing.tflite")  # a bad argument, not a bad model
    assert missing.returncode == 2 and "cannot open" in missing.stderr


def test_help_lists_the_commands():
    result = run("--help")
    assert result.returncode == 0 and "plan" in result.stdout and "demo" in result.stdout
    plan_help = run("plan", "--help")
    for flag in ("--sram", "--alignment", "--allocator", "--no-inplace", "--no-scratch", "--chart", "--json",
                 "--summary", "--quiet", "--verbose"):
        assert flag in plan_help.stdout


def test_demo_writes_model_chart_and_report(tmp_path):
    result = run("demo", "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    for name in ("demo_model.tflite", "allocation.png", "report.txt", "plan.json", "c/model.h", "c/model.c",
                 "c/Makefile", "c/kernels/src/conv.c"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    data = json.loads((tmp_path / "out" / "plan.json").read_text())
    assert data["peak_bytes"] >= data["lower_bound_bytes"] > 0 and len(data["ops"]) >= 10


def test_plan_reports_the_flash_of_the_target_build(tmp_path):
    model = real_model("micro_speech_quantized")
    for target in ("cortex-m4", "host", "cortex-m3", "cortex-m33", "cortex-m55"):
        js = tmp_path / f"{target}.json"
        assert run("plan", model, "--target", target, "--json", js).returncode == 0
        data = json.loads(js.read_text())
        expected = tinyarena.plan(model, target=target).flash_bytes
        assert data["target"] == target and data["flash_bytes"] == expected
    constants = {t: json.loads((tmp_path / f"{t}.json").read_text())["flash"]["constants"]
                 for t in ("cortex-m4", "host", "cortex-m3", "cortex-m33", "cortex-m55")}
    # Cortex-M3 has no DSP extension: the portable build's int8 weights, as the host's; the M33
    # stores the DSP build's, as the M4, where micro_speech's 10 x 8 depthwise kernel (too large to
    # widen per channel) is packed int16; the M55's Helium loops read int8 weights everywhere, its
    # conv records as many bytes as the portable build's bias, multipliers and shifts (12 per
    # channel, as the DSP build's since rec12: kws's constants are the same in every build).
    assert constants["cortex-m3"] == constants["host"] < constants["cortex-m4"]
    assert constants["cortex-m33"] == constants["cortex-m4"] > constants["cortex-m55"] == constants["host"]
    assert json.loads((tmp_path / "host.json").read_text())["flash"]["code"] == 0  # the host links no Cortex-M code


def test_unknown_target_is_one_line_and_exit_2(tmp_path):
    for command in (("plan", real_model("hello_world_int8")), ("compile", real_model("hello_world_int8"), "-o", tmp_path),
                    ("verify", real_model("hello_world_int8"))):
        result = run(*command, "--target", "cortex-m0")
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.splitlines()) == 1 and "cortex-m0" in result.stderr, result.stderr
