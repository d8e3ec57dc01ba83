"""Validation and normalization of layer arguments; every failure is a clear ``ValueError``."""

from typing import List, Sequence, Tuple

import numpy as np

from .schema_enums import ACTIVATION_CODES, Padding


def is_int(value) -> bool:
    """True for Python and numpy integers (not bools)."""
    return hasattr(value, "__index__") and not isinstance(value, bool)


def positive_int(value, what: str) -> int:
    """``value`` as an int >= 1."""
    if not is_int(value):
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    value = int(value)
    if value < 1:
        raise ValueError(f"{what} must be a positive integer, got {value}")
    return value


def non_negative_int(value, what: str) -> int:
    """``value`` as an int >= 0."""
    if not is_int(value):
        raise ValueError(f"{what} must be a non-negative integer, got {value!r}")
    value = int(value)
    if value < 0:
        raise ValueError(f"{what} must be a non-negative integer, got {value}")
    return value


def positive_pair(value, what: str) -> Tuple[int, int]:
    """An int or a pair of ints (height, width), each >= 1."""
    if is_int(value):
        value = (value, value)
    try:
        pair = tuple(value)
    except TypeError:
        raise ValueError(f"{what} must be an int or a (height, width) pair, got {value!r}") from None
    if len(pair) != 2:
        raise ValueError(f"{what} must be an int or a (height, width) pair, got {value!r}")
    return positive_int(pair[0], what), positive_int(pair[1], what)


def padding_code(padding: str) -> int:
    """``"SAME"`` or ``"VALID"`` as the schema's ``Padding`` value."""
    codes = {"SAME": Padding.SAME, "VALID": Padding.VALID}
    if not isinstance(padding, str) or padding.upper() not in codes:
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    return codes[padding.upper()]


def activation_code(activation) -> int:
    """A fused activation name (or None) as the schema's ``ActivationFunctionType`` value."""
    if activation is None:
        activation = "NONE"
    if not isinstance(activation, str) or activation.upper() not in ACTIVATION_CODES:
        raise ValueError(f"activation must be one of {sorted(ACTIVATION_CODES)}, got {activation!r}")
    return ACTIVATION_CODES[activation.upper()]


def normalize_axis(axis, rank: int, what: str = "axis") -> int:
    """An axis in ``[-rank, rank)`` as a non-negative index."""
    if not is_int(axis):
        raise ValueError(f"{what} must be an integer, got {axis!r}")
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"{what} {axis} is out of range for a rank-{rank} tensor")
    return axis % rank


def normalize_axes(axes, rank: int, what: str = "axes") -> List[int]:
    """Distinct axes (an int or a sequence) as sorted non-negative indices."""
    if is_int(axes):
        axes = [axes]
    axes = [normalize_axis(a, rank, what) for a in axes]
    if not axes:
        raise ValueError(f"{what} must not be empty")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{what} contains duplicates: {axes}")
    return sorted(axes)


def int_list(values, what: str) -> List[int]:
    """A sequence of integers as a list of ints."""
    try:
        items = list(values)
    except TypeError:
        raise ValueError(f"{what} must be a sequence of integers, got {values!r}") from None
    for item in items:
        if not is_int(item):
            raise ValueError(f"{what} must be a sequence of integers, got {values!r}")
    return [int(item) for item in items]


def check_qparams(scale, zero_point, what: str) -> Tuple[float, int]:
    """A positive finite scale (rounded to float32, as stored) and an int8 zero point."""
    try:
        scale_ok = bool(np.isfinite(scale) and scale > 0)
    except TypeError:
        scale_ok = False
    if not scale_ok:
        raise ValueError(f"{what}: scale must be a positive number, got {scale!r}")
    if not (is_int(zero_point) or (isinstance(zero_point, float) and zero_point.is_integer())):
        raise ValueError(f"{what}: zero_point must be an integer in [-128, 127], got {zero_point!r}")
    if not -128 <= int(zero_point) <= 127:
        raise ValueError(f"{what}: zero_point must be an integer in [-128, 127], got {zero_point!r}")
    return float(np.float32(scale)), int(zero_point)


def check_shape(shape: Sequence[int], what: str = "shape") -> Tuple[int, ...]:
    """A tensor shape: 1 to 6 positive dimensions."""
    dims = int_list(shape, what)
    if not 1 <= len(dims) <= 6:
        raise ValueError(f"{what} must have 1 to 6 dimensions, got {dims}")
    if any(d < 1 for d in dims):
        raise ValueError(f"{what} dimensions must be positive, got {dims}")
    return tuple(dims)
