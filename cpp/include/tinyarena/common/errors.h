// Errors the stages raise; the Python binding maps ModelError to
// tinyarena.ModelError (a ValueError) and UnsupportedError to
// tinyarena.UnsupportedError (also a ValueError).
#pragma once

#include <stdexcept>
#include <string>

namespace tinyarena {

// The model file is malformed, truncated or inconsistent.
class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The model is well formed but uses something a stage cannot handle.
class UnsupportedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tinyarena
