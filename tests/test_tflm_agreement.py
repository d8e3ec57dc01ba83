"""Our greedy first fit predicts TFLite Micro's own arena head byte for byte:
measured here by running TFLM itself (PyPI `tflite-micro`, RecordingMicroAllocator)."""

import pytest

import tinyarena
from real_models import REAL_MODEL_NAMES, TFLM_ARENA_BYTES, real_model
from tflm_reference import tflm_arena_head


@pytest.mark.parametrize("name", REAL_MODEL_NAMES)
def test_first_fit_equals_tflm_arena_head(name):
    try:
        import tflite_micro  # noqa: F401
    except ImportError:
        pytest.fail("tflite-micro is not installed (pip install tflite-micro; .ci/run installs it)")
    path = real_model(name)
    measured = tflm_arena_head(path)
    assert measured == TFLM_ARENA_BYTES[name]
    plan = tinyarena.plan(path, allocator="greedy_size_first_fit", inplace=False, scratch=False, alignment=16)
    assert plan.peak_bytes == measured
