// Model fix-ups for other tools. TFLite's current interpreter refuses a
// tensor whose quantized_dimension is not one of its dimensions, which
// converters have left on 1-D biases (person_detect.tflite stores 3 there);
// TFLite Micro and tinyarena ignore the field for per-tensor values. Its
// reference op resolver (what `verify` compares against) registers some
// kernels at fewer versions than the builtin one (TILE up to 2, though the
// same kernel runs version 3, int8).
#pragma once

#include <cstdint>
#include <vector>

namespace tinyarena::interchange {

// A copy of `model` in which every quantized_dimension outside its tensor's
// rank is 0 (rewritten in place: same size, every offset unchanged). Reads
// through the bounds-checked flatbuffer view; throws ModelError if malformed.
std::vector<uint8_t> with_valid_quantized_dimensions(std::vector<uint8_t> model);

// A copy of `model` whose operator codes name versions the reference resolver
// registers, where it runs the very kernel the builtin resolver runs at the
// stored version (TILE 3 -> 2); rewritten in place like the above.
std::vector<uint8_t> with_reference_op_versions(std::vector<uint8_t> model);

}  // namespace tinyarena::interchange
