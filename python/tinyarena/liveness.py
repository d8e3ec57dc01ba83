"""Stage 2: liveness -- which buffers exist and over which op steps they live.

Views (RESHAPE, SQUEEZE, EXPAND_DIMS) share their input's buffer. With the
in-place options on, a depthwise convolution writes over its input and an
elementwise op over an input that dies there. Kernel scratch (im2col, the
in-place depthwise plane) gets buffers that live during their op only.
"""

from ._core import LiveBuffer, Liveness, LivenessOptions, analyze_liveness

__all__ = ["LiveBuffer", "Liveness", "LivenessOptions", "analyze_liveness"]
