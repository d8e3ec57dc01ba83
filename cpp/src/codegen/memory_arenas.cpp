#include "memory_arenas.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "tinyarena/common/alignment.h"

namespace tinyarena::codegen {
namespace {

bool is_c_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  const auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  return std::all_of(s.begin(), s.end(), word_char);
}

// Names become C identifiers, linker sections and regions, and upper-case macros: distinct even ignoring case.
// Alignments become __attribute__((aligned(N))): powers of two.
void check_memories(const std::vector<allocation::Memory>& memories) {
  std::set<std::string> seen;
  for (const allocation::Memory& memory : memories) {
    if (!is_c_identifier(memory.name))
      throw std::invalid_argument("memory name '" + memory.name + "' is not a C identifier (letters, digits, _)");
    if (!is_power_of_two(memory.alignment))
      throw std::invalid_argument("memory '" + memory.name + "' has alignment " + std::to_string(memory.alignment) +
                                  ", not a power of two (an arena array is aligned to powers of two only)");
    std::string key = memory.name;
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!seen.insert(key).second) throw std::invalid_argument("two memories are named '" + memory.name + "'");
  }
}

void check_covers_plan(const plan::Plan& plan, const std::vector<allocation::Memory>& memories,
                       const allocation::HierarchySolution& placement) {
  const size_t buffers = plan.problem.buffers.size();
  if (placement.memory.size() != buffers || placement.offsets.size() != buffers)
    throw std::invalid_argument("the placement covers " + std::to_string(placement.memory.size()) +
                                " buffers but the plan has " + std::to_string(buffers));
  for (size_t b = 0; b < buffers; ++b)
    if (placement.memory[b] < 0 || static_cast<size_t>(placement.memory[b]) >= memories.size())
      throw std::invalid_argument("buffer " + std::to_string(b) + " is placed in no memory");
}

}  // namespace

MemoryArenas memory_arenas(const plan::Plan& plan, const std::string& model,
                           const std::vector<allocation::Memory>& memories,
                           const allocation::HierarchySolution& placement) {
  check_memories(memories);
  check_covers_plan(plan, memories, placement);
  std::vector<Arena> per_memory(memories.size());
  std::vector<bool> used(memories.size(), false);
  for (size_t m = 0; m < memories.size(); ++m) {
    const allocation::Memory& memory = memories[m];
    per_memory[m] = Arena{memory.name, "tinyarena_" + model + "_arena_" + memory.name, 0, memory.alignment,
                          memory.size, memory.base_address};
  }
  MemoryArenas result;
  for (size_t b = 0; b < plan.problem.buffers.size(); ++b) {
    const allocation::Buffer& buffer = plan.problem.buffers[b];
    Arena& arena = per_memory[placement.memory[b]];
    used[placement.memory[b]] = true;
    arena.bytes = std::max(arena.bytes, placement.offsets[b] + buffer.size);
    arena.alignment = std::max(arena.alignment, buffer.alignment);
    result.locations.push_back({arena.symbol, placement.offsets[b]});
  }
  for (size_t m = 0; m < memories.size(); ++m)
    if (used[m]) result.arenas.push_back(per_memory[m]);
  return result;
}

Program program_with_arenas(const std::string& name, const std::vector<Arena>& arenas) {
  Program program;
  program.name = name;
  program.arenas = arenas;
  for (const Arena& arena : arenas) program.arena_bytes += arena.bytes;
  return program;
}

}  // namespace tinyarena::codegen
