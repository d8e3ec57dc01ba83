// Model fix-ups for other tools. TFLite's current interpreter refuses a
// tensor whose quantized_dimension is not one of its dimensions, which
// converters have left on 1-D biases (person_detect.tflite stores 3 there);
// TFLite Micro and tinyarena ignore the field for per-tensor values.
#pragma once

#include <cstdint>
#include <vector>

namespace tinyarena::interchange {

// A copy of `model` in which every quantized_dimension outside its tensor's
// rank is 0 (rewritten in place: same size, every offset unchanged). Reads
// through the bounds-checked flatbuffer view; throws ModelError if malformed.
std::vector<uint8_t> with_valid_quantized_dimensions(std::vector<uint8_t> model);

}  // namespace tinyarena::interchange
