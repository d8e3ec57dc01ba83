// The searches recurse once per event or buffer placed, so on problems of
// tens of thousands of buffers they would overrun a default 8 MiB stack.
// Each search's entry point runs its work on a thread of its own with a
// stack of 1 GiB (address space only: pages are committed as touched),
// unless it already runs on one.
#pragma once

#include <functional>

namespace tinyarena {

// Runs `work` on a deep stack and returns when it is done; an exception it
// throws is rethrown here.
void run_on_deep_stack(const std::function<void()>& work);

}  // namespace tinyarena
