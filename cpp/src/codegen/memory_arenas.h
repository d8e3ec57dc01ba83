// Internal to the lowering: a memory-hierarchy placement of a plan's buffers
// turned into arenas (one C array per used memory) and buffer locations.
#pragma once

#include <string>
#include <vector>

#include "tinyarena/allocation/hierarchy.h"
#include "tinyarena/codegen/lowering.h"
#include "tinyarena/codegen/program.h"
#include "tinyarena/plan/plan.h"

namespace tinyarena::codegen {

struct MemoryArenas {
  std::vector<Arena> arenas;              // the used memories', fastest first
  std::vector<BufferLocation> locations;  // per plan buffer
};

// Each used memory's arena is as large as its highest buffer end; the C array
// is tinyarena_<model>_arena_<memory>. Throws std::invalid_argument when the
// placement does not cover the plan's buffers (or names a missing memory), or
// the memory names are not distinct C identifiers.
MemoryArenas memory_arenas(const plan::Plan& plan, const std::string& model,
                           const std::vector<allocation::Memory>& memories,
                           const allocation::HierarchySolution& placement);

// A program named `name`, no calls yet, whose arenas are `arenas` (arena_bytes: their sum).
Program program_with_arenas(const std::string& name, const std::vector<Arena>& arenas);

}  // namespace tinyarena::codegen
