#include "tinyarena/allocation/allocators.h"

#include <stdexcept>

#include "tinyarena/allocation/greedy.h"

namespace tinyarena::allocation {
namespace {

struct NamedAllocator {
  const char* name;
  Solution (*run)(const Problem&);
};

constexpr NamedAllocator kAllocators[] = {
    {"greedy_size_first_fit", greedy_size_first_fit},
    {"greedy_size_best_fit", greedy_size_best_fit},
};

}  // namespace

std::vector<std::string> allocator_names() {
  std::vector<std::string> names;
  for (const auto& a : kAllocators) names.push_back(a.name);
  return names;
}

Solution allocate(const Problem& problem, const std::string& allocator) {
  for (const auto& a : kAllocators)
    if (allocator == a.name) return a.run(problem);
  std::string known;
  for (const auto& name : allocator_names()) known += (known.empty() ? "" : ", ") + name;
  throw std::invalid_argument("unknown allocator '" + allocator + "' (known: " + known + ")");
}

}  // namespace tinyarena::allocation
