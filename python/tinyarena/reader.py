"""Stage 1: read a .tflite model into the graph IR (``Graph``).

The reader is C++ and bounds-checked: a truncated, corrupted or hostile file
raises :class:`tinyarena.ModelError` (a ``ValueError``) naming what is wrong.
"""

import os

from . import _core
from ._core import Graph, Op, OpOptions, Tensor

__all__ = ["Graph", "Op", "OpOptions", "Tensor", "load_model"]


def load_model(source):
    """Return the ``Graph`` of a model given as a path, bytes, or an already loaded ``Graph``.

    ``graph.ops`` are in execution order; ``graph.tensors`` expose name, shape,
    dtype, quantization (``scale``/``zero_point`` numpy arrays) and, for
    constants, ``data`` as a read-only numpy array. Compile-time shape computations are
    folded into constants on reading: SHAPE, the int32 / int64 shape vectors made from it
    (STRIDED_SLICE, PACK, CONCATENATION of constants) and FILL of constant dimensions and value
    (``graph.model_bytes`` then holds the file's bytes followed by the folded values).
    """
    if isinstance(source, Graph):
        return source
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _core.read_tflite(bytes(source))
    if isinstance(source, (str, os.PathLike)):
        return _core.read_tflite_file(os.fspath(source))
    raise TypeError(f"expected a path, bytes or Graph, not {type(source).__name__}")
