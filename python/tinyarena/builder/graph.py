"""The in-memory graph the builder fills and the serializer writes: tensors and operators."""

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import numpy as np

from .flatbuffer_writer import Field
from .quantize import QuantParams


@dataclass
class TensorSpec:
    """One tensor of the subgraph; ``data`` is set for constants (weights, shapes, axes)."""

    name: str
    shape: Tuple[int, ...]
    dtype: str
    quant: Optional[QuantParams] = None
    data: Optional[np.ndarray] = None
    is_variable: bool = False  # state an op keeps (an LSTM's hidden and cell state), no data


@dataclass(frozen=True)
class OptionsTable:
    """A ``BuiltinOptions`` union value: its type code and the fields of its table.

    ``vector_fields`` hold int32 vectors (written as sub-vectors, e.g. ``squeeze_dims``).
    """

    type_code: int
    fields: Tuple[Field, ...] = ()
    vector_fields: Tuple[Tuple[int, Tuple[int, ...]], ...] = ()


@dataclass
class OperatorSpec:
    """One operator: its name (a key of ``opcodes.OPCODES``), tensor indices and options."""

    op: str
    inputs: List[int]
    outputs: List[int]
    options: Optional[OptionsTable] = None
    intermediates: List[int] = field(default_factory=list)  # tensors carrying only quantization


@dataclass
class Graph:
    """A single-subgraph model under construction."""

    name: str = "main"
    tensors: List[TensorSpec] = field(default_factory=list)
    operators: List[OperatorSpec] = field(default_factory=list)
    inputs: List[int] = field(default_factory=list)
    outputs: List[int] = field(default_factory=list)

    def add_tensor(self, tensor: TensorSpec) -> int:
        """Append a tensor and return its index."""
        self.tensors.append(tensor)
        return len(self.tensors) - 1

    def add_operator(self, operator: OperatorSpec) -> None:
        """Append an operator (operators are kept in execution order)."""
        self.operators.append(operator)
