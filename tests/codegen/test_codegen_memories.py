"""Compiling across a memory hierarchy: one arena per used memory, each in its own linker section,
at the offsets the hierarchy placement chose (pins and blocklists included), placed by the linker
in its memory's address range and bit-exact on the host and under QEMU on the Cortex-M4, M33 and
M55 boards (each board's own free RAMs)."""

import re
import subprocess

import numpy as np
import pytest

import tinyarena
from conftest import needs_cortex_m
from real_models import real_model
from tinyarena.allocation import Memory, validate_hierarchy
from tinyarena.boards import board_regions
from tinyarena.cli import main
from tinyarena.codegen import compile as compile_model
from tinyarena.memories import place_plan
from tinyarena.verify import VerifyError, build, verify

KIB = 1024
MEMORIES = [Memory("fast", 16 * KIB), Memory("sram", 32 * KIB), Memory("ext", 8 * 1024 * KIB)]
INPUT_OFFSET = 4096  # where the pin puts the camera frame inside 'ext'


@pytest.fixture(scope="module")
def person_detect():
    """person_detect's plan (does not fit 'fast') placed with the input pinned in 'ext' at
    INPUT_OFFSET and the largest buffer blocked from 'fast' and 'sram'."""
    plan = tinyarena.plan(real_model("person_detect"))
    input_buffer = next(i for i, b in enumerate(plan.buffers) if plan.graph.inputs[0] in b.tensors)
    largest = max((i for i in range(len(plan.buffers)) if i != input_buffer), key=lambda i: plan.buffers[i].size)
    placement = place_plan(plan, MEMORIES, pins={plan.buffers[input_buffer].name: ("ext", INPUT_OFFSET)},
                           blocked={largest: ["fast", "sram"]})
    return plan, placement, input_buffer, largest


def used_memories(placement):
    return [m for i, m in enumerate(placement.memories) if i in set(placement.solution.memory)]


def test_sources_hold_one_section_per_memory_at_the_planned_offsets(person_detect, tmp_path):
    plan, placement, input_buffer, largest = person_detect
    assert plan.peak_bytes > MEMORIES[0].size
    assert validate_hierarchy(placement.problem, placement.solution) == []
    assert placement.memory_of(input_buffer) == "ext" and placement.solution.offsets[input_buffer] == INPUT_OFFSET
    assert placement.memory_of(largest) == "ext"
    used = used_memories(placement)
    assert len(used) == 3
    compiled = compile_model(plan, tmp_path, memories=placement)
    model_c, model_h = (tmp_path / "model.c").read_text(), (tmp_path / "model.h").read_text()
    sections = (tmp_path / "tinyarena_sections.ld").read_text()
    assert "ta_arena" not in model_c
    for m in used:
        peak = placement.heights[m.name]
        assert (f"static uint8_t tinyarena_person_detect_arena_{m.name}[{peak}] "
                f"__attribute__((section(\".tinyarena.{m.name}\"), aligned(16)));") in model_c
        assert f"#define TINYARENA_PERSON_DETECT_ARENA_{m.name.upper()}_BYTES {peak}\n" in model_h
        assert f".tinyarena.{m.name} (NOLOAD) : {{ KEEP(*(.tinyarena.{m.name})) }} > {m.name}\n" in sections
    assert compiled.arenas == {m.name: placement.heights[m.name] for m in used}
    assert compiled.arena_bytes == sum(placement.heights.values())
    assert f"memcpy(tinyarena_person_detect_arena_ext + {INPUT_OFFSET}, input0," in model_c
    # every traced op output is at its buffer's memory and offset (plus the tensor's offset in it)
    liveness = plan.core.liveness
    traced = re.findall(r"TA_TRACE\((\d+), tinyarena_person_detect_arena_(\w+) \+ (\d+), \d+\);", model_c)
    assert len(traced) >= 20
    for op, memory, offset in traced:
        tensor = plan.graph.ops[int(op)].outputs[0]
        buffer = liveness.tensor_buffer[tensor]
        assert memory == placement.memory_of(buffer)
        assert int(offset) == placement.solution.offsets[buffer] + liveness.tensor_offset[tensor]


