"""A thin layer over ``flatbuffers.Builder`` for writing tables, vectors and strings.

Tables are described as a list of ``Field(slot, kind, value)``; every listed field is written
(defaults are never elided, so a reader sees exactly what the builder meant). Offsets to
sub-tables, vectors and strings must be created before the table that refers to them, as
flatbuffers are written back to front.
"""

from typing import Any, Iterable, List, NamedTuple

import flatbuffers
import numpy as np

_SCALAR_SLOT_WRITERS = {
    "bool": "PrependBoolSlot",
    "uint8": "PrependUint8Slot",
    "int8": "PrependInt8Slot",
    "int32": "PrependInt32Slot",
    "uint32": "PrependUint32Slot",
    "float32": "PrependFloat32Slot",
}

BUFFER_ALIGNMENT = 16
"""Alignment of constant data in the file, as the TFLite converter uses."""


class Field(NamedTuple):
    """One table field: vtable ``slot``, value ``kind`` and ``value``.

    ``kind`` is a scalar type name (``bool``, ``uint8``, ``int8``, ``int32``, ``uint32``,
    ``float32``) or ``offset`` for an already written sub-table, vector or string.
    """

    slot: int
    kind: str
    value: Any


def write_table(builder: flatbuffers.Builder, fields: Iterable[Field]) -> int:
    """Write a table holding ``fields`` and return its offset."""
    fields = list(fields)
    builder.StartObject(max((f.slot for f in fields), default=-1) + 1)
    for field in fields:
        _write_field(builder, field)
    return builder.EndObject()


def _write_field(builder: flatbuffers.Builder, field: Field) -> None:
    if field.kind == "offset":
        builder.PrependUOffsetTRelativeSlot(field.slot, field.value, None)
        return
    writer = _SCALAR_SLOT_WRITERS.get(field.kind)
    if writer is None:
        raise ValueError(f"unknown flatbuffer field kind {field.kind!r}")
    value = bool(field.value) if field.kind == "bool" else field.value
    if field.kind == "float32":
        value = float(value)
    elif field.kind != "bool":
        value = int(value)
    getattr(builder, writer)(field.slot, value, None)


def write_scalar_vector(builder: flatbuffers.Builder, values, dtype) -> int:
    """Write a vector of numbers (``dtype`` is a numpy dtype such as ``np.int32``)."""
    array = np.ascontiguousarray(np.asarray(values, dtype=np.dtype(dtype).newbyteorder("<")).ravel())
    return builder.CreateNumpyVector(array)


def write_offset_vector(builder: flatbuffers.Builder, offsets: List[int]) -> int:
    """Write a vector of offsets to tables or strings already in the buffer."""
    builder.StartVector(4, len(offsets), 4)
    for offset in reversed(offsets):
        builder.PrependUOffsetTRelative(offset)
    return builder.EndVector()


def write_aligned_bytes(builder: flatbuffers.Builder, data: bytes, alignment: int = BUFFER_ALIGNMENT) -> int:
    """Write a ``[ubyte]`` vector whose first data byte is aligned to ``alignment``."""
    builder.StartVector(1, len(data), alignment)
    builder.head -= len(data)
    builder.Bytes[builder.head : builder.head + len(data)] = data
    return builder.EndVector()
