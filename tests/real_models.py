"""The real int8 models committed under tests/data/models (origins and licences in
tests/data/models/SOURCES.md) and what TFLM says of them."""

import pathlib

REPO = pathlib.Path(__file__).resolve().parents[1]
REAL_MODELS_DIR = REPO / "tests" / "data" / "models"

# Arena heads TFLite Micro reports for these models (activations only,
# 16-byte alignment; measured by running TFLM, see test_tflm_agreement.py).
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
REAL_MODEL_NAMES = sorted(TFLM_ARENA_BYTES)


def real_model(name):
    """The path of the committed model `name` (without .tflite)."""
    return REAL_MODELS_DIR / f"{name}.tflite"
