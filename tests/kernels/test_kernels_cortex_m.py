"""Cortex-M builds of the kernel library.

- Every source compiles warning-free (-Werror) for Cortex-M4 (the DSP path), M7, M33, M55 and
  M0 and M3 (no DSP: the portable path).
- Under QEMU, on every Cortex-M target's board (M3 mps2-an385, M4 mps2-an386, M33 mps2-an505,
  M55 mps3-an547; M7 shares the M4's paths), the harness qemu/harness.c (linked with the start-up
  file and linker scripts of generated code, cpp/targets/) runs random conv / depthwise /
  in-place depthwise / fully-connected cases through the DSP path (real SMLAD/SXTB16 and the
  inline-assembly inner loops) and the portable path and requires identical bytes; the path the
  packed weights select must be the DSP one exactly on the cores with the DSP extension
  (__ARM_FEATURE_DSP; the portable one on M3), and the hash of all outputs must equal the host
  build's. The portable path is the one the host tests check against TFLite's reference kernels.
- With the QEMU instruction-count plugin (tools/qemu_insn_count.c) it measures instructions
  per MAC of one kernel call (count with 2 calls minus count with 1 call), DSP vs plain C, and
  that the M55 runs conv's, depthwise's and FULLY_CONNECTED's Helium (MVE) loops.
Marked `qemu`: skipped without arm-none-eabi-gcc / qemu-system-arm, except in CI, where that fails.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tinyarena import _core

HERE = Path(__file__).resolve().parent
KERNELS = HERE.parents[1] / "cpp" / "kernels"
TARGETS = HERE.parents[1] / "cpp" / "targets"  # the start-up file and linker script generated code uses
PLUGIN_SRC = HERE.parents[1] / "tools" / "qemu_insn_count.c"  # our instruction-count plugin

CPUS = {
    "cortex-m4": ["-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"],
    "cortex-m7": ["-mcpu=cortex-m7", "-mthumb", "-mfpu=fpv5-d16", "-mfloat-abi=hard"],
    "cortex-m33": ["-mcpu=cortex-m33", "-mthumb", "-mfpu=fpv5-sp-d16", "-mfloat-abi=hard"],
    "cortex-m55": ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"],
    "cortex-m0": ["-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft"],
    "cortex-m3": ["-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"],
}

pytestmark = pytest.mark.qemu  # the Arm toolchain and QEMU (tests/conftest.py)


@pytest.mark.parametrize("cpu", list(CPUS))
def test_cross_compiles_without_warnings(cpu, tmp_path):
    for src in sorted((KERNELS / "src").glob("*.c")):
        cmd = ["arm-none-eabi-gcc", "-std=c99", *CPUS[cpu], "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
               "-I", str(KERNELS / "include"), "-c", str(src), "-o", str(tmp_path / (src.stem + ".o"))]
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0 and not r.stderr, f"{cpu} {src.name}:\n{r.stderr}"


def _harness(target, out):
    """The kernel harness built for ``target`` (a code generation target: its flags and board)."""
    board = next(t for t in _core.targets() if t.name == target)
    cmd = ["arm-none-eabi-gcc", "-std=c99", *board.gcc_flags.split(), "-O2", "-ffp-contract=off", "-Wall", "-Wextra",
           "-Werror", "-I", str(KERNELS / "include"), "--specs=rdimon.specs", "-T", str(TARGETS / board.board_script),
           "-T", str(TARGETS / "cortexm.ld"), str(TARGETS / "cortexm_startup.c"), str(HERE / "qemu" / "harness.c"),
           *sorted(str(s) for s in (KERNELS / "src").glob("*.c")), "-lm", "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out


def _qemu(target):
    machine = next(t.qemu_machine for t in _core.targets() if t.name == target)
    return ["qemu-system-arm", "-M", machine, "-nographic", "-monitor", "none",
            "-semihosting-config", "enable=on,target=native"]


@pytest.fixture(scope="module")
def m4_elf(tmp_path_factory):
    if shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None:
        pytest.skip("Cortex-M toolchain or QEMU missing")
    return _harness("cortex-m4", tmp_path_factory.mktemp("m4") / "harness.elf")


@pytest.fixture(scope="module")
def host_outputs(tmp_path_factory):
    """The hash of the harness's outputs built for the host (portable kernels)."""
    exe = tmp_path_factory.mktemp("host") / "harness"
    subprocess.run(["cc", "-std=c99", "-O2", "-I", str(KERNELS / "include"), str(HERE / "qemu" / "harness.c"),
                    *sorted(str(s) for s in (KERNELS / "src").glob("*.c")), "-lm", "-o", str(exe)], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "simd: 0" in r.stdout, r.stdout + r.stderr
    return re.search(r"outputs: ([0-9a-f]{8})", r.stdout).group(1)


# Target -> whether its compiler selects the DSP path (__ARM_FEATURE_DSP).
QEMU_CORES = {"cortex-m3": False, "cortex-m4": True, "cortex-m33": True, "cortex-m55": True}


@pytest.mark.parametrize("target", list(QEMU_CORES))
def test_qemu_dsp_path_matches_portable(target, host_outputs, m4_elf, tmp_path):
    elf = m4_elf if target == "cortex-m4" else _harness(target, tmp_path / "harness.elf")
    r = subprocess.run([*_qemu(target), "-kernel", str(elf)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r"(\d+) passed, (\d+) failed", r.stdout)
    assert m and int(m.group(1)) >= 150 and m.group(2) == "0", r.stdout
    assert f"simd: {int(QEMU_CORES[target])}" in r.stdout, r.stdout
    assert f"outputs: {host_outputs}" in r.stdout, r.stdout


def _insns(elf, plugin, args, target="cortex-m4"):
    r = subprocess.run([*_qemu(target), "-plugin", f"{plugin},mode=insn", "-d", "plugin", "-kernel", str(elf),
                        "-append", args], capture_output=True, text=True, timeout=300)
    text = r.stdout + r.stderr
    assert r.returncode == 0, text
    return int(re.search(r"insns: (\d+)", text).group(1)), int(re.search(r"MACs (\d+)", text).group(1))


# Generous ceilings (instructions per MAC, DSP path) that catch regressions of the fast paths.
# conv1x1 / conv3x3 run the int8-weight path (measured 2.54 / 1.36: these random layers take its C
# channel loop, not the doubled assembly one the real models take), _s16 the int16 one (1.86 / 1.16);
# fc the int8-weight loop (1.54; per-channel double rescaling per output), fc_s16 the int16 one (1.08).
# dw:K:S:C:H is a K x K stride S depthwise layer on H x H x C (benchmarks/dw_bench.py measures them
# all): the 5x5 / 7x7 four-output row kernels (measured 1.59, 1.99, 1.30, 1.46), the 3x3 blocks of
# four outputs (dw3x3 / dw3x3s2 measured 2.80 / 3.19), a small map whose 4 channel planes fit the
# scratch whole (2.65) and a 12 x 12 map that gets them as a square map of 256 plane values (2.43).
CEILINGS = {"conv1x1": 2.7, "conv3x3": 1.45, "conv1x1_s16": 2.1, "conv3x3_s16": 1.3, "dw3x3": 3.1, "dw3x3s2": 3.5,
            "fc": 1.6, "fc_s16": 1.25, "dw:5:1:16:40": 1.8, "dw:5:2:16:40": 2.3, "dw:7:1:16:40": 1.5, "dw:7:2:16:40": 1.7,
            "dw:3:1:96:10": 2.9, "dw:3:1:64:12": 2.7}


def _plugin(tmp_path):
    plugin = tmp_path / "libinsn_count.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-fvisibility=hidden", "-o", str(plugin), str(PLUGIN_SRC)],
                   check=True)
    return plugin


