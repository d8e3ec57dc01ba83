// Reader fuzz driver: for each model file given, reads every truncation at
// 1/64 steps, `--mutants N` copies with random bytes overwritten (half of
// them only in the flatbuffer's structure, outside constant data), an empty
// file and a non-flatbuffer file. Each must load or throw ModelError; any
// other exception fails. Mutants are seeded from the file's content, so every
// checkout fuzzes the same ones. Built with sanitizers, this also proves the
// reader never reads out of bounds. Prints "N passed, M failed".
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tinyarena/common/errors.h"
#include "tinyarena/common/random.h"
#include "tinyarena/reader/tflite_reader.h"

namespace {

using Bytes = std::vector<uint8_t>;

using tinyarena::SplitMix64;  // portable, so the corpus is the same everywhere

struct Tally {
  int loaded = 0, rejected = 0, failed = 0;
};

void read_one(const Bytes& bytes, const std::string& label, Tally& tally) {
  try {
    tinyarena::reader::read_tflite(bytes);
    ++tally.loaded;
  } catch (const tinyarena::ModelError&) {
    ++tally.rejected;
  } catch (const std::exception& e) {
    ++tally.failed;
    std::fprintf(stderr, "FAIL %s: unexpected %s\n", label.c_str(), e.what());
  }
}

// Byte ranges of constant data, so structure-only mutants can avoid them.
std::vector<bool> structure_mask(const Bytes& model) {
  std::vector<bool> is_structure(model.size(), true);
  const auto graph = tinyarena::reader::read_tflite(model);
  for (const auto& tensor : graph.tensors)
    if (tensor.data)
      for (size_t i = 0; i < tensor.data->size; ++i) is_structure[tensor.data->offset + i] = false;
  return is_structure;
}

// FNV-1a of the file's bytes: the same model gets the same mutants wherever it lives.
uint64_t content_seed(const Bytes& model) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint8_t byte : model) hash = (hash ^ byte) * 0x100000001b3ull;
  return hash;
}

void fuzz_model(const Bytes& model, const std::string& name, int mutants, Tally& tally) {
  for (int k = 0; k < 64; ++k) read_one(Bytes(model.begin(), model.begin() + model.size() * k / 64), name + " truncated", tally);
  const auto is_structure = structure_mask(model);
  std::vector<size_t> structure;
  for (size_t i = 0; i < model.size(); ++i)
    if (is_structure[i]) structure.push_back(i);
  SplitMix64 rng{content_seed(model)};
  for (int m = 0; m < mutants; ++m) {
    Bytes mutant = model;
    const size_t flips = 1 + rng.below(8);
    for (size_t f = 0; f < flips; ++f) {
      const size_t pos = (m % 2 == 0) ? structure[rng.below(structure.size())] : rng.below(mutant.size());
      mutant[pos] = static_cast<uint8_t>(rng.next());
    }
    read_one(mutant, name + " mutant " + std::to_string(m), tally);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int mutants = 10000;
  Tally tally;
  read_one(Bytes{}, "empty file", tally);
  const std::string text = "this is not a flatbuffer, just text";
  read_one(Bytes(text.begin(), text.end()), "text file", tally);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mutants") == 0 && i + 1 < argc) {
      mutants = std::stoi(argv[++i]);
      continue;
    }
    std::ifstream file(argv[i], std::ios::binary);
    if (!file) {
      std::fprintf(stderr, "cannot read %s\n", argv[i]);
      return 2;
    }
    const Bytes model((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    fuzz_model(model, argv[i], mutants, tally);
  }
  std::printf("fuzz: %d loaded, %d rejected with ModelError, %d failed\n", tally.loaded, tally.rejected, tally.failed);
  std::printf("%d passed, %d failed\n", tally.loaded + tally.rejected, tally.failed);
  return tally.failed == 0 ? 0 : 1;
}
