"""Numeric values of the TFLite schema enums that the builder writes.

These are facts of the public TFLite schema (``schema.fbs``); they are spelled out here
so that the builder needs no generated schema code at run time.
"""


class TensorType:
    """``TensorType`` enum values."""

    FLOAT32 = 0
    INT32 = 2
    INT64 = 4
    INT16 = 7
    INT8 = 9


DTYPE_CODES = {"float32": TensorType.FLOAT32, "int32": TensorType.INT32, "int16": TensorType.INT16,
               "int8": TensorType.INT8}
"""Builder dtype names mapped to ``TensorType`` values."""


class Padding:
    """``Padding`` enum values."""

    SAME = 0
    VALID = 1


class Activation:
    """``ActivationFunctionType`` enum values (the fused activations)."""

    NONE = 0
    RELU = 1
    RELU_N1_TO_1 = 2
    RELU6 = 3
    TANH = 4  # an LSTM's cell activation, not a layer's fused activation


ACTIVATION_CODES = {
    "NONE": Activation.NONE,
    "RELU": Activation.RELU,
    "RELU_N1_TO_1": Activation.RELU_N1_TO_1,
    "RELU6": Activation.RELU6,
}
"""Fused activation names accepted by the layer API."""


class BuiltinOptions:
    """``BuiltinOptions`` union type codes (0 means no options table)."""

    NONE = 0
    Conv2DOptions = 1
    DepthwiseConv2DOptions = 2
    Pool2DOptions = 5
    FullyConnectedOptions = 8
    SoftmaxOptions = 9
    ConcatenationOptions = 10
    AddOptions = 11
    ReshapeOptions = 17
    MulOptions = 21
    PadOptions = 22
    GatherOptions = 23
    TransposeOptions = 26
    ReducerOptions = 27
    SubOptions = 28
    SqueezeOptions = 30
    StridedSliceOptions = 32
    SplitOptions = 35
    LogSoftmaxOptions = 36
    DequantizeOptions = 38
    TileOptions = 51
    ExpandDimsOptions = 52
    ShapeOptions = 55
    PackOptions = 59
    UnpackOptions = 64
    FillOptions = 68
    UnidirectionalSequenceLSTMOptions = 71
    ResizeNearestNeighborOptions = 74
    LeakyReluOptions = 75
    SquaredDifferenceOptions = 76
    SplitVOptions = 79
    QuantizeOptions = 89
    HardSwishOptions = 91
