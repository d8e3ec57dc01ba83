#include "tinyarena/common/alignment.h"

#include <stdexcept>
#include <string>

namespace tinyarena {

void check_alignment(int64_t alignment) {
  if (!is_power_of_two(alignment))
    throw std::invalid_argument("alignment must be a power of two (1, 2, 4, ...), got " + std::to_string(alignment));
}

}  // namespace tinyarena
