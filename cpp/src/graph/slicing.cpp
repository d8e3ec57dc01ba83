#include "tinyarena/graph/slicing.h"

#include <algorithm>

namespace tinyarena::graph {
namespace {

int32_t slice_bound(int32_t index, int32_t dim, int32_t stride, bool masked, bool is_start) {
  if (masked) return stride > 0 ? (is_start ? 0 : dim) : (is_start ? dim - 1 : -1);
  const int32_t i = index < 0 ? index + dim : index;
  return stride > 0 ? std::min(std::max(i, 0), dim) : std::min(std::max(i, -1), dim - 1);
}

}  // namespace

SliceAxis slice_axis(int32_t begin, int32_t end, int32_t stride, int32_t dim, bool begin_masked, bool end_masked,
                     bool shrink) {
  const int32_t start = slice_bound(begin, dim, stride, begin_masked, true);
  const int32_t stop = shrink ? start + 1 : slice_bound(end, dim, stride, end_masked, false);
  const int64_t span = stride > 0 ? int64_t{stop} - start : int64_t{start} - stop;
  const int64_t step = stride > 0 ? stride : -int64_t{stride};
  return {start, span > 0 ? static_cast<int32_t>((span + step - 1) / step) : 0};
}

}  // namespace tinyarena::graph
