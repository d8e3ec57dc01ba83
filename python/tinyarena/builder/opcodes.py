"""TFLite builtin operator codes and the operator versions the builder declares.

The version is what the TFLite converter writes for the int8 flavour of each operator
(interpreters use it to pick a kernel registration; any version the op resolver knows works).
"""

from typing import NamedTuple


class OpCode(NamedTuple):
    """A builtin operator: its ``BuiltinOperator`` code and declared version."""

    code: int
    version: int


OPCODES = {
    "ADD": OpCode(0, 2),
    "AVERAGE_POOL_2D": OpCode(1, 2),
    "CONCATENATION": OpCode(2, 2),
    "CONV_2D": OpCode(3, 3),
    "DEPTHWISE_CONV_2D": OpCode(4, 3),
    "DEQUANTIZE": OpCode(6, 2),
    "FULLY_CONNECTED": OpCode(9, 4),
    "LOGISTIC": OpCode(14, 2),
    "MAX_POOL_2D": OpCode(17, 2),
    "MUL": OpCode(18, 2),
    "RELU": OpCode(19, 2),
    "RELU6": OpCode(21, 2),
    "RESHAPE": OpCode(22, 1),
    "SOFTMAX": OpCode(25, 2),
    "TANH": OpCode(28, 2),
    "PAD": OpCode(34, 2),
    "GATHER": OpCode(36, 2),
    "TRANSPOSE": OpCode(39, 2),
    "MEAN": OpCode(40, 2),
    "SUB": OpCode(41, 2),
    "SQUEEZE": OpCode(43, 1),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": OpCode(44, 1),
    "STRIDED_SLICE": OpCode(45, 2),
    "SPLIT": OpCode(49, 2),
    "LOG_SOFTMAX": OpCode(50, 2),
    "TILE": OpCode(69, 3),
    "EXPAND_DIMS": OpCode(70, 1),
    "SHAPE": OpCode(77, 1),
    "PACK": OpCode(83, 2),
    "UNPACK": OpCode(88, 2),
    "FILL": OpCode(94, 3),
    "RESIZE_NEAREST_NEIGHBOR": OpCode(97, 2),
    "LEAKY_RELU": OpCode(98, 2),
    "SQUARED_DIFFERENCE": OpCode(99, 2),
    "SPLIT_V": OpCode(102, 2),
    "QUANTIZE": OpCode(114, 2),
    "HARD_SWISH": OpCode(117, 1),
}
"""Operator name -> (builtin code, version)."""

PLACEHOLDER_FOR_GREATER_OP_CODES = 127
"""Value of the legacy byte ``deprecated_builtin_code`` for codes that do not fit in it."""
