"""Argument types of the ``tinyarena`` command: each turns a bad value into a one-line usage
error (argparse's ``ArgumentTypeError``, exit 2) that names what was expected and what was given."""

import argparse
import math
import os


def argument(parse):
    """``parse`` as an argparse type: its ValueError becomes a usage error (exit 2)."""
    def convert(text):
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return convert


def number(lowest, highest=math.inf, kind=float, above=False):
    """An argparse type: a finite ``kind`` from ``lowest`` (excluded when ``above``) to ``highest``."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise ValueError(f"expected {'an integer' if kind is int else 'a number'}, got {text!r}") from None
        if not math.isfinite(value) or value < lowest or (above and value == lowest) or value > highest:
            bound = f"above {lowest}" if above else f"at least {lowest}"
            raise ValueError(f"must be {bound}" + (f" and at most {highest:g}" if highest < math.inf else "") +
                             f", got {text!r}")
        return value

    return argument(parse)


def existing_file(text):
    if os.path.isdir(text):
        raise ValueError(f"{text!r} is a directory, not a file")
    if not os.path.exists(text):
        raise ValueError(f"cannot open {text!r}: no such file")
    return text


def nonempty(what):
    def parse(text):
        if not text.strip():
            raise ValueError(f"give {what}")
        return text

    return argument(parse)


def positive_ints(text):
    """``"2,3,4"`` -> ``(2, 3, 4)``, each at least 1."""
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers separated by commas, got {text!r}")
    return values
