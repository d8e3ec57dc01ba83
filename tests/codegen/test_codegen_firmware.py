"""What a firmware author is told holds: plain `make` builds what the Makefile's header says (the
compile target), the README's firmware snippet is real code against the generated model.h, and
TINYARENA_ARENA_ATTRIBUTES puts the arena in the linker section named there."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import tinyarena
from real_models import real_model
from tinyarena.builder import demo_model
from tinyarena.codegen import TARGETS
from tinyarena.codegen import compile as compile_model

README = Path(__file__).resolve().parents[2] / "README.md"
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("make") is None, reason="needs gcc, make")


def product(target):
    return "model_host" if target == "host" else f"model_{target}.elf"


@pytest.mark.parametrize("target", TARGETS)
def test_makefile_header_names_what_plain_make_builds(target, tmp_path):
    compiled = compile_model(tinyarena.plan(real_model("hello_world_int8")), tmp_path, target=target)
    makefile = (compiled.out_dir / "Makefile").read_text()
    default = re.search(r"^#   make +(.*)$", makefile, re.M).group(1)
    assert product(target) in default and "default" in default, default
    for other in set(TARGETS) - {target}:  # the others are named with their TARGET=
        assert re.search(rf"^#   make TARGET={other} +.*{re.escape(product(other))}", makefile, re.M), other
    dry_run = subprocess.run(["make", "-n"], cwd=compiled.out_dir, capture_output=True, text=True, check=True).stdout
    assert f"-o {product(target)}" in dry_run
    assert "-ffp-contract=off" in dry_run  # no fused multiply-adds: float kernels round as TFLite's do


@needs_gcc
def test_plain_make_of_a_host_compile_builds_the_host_program(tmp_path):
    compiled = compile_model(tinyarena.plan(real_model("hello_world_int8")), tmp_path, target="host")
    subprocess.run(["make", "-s"], cwd=compiled.out_dir, check=True)
    assert (compiled.out_dir / "model_host").is_file()


def readme_firmware_snippet():
    text = README.read_text()
    section = text[text.index("From firmware"):]
    return re.search(r"```c\n(.*?)```", section, re.S).group(1)


@needs_gcc
def test_readme_firmware_snippet_builds_and_runs_against_the_demo(tmp_path):
    compiled = compile_model(tinyarena.plan(demo_model()), tmp_path, name="demo")
    out = compiled.out_dir
    snippet = "\n".join(line[2:] if line.startswith("  ") else line for line in readme_firmware_snippet().splitlines())
    (out / "firmware.c").write_text(snippet + """
#include <stdio.h>
int main(void) {
  static float pixels[TINYARENA_DEMO_INPUT0_BYTES];
  int i;
  for (i = 0; i < TINYARENA_DEMO_INPUT0_BYTES; ++i) pixels[i] = (float)(i % 7) * 0.1f;
  printf("%d\\n", classify(pixels));
  return 0;
}
""")
    kernels = sorted(str(p.relative_to(out)) for p in (out / "kernels" / "src").glob("*.c"))
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-Ikernels/include",
                    "firmware.c", "model.c", *kernels, "-lm", "-o", "firmware"], cwd=out, check=True)
    run = subprocess.run(["./firmware"], cwd=out, capture_output=True, text=True, check=True)
    assert 0 <= int(run.stdout) < 10


@needs_gcc
def test_arena_attributes_macro_places_the_arena_in_a_section(tmp_path):
    compiled = compile_model(tinyarena.plan(real_model("hello_world_int8")), tmp_path)
    out = compiled.out_dir

    def arena_section(*flags):
        subprocess.run(["gcc", "-std=c99", "-c", "-Ikernels/include", *flags, "model.c", "-o", "model.o"], cwd=out,
                       check=True)
        table = subprocess.run(["objdump", "-t", "model.o"], cwd=out, capture_output=True, text=True,
                               check=True).stdout
        return next(line.split()[-3] for line in table.splitlines() if line.endswith(" ta_arena"))

    assert arena_section() == ".bss"
    assert arena_section("-fdata-sections") == ".bss.ta_arena"
    assert arena_section('-DTINYARENA_ARENA_ATTRIBUTES=__attribute__((section(".my_ram")))') == ".my_ram"
