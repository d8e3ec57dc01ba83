"""`tinyarena demo` writes the compiled C of its network (c/); that C builds for the host and
gives the same bytes as TFLite's reference interpreter."""

import pytest
import re

import numpy as np

from tinyarena.demo import run_demo
from tinyarena.reader import load_model
from tinyarena.verify import build, random_inputs, reference_interpreter, run_program


@pytest.mark.slow
def test_demo_c_builds_and_matches_the_reference(tmp_path):
    plan = run_demo(tmp_path)
    c_dir = tmp_path / "c"
    header = (c_dir / "model.h").read_text()
    assert re.search(r"void tinyarena_demo_invoke\(const int8_t \*input0, int8_t \*output0\);", header)
    assert f"#define TINYARENA_DEMO_ARENA_BYTES {plan.peak_bytes}\n" in header
    assert f"static uint8_t ta_arena[{plan.peak_bytes}]" in (c_dir / "model.c").read_text()

    graph = load_model(tmp_path / "demo_model.tflite")
    inputs = random_inputs(graph, seed=3)
    (c_dir / "input0.bin").write_bytes(inputs[0].tobytes())
    run_program(build(c_dir, "host", trace=False), "host")
    ours = np.frombuffer((c_dir / "output0.bin").read_bytes(), dtype=np.int8)

    interpreter = reference_interpreter(graph.model_bytes)
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], inputs[0])
    interpreter.invoke()
    expected = interpreter.get_tensor(graph.outputs[0]).reshape(-1)
    assert ours.shape == expected.shape and np.array_equal(ours, expected)
