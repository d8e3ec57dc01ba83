"""The SIMD kernels' per-channel requantizations (ta_rq4_apply: four words with the output
offset folded in; ta_rqd_apply: ADD, SMMLAR, ASR on the doubled accumulator) must equal
TFLite's MultiplyByQuantizedMultiplier (ta_multiply_by_quantized_multiplier) + the output offset
for every input; checked on about 12 million random and edge (x, multiplier, shift) triples by a small C program, on the
host and, for the DSP build of SMMLAR, on Cortex-M4 under QEMU; the Helium kernels' vector forms
(ta_mve.h) on Cortex-M55 under QEMU. The elementwise kernels' short ADD and MUL forms
(ta_eltwise_rq.h) must equal TFLite's ADD / SUB / MUL arithmetic for every pair of int8 inputs
(eltwise_rq_check.c), on the host and with the real SMMLAR on Cortex-M4."""

import re
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
INCLUDE = HERE.parents[1] / "cpp" / "kernels" / "include"
KERNEL_SRC = INCLUDE.parent / "src"
TARGETS = HERE.parents[1] / "cpp" / "targets"
M4 = ["-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"]
QEMU = ["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none",
        "-semihosting-config", "enable=on,target=native"]
M55 = ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"]
QEMU55 = ["qemu-system-arm", "-M", "mps3-an547", "-nographic", "-monitor", "none",
          "-semihosting-config", "enable=on,target=native"]


def counts(stdout):
    return (int(stdout.split("four-word form: ")[1].split()[0]), int(stdout.split("doubled form: ")[1].split()[0]))


def test_fast_requantization_equals_reference(tmp_path):
    exe = tmp_path / "requant_check"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(INCLUDE),
                    str(HERE / "requant_check.c"), "-o", str(exe)], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    assert r.returncode == 0 and "mismatches 0" in r.stdout, r.stdout
    four_word, doubled = counts(r.stdout)
    assert four_word > 5_000_000, r.stdout  # shifts -2 .. -31 and dead channels take the fast form
    assert doubled > 5_000_000, r.stdout  # shifts -1 .. -31 and dead channels


@pytest.mark.qemu
def test_smmlar_requantization_on_cortex_m4(tmp_path):
    """The DSP build computes SMMLAR with the real instruction (inline assembly)."""
    elf = tmp_path / "requant_check.elf"
    subprocess.run(["arm-none-eabi-gcc", "-std=c99", *M4, "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(INCLUDE),
                    "-DMULTIPLIERS_PER_SHIFT=300", "--specs=rdimon.specs", "-T", str(TARGETS / "board_mps2.ld"),
                    "-T", str(TARGETS / "cortexm.ld"), str(TARGETS / "cortexm_startup.c"), str(HERE / "requant_check.c"), "-o", str(elf)], check=True)
    r = subprocess.run([*QEMU, "-kernel", str(elf)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "mismatches 0" in r.stdout, r.stdout + r.stderr
    four_word, doubled = counts(r.stdout)
    assert four_word > 80_000 and doubled > 80_000, r.stdout


@pytest.mark.qemu
@pytest.mark.parametrize("rounding", ["", "-DTA_SINGLE_ROUNDING=1"])
def test_helium_requantization_on_cortex_m55(tmp_path, rounding):
    """The Helium kernels' vector requantizations (ta_mve.h: VQRDMULH, the sign fix-up, VRSHL, the
    saturating narrowings) equal the reference on the M55, in both roundings."""
    elf = tmp_path / "requant_check.elf"
    subprocess.run(["arm-none-eabi-gcc", "-std=c99", *M55, "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(INCLUDE),
                    "-I", str(INCLUDE.parent / "src"), *([rounding] if rounding else []),
                    "-DMULTIPLIERS_PER_SHIFT=300", "--specs=rdimon.specs", "-T", str(TARGETS / "board_mps3-an547.ld"),
                    "-T", str(TARGETS / "cortexm.ld"), str(TARGETS / "cortexm_startup.c"), str(HERE / "requant_check.c"),
                    "-o", str(elf)], check=True)
    r = subprocess.run([*QEMU55, "-kernel", str(elf)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "mismatches 0" in r.stdout, r.stdout + r.stderr
    assert int(re.search(r"helium forms: (\d+)", r.stdout).group(1)) > 150_000, r.stdout


def eltwise_counts(stdout):
    return [int(v) for v in re.search(r"add inputs: (\d+) adds: (\d+) muls: (\d+)", stdout).groups()]


def test_eltwise_short_forms_equal_reference(tmp_path):
    exe = tmp_path / "eltwise_rq_check"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(INCLUDE), "-I", str(KERNEL_SRC),
                    str(HERE / "eltwise_rq_check.c"), "-o", str(exe)], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    assert r.returncode == 0 and "mismatches 0" in r.stdout, r.stdout
    inputs, adds, muls = eltwise_counts(r.stdout)
    # every (v, offset) of 768 multiplier/shift pairs; 1,500 parameter sets of 65,536 pairs each, a
    # set counted where the prep takes the short form
    assert inputs > 40_000_000 and adds > 50_000_000 and muls > 50_000_000, r.stdout


@pytest.mark.qemu
def test_eltwise_short_forms_on_cortex_m4(tmp_path):
    elf = tmp_path / "eltwise_rq_check.elf"
    subprocess.run(["arm-none-eabi-gcc", "-std=c99", *M4, "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(INCLUDE),
                    "-I", str(KERNEL_SRC), "-DPARAM_SETS=6", "--specs=rdimon.specs", "-T", str(TARGETS / "board_mps2.ld"),
                    "-T", str(TARGETS / "cortexm.ld"), str(TARGETS / "cortexm_startup.c"), str(HERE / "eltwise_rq_check.c"),
                    "-o", str(elf)], check=True)
    r = subprocess.run([*QEMU, "-kernel", str(elf)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "mismatches 0" in r.stdout, r.stdout + r.stderr
    inputs, adds, muls = eltwise_counts(r.stdout)
    assert inputs > 40_000_000 and adds > 100_000 and muls > 100_000, r.stdout
