"""Constructors of the ``BuiltinOptions`` tables of each operator (slot numbers from the schema)."""

from typing import Sequence, Tuple

from .flatbuffer_writer import Field
from .graph import OptionsTable
from .schema_enums import BuiltinOptions


def conv2d_options(padding: int, stride: Tuple[int, int], activation: int, dilation: Tuple[int, int]) -> OptionsTable:
    """``Conv2DOptions``; ``stride``/``dilation`` are (height, width)."""
    return OptionsTable(
        BuiltinOptions.Conv2DOptions,
        (
            Field(0, "int8", padding),
            Field(1, "int32", stride[1]),
            Field(2, "int32", stride[0]),
            Field(3, "int8", activation),
            Field(4, "int32", dilation[1]),
            Field(5, "int32", dilation[0]),
        ),
    )


def depthwise_conv2d_options(
    padding: int, stride: Tuple[int, int], depth_multiplier: int, activation: int, dilation: Tuple[int, int]
) -> OptionsTable:
    """``DepthwiseConv2DOptions``; ``stride``/``dilation`` are (height, width)."""
    return OptionsTable(
        BuiltinOptions.DepthwiseConv2DOptions,
        (
            Field(0, "int8", padding),
            Field(1, "int32", stride[1]),
            Field(2, "int32", stride[0]),
            Field(3, "int32", depth_multiplier),
            Field(4, "int8", activation),
            Field(5, "int32", dilation[1]),
            Field(6, "int32", dilation[0]),
        ),
    )


def fully_connected_options(activation: int, keep_num_dims: bool) -> OptionsTable:
    """``FullyConnectedOptions`` with the default weights format and int32 bias."""
    return OptionsTable(
        BuiltinOptions.FullyConnectedOptions,
        (Field(0, "int8", activation), Field(1, "int8", 0), Field(2, "bool", keep_num_dims)),
    )


def pool2d_options(padding: int, stride: Tuple[int, int], pool: Tuple[int, int], activation: int) -> OptionsTable:
    """``Pool2DOptions``; ``stride``/``pool`` are (height, width)."""
    return OptionsTable(
        BuiltinOptions.Pool2DOptions,
        (
            Field(0, "int8", padding),
            Field(1, "int32", stride[1]),
            Field(2, "int32", stride[0]),
            Field(3, "int32", pool[1]),
            Field(4, "int32", pool[0]),
            Field(5, "int8", activation),
        ),
    )


def activation_only_options(type_code: int, activation: int) -> OptionsTable:
    """Options tables whose slot 0 is the fused activation (``AddOptions``, ``MulOptions``)."""
    return OptionsTable(type_code, (Field(0, "int8", activation),))


def reshape_options(new_shape: Sequence[int]) -> OptionsTable:
    """``ReshapeOptions`` with ``new_shape``."""
    return OptionsTable(BuiltinOptions.ReshapeOptions, vector_fields=((0, tuple(new_shape)),))


def squeeze_options(squeeze_dims: Sequence[int]) -> OptionsTable:
    """``SqueezeOptions`` with ``squeeze_dims``."""
    return OptionsTable(BuiltinOptions.SqueezeOptions, vector_fields=((0, tuple(squeeze_dims)),))


def softmax_options(beta: float) -> OptionsTable:
    """``SoftmaxOptions``."""
    return OptionsTable(BuiltinOptions.SoftmaxOptions, (Field(0, "float32", beta),))


def concatenation_options(axis: int, activation: int) -> OptionsTable:
    """``ConcatenationOptions``."""
    return OptionsTable(BuiltinOptions.ConcatenationOptions, (Field(0, "int32", axis), Field(1, "int8", activation)))


def reducer_options(keep_dims: bool) -> OptionsTable:
    """``ReducerOptions`` (MEAN)."""
    return OptionsTable(BuiltinOptions.ReducerOptions, (Field(0, "bool", keep_dims),))


def resize_nearest_neighbor_options(align_corners: bool, half_pixel_centers: bool) -> OptionsTable:
    """``ResizeNearestNeighborOptions``."""
    return OptionsTable(
        BuiltinOptions.ResizeNearestNeighborOptions,
        (Field(0, "bool", align_corners), Field(1, "bool", half_pixel_centers)),
    )


def strided_slice_options(begin_mask: int, end_mask: int, shrink_axis_mask: int) -> OptionsTable:
    """``StridedSliceOptions`` (ellipsis and new-axis masks are 0)."""
    return OptionsTable(
        BuiltinOptions.StridedSliceOptions,
        (
            Field(0, "int32", begin_mask),
            Field(1, "int32", end_mask),
            Field(2, "int32", 0),
            Field(3, "int32", 0),
            Field(4, "int32", shrink_axis_mask),
        ),
    )


def split_options(num_splits: int) -> OptionsTable:
    """``SplitOptions``."""
    return OptionsTable(BuiltinOptions.SplitOptions, (Field(0, "int32", num_splits),))


def split_v_options(num_splits: int) -> OptionsTable:
    """``SplitVOptions``."""
    return OptionsTable(BuiltinOptions.SplitVOptions, (Field(0, "int32", num_splits),))


def gather_options(axis: int) -> OptionsTable:
    """``GatherOptions`` (batch_dims 0)."""
    return OptionsTable(BuiltinOptions.GatherOptions, (Field(0, "int32", axis), Field(1, "int32", 0)))


def pack_options(values_count: int, axis: int) -> OptionsTable:
    """``PackOptions``."""
    return OptionsTable(BuiltinOptions.PackOptions, (Field(0, "int32", values_count), Field(1, "int32", axis)))


def unpack_options(num: int, axis: int) -> OptionsTable:
    """``UnpackOptions``."""
    return OptionsTable(BuiltinOptions.UnpackOptions, (Field(0, "int32", num), Field(1, "int32", axis)))


def leaky_relu_options(alpha: float) -> OptionsTable:
    """``LeakyReluOptions``."""
    return OptionsTable(BuiltinOptions.LeakyReluOptions, (Field(0, "float32", alpha),))


def shape_options(out_type: int) -> OptionsTable:
    """``ShapeOptions`` (``out_type`` a ``TensorType``)."""
    return OptionsTable(BuiltinOptions.ShapeOptions, (Field(0, "int8", out_type),))


def empty_options(type_code: int) -> OptionsTable:
    """An options table without fields (PAD, TRANSPOSE, QUANTIZE, HARD_SWISH, ...)."""
    return OptionsTable(type_code)
