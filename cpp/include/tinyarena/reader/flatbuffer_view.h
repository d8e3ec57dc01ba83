// A bounds-checked view of a flatbuffer. Every offset, count and vtable
// slot is checked against the buffer before it is read, and a work budget
// bounds the total number of elements read, so a hostile file can neither
// read out of bounds nor make the reader run for long (shared sub-objects
// cannot multiply work beyond the budget). Violations throw ModelError.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace tinyarena::reader {

class FlatbufferView {
 public:
  FlatbufferView(const uint8_t* data, size_t size);

  size_t size() const { return size_; }
  const uint8_t* data() const { return data_; }

  // Reads a little-endian scalar at `pos`; `what` names it in errors.
  template <typename T>
  T read(size_t pos, const char* what) const {
    require(pos, sizeof(T), what);
    T value;
    std::memcpy(&value, data_ + pos, sizeof(T));
    return value;
  }
  // Throws unless [pos, pos + length) lies inside the buffer.
  void require(size_t pos, size_t length, const char* what) const;
  // Follows the uint32 offset stored at `pos`.
  size_t follow(size_t pos, const char* what) const;
  // Charges `elements` units of work; throws when the budget is spent.
  void charge(uint64_t elements) const;

 private:
  const uint8_t* data_;
  size_t size_;
  mutable uint64_t budget_;
};

class Vector;

// A table: its position, its vtable, and typed access by field slot.
class Table {
 public:
  Table(const FlatbufferView& view, size_t pos, const char* what);

  template <typename T>
  T scalar(int slot, T default_value) const {
    const size_t field = field_position(slot);
    return field ? view_->read<T>(field, what_) : default_value;
  }
  bool has(int slot) const { return field_position(slot) != 0; }
  // A sub-table, or nullopt when the field is absent.
  std::optional<Table> table(int slot, const char* what) const;
  // A vector of `element_size`-byte elements (4 for offsets to tables).
  Vector vector(int slot, size_t element_size, const char* what) const;
  // A string, with bytes that are not valid UTF-8 replaced by '?'.
  std::string string(int slot, const char* what) const;
  // Absolute position of a field's bytes, 0 when absent.
  size_t field_position(int slot) const;
  size_t position() const { return pos_; }
  // Number of field slots the vtable has room for.
  int slot_count() const { return (vtable_size_ - 4) / 2; }

 private:
  const FlatbufferView* view_;
  size_t pos_;
  size_t vtable_;
  uint16_t vtable_size_;
  uint16_t table_size_;
  const char* what_;
};

class Vector {
 public:
  Vector() = default;
  Vector(const FlatbufferView& view, size_t pos, uint32_t count, size_t element_size, const char* what)
      : view_(&view), pos_(pos), count_(count), element_size_(element_size), what_(what) {}

  uint32_t size() const { return count_; }
  size_t data_position() const { return pos_; }
  template <typename T>
  T scalar(uint32_t i) const {
    return view_->read<T>(pos_ + static_cast<size_t>(i) * element_size_, what_);
  }
  Table table(uint32_t i) const { return Table(*view_, view_->follow(pos_ + 4u * i, what_), what_); }

 private:
  const FlatbufferView* view_ = nullptr;
  size_t pos_ = 0;
  uint32_t count_ = 0;
  size_t element_size_ = 1;
  const char* what_ = "";
};

}  // namespace tinyarena::reader
