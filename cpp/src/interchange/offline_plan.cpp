#include "tinyarena/interchange/offline_plan.h"

#include <cstring>
#include <string>

#include "tinyarena/common/errors.h"
#include "tinyarena/reader/flatbuffer_view.h"

namespace tinyarena::interchange {
namespace {

using reader::FlatbufferView;
using reader::Table;
using reader::Vector;

constexpr int kModelSlots = 10;  // version .. external_buffers: every one 4 bytes wide
constexpr int kVersionSlot = 0, kBuffersSlot = 4, kMetadataSlot = 6;
constexpr int kSubgraphTensorsSlot = 0;
constexpr size_t kPrefixAlignment = 16;

// Appends little-endian values; positions are relative to the new file start.
class PrefixWriter {
 public:
  size_t size() const { return bytes_.size(); }
  void align(size_t alignment) {
    while (bytes_.size() % alignment) bytes_.push_back(0);
  }
  template <typename T>
  size_t put(T value) {
    const size_t pos = bytes_.size();
    bytes_.resize(pos + sizeof(T));
    std::memcpy(bytes_.data() + pos, &value, sizeof(T));
    return pos;
  }
  template <typename T>
  void patch(size_t pos, T value) {
    std::memcpy(bytes_.data() + pos, &value, sizeof(T));
  }
  // A uoffset at `pos` pointing forward to `target`.
  void link(size_t pos, size_t target) { patch<uint32_t>(pos, static_cast<uint32_t>(target - pos)); }
  // A vtable for a table whose fields are all 4 bytes; returns its position.
  size_t vtable(int slots, const std::vector<bool>& present) {
    align(2);
    const size_t pos = put<uint16_t>(static_cast<uint16_t>(4 + 2 * slots));
    put<uint16_t>(static_cast<uint16_t>(4 + 4 * slots));
    for (int i = 0; i < slots; ++i) put<uint16_t>(present[i] ? static_cast<uint16_t>(4 + 4 * i) : 0);
    return pos;
  }
  // A table after `vtable_pos` with `slots` 4-byte fields; returns its position.
  size_t table(size_t vtable_pos, int slots) {
    align(4);
    const size_t pos = put<int32_t>(static_cast<int32_t>(pos_diff(vtable_pos)));
    for (int i = 0; i < slots; ++i) put<uint32_t>(0);
    return pos;
  }
  std::vector<uint8_t> take() { return std::move(bytes_); }

