// The liveness's buffers as an allocation problem. It lives here, the lowest
// stage that knows both a Liveness and an allocation::Problem: the allocation
// stage knows nothing of graphs (it links common only), and the schedule
// judges orders by this problem's lower bound as the planner does.
#pragma once

#include <cstdint>

#include "tinyarena/allocation/problem.h"
#include "tinyarena/liveness/liveness.h"

namespace tinyarena::liveness {

// Buffer i is liveness buffer i: its size rounded up to `alignment`, its
// lifetime the buffer's steps, its offset aligned to `alignment`.
allocation::Problem make_problem(const Liveness& liveness, int64_t alignment);

}  // namespace tinyarena::liveness
