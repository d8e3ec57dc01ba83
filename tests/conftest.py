"""Suite-wide set-up: test modules in sub-folders import the helpers in this folder
(real_models, tflm_reference). Markers are declared in pyproject.toml."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