# The free RAMs of each board the three memories land in (tinyarena.boards), fastest first.
BOARD_RAMS = {
    "cortex-m4": ["FPGA block RAM", "ZBT SSRAM1 above the code", "PSRAM"],
    "cortex-m33": ["IoT Kit SRAM bank 0", "ZBT SSRAM1 above the code", "PSRAM"],
    "cortex-m55": ["DTCM", "SRAM", "DDR"],
}


@needs_cortex_m
@pytest.mark.parametrize("target", list(BOARD_RAMS))
def test_arenas_land_in_their_memories_and_run_bit_exact(person_detect, target, tmp_path):
    _, placement, _, _ = person_detect
    result = verify(real_model("person_detect"), target=target, memories=placement, work_dir=tmp_path)
    assert result.bit_exact, result.summary()
    assert result.arenas == {m.name: placement.heights[m.name] for m in used_memories(placement)}
    elf = tmp_path / f"model_{target}.elf"
    nm = subprocess.run(["arm-none-eabi-nm", "-S", str(elf)], capture_output=True, text=True, check=True).stdout
    symbols = {f[3]: (int(f[0], 16), int(f[1], 16)) for f in (line.split() for line in nm.splitlines()) if len(f) == 4}
    headers = subprocess.run(["arm-none-eabi-objdump", "-h", str(elf)], capture_output=True, text=True,
                             check=True).stdout
    regions = board_regions(result.arenas, target)  # the harness's memory map of the three memories
    assert [what for what, _, _ in regions.values()] == BOARD_RAMS[target]
    for memory, (_, base, ram_bytes) in regions.items():
        address, size = symbols[f"tinyarena_model_arena_{memory}"]
        assert size == placement.heights[memory]
        assert base <= address and address + size <= base + ram_bytes
        section = re.search(rf"\.tinyarena\.{memory}\s+([0-9a-f]+)\s+([0-9a-f]+)\s+\S+\s+\S+\s+\S+\s*\n\s*(.*)",
                            headers)
        assert int(section.group(1), 16) == size and int(section.group(2), 16) == address
        assert "LOAD" not in section.group(3)  # NOLOAD: no bytes in the image


@needs_cortex_m
def test_hierarchy_runs_on_the_host_and_a_board_short_of_free_rams_is_a_link_error(person_detect, tmp_path):
    plan, placement, _, _ = person_detect
    host = verify(real_model("person_detect"), target="host", memories=placement, work_dir=tmp_path / "host")
    assert host.bit_exact, host.summary()
    # mps2-an500 has two free RAMs: the third memory is a link error naming it
    compile_model(plan, tmp_path / "m7", name="model", memories=placement)
    with pytest.raises(VerifyError, match="arena of memory ext .* fits no free RAM of QEMU mps2-an500"):
        build(tmp_path / "m7", "cortex-m7")


def test_bad_memories_and_pins_are_clear_errors(tmp_path):
    plan = tinyarena.plan(real_model("kws_ref_model"))
    with pytest.raises(ValueError, match=r"pin of buffer 0: no memory named 'tcm' \(memories: fast, sram, ext\)"):
        place_plan(plan, MEMORIES, pins={0: "tcm"})
    with pytest.raises(ValueError, match="blocklist of buffer 0: no memory named 'dram'"):
        place_plan(plan, MEMORIES, blocked={0: ["dram"]})
    with pytest.raises(ValueError, match="no buffer named 'nope'"):
        place_plan(plan, MEMORIES, pins={"nope": "fast"})
    with pytest.raises(ValueError, match=r"memory 'slow' need at least (\d+) bytes .*but it has 2048"):
        compile_model(plan, tmp_path, memories=[Memory("fast", 1024), Memory("slow", 2048)])
    with pytest.raises(ValueError, match="memory name 'my-ram' is not a C identifier"):
        compile_model(plan, tmp_path, memories=[Memory("my-ram", 1 << 20)])
    other = place_plan(tinyarena.plan(real_model("hello_world_int8")), MEMORIES)
    with pytest.raises(ValueError, match=rf"placement covers {len(other.solution.memory)} buffers but the plan has "
                                         rf"{len(plan.buffers)}"):
        compile_model(plan, tmp_path, memories=other)
    assert not (tmp_path / "model.c").exists()


