"""``BuilderCore``: model inputs/outputs, serialization, and the helpers every layer uses.

Calibration: each tensor keeps a float sample (the value it takes for one random input drawn
uniformly over the model input's int8 range). A layer computes its float output from its
input's sample with numpy (in float64, see ``float_ops``), then picks the output's scale/zero
point from the observed min/max, as a post-training converter does, and stores the
fake-quantized sample for the next layer. Weighted layers also fold a random batch norm into
their weights from these statistics (see ``weights``), which keeps deep random networks in range.
The float pass costs about as much as one float inference: MobileNetV2 1.0@224 builds in
about 0.3 s on an idle 2-core machine (up to ~3 s when other processes keep both cores busy and
multithreaded BLAS contends), so no analytic range shortcut is needed.
"""

import os
from collections import Counter
from typing import List, Optional, Sequence, Union

import numpy as np

from .args import check_qparams, check_shape
from .graph import Graph, OperatorSpec, OptionsTable, TensorSpec
from .quantize import QuantParams, fake_quantize, qparams_from_sample, real_range
from .schema import serialize_model
from .tensor import Tensor
from .weights import WeightSampler

_INPUT_DTYPES = ("int8", "float32")
DEFAULT_INPUT_SCALE = 1.0 / 128.0
DEFAULT_INPUT_ZERO_POINT = 0


