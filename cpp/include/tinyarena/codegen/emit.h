// The emitter: a lowered Program -> C sources (deterministic text). The
// files go into one directory beside copies of the kernel library:
//   model.h   the API: tinyarena_<name>_invoke(...), arena size, I/O macros
//   model.c   the arena, const weights and params (flash), one call per op
//   main.c    a test harness (host and semihosting): input*.bin -> output*.bin
//   Makefile  `make TARGET=host|cortex-m3|cortex-m4|cortex-m7|cortex-m33|cortex-m55` (the targets of
//             tinyarena/op_params/targets.h); plain `make` builds the default target
// and, for a program with one arena per memory (a memory hierarchy), the
// linker script fragments that place them (emit_linker.cpp):
//   tinyarena_memory.ld    a MEMORY region per memory at its base address
//   tinyarena_sections.ld  one output section per arena, in its memory's region
// (the harness's Cortex-M build links the sections into the QEMU board's RAMs
// instead: target/memory_<target>.ld, written by the Python package).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tinyarena/codegen/program.h"
#include "tinyarena/op_params/targets.h"

namespace tinyarena::codegen {

struct SourceFile {
  std::string path;
  std::string contents;
};

// The generated files; `default_target` (a name of op_params::targets(), else std::invalid_argument) is what
// plain `make` builds.
std::vector<SourceFile> emit_sources(const Program& program, const std::string& default_target = "host");

// The linker script fragments of a program with arenas (empty otherwise).
std::string linker_memory_regions(const Program& program);
std::string linker_sections(const Program& program);

// Kernel library files (under the library's src/) the program calls into: the source each call
// names, and for conv.c and depthwise.c also the files of their SIMD path and assembly.
std::set<std::string> kernel_sources_used(const Program& program);

}  // namespace tinyarena::codegen
