#include "tinyarena/common/alignment.h"

#include <stdexcept>
#include <string>

namespace tinyarena {

void check_alignment(int64_t alignment, const std::string& what) {
  if (!is_power_of_two(alignment) || alignment > kMaxAlignment)
    throw std::invalid_argument(what + " must be a power of two (1, 2, 4, ... up to 2^40), got " +
                                std::to_string(alignment));
}

}  // namespace tinyarena
