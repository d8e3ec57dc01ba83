"""The fast per-channel requantizations (ta_rq_apply: one SMLAL into a preset constant and one
shift; ta_rq4_apply: the SIMD kernels' four-word form with the output offset folded in) must
equal TFLite's MultiplyByQuantizedMultiplier (ta_mbqm, + the output offset) for every input;
checked on 11 million random and edge (x, multiplier, shift) triples by a small C program."""

import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
INCLUDE = HERE.parents[1] / "cpp" / "kernels" / "include"


def test_fast_requantization_equals_reference(tmp_path):
    exe = tmp_path / "requant_check"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(INCLUDE),
                    str(HERE / "requant_check.c"), "-o", str(exe)], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    assert r.returncode == 0 and "mismatches 0" in r.stdout, r.stdout
    four_word = int(r.stdout.split("four-word form: ")[1].split(")")[0])
    assert four_word > 5_000_000, r.stdout  # shifts -2 .. -31 and dead channels take the fast form
