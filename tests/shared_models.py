"""The real models in ../shared/models (beside the repository) and what TFLM says of them."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED_MODELS = pathlib.Path(os.environ.get("TINYARENA_SHARED_MODELS", REPO.parent / "shared" / "models"))

# Arena heads TFLite Micro reports for these models (activations only,
# 16-byte alignment; measured by running TFLM, see shared notes).
TFLM_ARENA_BYTES = {
    "person_detect": 55_296,
    "kws_ref_model": 16_000,
    "pretrainedResnet_quant": 49_152,
    "ad01_int8": 768,
    "str_ww_ref_model": 6_656,
    "micro_speech_quantized": 5_968,
    "hello_world_int8": 32,
    "vww_96_int8": 73_728,
}
SHARED_MODEL_NAMES = sorted(TFLM_ARENA_BYTES)


def shared_model(name):
    path = SHARED_MODELS / f"{name}.tflite"
    if not path.exists():
        pytest.fail(f"shared model {path} is missing: tests need ../shared/models beside the repository")
    return path
