"""Serialization of a ``Graph`` into a TFLite flatbuffer (``Model`` root, identifier ``TFL3``).

Only the tables and fields the builder needs are written. Field slots are those of the public
TFLite schema (the field slots of schema.fbs). Buffer 0 is the empty sentinel; every
constant tensor gets its own buffer with 16-byte aligned data; other tensors use buffer 0.
"""

from typing import Dict, List

import flatbuffers
import numpy as np

from .flatbuffer_writer import (
    Field,
    write_aligned_bytes,
    write_offset_vector,
    write_scalar_vector,
    write_table,
)
from .graph import Graph, OperatorSpec, OptionsTable, TensorSpec
from .opcodes import OPCODES, PLACEHOLDER_FOR_GREATER_OP_CODES
from .quantize import QuantParams
from .schema_enums import DTYPE_CODES

SCHEMA_VERSION = 3
FILE_IDENTIFIER = b"TFL3"
_INITIAL_BUFFER_SIZE = 1 << 16


def serialize_model(graph: Graph, description: str = "tinyarena.builder") -> bytes:
    """Write ``graph`` as a complete ``.tflite`` file and return its bytes."""
    builder = flatbuffers.Builder(_INITIAL_BUFFER_SIZE + _constant_bytes(graph))
    buffers = _write_buffers(builder, graph.tensors)
    opcode_names = _opcode_order(graph.operators)
    opcodes = write_offset_vector(builder, [_write_operator_code(builder, name) for name in opcode_names])
    subgraph = _write_subgraph(builder, graph, {name: i for i, name in enumerate(opcode_names)})
    subgraphs = write_offset_vector(builder, [subgraph])
    description_offset = builder.CreateString(description)
    model = write_table(
        builder,
        [
            Field(0, "uint32", SCHEMA_VERSION),
            Field(1, "offset", opcodes),
            Field(2, "offset", subgraphs),
            Field(3, "offset", description_offset),
            Field(4, "offset", buffers),
        ],
    )
    builder.Finish(model, file_identifier=FILE_IDENTIFIER)
    return bytes(builder.Output())


def _constant_bytes(graph: Graph) -> int:
    return sum(t.data.nbytes for t in graph.tensors if t.data is not None)


def _opcode_order(operators: List[OperatorSpec]) -> List[str]:
    """Distinct operator names in order of first use."""
    return list(dict.fromkeys(op.op for op in operators))


def _write_buffers(builder: flatbuffers.Builder, tensors: List[TensorSpec]) -> int:
    """Write the ``buffers`` vector: the empty sentinel, then one per constant tensor."""
    offsets = [write_table(builder, [])]
    for tensor in tensors:
        if tensor.data is not None:
            data = write_aligned_bytes(builder, _little_endian_bytes(tensor.data))
            offsets.append(write_table(builder, [Field(0, "offset", data)]))
    return write_offset_vector(builder, offsets)


def _little_endian_bytes(array: np.ndarray) -> bytes:
    return np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()


def _write_operator_code(builder: flatbuffers.Builder, name: str) -> int:
    code, version = OPCODES[name]
    return write_table(
        builder,
        [
            Field(0, "int8", min(code, PLACEHOLDER_FOR_GREATER_OP_CODES)),
            Field(2, "int32", version),
            Field(3, "int32", code),
        ],
    )


def _write_subgraph(builder: flatbuffers.Builder, graph: Graph, opcode_index: Dict[str, int]) -> int:
    tensors = write_offset_vector(builder, _write_tensors(builder, graph.tensors))
    inputs = write_scalar_vector(builder, graph.inputs, np.int32)
    outputs = write_scalar_vector(builder, graph.outputs, np.int32)
    operators = write_offset_vector(
        builder, [_write_operator(builder, op, opcode_index[op.op]) for op in graph.operators]
    )
    name = builder.CreateString(graph.name)
    return write_table(
        builder,
        [
            Field(0, "offset", tensors),
            Field(1, "offset", inputs),
            Field(2, "offset", outputs),
            Field(3, "offset", operators),
            Field(4, "offset", name),
        ],
    )


def _write_tensors(builder: flatbuffers.Builder, tensors: List[TensorSpec]) -> List[int]:
    offsets = []
    next_buffer = 1
    for tensor in tensors:
        buffer_index = 0
        if tensor.data is not None:
            buffer_index, next_buffer = next_buffer, next_buffer + 1
        offsets.append(_write_tensor(builder, tensor, buffer_index))
    return offsets


def _write_tensor(builder: flatbuffers.Builder, tensor: TensorSpec, buffer_index: int) -> int:
    shape = write_scalar_vector(builder, tensor.shape, np.int32)
    name = builder.CreateString(tensor.name)
    fields = [
        Field(0, "offset", shape),
        Field(1, "int8", DTYPE_CODES[tensor.dtype]),
        Field(2, "uint32", buffer_index),
        Field(3, "offset", name),
    ]
    if tensor.quant is not None:
        fields.append(Field(4, "offset", _write_quantization(builder, tensor.quant)))
    if tensor.is_variable:
        fields.append(Field(5, "bool", True))
    return write_table(builder, fields)


def _write_quantization(builder: flatbuffers.Builder, quant: QuantParams) -> int:
    scale = write_scalar_vector(builder, quant.scale, np.float32)
    zero_point = write_scalar_vector(builder, quant.zero_point, np.int64)
    return write_table(
        builder,
        [Field(2, "offset", scale), Field(3, "offset", zero_point), Field(6, "int32", quant.quantized_dimension)],
    )


def _write_operator(builder: flatbuffers.Builder, op: OperatorSpec, opcode_index: int) -> int:
    inputs = write_scalar_vector(builder, op.inputs, np.int32)
    outputs = write_scalar_vector(builder, op.outputs, np.int32)
    fields = [Field(0, "uint32", opcode_index), Field(1, "offset", inputs), Field(2, "offset", outputs)]
    if op.intermediates:
        fields.append(Field(8, "offset", write_scalar_vector(builder, op.intermediates, np.int32)))
    if op.options is not None:
        fields.append(Field(3, "uint8", op.options.type_code))
        fields.append(Field(4, "offset", _write_options(builder, op.options)))
    return write_table(builder, fields)


def _write_options(builder: flatbuffers.Builder, options: OptionsTable) -> int:
    vectors = [
        Field(slot, "offset", write_scalar_vector(builder, values, np.int32)) for slot, values in options.vector_fields
    ]
    return write_table(builder, list(options.fields) + vectors)
