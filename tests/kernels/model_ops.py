"""Test-only: run a .tflite model with TFLite's reference kernels and return every op with its
input/output values, quantization and builtin options.

Golden data comes from `ai_edge_litert` with `OpResolverType.BUILTIN_REF` and
`experimental_preserve_all_tensors=True`; options are read from the flatbuffer with
`ai_edge_litert.schema_py_generated` (tests only -- the product never depends on it).
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np
from ai_edge_litert import schema_py_generated as schema
from ai_edge_litert.interpreter import Interpreter, OpResolverType

_OP_NAMES = {v: k for k, v in vars(schema.BuiltinOperator).items() if isinstance(v, int) and not k.startswith("_")}
_OPTION_NAMES = {v: k for k, v in vars(schema.BuiltinOptions).items() if isinstance(v, int) and not k.startswith("_")}


@dataclass
class TensorValue:
    index: int
    name: str
    shape: tuple
    dtype: np.dtype
    value: np.ndarray
    scales: np.ndarray  # float32, empty if not quantized
    zero_points: np.ndarray  # int64
    quantized_dimension: int

    @property
    def scale(self) -> np.float32:
        return np.float32(self.scales[0]) if len(self.scales) else np.float32(0)

    @property
    def zero_point(self) -> int:
        return int(self.zero_points[0]) if len(self.zero_points) else 0


@dataclass
class OpCase:
    model: str
    index: int
    op_type: str
    inputs: List[Optional[TensorValue]]
    outputs: List[TensorValue]
    options: Dict[str, object] = field(default_factory=dict)

    def label(self) -> str:
        return f"{self.model} op#{self.index} {self.op_type}"


def _options(op) -> Dict[str, object]:
    """All scalar fields of the operator's builtin options table, keyed by schema accessor name."""
    kind = _OPTION_NAMES.get(op.BuiltinOptionsType(), "NONE")
    table = op.BuiltinOptions()
    if kind == "NONE" or table is None:
        return {}
    obj = getattr(schema, kind)()
    obj.Init(table.Bytes, table.Pos)
    out = {}
    for name in dir(obj):
        if not name[0].isupper() or name.startswith("GetRootAs") or name in ("Init",) or "BufferHasIdentifier" in name:
            continue
        try:
            out[name] = getattr(obj, name)()
        except TypeError:
            try:  # vectors: read them whole
                if name.endswith("AsNumpy"):
                    out[name[: -len("AsNumpy")]] = getattr(obj, name)()
            except TypeError:
                pass
    return out


def random_inputs(interpreter: Interpreter, rng: np.random.Generator):
    values = []
    for d in interpreter.get_input_details():
        if d["dtype"] == np.int8:
            values.append(rng.integers(-128, 128, d["shape"], dtype=np.int8))
        else:
            values.append(rng.uniform(-2.0, 2.0, d["shape"]).astype(d["dtype"]))
    return values


def fix_quantized_dimension(model: bytes) -> bytes:
    """Zero a `quantized_dimension` that is out of range for its tensor's rank.

    person_detect.tflite stores 3 for its 1-D bias tensors, which the current interpreter
    rejects at load time (TFLite Micro ignores the field). Patched in place; biases are
    quantized along their only dimension, 0.
    """
    buf = bytearray(model)
    fb = schema.Model.GetRootAs(buf, 0)
    for s in range(fb.SubgraphsLength()):
        sub = fb.Subgraphs(s)
        for t in range(sub.TensorsLength()):
            tensor = sub.Tensors(t)
            q = tensor.Quantization()
            if q is None or q.QuantizedDimension() < max(tensor.ShapeLength(), 1):
                continue
            off = q._tab.Offset(16)  # vtable slot 6: quantized_dimension
            buf[q._tab.Pos + off: q._tab.Pos + off + 4] = (0).to_bytes(4, "little")
    return bytes(buf)


def run_model(model: bytes, name: str, seed: int = 0, inputs=None) -> List[OpCase]:
    """Invoke `model` on random (or given) inputs and return one OpCase per operator."""
    model = fix_quantized_dimension(model)
    interpreter = Interpreter(
        model_content=model,
        experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
        experimental_preserve_all_tensors=True,
    )
    interpreter.allocate_tensors()
    rng = np.random.default_rng(seed)
    if inputs is None:
        inputs = random_inputs(interpreter, rng)
    for d, v in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(d["index"], v)
    interpreter.invoke()

    details = {d["index"]: d for d in interpreter.get_tensor_details()}

    def tensor(idx: int) -> Optional[TensorValue]:
        if idx < 0:
            return None
        d = details[idx]
        q = d["quantization_parameters"]
        value = np.array(interpreter.get_tensor(idx))
        return TensorValue(
            idx, d["name"], tuple(int(s) for s in d["shape"]), np.dtype(d["dtype"]), value,
            np.asarray(q["scales"], np.float32), np.asarray(q["zero_points"], np.int64), int(q["quantized_dimension"]),
        )

    fb = schema.Model.GetRootAs(model, 0)
    sub = fb.Subgraphs(0)
    cases = []
    for i in range(sub.OperatorsLength()):
        op = sub.Operators(i)
        code = fb.OperatorCodes(op.OpcodeIndex())
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        cases.append(
            OpCase(
                name, i, _OP_NAMES[builtin],
                [tensor(int(t)) for t in op.InputsAsNumpy()],
                [tensor(int(t)) for t in op.OutputsAsNumpy()],
                _options(op),
            )
        )
    return cases
