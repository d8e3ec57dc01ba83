"""Helpers of the builder tests: run models in the TFLite reference interpreter."""

import numpy as np

try:  # the reference interpreter: ai-edge-litert, else the older tflite-runtime (same API)
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
except ImportError:
    from tflite_runtime.interpreter import Interpreter, OpResolverType


def load(model: bytes) -> Interpreter:
    """A reference-kernel interpreter with tensors allocated."""
    interpreter = Interpreter(model_content=model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    return interpreter


def random_inputs(interpreter: Interpreter, seed: int = 0):
    """Random values for every input: uniform int8, or floats in [-1, 1]."""
    rng = np.random.default_rng(seed)
    values = []
    for detail in interpreter.get_input_details():
        if detail["dtype"] == np.int8:
            values.append(rng.integers(-128, 128, detail["shape"], dtype=np.int8))
        else:
            values.append(rng.uniform(-1.0, 1.0, detail["shape"]).astype(detail["dtype"]))
    return values


def run(model: bytes, seed: int = 0):
    """Load ``model``, invoke it on random inputs and return ``(outputs, output details)``."""
    interpreter = load(model)
    for detail, value in zip(interpreter.get_input_details(), random_inputs(interpreter, seed)):
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    details = interpreter.get_output_details()
    return [interpreter.get_tensor(d["index"]) for d in details], details
