"""The I/O boundary converters put around an int8 network: float32 input and output, NCHW input.

TensorFlow's converter keeps float I/O by a QUANTIZE (float32 -> int8) of the input and a
DEQUANTIZE (int8 -> float32) of the output; a PyTorch export takes NCHW input and transposes it
to NHWC first (perm [0, 2, 3, 1]). ``model_input`` and ``model_output`` add these around the
network an architecture builds, so tests can exercise ``io="int8"`` and ``input_layout="nhwc"``.
"""

from typing import Sequence

from .model_builder import ModelBuilder
from .tensor import Tensor

NCHW_TO_NHWC = (0, 2, 3, 1)


def model_input(mb: ModelBuilder, nhwc_shape: Sequence[int], float_io: bool = False, nchw_input: bool = False,
                transpose_first: bool = False) -> Tensor:
    """The int8 NHWC tensor the network starts from.

    ``float_io``: the model input is float32, then QUANTIZE. ``nchw_input``: the model input is
    NCHW, then TRANSPOSE to NHWC. With both, the TRANSPOSE runs on the quantized int8 tensor, or
    (``transpose_first``) on the float32 input before the QUANTIZE."""
    n, h, w, c = nhwc_shape
    shape = [n, c, h, w] if nchw_input else [n, h, w, c]
    x = mb.input(shape, dtype="float32" if float_io else "int8")
    if nchw_input and transpose_first:
        x = mb.transpose(x, NCHW_TO_NHWC)
    if float_io:
        x = mb.quantize(x)
    if nchw_input and not transpose_first:
        x = mb.transpose(x, NCHW_TO_NHWC)
    return x


def model_output(mb: ModelBuilder, x: Tensor, float_io: bool = False) -> None:
    """Marks ``x`` (int8) as the model output, through a DEQUANTIZE to float32 with ``float_io``."""
    mb.output(mb.dequantize(x) if float_io else x)
