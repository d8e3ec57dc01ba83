// Text both generated harnesses share (emit.cpp's main.c, training_harness.cpp's).
#pragma once

#include <cctype>
#include <string>

namespace tinyarena::codegen {

// "TINYARENA_" and the name in capitals: the prefix of a model's macros in model.h.
inline std::string macro_prefix(const std::string& name) {
  std::string prefix = "TINYARENA_";
  for (char c : name) prefix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return prefix;
}

// read_file / write_file: a whole file into or out of a buffer, 1 on success (host: stdio; on
// Cortex-M: semihosting through newlib).
inline constexpr const char* kHarnessFileIo = R"(
static int read_file(const char *path, void *data, size_t bytes) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t got = fread(data, 1, bytes, f);
  fclose(f);
  return got == bytes;
}

static int write_file(const char *path, const void *data, size_t bytes) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  size_t put = fwrite(data, 1, bytes, f);
  fclose(f);
  return put == bytes;
}
)";

}  // namespace tinyarena::codegen