@pytest.fixture(scope="module", params=[("rows", 1.0), ("patches", 1.3)], ids=["rows", "patches"])
def vww_tiled(request):
    """vww_96's tiled plan over fast (a third of its peak), sram (its peak) and ext, the input ring or
    patch buffer pinned in 'ext' at INPUT_OFFSET, the smallest other ring or patch buffer pinned in 'fast'
    and the largest blocked from it."""
    mode, mac_overhead = request.param
    tiled = tinyarena.tiling.search(real_model("vww_96_int8"), tiling=mode, max_mac_overhead=mac_overhead).best
    assert tiled.segments and all(s.mode == mode for s in tiled.segments)
    memories = [Memory("fast", tiled.peak_bytes // 3), Memory("sram", tiled.peak_bytes), Memory("ext", 1 << 20)]
    inputs = next(i for i, b in enumerate(tiled.buffers) if tiled.graph.inputs[0] in b.tensors)
    segment_tensors = {t for run in tiled.tiled.streams for t in (r.tensor for r in run.rings)} | \
                      {b.tensor for run in tiled.tiled.patch_runs for b in run.buffers}
    tiled_buffers = [i for i, b in enumerate(tiled.buffers) if set(b.tensors) & segment_tensors]
    largest = max((i for i in tiled_buffers if i != inputs), key=lambda i: tiled.buffers[i].size)
    smallest = min((i for i in tiled_buffers if i != inputs), key=lambda i: tiled.buffers[i].size)
    placement = place_plan(tiled, memories, pins={tiled.buffers[inputs].name: ("ext", INPUT_OFFSET), smallest: "fast"},
                           blocked={largest: ["fast"]})
    return tiled, placement, tiled_buffers, largest


@pytest.mark.slow
def test_tiled_plans_place_their_rings_and_patches_across_memories(vww_tiled, tmp_path):
    tiled, placement, tiled_buffers, largest = vww_tiled
    assert validate_hierarchy(placement.problem, placement.solution) == []
    assert tiled.peak_bytes > placement.memories[0].size
    assert len({placement.memory_of(i) for i in tiled_buffers}) == 3  # rings/patch buffers in every memory
    assert placement.memory_of(largest) != "fast"
    compiled = compile_model(tiled, tmp_path, name="vww", memories=placement)
    model_c = (tmp_path / "model.c").read_text()
    assert "ta_arena" not in model_c
    assert compiled.arenas == placement.heights and len(compiled.arenas) == 3
    for memory, peak in placement.heights.items():
        assert (f"static uint8_t tinyarena_vww_arena_{memory}[{peak}] "
                f"__attribute__((section(\".tinyarena.{memory}\"), aligned(16)));") in model_c
    # every segment's buffers are addressed in their memory's arena, at their planned offset
    for i in tiled_buffers:
        assert f"tinyarena_vww_arena_{placement.memory_of(i)} + {placement.solution.offsets[i]}" in model_c
    assert re.search(rf"tinyarena_vww_arena_ext \+ {INPUT_OFFSET}\b", model_c)  # the pinned input ring / patches
    result = verify(None, plan=tiled, memories=placement, work_dir=tmp_path / "host")
    assert result.bit_exact and result.arenas == placement.heights, result.summary()


@needs_cortex_m
def test_tiled_plan_across_memories_is_bit_exact_on_cortex_m4(vww_tiled, tmp_path):
    tiled, placement, _, _ = vww_tiled
    result = verify(None, target="cortex-m4", plan=tiled, memories=placement, work_dir=tmp_path)
    assert result.bit_exact and result.arenas == placement.heights, result.summary()


def test_cli_memory_option(tmp_path, capsys):
    model = str(real_model("kws_ref_model"))
    for bad in ("fast", "fast:lots", "fast:16K:0", "1st:16K"):
        with pytest.raises(SystemExit) as exit_info:
            main(["compile", model, "-o", str(tmp_path / "bad"), "--memory", bad])
        assert exit_info.value.code == 2
        assert f"invalid memory '{bad}'" in capsys.readouterr().err
    assert main(["compile", model, "-o", str(tmp_path / "bad"), "--memory", "fast:1K", "--sram", "64K"]) == 2
    assert "drop --sram" in capsys.readouterr().err
    assert main(["compile", model, "-o", str(tmp_path / "bad"), "--memory", "fast:1K", "--memory", "slow:2K"]) == 2
    assert re.search(r"memory 'slow' need at least \d+ bytes .*but it has 2048", capsys.readouterr().err)
    out = tmp_path / "ok"
    assert main(["compile", model, "-o", str(out), "--memory", "fast:4K", "--memory", "ext:1M:32:0x60000000"]) == 0
    assert "arenas fast" in capsys.readouterr().out
    regions = (out / "tinyarena_memory.ld").read_text()
    assert "ext (rw) : ORIGIN = 0x60000000, LENGTH = 1048576" in regions
    assert "aligned(32)" in (out / "model.c").read_text()
    assert np.all([(out / f).exists() for f in ("tinyarena_sections.ld", "target/memory_cortex-m3.ld",
                                                 "target/memory_cortex-m4.ld", "target/memory_cortex-m7.ld",
                                                 "target/memory_cortex-m33.ld", "target/memory_cortex-m55.ld")])


@pytest.mark.slow
def test_const_bytes_are_the_arrays_each_build_links(tmp_path):
    # Host builds: portable (int8 weights) and -DTA_SIMD_EMULATE (the SIMD paths' packed int16
    # weights and requantization records, in plain C); the linked arrays are the op<i>_* symbols.
    plan = tinyarena.plan(real_model("kws_ref_model"))
    compiled = compile_model(plan, tmp_path, target="host")

    def linked_array_bytes(cflags):
        subprocess.run(["make", "-s", "clean"], cwd=tmp_path, check=True)
        subprocess.run(["make", "-s", f"EXTRA_CFLAGS={cflags}"], cwd=tmp_path, check=True)
        nm = subprocess.run(["nm", "-S", "model_host"], cwd=tmp_path, check=True, capture_output=True, text=True).stdout
        fields = [line.split() for line in nm.splitlines()]
        return sum(int(f[1], 16) for f in fields if len(f) == 4 and re.fullmatch(r"op\d+_(?!params)\w+", f[3]))

    host_plan = tinyarena.plan(real_model("kws_ref_model"), target="host")
    assert compiled.const_bytes["portable"] == linked_array_bytes("") == host_plan.flash.constants
    assert compiled.const_bytes["dsp"] == linked_array_bytes("-DTA_SIMD_EMULATE") == plan.flash.constants


def test_cli_pin_and_block_give_the_placement_of_place_plan(tmp_path, capsys):
    # person_detect over fast 16K / sram 32K / ext 8M: the input pinned by name at ext + INPUT_OFFSET,
    # the largest buffer the free placement keeps in 'fast' blocked from it by index
    model = str(real_model("person_detect"))
    plan = tinyarena.plan(model)
    free = place_plan(plan, MEMORIES)
    input_buffer = next(i for i, b in enumerate(plan.buffers) if plan.graph.inputs[0] in b.tensors)
    hot = max((i for i in range(len(plan.buffers)) if free.memory_of(i) == "fast"), key=lambda i: plan.buffers[i].size)
    assert (free.memory_of(input_buffer), free.memory_of(hot)) == ("fast", "fast")
    placement = place_plan(plan, MEMORIES, pins={plan.buffers[input_buffer].name: ("ext", INPUT_OFFSET)},
                           blocked={hot: ["fast"]})
    compile_model(plan, tmp_path / "api", name="person_detect", memories=placement)
    memories = ["--memory", "fast:16K", "--memory", "sram:32K", "--memory", "ext:8M"]
    rules = ["--pin", f"{plan.buffers[input_buffer].name}=ext:{INPUT_OFFSET}", "--block", f"{hot}=fast"]
    assert main(["compile", model, "-o", str(tmp_path / "cli"), *memories, *rules]) == 0
    assert f"arenas {placement.describe()}, " in capsys.readouterr().out
    model_c = (tmp_path / "cli" / "model.c").read_text()
    assert model_c == (tmp_path / "api" / "model.c").read_text()
    assert (tmp_path / "cli" / "tinyarena_sections.ld").read_text() == \
        (tmp_path / "api" / "tinyarena_sections.ld").read_text()
    assert f"memcpy(tinyarena_person_detect_arena_ext + {INPUT_OFFSET}, input0," in model_c
    producer = next(op for op in plan.graph.ops if op.outputs[0] in plan.buffers[hot].tensors)
    traced = re.search(rf"TA_TRACE\({producer.index}, tinyarena_person_detect_arena_(\w+) \+ (\d+),", model_c)
    assert traced.groups() == (placement.memory_of(hot), str(placement.solution.offsets[hot]))
    assert placement.memory_of(hot) != "fast"


@pytest.mark.slow
def test_cli_verify_honours_pins_bit_exact_untiled_and_tiled(capsys):
    model = str(real_model("kws_ref_model"))  # buffer 0 is the input (496 B), 3 an 8,000 B activation
    assert main(["verify", model, "--memory", "fast:16K", "--memory", "ext:1M", "--pin", "0=ext:64",
                 "--block", "3=fast"]) == 0
    assert "bit-exact on host (arena 24000 B, fast 16,000 B, ext 8,000 B)" in capsys.readouterr().out
    # a tiled plan: the input ring pinned by name, a ring blocked from 'fast'
    tiled = tinyarena.tiling.search(real_model("vww_96_int8"), tiling="rows").best
    ring = next(i for i, b in enumerate(tiled.buffers) if "[ring" in b.name and tiled.graph.inputs[0] not in b.tensors)
    assert main(["verify", str(real_model("vww_96_int8")), "--tiling", "rows", "--memory", "fast:5K", "--memory",
                 "sram:16K", "--pin", "input_1_int8 [ring 3 rows]=sram:0x100", "--block", f"{ring}=fast"]) == 0
    assert re.search(r"bit-exact on host \(arena \d+ B, fast [\d,]+ B, sram [\d,]+ B\)", capsys.readouterr().out)


@pytest.mark.parametrize("rule, message", [
    (["--pin", "nope=fast"], "no buffer named 'nope' in the plan"),
    (["--pin", "19=fast"], r"no buffer 19: the plan has 19 \(0 to 18\)"),
    (["--pin", "0=tcm"], r"pin of buffer 0: no memory named 'tcm' \(memories: fast, ext\)"),
    (["--block", "1=fast,dram"], "blocklist of buffer 1: no memory named 'dram'"),
    (["--pin", "0=ext:8"], "offset must be a multiple of 16 bytes"),
    (["--pin", "1=ext:1044480"], "the buffer \\(8,000 B\\) ends at 1,052,480 B, past the memory's 1,048,576 B"),
    (["--pin", "1=fast", "--pin", "2=fast", "--pin", "3=fast"], r"memory 'fast' need at least 16000 bytes .* has 8192"),
    (["--pin", "1=ext:0", "--pin", "9=ext:4096"],
     "buffers 1 and 9 are pinned at overlapping addresses of memory 'ext'"),
    (["--pin", "1=fast", "--pin", "1=ext"], r"buffer 1 \(index 1\) is pinned twice"),
    (["--pin", "1=fast", "--block", "1=fast"], "buffer 1 is pinned to memory 'fast' and blocked from it"),
    (["--block", "1=fast,ext"], "fits no memory it is allowed to use"),
])
def test_cli_bad_pins_and_blocks_exit_2(rule, message, tmp_path, capsys):
    model = str(real_model("kws_ref_model"))
    command = ["compile", model, "-o", str(tmp_path), "--memory", "fast:8K", "--memory", "ext:1M", *rule]
    assert main(command) == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "model.c").exists()


def test_cli_pin_and_block_syntax(tmp_path, capsys):
    model = str(real_model("kws_ref_model"))
    for option, bad in (("--pin", "0"), ("--pin", "=fast"), ("--pin", "0=fast:-16"), ("--pin", "0=fast:lots"),
                        ("--pin", "0=1st"), ("--block", "0="), ("--block", "0=fast,")):
        with pytest.raises(SystemExit) as exit_info:
            main(["compile", model, "-o", str(tmp_path), "--memory", "fast:1M", option, bad])
        assert exit_info.value.code == 2
        assert f"argument {option}: invalid '{bad}': expected BUFFER=MEMORY" in capsys.readouterr().err
    assert main(["compile", model, "-o", str(tmp_path), "--pin", "0=fast"]) == 2
    assert main(["verify", model, "--block", "0=fast"]) == 2
    assert capsys.readouterr().err.count("--pin and --block place buffers in the memories of --memory") == 2
