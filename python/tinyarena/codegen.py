"""Stage 5: C code generation -- a plan becomes portable C for Cortex-M.

``compile(plan, out_dir)`` writes ``model.h`` (the API), ``model.c`` (one static arena of
exactly the planned size, weights and parameters as ``const`` data in flash, one kernel call
per op at the planned offsets), ``main.c`` (a test harness), a ``Makefile`` and copies of the
kernel library sources the model uses (``kernels/``) and the Cortex-M start-up files
(``target/``). ``make TARGET=host|cortex-m4|cortex-m7`` builds it.
"""

import dataclasses
import pathlib
import re
import shutil

from . import _core

__all__ = ["TARGETS", "CompiledModel", "compile", "kernel_library_dir", "lower"]

TARGETS = ("host", "cortex-m4", "cortex-m7")
_DATA_DIR = pathlib.Path(_core.__file__).resolve().parent


def kernel_library_dir():
    """The installed kernel library: ``include/`` (headers) and ``src/`` (C99 sources)."""
    return _DATA_DIR / "kernels"


@dataclasses.dataclass(frozen=True)
class CompiledModel:
    """What ``compile`` wrote: the directory, the API name and the lowered program."""

    out_dir: pathlib.Path
    name: str
    program: object  # tinyarena._core.Program

    @property
    def arena_bytes(self):
        return self.program.arena_bytes


def c_identifier(text):
    """A lower-case C identifier from a file or model name (``vww_96_int8.tflite`` -> ``vww_96_int8``)."""
    stem = pathlib.PurePath(str(text)).name.split(".")[0] if text else "model"
    name = re.sub(r"[^0-9a-zA-Z_]", "_", stem).lower() or "model"
    return name if not name[0].isdigit() else "m_" + name


def lower(plan, name=None):
    """The plan's ops as kernel calls (a ``Program``); raises ``UnsupportedError`` naming any op the
    kernel library lacks (its type and index)."""
    name = c_identifier(name or plan.model_name)
    tiled = getattr(plan, "tiled", None)  # a tinyarena.tiling.TiledPlan: segments become stripe loops
    if tiled is not None:
        return _core.lower_tiled_program(plan.graph, tiled, name)
    return _core.lower_program(plan.graph, plan.core, name)


def _copy_library(program, out_dir):
    library = kernel_library_dir()
    shutil.copytree(library / "include", out_dir / "kernels" / "include", dirs_exist_ok=True)
    (out_dir / "kernels" / "src").mkdir(parents=True, exist_ok=True)
    for header in sorted((library / "src").glob("*.h")):
        shutil.copy2(header, out_dir / "kernels" / "src" / header.name)
    for source in program.kernel_sources:
        shutil.copy2(library / "src" / source, out_dir / "kernels" / "src" / source)
    shutil.copytree(_DATA_DIR / "targets", out_dir / "target", dirs_exist_ok=True)


def compile(plan, out_dir, target="cortex-m4", name=None):  # noqa: A001 -- the product's verb
    """Write the C sources of ``plan`` into ``out_dir`` and return a :class:`CompiledModel`.

    ``target`` becomes the Makefile's default (``host``, ``cortex-m4`` or ``cortex-m7``);
    the sources themselves are portable C99 and build for every target.
    """
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}: use one of {', '.join(TARGETS)}")
    program = lower(plan, name)
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for path, contents in _core.emit_sources(program):
        if path == "Makefile":
            contents = contents.replace("TARGET ?= host", f"TARGET ?= {target}", 1)
        (out_dir / path).write_text(contents)
    _copy_library(program, out_dir)
    return CompiledModel(out_dir, program.name, program)
