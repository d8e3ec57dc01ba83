#include "tinyarena/codegen/program.h"

namespace tinyarena::codegen {

const char* c_type_name(ElementType type) {
  switch (type) {
    case ElementType::Int8: return "int8_t";
    case ElementType::Int16: return "int16_t";
    case ElementType::Int32: return "int32_t";
    case ElementType::Float32: return "float";
  }
  return "int8_t";
}

size_t element_bytes(ElementType type) {
  switch (type) {
    case ElementType::Int8: return 1;
    case ElementType::Int16: return 2;
    case ElementType::Int32: case ElementType::Float32: return 4;
  }
  return 1;
}

}  // namespace tinyarena::codegen