class BuilderCore:
    """State of a model under construction; the layer methods live in mixins."""

    def __init__(self, name: str = "model", seed: int = 0):
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        self.name = name
        self.seed = seed
        self._graph = Graph()
        self._weights = WeightSampler(seed)
        self._samples = {}
        self._scope_counts = Counter()

    # ----------------------------------------------------------------- public API

    def input(
        self,
        shape: Sequence[int],
        scale: float = DEFAULT_INPUT_SCALE,
        zero_point: int = DEFAULT_INPUT_ZERO_POINT,
        dtype: str = "int8",
        name: Optional[str] = None,
    ) -> Tensor:
        """Add a model input of ``shape`` and return its handle.

        An int8 input is quantized with ``scale``/``zero_point``. A float32 input carries no
        quantization; its calibration sample spans the same real range, so a following
        ``quantize()`` picks about these parameters.
        """
        shape = check_shape(shape, "input shape")
        if dtype not in _INPUT_DTYPES:
            raise ValueError(f"input dtype must be one of {_INPUT_DTYPES}, got {dtype!r}")
        scale, zero_point = check_qparams(scale, zero_point, "input")
        sample = self._weights.uniform(shape, *real_range(scale, zero_point))
        qparams = (scale, zero_point) if dtype == "int8" else None
        handle = self._new_tensor(name or self._scope("input"), sample, dtype, qparams)
        self._graph.inputs.append(handle.index)
        return handle

    def output(self, *tensors: Tensor) -> None:
        """Mark tensors as model outputs (in the order given; may be called repeatedly)."""
        if not tensors:
            raise ValueError("output() needs at least one tensor")
        for tensor in tensors:
            self._check_tensor(tensor, "output", dtype=None)
            if tensor.index in self._graph.outputs:
                raise ValueError(f"{tensor.name} is already a model output")
            self._graph.outputs.append(tensor.index)

    def build(self) -> bytes:
        """Serialize the model to the bytes of a ``.tflite`` file."""
        if not self._graph.inputs:
            raise ValueError("the model has no inputs; call input() first")
        if not self._graph.outputs:
            raise ValueError("the model has no outputs; call output() first")
        return serialize_model(self._graph, description=f"tinyarena.builder: {self.name}")

    def save(self, path: Union[str, os.PathLike]) -> bytes:
        """Build the model, write it to ``path`` and return the bytes."""
        data = self.build()
        with open(path, "wb") as f:
            f.write(data)
        return data

    def calibration_sample(self, tensor: Tensor) -> np.ndarray:
        """The float value ``tensor`` takes for the calibration input (a copy).

        For int8 tensors it is already rounded through the tensor's quantization, so
        ``quantize(calibration_sample(input))`` fed to the built model should give outputs close
        to the outputs' calibration samples.
        """
        self._check_tensor(tensor, "calibration_sample", dtype=None)
        return self._samples[tensor.index].copy()

    @property
    def num_operators(self) -> int:
        """Number of operators added so far."""
        return len(self._graph.operators)

    # ------------------------------------------------------------ layer helpers

    def _scope(self, kind: str) -> str:
        """A fresh name prefix such as ``conv2d_3``."""
        self._scope_counts[kind] += 1
        return f"{kind}_{self._scope_counts[kind]}"

    def _check_tensor(self, tensor, what: str, dtype: Optional[str] = "int8", rank: Optional[int] = None) -> Tensor:
        """Validate that ``tensor`` is a handle of this builder with the expected dtype/rank."""
        if not isinstance(tensor, Tensor) or not tensor.belongs_to(self):
            raise ValueError(f"{what}: expected a Tensor made by this ModelBuilder, got {tensor!r}")
        if dtype is not None and tensor.dtype != dtype:
            hint = " (use quantize() first)" if dtype == "int8" else ""
            raise ValueError(f"{what}: expected a {dtype} tensor, got {tensor.dtype} {tensor.name}{hint}")
        if rank is not None and tensor.rank != rank:
            raise ValueError(f"{what}: expected a rank-{rank} tensor, got shape {tensor.shape}")
        return tensor

    def _sample(self, tensor: Tensor) -> np.ndarray:
        """The float calibration sample of ``tensor``, as float64 for the calibration math."""
        return self._samples[tensor.index].astype(np.float64)

    def _new_tensor(
        self, name: str, sample: np.ndarray, dtype: str = "int8", qparams=None, min_scale: float = 0.0
    ) -> Tensor:
        """Add an activation tensor whose value for the calibration input is ``sample``.

        For int8, ``qparams`` = ``(scale, zero_point)``, or None to calibrate from the sample
        with a scale of at least ``min_scale`` (a limit some kernels impose).
        """
        sample = np.asarray(sample, np.float32)
        quant = None
        if dtype == "int8":
            scale, zero_point = qparams if qparams is not None else qparams_from_sample(sample, min_scale)
            quant = QuantParams.per_tensor(scale, zero_point)
            sample = fake_quantize(sample, scale, zero_point)
        spec = TensorSpec(name, tuple(int(d) for d in sample.shape), dtype, quant)
        index = self._graph.add_tensor(spec)
        self._samples[index] = sample
        return Tensor(self, index, spec)

    def _same_quant_tensor(self, name: str, x: Tensor, sample: np.ndarray) -> Tensor:
        """An output tensor sharing the quantization of ``x`` (ops whose int8 kernels move values)."""
        return self._new_tensor(name, sample, qparams=(x.scale, x.zero_point))

    def _constant(self, name: str, data: np.ndarray, dtype: str, quant: Optional[QuantParams] = None) -> int:
        """Add a constant tensor holding ``data`` and return its index."""
        spec = TensorSpec(name, tuple(int(d) for d in data.shape), dtype, quant, np.ascontiguousarray(data))
        return self._graph.add_tensor(spec)

    def _int32_constant(self, name: str, values, shape=None) -> int:
        """Add an int32 constant (shape vectors, axes, paddings, ...)."""
        data = np.asarray(values, np.int32)
        if shape is not None:
            data = data.reshape(shape)
        return self._constant(name, data, "int32")

    def _emit(
        self,
        op: str,
        inputs: List[Union[Tensor, int]],
        outputs: List[Tensor],
        options: Optional[OptionsTable] = None,
        intermediates: Sequence[int] = (),
    ) -> None:
        """Append an operator reading ``inputs`` (handles or tensor indices, -1 for an omitted one)."""
        input_indices = [t.index if isinstance(t, Tensor) else int(t) for t in inputs]
        self._graph.add_operator(
            OperatorSpec(op, input_indices, [t.index for t in outputs], options, list(intermediates)))
