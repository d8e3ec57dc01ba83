"""The generated C compiles without a single warning under -Wall -Wextra -Wpedantic -std=c99:
every real model untiled and tiled (rows, patches, auto), a detector-style builder network
(upsampling by RESIZE_NEAREST_NEIGHBOR joined to a skip by CONCATENATION) whose row-streamed
segments include ones without rings, and the converted files with float32 ADDs and TILE.
Syntax and warnings only (-fsyntax-only), with and without the SIMD paths (-DTA_SIMD_EMULATE),
model.c, main.c and the kernel sources emitted with them."""

import os
import pathlib
import shutil
import subprocess

import pytest

import tinyarena
from real_models import REAL_MODEL_NAMES, real_model
from tinyarena import builder, tiling
from tinyarena.codegen import compile as compile_model

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

STRICT = ["gcc", "-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-fsyntax-only"]
MODES = ("none", "rows", "patches", "auto")


def detector_model():
    """A small YOLO-style detector: strided backbone, a 1x1 neck upsampled 2x and concatenated
    with the stride-8 features, one detection head per scale."""
    mb = builder.ModelBuilder("detector", seed=3)
    x = mb.input([1, 64, 64, 3])
    y = mb.conv2d(x, 8, kernel=3, stride=2, activation="RELU")
    y = mb.conv2d(y, 16, kernel=3, stride=2, activation="RELU")
    c3 = mb.conv2d(y, 16, kernel=3, stride=2, activation="RELU")
    c4 = mb.conv2d(mb.max_pool2d(c3, pool=2), 32, kernel=3, activation="RELU")
    neck = mb.conv2d(c4, 16, kernel=1, activation="RELU")
    up = mb.resize_nearest_neighbor(neck, c3.shape[1:3])
    p3 = mb.conv2d(mb.concatenation([up, c3], axis=3), 16, kernel=3, activation="RELU")
    mb.output(mb.conv2d(p3, 18, kernel=1), mb.conv2d(c4, 18, kernel=1))
    return mb.build()


def planned(model, mode):
    if mode == "none":
        return tinyarena.plan(model)
    return tiling.search(model, tiling=mode, max_mac_overhead=1.0 if mode == "rows" else 1.3).best


def strict_errors(out_dir, *flags):
    """gcc's complaints about the generated sources (empty when clean)."""
    sources = ["model.c", "main.c"] + sorted(f"kernels/src/{p.name}" for p in (out_dir / "kernels" / "src").glob("*.c"))
    run = subprocess.run(STRICT + ["-Ikernels/include", *flags, *sources], cwd=out_dir, capture_output=True,
                         text=True, env={**os.environ, "LC_ALL": "C"})
    return run.stderr


def check_strict(plan, out_dir):
    compiled = compile_model(plan, out_dir)
    for flags in ((), ("-DTA_SIMD_EMULATE",)):
        assert strict_errors(compiled.out_dir, *flags) == "", flags
    return compiled


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
def test_real_model_compiles_without_warnings(name, mode, tmp_path):
    check_strict(planned(real_model(name), mode), tmp_path)


CONVERTED_DIR = pathlib.Path(__file__).resolve().parents[1] / "data" / "converted"


@pytest.mark.parametrize("mode", ["none", "auto"])
@pytest.mark.parametrize("name", ["mobilenet_v2_torch_64", "yolo_tiny_upsampling2d_128x160_int8io"])
def test_float_adds_and_tile_compile_without_warnings(name, mode, tmp_path):
    # litert-torch's float32 residual ADDs (ta_add_f32, float params) and Keras 3 UpSampling2D's TILE.
    plan = planned(CONVERTED_DIR / f"{name}.tflite", mode)
    model_c = (check_strict(plan, tmp_path).out_dir / "model.c").read_text()
    assert ("ta_add_f32(" in model_c) != ("ta_tile_s8(" in model_c)


@pytest.mark.parametrize("mode", MODES)
def test_detector_compiles_without_warnings(mode, tmp_path):
    plan = planned(detector_model(), mode)
    check_strict(plan, tmp_path)
    assert {"RESIZE_NEAREST_NEIGHBOR", "CONCATENATION"} <= {op.type for op in plan.graph.ops}


def test_lstm_compiles_without_warnings(tmp_path):
    # Sequence output, cell clip, batch 2 and time-major; and the last step only (slice folded).
    for i, (batch, time_major, last_step) in enumerate([(2, True, False), (1, False, True)]):
        mb = builder.ModelBuilder("lstm", seed=i)
        x = mb.input([3, batch, 4] if time_major else [batch, 3, 4])
        y = mb.lstm(x, 8, cell_clip=1.0, time_major=time_major)
        mb.output(mb.strided_slice(y, [0, 2, 0], [1, 3, 8], shrink_axis_mask=2) if last_step else y)
        check_strict(tinyarena.plan(mb.build()), tmp_path / str(i))


def test_row_streamed_segments_with_and_without_rings_compile_without_warnings(tmp_path):
    """A one-op segment holds no ring (its input and output are whole tensors); the two-op one
    holds its middle tensor in a ring."""
    plan = tiling.tile(detector_model(), [tiling.Segment([0]), tiling.Segment([1, 2])], stream_input=False,
                       transforms="none")
    model_c = (check_strict(plan, tmp_path).out_dir / "model.c").read_text()
    assert "ops 0..0, 0 rings," in model_c and "ops 1..2, 1 rings," in model_c


def test_the_check_sees_warnings(tmp_path):
    """The same command reports what -Wall/-Wpedantic catch (so a clean run means something)."""
    compiled = compile_model(tinyarena.plan(real_model("hello_world_int8")), tmp_path)
    with open(compiled.out_dir / "model.c", "a") as f:
        f.write("int helper(int a);\nint helper(int a) { int hi; return a; }\nstatic const int none[0];\n")
    errors = strict_errors(compiled.out_dir)
    assert "unused variable 'hi'" in errors and "zero-size array 'none'" in errors, errors
