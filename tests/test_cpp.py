"""Builds the C++ core with AddressSanitizer + UBSan and runs its unit tests, the
reader fuzz driver over the real models (truncations and 10,000 mutants each,
seeded from each file's bytes, so every checkout fuzzes the same mutants) and the
C++ example that plans a model as tinyarena.plan does."""

import json
import os
import shutil
import subprocess

import pytest

import tinyarena
from golden_plans import model_paths
from real_models import REPO, REAL_MODEL_NAMES, real_model

pytestmark = pytest.mark.slow  # the sanitizer build alone takes minutes

BUILD_DIR = REPO / "build" / "cpp-tests-sanitized"


@pytest.fixture(scope="module")
def sanitized_build():
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is needed to build the C++ tests")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    # -O1 with line tables: under ASan+UBSan it compiles about 3x faster than RelWithDebInfo's -O2 -g
    # (tiling/search.cpp: 26 s against 76 s), and line tables are all a sanitizer report needs.
    flags = "-O1 -g1 -DNDEBUG"
    subprocess.run(["cmake", "-S", str(REPO), "-B", str(BUILD_DIR), *generator, "-DTINYARENA_PYTHON=OFF",
                    "-DTINYARENA_TESTS=ON", "-DTINYARENA_SANITIZE=ON", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                    f"-DCMAKE_C_FLAGS_RELWITHDEBINFO={flags}", f"-DCMAKE_CXX_FLAGS_RELWITHDEBINFO={flags}"],
                   check=True, capture_output=True)
    build = subprocess.run(["cmake", "--build", str(BUILD_DIR), "-j", str(os.cpu_count() or 2)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    return BUILD_DIR


def run_binary(path, *args):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1", UBSAN_OPTIONS="halt_on_error=1")
    result = subprocess.run([str(path), *map(str, args)], capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return result.stdout


def test_cpp_unit_tests_pass_under_sanitizers(sanitized_build):
    out = run_binary(sanitized_build / "tinyarena_tests")
    summary = out.strip().splitlines()[-1]
    passed, failed = int(summary.split()[0]), int(summary.split()[2])
    assert failed == 0 and passed >= 10


MUTANTS = 10_000


@pytest.mark.fuzz
def test_reader_fuzz_corpus_under_sanitizers(sanitized_build):
    models = [real_model(name) for name in REAL_MODEL_NAMES]
    out = run_binary(sanitized_build / "tinyarena_fuzz_reader", "--mutants", MUTANTS, *models)
    assert ", 0 failed" in out
    total = int(out.strip().splitlines()[-1].split()[0])
    assert total == 2 + len(models) * (64 + MUTANTS)


def _python_plan_summary(path, io, input_layout):
    """What examples/plan_model.cpp prints, from tinyarena.plan."""
    plan = tinyarena.plan(path, io=io, input_layout=input_layout)
    core = plan.core
    buffers = [[b.first, b.last, b.size, offset] for b, offset in zip(core.problem.buffers, core.solution.offsets)]
    return {"peak_bytes": plan.peak_bytes, "lower_bound_bytes": plan.lower_bound_bytes,
            "allocation_method": plan.allocation_method, "proven_optimal": plan.proven_optimal,
            "transforms_kept": [[t.name, t.applied] for t in plan.transforms],
            "order": list(core.liveness.order), "buffers": buffers}


def test_cpp_pipeline_plans_equal_pythons_on_every_model(sanitized_build):
    """examples/plan_model.cpp calls plan::run_pipeline as tinyarena.plan does: the same plan."""
    for path in model_paths():
        for io, layout in (("model", "model"), ("int8", "nhwc")):
            args = ["--io", "int8", "--input-layout", "nhwc"] if io == "int8" else []
            printed = json.loads(run_binary(sanitized_build / "tinyarena_plan_model", path, *args))
            assert printed == _python_plan_summary(path, io, layout), (path.name, io)
