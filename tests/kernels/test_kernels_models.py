"""Every op of the 8 shared int8 models, kernel by kernel, against TFLite's reference kernels.

Each model is run once with the reference resolver on random inputs (all intermediates kept);
each op's kernel is then fed the interpreter's own input tensors and must reproduce the
interpreter's output bytes exactly, in the portable and the SIMD (emulated) variant.
"""

from pathlib import Path

import pytest

from model_ops import run_model
from runner import compare

SHARED_MODELS = Path(__file__).resolve().parents[3] / "shared" / "models"

MODELS = [
    "ad01_int8.tflite", "hello_world_int8.tflite", "kws_ref_model.tflite", "micro_speech_quantized.tflite",
    "person_detect.tflite", "pretrainedResnet_quant.tflite", "str_ww_ref_model.tflite", "vww_96_int8.tflite",
]


@pytest.mark.parametrize("model", MODELS)
def test_model_ops_bit_exact(kernel_libs, model):
    path = SHARED_MODELS / model
    if not path.exists():
        pytest.skip(f"{path} not available")
    failures = []
    for seed in (0, 1):
        for case in run_model(path.read_bytes(), model, seed=seed):
            for k in kernel_libs.values():
                err = compare(k, case)
                if err:
                    failures.append(err)
    assert not failures, "\n".join(failures[:20])
