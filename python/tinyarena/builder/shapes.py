"""Output-shape arithmetic of windowed ops and broadcasting, with TFLite's padding rules."""

from typing import NamedTuple, Sequence, Tuple

from .schema_enums import Padding


class WindowAxis(NamedTuple):
    """Output size of one spatial axis and the implicit padding before/after it."""

    size: int
    pad_before: int
    pad_after: int


def window_axis(in_size: int, kernel: int, stride: int, dilation: int, padding: int, what: str) -> WindowAxis:
    """Output size and padding of a conv/pool along one axis (TFLite's SAME/VALID rules).

    Raises ``ValueError`` when a VALID window does not fit in the input.
    """
    effective = (kernel - 1) * dilation + 1
    if padding == Padding.VALID:
        if effective > in_size:
            raise ValueError(
                f"{what}: window of effective size {effective} (kernel {kernel}, dilation {dilation}) "
                f"is larger than the input size {in_size} with VALID padding"
            )
        return WindowAxis((in_size - effective) // stride + 1, 0, 0)
    out_size = -(-in_size // stride)
    total = max((out_size - 1) * stride + effective - in_size, 0)
    return WindowAxis(out_size, total // 2, total - total // 2)


def broadcast_shapes(a: Sequence[int], b: Sequence[int], what: str) -> Tuple[int, ...]:
    """Numpy-style broadcast of two shapes, or ``ValueError`` if they are incompatible."""
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for da, db in zip(a, b):
        if da != db and 1 not in (da, db):
            raise ValueError(f"{what}: shapes {a} and {b} cannot be broadcast together")
        out.append(max(da, db))
    return tuple(out)
