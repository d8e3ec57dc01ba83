"""Byte sizes as people write them: ``65536``, ``64K``, ``64KiB``, ``1.5M``, ``1G``."""

import re
from fractions import Fraction

from . import _core

MAX_BYTES = 2**63 - 1
"""The largest byte count the core holds (its sizes, limits and offsets are ``int64_t``)."""

_UNITS = {"": 1, "B": 1}
_UNITS.update({prefix + suffix: 1024**power for power, prefix in enumerate("KMG", 1) for suffix in ("", "B", "IB")})
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_size(text):
    """Bytes in ``text``: an int, or a decimal number with an optional K/KB/KiB, M/MB/MiB or
    G/GB/GiB suffix (K = 1024), read exactly (``1.5K`` is 1536; ``0.3K`` is not whole bytes).

    Raises ``ValueError`` for anything else, for sizes that are not whole bytes and for sizes
    above ``MAX_BYTES``.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = _SIZE.match(str(text))
        unit = match.group(2).upper() if match else None
        if unit not in _UNITS:
            raise ValueError(f"invalid size {text!r}: expected bytes or a number with a K, M or G suffix, e.g. 64K")
        exact = Fraction(match.group(1)) * _UNITS[unit]
        if exact.denominator != 1:
            raise ValueError(f"invalid size {text!r}: not a whole number of bytes")
        value = int(exact)
    if value < 0:
        raise ValueError(f"size must not be negative: {text!r}")
    if value > MAX_BYTES:
        raise ValueError(f"size {text!r} is too large: at most {MAX_BYTES:,} bytes (2^63 - 1)")
    return value


def parse_limit(text):
    """A memory limit: a size as :func:`parse_size` reads it, above 0 (no limit is no value,
    never 0). Raises ``ValueError`` otherwise."""
    value = parse_size(text)
    if value == 0:
        raise ValueError(f"a limit must be at least 1 byte, got {text!r} (for no limit, leave it out)")
    return value


def check_alignment(value, what="alignment"):
    """``value`` as an int if it is a power of two (1, 2, 4, ... up to 2^40, the core's ``check_alignment``), else
    ``ValueError``: an arena is aligned to powers of two only, so offsets aligned to 3 within it
    are not aligned in memory."""
    try:
        alignment = int(value)
    except (TypeError, ValueError, OverflowError):
        alignment = None
    if alignment is None or (isinstance(value, float) and value != alignment) or abs(alignment) > MAX_BYTES:
        raise ValueError(f"{what} must be a power of two (a whole number of bytes), got {value!r}")
    _core.check_alignment(alignment, what)  # the planner's rule: 1, 2, 4, ... up to 2^40
    return alignment


def format_bytes(count):
    """``55296`` -> ``'54.0 KiB'``; small counts stay in bytes."""
    if count < 1024:
        return f"{count} B"
    if count < 1024**2:
        return f"{count / 1024:.1f} KiB"
    return f"{count / 1024**2:.2f} MiB"
