// The searches recurse once per event or buffer placed, so on problems of
// thousands of buffers they would overrun a default 8 MiB stack (450 need
// 1-2 MiB). Each search's entry point runs its work on a thread of its own
// with a stack of 1 GiB (address space only: pages are committed as
// touched), unless it already runs on one or the problem is small enough
// for any stack (a thread costs 20-50 us, and more when the cores are busy).
#pragma once

#include <cstddef>
#include <functional>

namespace tinyarena {

// Runs `work` (a search over `buffers` buffers) on a deep stack and returns
// when it is done; an exception it throws is rethrown here.
void run_on_deep_stack(size_t buffers, const std::function<void()>& work);

// The value `work` returns, computed on a deep stack (run_on_deep_stack).
template <class Work>
auto on_deep_stack(size_t buffers, Work&& work) -> decltype(work()) {
  decltype(work()) result;
  run_on_deep_stack(buffers, [&] { result = work(); });
  return result;
}

}  // namespace tinyarena
