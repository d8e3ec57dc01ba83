// Numbers as messages and reports print them.
#pragma once

#include <cstdint>
#include <string>

namespace tinyarena {

// 1052480 -> "1,052,480": byte counts as the Python side prints them ({:,}).
std::string with_thousands(int64_t value);

}  // namespace tinyarena
