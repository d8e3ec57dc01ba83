// STRIDED_SLICE's index arithmetic along one axis, as TFLite's
// strided_slice_logic resolves it (no ellipsis or new axes). Shared by the
// kernel params (int8 slices) and the folding of constant shape vectors.
#pragma once

#include <cstdint>

namespace tinyarena::graph {

struct SliceAxis {
  int32_t start = 0;
  int32_t count = 0;  // elements kept: start, start + stride, ...
};

// StartForAxis / StopForAxis: masked ends take the extreme, negative indices
// count from the end, the result is clamped to the dimension (to -1 .. dim-1
// going backwards); a shrunk axis keeps exactly the element at the start.
// `stride` is non-zero.
SliceAxis slice_axis(int32_t begin, int32_t end, int32_t stride, int32_t dim, bool begin_masked, bool end_masked,
                     bool shrink);

}  // namespace tinyarena::graph
