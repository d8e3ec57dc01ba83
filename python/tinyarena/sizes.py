"""Byte sizes as people write them: ``65536``, ``64K``, ``64KiB``, ``1.5M``."""

import re

_UNITS = {"": 1, "B": 1, "K": 1024, "KB": 1024, "KIB": 1024, "M": 1024**2, "MB": 1024**2, "MIB": 1024**2}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


def parse_size(text):
    """Bytes in ``text`` (an int, or a number with an optional K/KB/KiB/M/MB/MiB suffix; K = 1024).

    Raises ``ValueError`` for anything else, and for sizes that are not whole bytes.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 0:
            raise ValueError(f"size must not be negative: {text}")
        return text
    match = _SIZE.match(str(text))
    unit = match.group(2).upper() if match else None
    if not match or unit not in _UNITS:
        raise ValueError(f"invalid size {text!r}: expected bytes or a number with a K or M suffix, e.g. 64K")
    value = float(match.group(1)) * _UNITS[unit]
    if value != int(value):
        raise ValueError(f"invalid size {text!r}: not a whole number of bytes")
    return int(value)


def check_alignment(value, what="alignment"):
    """``value`` as an int if it is a power of two (1, 2, 4, ...), else ``ValueError``: an arena
    is aligned to powers of two only, so offsets aligned to 3 within it are not aligned in memory."""
    try:
        alignment = int(value)
    except (TypeError, ValueError):
        alignment = 0
    if alignment < 1 or alignment & (alignment - 1):
        raise ValueError(f"{what} must be a power of two (1, 2, 4, ...), got {value!r}")
    return alignment


def format_bytes(count):
    """``55296`` -> ``'54.0 KiB'``; small counts stay in bytes."""
    if count < 1024:
        return f"{count} B"
    if count < 1024**2:
        return f"{count / 1024:.1f} KiB"
    return f"{count / 1024**2:.2f} MiB"
