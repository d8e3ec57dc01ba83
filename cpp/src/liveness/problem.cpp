#include "tinyarena/liveness/problem.h"

namespace tinyarena::liveness {

allocation::Problem make_problem(const Liveness& liveness, int64_t alignment) {
  allocation::Problem problem;
  for (const LiveBuffer& live : liveness.buffers) {
    allocation::Buffer buffer;
    buffer.name = live.name;
    buffer.size = allocation::align_up(live.size, alignment);
    buffer.first = live.first;
    buffer.last = live.last;
    buffer.alignment = alignment;
    problem.buffers.push_back(buffer);
  }
  return problem;
}

}  // namespace tinyarena::liveness
