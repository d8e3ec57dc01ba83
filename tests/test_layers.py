"""The compiler core's stages are layers. A stage is a folder of cpp/src with its headers in
cpp/include/tinyarena/<stage>; it includes its own headers and those of stages in lower layers
only, and CMakeLists.txt links its library (tinyarena_stage(<stage> LINKS ...)) to exactly the
stages it includes. A backwards include fails here; a backwards call also fails the link of
the TINYARENA_LAYER_CHECK build (each stage a shared object with --no-undefined)."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Lowest layer first. A stage may include stages of lower layers, never one of its own layer
# or above. liveness sits below schedule because the schedule measures every order with it;
# tiling sits above plan because it plans tiled schedules with the planner.
LAYERS = [
    ["common"],                    # errors, budgets, deep stacks, alignment
    ["allocation", "graph"],       # the placement solvers (no graphs); the IR and its storage groups
    ["op_params", "reader"],       # TFLite op parameters, checks, scratch sizes; .tflite -> graph
    ["transforms", "liveness"],    # graph rewrites; buffers and lifetimes of an order
    ["schedule", "interchange", "training"],  # op orders; CSV problems and offline plans; training steps
    ["plan"],                      # liveness -> allocation -> report
    ["tiling"],                    # tiled schedules, planned
    ["codegen"],                   # C source
]
LAYER_OF = {stage: rank for rank, stages in enumerate(LAYERS) for stage in stages}

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.MULTILINE)
STAGE_CALL = re.compile(r"^tinyarena_stage\((\w+)(?:\s+LINKS\s+([^)]*))?\)", re.MULTILINE)


def stage_of(path, root):
    """The stage a file of the core belongs to, or None outside cpp/src and cpp/include/tinyarena."""
    parts = path.resolve().relative_to(root.resolve()).parts
    if parts[:2] == ("cpp", "src") and len(parts) > 3:
        return parts[2]
    if parts[:3] == ("cpp", "include", "tinyarena") and len(parts) > 4:
        return parts[3]
    return None


def core_files(root):
    for base, pattern in ((root / "cpp" / "src", "*.[ch]*"), (root / "cpp" / "include" / "tinyarena", "*.h")):
        yield from sorted(p for p in base.rglob(pattern) if p.is_file())


def included_stage(source, include, root):
    """The stage whose header `include` (as written in `source`) names: "tinyarena/<stage>/..."
    through the include path, else a path relative to the including file; None for other headers."""
    if include.startswith("tinyarena/"):
        return include.split("/")[1]
    target = source.parent / include
    return stage_of(target, root) if target.exists() else None


def arrows(root):
    """(from stage, to stage, file:line) for every include of another stage's header."""
    found = []
    for path in core_files(root):
        stage = stage_of(path, root)
        text = path.read_text()
        for match in INCLUDE.finditer(text):
            target = included_stage(path, match.group(1), root)
            if target is not None and target != stage:
                line = text.count("\n", 0, match.start()) + 1
                found.append((stage, target, f"{path.relative_to(root)}:{line}"))
    return found


def backwards(found):
    """The arrows that do not run strictly down the layers (unknown stages count as backwards)."""
    return [a for a in found if LAYER_OF.get(a[1], len(LAYERS)) >= LAYER_OF.get(a[0], -1)]


def cmake_links(root):
    """{stage: set of the stages its library links}, from the tinyarena_stage calls."""
    calls = STAGE_CALL.findall((root / "CMakeLists.txt").read_text())
    stages = [name for name, _ in calls]
    assert len(stages) == len(set(stages)), f"a stage is declared twice: {stages}"
    return {name: {d for d in links.split() if d in stages} for name, links in calls}


def test_every_stage_folder_has_a_layer():
    folders = {p.name for p in (REPO / "cpp" / "src").iterdir() if p.is_dir()}
    folders |= {p.name for p in (REPO / "cpp" / "include" / "tinyarena").iterdir() if p.is_dir()}
    assert folders == set(LAYER_OF), f"stage folders {sorted(folders)} vs layers {sorted(LAYER_OF)}"


def test_no_include_runs_back_up_the_layers():
    found = arrows(REPO)
    assert len(found) > 50  # the parse sees the real include graph
    wrong = [f"{where}: {src} (layer {LAYER_OF.get(src)}) includes {dst} (layer {LAYER_OF.get(dst)})"
             for src, dst, where in backwards(found)]
    assert not wrong, "includes that run back up the layers:\n" + "\n".join(wrong)


def test_each_stage_links_exactly_the_stages_it_includes():
    links = cmake_links(REPO)
    assert set(links) == set(LAYER_OF), f"CMake stages {sorted(links)} vs layers {sorted(LAYER_OF)}"
    included = {stage: set() for stage in LAYER_OF}
    for src, dst, _ in arrows(REPO):
        included[src].add(dst)
    mismatched = {s: (sorted(links[s]), sorted(included[s])) for s in LAYER_OF if links[s] != included[s]}
    assert not mismatched, f"stage: (CMake LINKS, stages it includes): {mismatched}"
    upward = [(s, d) for s, ds in links.items() for d in ds if LAYER_OF[d] >= LAYER_OF[s]]
    assert not upward, f"CMake links up the layers: {upward}"


def test_the_check_flags_backwards_and_sideways_includes(tmp_path):
    def write(relative, text):
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    write("cpp/include/tinyarena/plan/plan.h", "#pragma once\n")
    write("cpp/include/tinyarena/graph/graph.h", "#pragma once\n")
    write("cpp/src/plan/private.h", "#pragma once\n")
    write("cpp/src/graph/graph.cpp", '#include "tinyarena/graph/graph.h"\n#include <vector>\n')
    write("cpp/src/graph/up.cpp", '#include "tinyarena/plan/plan.h"\n')            # 1 -> 5: backwards
    write("cpp/src/graph/reach.cpp", '\n#include "../plan/private.h"\n')           # relative, backwards
    write("cpp/src/transforms/side.cpp", '#include "tinyarena/liveness/x.h"\n')    # same layer
    write("cpp/src/plan/plan.cpp", '#include "tinyarena/graph/graph.h"\n#include "private.h"\n')  # down: fine
    flagged = sorted(where for *_, where in backwards(arrows(tmp_path)))
    assert flagged == ["cpp/src/graph/reach.cpp:2", "cpp/src/graph/up.cpp:1", "cpp/src/transforms/side.cpp:1"]
