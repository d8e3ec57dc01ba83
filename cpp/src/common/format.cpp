#include "tinyarena/common/format.h"

namespace tinyarena {

std::string with_thousands(int64_t value) {
  const uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  std::string digits = std::to_string(magnitude);
  for (int64_t i = static_cast<int64_t>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return value < 0 ? "-" + digits : digits;
}

}  // namespace tinyarena
