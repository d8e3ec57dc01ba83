"""An object cache for the generated programs the tests build: the kernel sources are the same
files, with the same flags, in thousands of builds, so each is compiled once per pytest session.

The generated Makefile builds in one command, ``$(CC) $(CFLAGS) $(SRCS) $(LDFLAGS) $(LDLIBS) -o
$@``. tests/conftest.py puts ``CC=<this cache>`` in MAKEFLAGS (a command-line override, so it also
replaces the Cortex-M builds' ``CC := arm-none-eabi-gcc``). Run as a script, this module gets that
command's arguments and does what the one command does, in two steps: it compiles each source on
its own with every argument but the other sources, ``-o``, ``-l`` and ``-T`` (``-c``), then links the
objects with the unchanged argument list, each source replaced by its object in place. That is what
the compiler driver does itself for several sources: the program is the same, byte for byte.

Cached: the sources under ``kernels/`` and ``target/`` (the kernel library and the start-up file),
keyed by the compiler, the compile arguments, the source's bytes and every header under
``kernels/``. A fresh object is stored only when the compiler's dependency list (``-MMD``) names no
header outside ``kernels/`` and ``target/``, so a key covers everything the object was made from.
A hit replays the compiler's diagnostics. model.c and main.c are compiled every time.

Anything else (``-c``, ``-E``, no C source, ...) runs the real compiler unchanged. The real
compiler: ``arm-none-eabi-gcc`` when the arguments hold ``-mthumb`` (every Cortex-M target's
flags), else the host's: ``$CC`` of the session's environment, else ``cc`` (what make would run)."""

import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile

CACHED_DIRS = ("kernels/", "target/")
LINK_ONLY_WITH_VALUE = ("-o", "-T")  # dropped, with the argument after them, from compile commands


def real_compiler(args, host_compiler):
    return "arm-none-eabi-gcc" if "-mthumb" in args else host_compiler


def is_program_build(args):
    """The generated Makefile's one compile-and-link command: C sources, ``-o``, no ``-c``/``-E``/``-S``."""
    return ("-o" in args and any(a.endswith(".c") for a in args)
            and not {"-c", "-E", "-S", "-M", "-MM", "-fsyntax-only"} & set(args))


def compile_arguments(args):
    """``args`` without the sources, the link-only ``-o x``, ``-T x`` and ``-l...``."""
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in LINK_ONLY_WITH_VALUE:
            skip = True
        elif not (a.endswith(".c") or a.startswith("-l")):
            kept.append(a)
    return kept


def header_digest():
    """sha256 over the paths and bytes of every header under kernels/ (sorted)."""
    digest = hashlib.sha256()
    for path in sorted(pathlib.Path("kernels").rglob("*.h")):
        digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def dependencies_inside_the_library(depfile):
    """Whether every user header of the ``-MMD`` list is under kernels/ or target/."""
    text = pathlib.Path(depfile).read_text().replace("\\\n", " ")
    deps = text.split(":", 1)[1].split()
    return all(d.startswith(CACHED_DIRS) for d in deps)


def compile_one(compiler, flags, source, object_path):
    """Compiles ``source`` into ``object_path``; returns (exit code, diagnostics)."""
    run = subprocess.run([compiler, *flags, "-c", source, "-o", str(object_path)], capture_output=True, text=True)
    return run.returncode, run.stderr


def cached_object(cache, scratch, compiler, flags, source, headers):
    """The cached object of ``source`` (compiled in ``scratch`` on a miss, then moved into ``cache``);
    returns (path or None, exit code)."""
    key = hashlib.sha256("\0".join([compiler, *flags, source, headers]).encode()
                         + pathlib.Path(source).read_bytes()).hexdigest()
    entry = cache / key
    if (entry / "object.o").is_file():
        sys.stderr.write((entry / "stderr.txt").read_text())
        return entry / "object.o", 0
    fresh = pathlib.Path(tempfile.mkdtemp(dir=scratch))
    code, diagnostics = compile_one(compiler, [*flags, "-MMD", "-MF", str(fresh / "deps.d")], source,
                                    fresh / "object.o")
    sys.stderr.write(diagnostics)
    if code != 0:
        return None, code
    (fresh / "stderr.txt").write_text(diagnostics)
    if not dependencies_inside_the_library(fresh / "deps.d"):
        return fresh / "object.o", 0  # used, not stored: its key would not cover what it includes
    try:
        os.replace(fresh, entry)  # atomic; another worker may have stored the same key first
    except OSError:
        return fresh / "object.o", 0
    return entry / "object.o", 0


def build(cache, compiler, args):
    flags = compile_arguments(args)
    headers = header_digest()
    with tempfile.TemporaryDirectory(prefix="build-", dir=cache) as scratch:  # same file system as the cache
        return compile_and_link(cache, pathlib.Path(scratch), compiler, flags, headers, args)


def compile_and_link(cache, scratch, compiler, flags, headers, args):
    link, status = [], 0
    for i, a in enumerate(args):
        if not a.endswith(".c") or (i and args[i - 1] in LINK_ONLY_WITH_VALUE):
            link.append(a)
            continue
        if a.startswith(CACHED_DIRS):
            obj, code = cached_object(cache, scratch, compiler, flags, a, headers)
        else:
            obj = scratch / f"{i}.o"
            code, diagnostics = compile_one(compiler, flags, a, obj)
            sys.stderr.write(diagnostics)
        status = status or code
        link.append(str(obj))
    if status:
        return status
    return subprocess.run([compiler, *link]).returncode


def main():
    cache, compiler, args = pathlib.Path(sys.argv[1]), real_compiler(sys.argv[3:], sys.argv[2]), sys.argv[3:]
    if not is_program_build(args):
        os.execvp(compiler, [compiler, *args])
    sys.exit(build(cache, compiler, args))


def install(cache_dir):
    """Writes the ``CC`` command into ``cache_dir`` and returns the MAKEFLAGS that select it."""
    cache_dir = pathlib.Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    command, fresh = cache_dir / "cc", cache_dir / f"cc.{os.getpid()}"
    fresh.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "{pathlib.Path(__file__).resolve()}" '
                     f'"{cache_dir}" "{os.environ.get("CC", "cc")}" "$@"\n')
    fresh.chmod(0o755)
    os.replace(fresh, command)  # atomic: each pytest-xdist worker writes the same command
    return f"CC={command}"


if __name__ == "__main__":
    main()
