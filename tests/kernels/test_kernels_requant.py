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


def _integer_rescale(acc, mult, shift):
    """FULLY_CONNECTED's integer rescale (rescale_mult / rescale_shift) in exact integers."""
    return (acc * mult + (1 << (31 + shift)) - (acc < 0)) >> (32 + shift)


@pytest.mark.parametrize("variant", ["portable", "simd"])
def test_fc_integer_rescale_is_its_formula(kernel_libs, variant):
    """ta_fully_connected_s8 with rescale_mult computes the integer rescale bit for bit (its words:
    the sign term as the low word, SMLAL, the top word shifted): per channel one accumulator, the
    bias of a layer whose weights are 0, at the int32 edges, at random and next to each output
    value's threshold. (The C++ test integer_rescale_test ties the formula to the double rescale.)"""
    import ctypes as C

    import numpy as np
    from ckernels import FcParams, ptr

    k = kernel_libs[variant]
    rng = np.random.default_rng(11)
    mismatches = checked = 0
    for trial in range(40):
        n = 64
        mult = rng.integers(1 << 30, 1 << 31, n, dtype=np.int64)
        shift = rng.integers(1, 31, n, dtype=np.int64)
        offset = int(rng.integers(-128, 128))
        accs = []
        for m, s in zip(mult, shift):
            v = int(rng.integers(-140, 141))  # an output value near the range; its threshold's accumulators
            edge = ((2 * v - 1) << (31 + int(s))) // int(m)
            choice = trial % 4
            acc = (edge + int(rng.integers(-1, 2)) if choice < 2 else
                   int(rng.integers(-(1 << 31), 1 << 31)) if choice == 2 else int(rng.choice([-(1 << 31), (1 << 31) - 1, 0, -1])))
            accs.append(min(max(acc, -(1 << 31)), (1 << 31) - 1))
        bias = np.array(accs, np.int32)
        m32, s32 = mult.astype(np.int32), shift.astype(np.int32)
        weights = np.zeros(n, np.int8)
        x = np.array([int(rng.integers(-128, 128))], np.int8)
        out = np.zeros(n, np.int8)
        p = FcParams(batches=1, in_depth=1, out_depth=n, input_offset=7, output_offset=offset, act_min=-128,
                     act_max=127, per_channel=1, simd_int8_weights=int(k.simd))
        p.weights, p.bias = ptr(weights, C.c_int8), ptr(bias, C.c_int32)
        p.rescale_mult, p.rescale_shift = ptr(m32, C.c_int32), ptr(s32, C.c_int32)
        scratch = np.zeros(64, np.int8)
        k.ta_fully_connected_s8(C.byref(p), ptr(x, C.c_int8), ptr(out, C.c_int8), ptr(scratch, C.c_int8))
        for a, m, s, o in zip(accs, mult, shift, out):
            expected = min(max(_integer_rescale(a, int(m), int(s)) + offset, -128), 127)
            mismatches += int(o) != expected
            checked += 1
    assert checked == 2560 and mismatches == 0