 private:
  int64_t pos_diff(size_t vtable_pos) const { return static_cast<int64_t>(bytes_.size()) - static_cast<int64_t>(vtable_pos); }
  std::vector<uint8_t> bytes_;
};

size_t field_target(const FlatbufferView& view, const Table& table, int slot) {
  const size_t field = table.field_position(slot);
  return field ? view.follow(field, "model field") : 0;
}

// Positions (in the old file) of the element tables of a vector of tables.
std::vector<size_t> element_targets(const FlatbufferView& view, const Table& model, int slot) {
  std::vector<size_t> targets;
  const Vector v = model.vector(slot, 4, "model vector");
  for (uint32_t i = 0; i < v.size(); ++i) targets.push_back(view.follow(v.data_position() + 4 * i, "model vector"));
  return targets;
}

bool is_offline_plan(const FlatbufferView& view, size_t metadata_pos) {
  return Table(view, metadata_pos, "metadata").string(0, "metadata name") == kOfflinePlanName;
}

// Builds the prefix for a file whose old bytes start at `shift`.
std::vector<uint8_t> build_prefix(const FlatbufferView& view, const Table& model, const std::vector<int32_t>& offsets,
                                  size_t shift) {
  std::vector<size_t> buffers = element_targets(view, model, kBuffersSlot);
  std::vector<size_t> metadata;
  for (size_t pos : element_targets(view, model, kMetadataSlot))
    if (!is_offline_plan(view, pos)) metadata.push_back(pos);

  PrefixWriter w;
  const size_t root = w.put<uint32_t>(0);
  w.put<uint32_t>(0x334C4654);  // "TFL3"
  std::vector<bool> present(kModelSlots);
  for (int i = 0; i < kModelSlots; ++i) present[i] = model.field_position(i) != 0 || i == kBuffersSlot || i == kMetadataSlot;
  const size_t model_table = w.table(w.vtable(kModelSlots, present), kModelSlots);
  w.link(root, model_table);
  for (int i = 0; i < kModelSlots; ++i) {
    const size_t field = model_table + 4 + 4 * i;
    if (i == kVersionSlot) w.patch<uint32_t>(field, model.scalar<uint32_t>(kVersionSlot, 3));
    else if (i != kBuffersSlot && i != kMetadataSlot && present[i]) w.link(field, field_target(view, model, i) + shift);
  }
  // buffers: the old Buffer tables, then ours.
  w.align(4);
  w.link(model_table + 4 + 4 * kBuffersSlot, w.put<uint32_t>(static_cast<uint32_t>(buffers.size() + 1)));
  for (size_t pos : buffers) w.link(w.put<uint32_t>(0), pos + shift);
  const size_t our_buffer_slot = w.put<uint32_t>(0);
  // metadata: the old entries (less a previous offline plan), then ours.
  w.link(model_table + 4 + 4 * kMetadataSlot, w.put<uint32_t>(static_cast<uint32_t>(metadata.size() + 1)));
  for (size_t pos : metadata) w.link(w.put<uint32_t>(0), pos + shift);
  const size_t our_metadata_slot = w.put<uint32_t>(0);
  // Our Buffer {data} and Metadata {name, buffer}.
  const size_t buffer_table = w.table(w.vtable(1, {true}), 1);
  w.link(our_buffer_slot, buffer_table);
  const size_t metadata_table = w.table(w.vtable(2, {true, true}), 2);
  w.link(our_metadata_slot, metadata_table);
  w.patch<uint32_t>(metadata_table + 8, static_cast<uint32_t>(buffers.size()));
  w.align(4);
  const std::string name = kOfflinePlanName;
  w.link(metadata_table + 4, w.put<uint32_t>(static_cast<uint32_t>(name.size())));
  for (char c : name) w.put<char>(c);
  w.put<char>('\0');
  // The data: [version, subgraphs, tensors, offsets...] as bytes, 16-aligned.
  while (w.size() % 16 != 12) w.put<uint8_t>(0);
  w.link(buffer_table + 4, w.put<uint32_t>(static_cast<uint32_t>(4 * (3 + offsets.size()))));
  for (int32_t value : {1, 1, static_cast<int32_t>(offsets.size())}) w.put<int32_t>(value);
  for (int32_t offset : offsets) w.put<int32_t>(offset);
  w.align(kPrefixAlignment);
  return w.take();
}

Table root_model(const FlatbufferView& view) {
  if (view.size() < 8 || std::memcmp(view.data() + 4, "TFL3", 4) != 0)
    throw ModelError("not a TFLite model: file identifier is not 'TFL3'");
  Table model(view, view.follow(0, "model root"), "model");
  if (model.slot_count() > kModelSlots)
    throw UnsupportedError("the model's root table has fields this writer does not know");
  return model;
}

}  // namespace

std::vector<int32_t> tensor_offsets(const graph::Graph& graph, const liveness::Liveness& liveness,
                                    const allocation::Solution& solution) {
  std::vector<int32_t> offsets(graph.tensors.size(), -1);
  for (size_t t = 0; t < graph.tensors.size(); ++t)
    if (liveness.tensor_buffer[t] >= 0) offsets[t] = static_cast<int32_t>(solution.offsets[liveness.tensor_buffer[t]]);
  return offsets;
}

std::vector<uint8_t> with_offline_plan(const std::vector<uint8_t>& model_bytes, const std::vector<int32_t>& offsets) {
  const FlatbufferView view(model_bytes.data(), model_bytes.size());
  const Table model = root_model(view);
  const Vector subgraphs = model.vector(2, 4, "subgraphs");
  if (subgraphs.size() != 1)
    throw UnsupportedError("offline plans are written for single-subgraph models; this one has " +
                           std::to_string(subgraphs.size()));
  const uint32_t tensors = subgraphs.table(0).vector(kSubgraphTensorsSlot, 4, "tensors").size();
  if (offsets.size() != tensors)
    throw std::invalid_argument("offline plan has " + std::to_string(offsets.size()) + " offsets for " +
                                std::to_string(tensors) + " tensors");
  // The prefix size does not depend on the shift, so build once to measure it.
  const size_t shift = build_prefix(view, model, offsets, 0).size();
  std::vector<uint8_t> out = build_prefix(view, model, offsets, shift);
  out.insert(out.end(), model_bytes.begin(), model_bytes.end());
  return out;
}

std::vector<uint8_t> model_with_offline_plan(const graph::Graph& graph, const liveness::Liveness& liveness,
                                             const allocation::Solution& solution) {
  return with_offline_plan(*graph.model_bytes, tensor_offsets(graph, liveness, solution));
}

std::vector<int32_t> read_offline_plan(const std::vector<uint8_t>& model_bytes) {
  const FlatbufferView view(model_bytes.data(), model_bytes.size());
  const Table model = root_model(view);
  const auto buffers = element_targets(view, model, kBuffersSlot);
  for (size_t pos : element_targets(view, model, kMetadataSlot)) {
    const Table metadata(view, pos, "metadata");
    if (metadata.string(0, "metadata name") != kOfflinePlanName) continue;
    const uint32_t index = metadata.scalar<uint32_t>(1, 0);
    if (index >= buffers.size()) throw ModelError("OfflineMemoryAllocation refers to a missing buffer");
    const Vector data = Table(view, buffers[index], "buffer").vector(0, 1, "offline plan");  // bytes
    const auto value = [&](uint32_t i) { return view.read<int32_t>(data.data_position() + 4 * i, "offline plan"); };
    const uint32_t count = data.size() / 4;
    if (count < 3 || value(2) != static_cast<int32_t>(count - 3))
      throw ModelError("OfflineMemoryAllocation data is malformed");
    std::vector<int32_t> offsets;
    for (uint32_t i = 3; i < count; ++i) offsets.push_back(value(i));
    return offsets;
  }
  return {};
}

}  // namespace tinyarena::interchange
