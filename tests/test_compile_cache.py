"""tests/compile_cache.py, the kernel object cache of the suite's builds: a program built through it
is the one plain make builds, byte for byte, on the host and on a Cortex-M target; a second build
compiles no kernel again; a kernel's warning is replayed on a hit."""

import os
import subprocess

import pytest

import compile_cache
import tinyarena
from real_models import real_model


def make(out_dir, target, makeflags, cflags=""):
    """Builds the program of ``out_dir`` afresh; returns (its bytes, make's stderr)."""
    env = dict(os.environ, MAKEFLAGS=makeflags)
    subprocess.run(["make", "-s", "clean"], cwd=out_dir, env=env, check=True)
    run = subprocess.run(["make", "-s", f"TARGET={target}", "TRACE=1", f"EXTRA_CFLAGS={cflags}"], cwd=out_dir,
                         env=env, capture_output=True, text=True, check=True)
    product = out_dir / ("model_host" if target == "host" else f"model_{target}.elf")
    return product.read_bytes(), run.stderr


def entries(cache_dir):
    return sorted(p.name for p in cache_dir.iterdir() if p.is_dir())


@pytest.mark.parametrize("target", ["host", pytest.param("cortex-m4", marks=pytest.mark.qemu)])
def test_cached_build_is_the_plain_build_and_a_second_one_compiles_no_kernel(target, tmp_path):
    out_dir = tmp_path / "kws"
    tinyarena.compile(tinyarena.plan(real_model("kws_ref_model")), out_dir, target=target)
    flags = compile_cache.install(tmp_path / "cache")
    plain, _ = make(out_dir, target, "")
    first, _ = make(out_dir, target, flags)
    stored = entries(tmp_path / "cache")
    assert len(stored) == sum(1 for _ in (out_dir / "kernels" / "src").glob("*.c")) + (target != "host")
    second, _ = make(out_dir, target, flags)
    assert plain == first == second
    assert entries(tmp_path / "cache") == stored


def test_a_hit_replays_the_kernels_warnings_and_other_flags_miss(tmp_path):
    out_dir = tmp_path / "kws"
    tinyarena.compile(tinyarena.plan(real_model("kws_ref_model")), out_dir, target="host")
    flags = compile_cache.install(tmp_path / "cache")
    warn = "-Wconversion"  # int8 arithmetic: warnings in the kernel sources
    _, fresh = make(out_dir, "host", flags, warn)
    stored = entries(tmp_path / "cache")
    _, replayed = make(out_dir, "host", flags, warn)
    assert "kernels/src/" in fresh and replayed == fresh
    make(out_dir, "host", flags)
    assert len(entries(tmp_path / "cache")) == 2 * len(stored)
