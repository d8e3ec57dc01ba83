"""The 8 real models, generated, built and run, bit-exact with TFLite's reference kernels.

Each configuration is a target and a plan: on the host the portable kernels (int8 weights)
and, with -DTA_SIMD_EMULATE, the SIMD-structured kernels on packed int16 weights in plain C;
on Cortex-M4 (QEMU mps2-an386) the DSP paths with the depthwise convolutions in place and out
of place, and the portable paths (-DTA_NO_SIMD); on Cortex-M7 (mps2-an500) the DSP paths.
Cortex-M3 (mps2-an385, no DSP extension: the portable kernels), Cortex-M33 (mps2-an505; DSP
paths) and Cortex-M55 (mps3-an547; DSP paths, conv's MAC loop and fully connected in Helium) run
a few models each (``FEW_MODELS``: dense, a DS-CNN and a MobileNet), enough to cover every kernel
path on each board at little CI time.
"""

import pytest

from conftest import needs_cortex_m
from real_models import REAL_MODEL_NAMES, real_model
from tinyarena.verify import verify

# id -> (target, in place, extra C flags)
CONFIGS = {
    "host": ("host", True, ""),
    "host-simd-emulated-no-inplace": ("host", False, "-DTA_SIMD_EMULATE"),
    "cortex-m4": ("cortex-m4", True, ""),
    "cortex-m4-no-inplace": ("cortex-m4", False, ""),
    "cortex-m4-no-simd": ("cortex-m4", True, "-DTA_NO_SIMD"),
    "cortex-m7": ("cortex-m7", True, ""),
    "cortex-m3": ("cortex-m3", True, ""),
    "cortex-m33": ("cortex-m33", True, ""),
    "cortex-m55": ("cortex-m55", True, ""),
}
# The models Cortex-M3, M33 and M55 run: FULLY_CONNECTED only (hello_world, ad01), a
# DS-CNN (kws_ref_model: conv, depthwise, average pool), a MobileNet (vww_96_int8: in-place
# depthwise and 1x1 convolutions, the inline-assembly kernels) and the depthwise shapes outside
# the square kernels: micro_speech (10 x 8, 80 taps, depth multiplier 8) and str_ww (K x 1 down
# one-column maps, in place).
FEW_MODELS = ("hello_world_int8", "ad01_int8", "kws_ref_model", "vww_96_int8", "micro_speech_quantized",
              "str_ww_ref_model")
FEW_MODEL_CONFIGS = ("cortex-m3", "cortex-m33", "cortex-m55")


# The quick subset keeps the plain host build of the small models; the rest is marked slow.
QUICK = {("hello_world_int8", "host"), ("ad01_int8", "host"), ("micro_speech_quantized", "host")}


def _params():
    for config, (target, _, _) in CONFIGS.items():
        for name in FEW_MODELS if config in FEW_MODEL_CONFIGS else REAL_MODEL_NAMES:
            marks = [needs_cortex_m] if target != "host" else [] if (name, config) in QUICK else [pytest.mark.slow]
            yield pytest.param(name, config, marks=marks, id=f"{name}-{config}")


@pytest.mark.parametrize("name,config", list(_params()))
def test_real_model_is_bit_exact(name, config):
    target, inplace, cflags = CONFIGS[config]
    result = verify(real_model(name), target=target, inplace=inplace, cflags=cflags)
    assert result.bit_exact, result.summary()
    if target != "host":
        assert 0 < result.stack_bytes < 4096, result.stack_bytes
