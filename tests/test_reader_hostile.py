"""Hand-made hostile and unusual flatbuffers: the reader stays bounded and clear."""

import flatbuffers
import pytest

import tinyarena


def _vector_of_offsets(b, offsets):
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _int_vector(b, values):
    b.StartVector(4, len(values), 4)
    for v in reversed(values):
        b.PrependInt32(v)
    return b.EndVector()


def write_model(tensor_count, shape, op_codes=(), op_inputs=(), op_outputs=(), share_tensor=False):
    """A model with one subgraph: `tensor_count` int8 tensors of `shape` and one op per entry of op_codes."""
    b = flatbuffers.Builder(1024)
    shape_vec = _int_vector(b, shape)
    tensors = []
    for i in range(1 if share_tensor else tensor_count):
        b.StartObject(11)
        b.PrependUOffsetTRelativeSlot(0, shape_vec, 0)
        b.PrependInt8Slot(1, 9, 0)  # INT8
        tensors.append(b.EndObject())
    if share_tensor:  # the same table referenced tensor_count times
        tensors = tensors * tensor_count
    tensors_vec = _vector_of_offsets(b, tensors)
    operators = []
    for index in range(len(op_codes)):
        ins, outs = _int_vector(b, op_inputs[index]), _int_vector(b, op_outputs[index])
        b.StartObject(14)
        b.PrependUint32Slot(0, index, 0)
        b.PrependUOffsetTRelativeSlot(1, ins, 0)
        b.PrependUOffsetTRelativeSlot(2, outs, 0)
        operators.append(b.EndObject())
    ops_vec = _vector_of_offsets(b, operators)
    inputs, outputs = _int_vector(b, [0]), _int_vector(b, [tensor_count - 1])
    b.StartObject(6)
    b.PrependUOffsetTRelativeSlot(0, tensors_vec, 0)
    b.PrependUOffsetTRelativeSlot(1, inputs, 0)
    b.PrependUOffsetTRelativeSlot(2, outputs, 0)
    b.PrependUOffsetTRelativeSlot(3, ops_vec, 0)
    subgraph = b.EndObject()
    codes = []
    for code in op_codes:
        b.StartObject(4)
        b.PrependInt8Slot(0, min(code, 127), 0)
        b.PrependInt32Slot(3, code, 0)
        codes.append(b.EndObject())
    codes_vec = _vector_of_offsets(b, codes)
    subgraphs_vec = _vector_of_offsets(b, [subgraph])
    b.StartObject(10)
    b.PrependUint32Slot(0, 3, 0)
    b.PrependUOffsetTRelativeSlot(1, codes_vec, 0)
    b.PrependUOffsetTRelativeSlot(2, subgraphs_vec, 0)
    model = b.EndObject()
    b.Finish(model, file_identifier=b"TFL3")
    return bytes(b.Output())


def test_unknown_builtin_op_loads_and_is_named_by_code():
    data = write_model(2, [1, 4], op_codes=[250], op_inputs=[[0]], op_outputs=[[1]])
    graph = tinyarena.load_model(data)
    assert graph.ops[0].type == "BUILTIN_250" and graph.ops[0].opcode == 250
    plan = tinyarena.plan(graph)  # planning needs no kernel knowledge
    assert plan.validate() == [] and plan.peak_bytes == 32


def test_known_op_codes_are_named():
    data = write_model(2, [1, 4], op_codes=[19], op_inputs=[[0]], op_outputs=[[1]])
    assert tinyarena.load_model(data).ops[0].type == "RELU"


def test_shared_subobjects_cannot_multiply_work():
    # 60,000 tensors share one 60,000-dim shape: 3.6e9 dims to read if followed naively. The rank
    # bound stops the first tensor after reading its shape vector's length, not its dims.
    data = write_model(60_000, [1] * 60_000, share_tensor=True)
    with pytest.raises(tinyarena.ModelError, match="has rank 60000"):
        tinyarena.load_model(data)


def test_op_reading_a_tensor_nobody_wrote_is_rejected():
    data = write_model(3, [1, 4], op_codes=[19], op_inputs=[[1]], op_outputs=[[2]])
    with pytest.raises(tinyarena.ModelError, match=r"op 0 \(RELU\) reads tensor 1 .* before any op writes it"):
        tinyarena.load_model(data)


def test_out_of_range_tensor_index_is_rejected():
    data = write_model(2, [1, 4], op_codes=[19], op_inputs=[[7]], op_outputs=[[1]])
    with pytest.raises(tinyarena.ModelError, match="refers to tensor 7 of 2"):
        tinyarena.load_model(data)


def test_negative_dimension_is_rejected():
    with pytest.raises(tinyarena.ModelError, match="dynamic or negative dimension"):
        tinyarena.load_model(write_model(2, [1, -1], op_codes=[19], op_inputs=[[0]], op_outputs=[[1]]))


def test_element_count_that_would_overflow_int64_is_rejected():
    # 2^20 * 2^20 is at the reader's bound; a further 2^30 would wrap an int64 to 0 if multiplied first.
    data = write_model(2, [1 << 20, 1 << 20, 1 << 30], op_codes=[19], op_inputs=[[0]], op_outputs=[[1]])
    with pytest.raises(tinyarena.ModelError, match="implausibly large"):
        tinyarena.load_model(data)
