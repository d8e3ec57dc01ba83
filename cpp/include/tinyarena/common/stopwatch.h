// Wall-clock seconds since construction (steady clock): the one timer every
// reported `seconds` figure and every optional wall-clock cap (WorkBudget) uses.
#pragma once

#include <chrono>

namespace tinyarena {

class Stopwatch {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace tinyarena