def _per_mac(elf, plugin, bench, path, target="cortex-m4"):
    """Instructions per MAC of one kernel call: 2 calls minus 1 call."""
    one, macs = _insns(elf, plugin, f"bench {bench} {path} 1", target)
    two, _ = _insns(elf, plugin, f"bench {bench} {path} 2", target)
    return (two - one) / macs


def test_instructions_per_mac(m4_elf, tmp_path, record_property):
    plugin = _plugin(tmp_path)
    lines = []
    for bench, ceiling in CEILINGS.items():
        per_mac = {path: _per_mac(m4_elf, plugin, bench, path) for path in ("plain", "dsp")}
        lines.append(f"{bench}: plain {per_mac['plain']:.2f}  dsp {per_mac['dsp']:.2f} instructions/MAC")
        record_property(bench, per_mac)
    print("\n".join(lines))
    for (bench, ceiling), line in zip(CEILINGS.items(), lines):
        plain, dsp = (float(v) for v in re.findall(r"(\d+\.\d+)", line))
        assert dsp < ceiling and dsp < plain, line


# Ceilings of the Helium (MVE) loops on the M55, instructions/MAC (measured: conv 1x1 / 3x3 on int8
# weights 0.40 / 0.25 (VMLADAVA.S8), on int16 0.66 (conv3x3_s16); fc 0.40 / 0.46 (int8 / int16);
# the M55's plain C 3.70, 2.57 and 3.38).
HELIUM_CEILINGS = {"conv1x1": 0.5, "conv3x3": 0.35, "conv3x3_s16": 0.9, "fc": 0.5, "fc_s16": 0.6}
# Depthwise runs its Helium path on the int8 weights with or without packed ones (the harness's
# "plain" is the same path), so its ceilings stand alone (measured: dw3x3 1.38, dw3x3s2 1.90,
# 5x5 / 7x7 stride 1 1.16 / 0.98; the M4's SMLAD paths 2.80, 3.19, 1.59, 1.30). Maps narrower than
# 16 run channel-parallel (measured: 6 x 6 x 128 1.93, 3 x 3 x 256 2.06; the planes took 3.31 / 8.72).
HELIUM_DW_CEILINGS = {"dw3x3": 1.6, "dw3x3s2": 2.2, "dw:5:1:16:40": 1.4, "dw:7:1:16:40": 1.2, "dw:3:1:128:6": 2.2,
                      "dw:3:1:256:3": 2.3}


def test_helium_loops_on_cortex_m55(tmp_path):
    """On the M55 (MVE) conv (VMLADAVA.S8 on int8 weights, 16 MACs an instruction; VLD2 + VMLADAVA.S16 on int16)
    and FULLY_CONNECTED run on vectors, a third of the portable path's cost or less; depthwise (VMLA on int32
    lanes) below the M4's SMLAD paths."""
    elf = _harness("cortex-m55", tmp_path / "harness.elf")
    plugin = _plugin(tmp_path)
    for bench, ceiling in HELIUM_CEILINGS.items():
        helium, plain = (_per_mac(elf, plugin, bench, path, "cortex-m55") for path in ("dsp", "plain"))
        assert helium < ceiling and helium < plain / 3, (bench, helium, plain)
    for bench, ceiling in HELIUM_DW_CEILINGS.items():
        helium = _per_mac(elf, plugin, bench, "dsp", "cortex-m55")
        assert helium < ceiling, (bench, helium)
