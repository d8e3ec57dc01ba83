"""DEPTHWISE_CONV_2D instructions per MAC on Cortex-M4, per kernel shape (one kernel call).

    python benchmarks/dw_bench.py [--kernels 3 5 7] [--strides 1 2] [--shapes C:H ...] [--plain]
                                  [--kernel-sources DIR]

Builds the kernel harness (tests/kernels/qemu/harness.c with every kernel source) for
cortex-m4 (QEMU mps2-an386) and runs its ``bench dw:K:S:C:H[:ip]`` layer -- a K x K depthwise
convolution, stride S, SAME padding, on an H x H x C input with all of int8 as the range -- once
and twice under the instruction-count plugin (tools/qemu_insn_count.c): the difference is one
exact kernel call, divided by the layer's MACs. Out of place (``ta_depthwise_conv_s8``) and in
place (``ta_depthwise_conv_s8_inplace``); the DSP path (packed weights) unless ``--plain``.
The layer's requantization shifts are drawn in [-11, -1] (a trained layer's range); ``--kernel-sources
DIR`` builds the kernels of DIR (e.g. another checkout's cpp/kernels/src) to compare versions.
"""

import argparse
import re
import subprocess
import tempfile
from pathlib import Path

from bench_paths import PLUGIN_SOURCE, REPO

KERNELS = REPO / "cpp" / "kernels"
TARGETS = REPO / "cpp" / "targets"
HARNESS = REPO / "tests" / "kernels" / "qemu" / "harness.c"
M4_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"]
# (channels, input height = width): MobileNet-like early, middle and late layers (maps 48 .. 6),
# channel counts 8 .. 96 and one that is not a multiple of 4 (35).
SHAPES = ((8, 48), (16, 40), (32, 24), (35, 20), (64, 12), (96, 10), (96, 6))


def shape(text):
    c, h = text.split(":")
    return int(c), int(h)


def build_plugin(work):
    plugin = work / "libinsn_count.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-fvisibility=hidden", "-o", str(plugin), str(PLUGIN_SOURCE)],
                   check=True)
    return plugin


def build_harness(work, kernel_sources=KERNELS / "src"):
    elf = work / "harness.elf"
    subprocess.run(["arm-none-eabi-gcc", "-std=c99", *M4_FLAGS, "-O2", "-ffp-contract=off", "-I",
                    str(KERNELS / "include"), "--specs=rdimon.specs", "-T", str(TARGETS / "board_mps2.ld"), "-T",
                    str(TARGETS / "cortexm.ld"), str(TARGETS / "cortexm_startup.c"), str(HARNESS),
                    "-I", str(kernel_sources), *sorted(str(s) for s in Path(kernel_sources).glob("*.c")), "-lm", "-o",
                    str(elf)],
                   check=True, capture_output=True, text=True)
    return elf


def insns(elf, plugin, args):
    r = subprocess.run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none",
                        "-semihosting-config", "enable=on,target=native", "-plugin", f"{plugin},mode=insn", "-d", "plugin", "-kernel", str(elf),
                        "-append", args], capture_output=True, text=True, timeout=300, check=True)
    text = r.stdout + r.stderr
    return int(re.search(r"insns: (\d+)", text).group(1)), int(re.search(r"MACs (\d+)", text).group(1))


def per_mac(elf, plugin, layer, path):
    """(instructions of one call, MACs) of `layer` on `path` (dsp or plain)."""
    one, macs = insns(elf, plugin, f"bench {layer} {path} 1")
    two, _ = insns(elf, plugin, f"bench {layer} {path} 2")
    return two - one, macs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, nargs="+", default=[3, 5, 7])
    parser.add_argument("--strides", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--shapes", type=shape, nargs="+", default=SHAPES, help="C:H input shapes (H x H x C)")
    parser.add_argument("--plain", action="store_true", help="the portable kernels (no packed weights)")
    parser.add_argument("--kernel-sources", default=KERNELS / "src", help="the kernel sources to build")
    args = parser.parse_args()
    path = "plain" if args.plain else "dsp"
    assert PLUGIN_SOURCE.exists()
    with tempfile.TemporaryDirectory(prefix="tinyarena-dw-") as tmp:
        work = Path(tmp)
        plugin, elf = build_plugin(work), build_harness(work, args.kernel_sources)
        print("| kernel | stride | C x H x W | MACs | out of place instr/MAC | in place instr/MAC |")
        print("|---|---:|---|---:|---:|---:|")
        worst = 0.0
        for k in args.kernels:
            for s in args.strides:
                for c, h in args.shapes:
                    layer = f"dw:{k}:{s}:{c}:{h}"
                    n, macs = per_mac(elf, plugin, layer, path)
                    n_ip, _ = per_mac(elf, plugin, layer + ":ip", path)
                    worst = max(worst, n / macs, n_ip / macs)
                    print(f"| {k}x{k} | {s} | {c} x {h} x {h} | {macs:,} | {n / macs:.2f} | {n_ip / macs:.2f} |")
        print(f"\nworst: {worst:.2f} instructions/MAC")


if __name__ == "__main__":
    main()
