#include "tinyarena/reader/flatbuffer_view.h"

#include "tinyarena/common/errors.h"

namespace tinyarena::reader {
namespace {

// Elements a reader may visit: generous for any real model (a few passes
// over the file), small enough that a hostile file finishes in milliseconds.
constexpr uint64_t kBudgetPerByte = 16;
constexpr uint64_t kBudgetBase = 1u << 20;

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid
// (strict, as Python decodes: no overlong forms, surrogates or > U+10FFFF).
size_t utf8_sequence_length(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) length = 2;
  else if (lead >= 0xE0 && lead <= 0xEF) length = 3, low = lead == 0xE0 ? 0xA0 : 0x80, high = lead == 0xED ? 0x9F : 0xBF;
  else if (lead >= 0xF0 && lead <= 0xF4) length = 4, low = lead == 0xF0 ? 0x90 : 0x80, high = lead == 0xF4 ? 0x8F : 0xBF;
  if (length == 0 || i + length > s.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k)
    if ((byte(i + k) >> 6) != 0x2) return 0;
  return length;
}

// Names go into error messages and Python strings: keep them valid UTF-8.
std::string valid_utf8(std::string s) {
  for (size_t i = 0; i < s.size();) {
    const size_t length = utf8_sequence_length(s, i);
    if (length == 0) {
      s[i++] = '?';
    } else {
      i += length;
    }
  }
  return s;
}

}  // namespace

FlatbufferView::FlatbufferView(const uint8_t* data, size_t size)
    : data_(data), size_(size), budget_(kBudgetBase + kBudgetPerByte * size) {}

void FlatbufferView::require(size_t pos, size_t length, const char* what) const {
  if (pos > size_ || length > size_ - pos)
    throw ModelError(std::string("truncated or corrupt model: ") + what + " at byte " +
                     std::to_string(pos) + " (+" + std::to_string(length) + ") lies outside the " +
                     std::to_string(size_) + "-byte file");
}

size_t FlatbufferView::follow(size_t pos, const char* what) const {
  const uint32_t offset = read<uint32_t>(pos, what);
  const size_t target = pos + offset;
  require(target, 4, what);
  return target;
}

void FlatbufferView::charge(uint64_t elements) const {
  if (elements > budget_)
    throw ModelError("corrupt model: structures reference each other so often that reading them "
                     "would take more than the work budget for a file of this size");
  budget_ -= elements;
}

Table::Table(const FlatbufferView& view, size_t pos, const char* what)
    : view_(&view), pos_(pos), what_(what) {
  view.charge(1);
  const int32_t back = view.read<int32_t>(pos, what);
  const int64_t vtable = static_cast<int64_t>(pos) - back;
  if (vtable < 0 || vtable > static_cast<int64_t>(view.size()))
    throw ModelError(std::string("corrupt model: vtable of ") + what + " at byte " +
                     std::to_string(pos) + " points outside the file");
  vtable_ = static_cast<size_t>(vtable);
  vtable_size_ = view.read<uint16_t>(vtable_, what);
  table_size_ = view.read<uint16_t>(vtable_ + 2, what);
  if (vtable_size_ < 4 || vtable_size_ % 2 != 0)
    throw ModelError(std::string("corrupt model: bad vtable size for ") + what);
  view.require(vtable_, vtable_size_, what);
  view.require(pos_, table_size_, what);
}

size_t Table::field_position(int slot) const {
  const size_t entry = 4 + 2 * static_cast<size_t>(slot);
  if (entry + 2 > vtable_size_) return 0;
  const uint16_t field = view_->read<uint16_t>(vtable_ + entry, what_);
  if (field == 0) return 0;
  if (field >= table_size_)
    throw ModelError(std::string("corrupt model: field ") + std::to_string(slot) + " of " + what_ +
                     " lies outside its table");
  return pos_ + field;
}

std::optional<Table> Table::table(int slot, const char* what) const {
  const size_t field = field_position(slot);
  if (!field) return std::nullopt;
  return Table(*view_, view_->follow(field, what), what);
}

Vector Table::vector(int slot, size_t element_size, const char* what) const {
  const size_t field = field_position(slot);
  if (!field) return Vector(*view_, 0, 0, element_size, what);
  const size_t start = view_->follow(field, what);
  const uint32_t count = view_->read<uint32_t>(start, what);
  view_->require(start + 4, static_cast<size_t>(count) * element_size, what);
  view_->charge(count);
  return Vector(*view_, start + 4, count, element_size, what);
}

std::string Table::string(int slot, const char* what) const {
  const Vector bytes = vector(slot, 1, what);
  return valid_utf8(std::string(reinterpret_cast<const char*>(view_->data() + bytes.data_position()), bytes.size()));
}

}  // namespace tinyarena::reader
