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
constexpr int kModelOpcodesSlot = 1, kModelSubgraphsSlot = 2, kSubgraphTensorsSlot = 0;
constexpr int kOpcodeDeprecatedBuiltinSlot = 0, kOpcodeVersionSlot = 2, kOpcodeBuiltinSlot = 3;
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

// Ops the reference resolver (register_ref.cc) registers with the same kernel as the builtin
// resolver but at fewer versions: {builtin code, the reference's highest version}.
struct VersionCap {
  int32_t builtin;
  int32_t max_version;
};
constexpr VersionCap kReferenceVersionCaps[] = {
    {69, 2},  // TILE: Register_TILE() in both; the builtin resolver takes version 3 (int8) too
};

}  // namespace

std::vector<uint8_t> with_reference_op_versions(std::vector<uint8_t> model) {
  std::vector<std::pair<size_t, int32_t>> capped;  // (version field, new value)
  {
    const FlatbufferView view(model.data(), model.size());
    const Table root(view, view.follow(0, "model root"), "model");
    const Vector codes = root.vector(kModelOpcodesSlot, 4, "operator_codes");
    for (uint32_t i = 0; i < codes.size(); ++i) {
      const Table code = codes.table(i);
      const int32_t builtin = std::max<int32_t>(code.scalar<int8_t>(kOpcodeDeprecatedBuiltinSlot, 0),
                                                code.scalar<int32_t>(kOpcodeBuiltinSlot, 0));
      const size_t field = code.field_position(kOpcodeVersionSlot);
      for (const VersionCap& cap : kReferenceVersionCaps)
        if (cap.builtin == builtin && field && view.read<int32_t>(field, "version") > cap.max_version)
          capped.emplace_back(field, cap.max_version);
    }
  }
  for (const auto& [field, version] : capped) std::memcpy(model.data() + field, &version, sizeof version);
  return model;
}

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
