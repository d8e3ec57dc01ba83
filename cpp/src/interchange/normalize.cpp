#include "tinyarena/interchange/normalize.h"

#include <algorithm>
#include <cstring>

#include "tinyarena/reader/flatbuffer_view.h"

namespace tinyarena::interchange {
namespace {

using reader::FlatbufferView;
using reader::Table;
using reader::Vector;

// Field slots of the TFLite schema (schema.fbs, in field order).
constexpr int kModelSubgraphsSlot = 2, kSubgraphTensorsSlot = 0;
constexpr int kTensorShapeSlot = 0, kTensorQuantizationSlot = 4, kQuantizedDimensionSlot = 6;

// Position of a stale quantized_dimension of `tensor`, or 0 when it is fine.
size_t stale_axis_position(const FlatbufferView& view, const Table& tensor) {
  const std::optional<Table> quantization = tensor.table(kTensorQuantizationSlot, "quantization");
  if (!quantization) return 0;
  const size_t field = quantization->field_position(kQuantizedDimensionSlot);
  if (!field) return 0;
  const int64_t rank = tensor.vector(kTensorShapeSlot, 4, "tensor shape").size();
  const int32_t axis = view.read<int32_t>(field, "quantized_dimension");
  return axis >= 0 && axis < std::max<int64_t>(rank, 1) ? 0 : field;
}

}  // namespace

std::vector<uint8_t> with_valid_quantized_dimensions(std::vector<uint8_t> model) {
  std::vector<size_t> stale;
  {
    const FlatbufferView view(model.data(), model.size());
    const Table root(view, view.follow(0, "model root"), "model");
    const Vector subgraphs = root.vector(kModelSubgraphsSlot, 4, "subgraphs");
    for (uint32_t s = 0; s < subgraphs.size(); ++s) {
      const Vector tensors = subgraphs.table(s).vector(kSubgraphTensorsSlot, 4, "tensors");
      for (uint32_t t = 0; t < tensors.size(); ++t)
        if (const size_t field = stale_axis_position(view, tensors.table(t))) stale.push_back(field);
    }
  }
  constexpr int32_t kZero = 0;
  for (size_t field : stale) std::memcpy(model.data() + field, &kZero, sizeof kZero);
  return model;
}

}  // namespace tinyarena::interchange
