"""An object cache for the generated programs the tests build: the kernel sources are the same
files, with the same flags, in thousands of builds, so each is compiled once per pytest session.

The generated Makefile builds in one command, ``$(CC) $(CFLAGS) $(SRCS) $(LDFLAGS) $(LDLIBS) -o
$@``. tests/conftest.py puts ``CC=<this cache>`` in MAKEFLAGS (a command-line override, so it also
replaces the Cortex-M builds' ``CC := arm-none-eabi-gcc``). Run as a script, this module gets that
command's arguments, compiles each kernel source it has no object for on its own (every argument but
the other sources, ``-o``, ``-l`` and ``-T``, with ``-c``), then runs the unchanged command with each
kernel source replaced by its object in place. The compiler driver compiles several sources one by
one in the same way, so the program is the same, byte for byte (tests/test_compile_cache.py).

Cached: the sources under ``kernels/`` and ``target/`` (the kernel library and the start-up file),
keyed by the compiler, the compile arguments, the source's path and bytes and every header under
``kernels/``. A fresh object is stored only when the compiler's dependency list (``-MMD``) names no
header outside ``kernels/`` and ``target/``, so a key covers everything the object was made from;
else, or when it does not compile, the source stays in the command (which then reports the error).
A hit replays the compiler's diagnostics. model.c and main.c are compiled by the command every time.

Anything else (``-c``, ``-E``, no C source, ...) runs the real compiler unchanged. The real
compiler: ``arm-none-eabi-gcc`` when the arguments hold ``-mthumb`` (every Cortex-M target's
flags), else the host's: ``$CC`` of the session's environment, else ``cc`` (what make would run).
This runs once per build: it imports only os, sys and hashlib (Python starts in ~20 ms)."""

import hashlib
import os
import sys

CACHED_DIRS = ("kernels/", "target/")
LINK_ONLY_WITH_VALUE = ("-o", "-T")  # dropped, with the argument after them, from compile commands


def real_compiler(args, host_compiler):
    return "arm-none-eabi-gcc" if "-mthumb" in args else host_compiler


def is_program_build(args):
    """The generated Makefile's one compile-and-link command: C sources, ``-o``, no ``-c``/``-E``/``-S``."""
    return ("-o" in args and any(a.endswith(".c") for a in args)
            and not {"-c", "-E", "-S", "-M", "-MM", "-fsyntax-only"} & set(args))


def sources(args):
    """Indices of the C sources in ``args`` (not the value of ``-o``/``-T``)."""
    return [i for i, a in enumerate(args) if a.endswith(".c") and not (i and args[i - 1] in LINK_ONLY_WITH_VALUE)]


def compile_arguments(args):
    """``args`` without the sources, the link-only ``-o x``, ``-T x`` and ``-l...``."""
    dropped = set(sources(args)) | {i + 1 for i, a in enumerate(args) if a in LINK_ONLY_WITH_VALUE}
    return [a for i, a in enumerate(args) if i not in dropped and a not in LINK_ONLY_WITH_VALUE
            and not a.startswith("-l")]


def read(path, mode="rb"):
    with open(path, mode) as f:
        return f.read()


def header_digest():
    """sha256 over the paths and bytes of every header under kernels/ (sorted)."""
    paths = sorted(os.path.join(d, f) for d, _, files in os.walk("kernels") for f in files if f.endswith(".h"))
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.encode() + b"\0" + read(path) + b"\0")
    return digest.hexdigest()


def dependencies_inside_the_library(depfile):
    """Whether every user header of the ``-MMD`` list is under kernels/ or target/."""
    deps = read(depfile, "r").replace("\\\n", " ").split(":", 1)[1].split()
    return all(d.startswith(CACHED_DIRS) for d in deps)


def run(command, stderr_path):
    """Runs ``command`` with its stderr in ``stderr_path``; returns its exit status."""
    actions = [(os.POSIX_SPAWN_OPEN, 2, stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
    pid = os.posix_spawnp(command[0], command, os.environ, file_actions=actions)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def cached_object(cache, compiler, flags, source, headers):
    """The path of ``source``'s object in ``cache`` (compiled on a miss), or None when it cannot be
    stored (it does not compile, or it includes a header outside the library)."""
    key = hashlib.sha256("\0".join([compiler, *flags, source, headers]).encode() + read(source)).hexdigest()
    entry = os.path.join(cache, key)
    if os.path.isfile(os.path.join(entry, "object.o")):
        sys.stderr.write(read(os.path.join(entry, "stderr.txt"), "r"))
        return os.path.join(entry, "object.o")
    fresh = os.path.join(cache, f"fresh-{os.getpid()}-{key}")
    os.mkdir(fresh)
    status = run([compiler, *flags, "-MMD", "-MF", os.path.join(fresh, "deps.d"), "-c", source, "-o",
                  os.path.join(fresh, "object.o")], os.path.join(fresh, "stderr.txt"))
    if status == 0 and dependencies_inside_the_library(os.path.join(fresh, "deps.d")):
        sys.stderr.write(read(os.path.join(fresh, "stderr.txt"), "r"))
        try:
            os.rename(fresh, entry)  # atomic; another worker may have stored the same key first
            return os.path.join(entry, "object.o")
        except OSError:
            pass
    for name in os.listdir(fresh):
        os.remove(os.path.join(fresh, name))
    os.rmdir(fresh)
    return os.path.join(entry, "object.o") if os.path.isfile(os.path.join(entry, "object.o")) else None


def command_with_objects(cache, compiler, args):
    """``args`` with each kernel source replaced by its cached object (where there is one)."""
    flags, headers, command = compile_arguments(args), header_digest(), list(args)
    for i in sources(args):
        if args[i].startswith(CACHED_DIRS):
            command[i] = cached_object(cache, compiler, flags, args[i], headers) or args[i]
    return command


def main():
    cache, compiler, args = sys.argv[1], real_compiler(sys.argv[3:], sys.argv[2]), sys.argv[3:]
    if is_program_build(args):
        args = command_with_objects(cache, compiler, args)
    sys.stderr.flush()
    os.execvp(compiler, [compiler, *args])


def install(cache_dir):
    """Writes the ``CC`` command into ``cache_dir`` and returns the MAKEFLAGS that select it."""
    os.makedirs(cache_dir, exist_ok=True)
    command, fresh = os.path.join(cache_dir, "cc"), os.path.join(cache_dir, f"cc.{os.getpid()}")
    with open(fresh, "w") as f:
        f.write(f'#!/bin/sh\nexec "{sys.executable}" -S "{os.path.abspath(__file__)}" "{cache_dir}" '
                f'"{os.environ.get("CC", "cc")}" "$@"\n')
    os.chmod(fresh, 0o755)
    os.replace(fresh, command)  # atomic: each pytest-xdist worker writes the same command
    return f"CC={command}"


if __name__ == "__main__":
    main()
