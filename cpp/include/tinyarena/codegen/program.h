// The lowered program: what the emitter turns into C. Each op becomes one
// kernel call with its constant data (flash) and a params struct; tensors
// are addressed by their planned arena offsets. Plain data, no C text yet
// except the argument expressions the lowering chose.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tinyarena::codegen {

enum class ElementType { Int8, Int16, Int32, Float32, Float64 };
const char* c_type_name(ElementType type);
size_t element_bytes(ElementType type);
// A C literal that reads back to exactly `value` (`0.1f`, `0.1`).
std::string float_literal(float value);
std::string double_literal(double value);

// A preprocessor condition under which a constant or field is emitted
// (empty = always). The kernel library's TA_KERNELS_SIMD selects between
// int8 weights (portable paths) and packed int16 weights (SIMD paths).
constexpr const char* kWhenSimd = "TA_KERNELS_SIMD";
constexpr const char* kWhenPortable = "!TA_KERNELS_SIMD";
// CONV_2D's int8 weight layout is read by the DSP build, its packed int16 one by Helium's.
constexpr const char* kWhenDspNotHelium = "TA_KERNELS_SIMD && !TA_KERNELS_HELIUM";
constexpr const char* kWhenHelium = "TA_KERNELS_HELIUM";
// FULLY_CONNECTED's int8 layout: the int8 weights every build but Helium's reads.
constexpr const char* kWhenNotHelium = "!TA_KERNELS_HELIUM";
// DEPTHWISE_CONV_2D's int8 weights: read by the portable build and Helium's (depthwise_mve.c);
// the DSP build reads the packed int16 ones.
constexpr const char* kWhenPortableOrHelium = "!TA_KERNELS_SIMD || TA_KERNELS_HELIUM";

// A constant array placed in flash: `static const <type> <name>[] = {...}`.
struct ConstArray {
  std::string name;
  ElementType type = ElementType::Int8;
  std::vector<uint8_t> bytes;  // little-endian elements
  std::string condition;       // see kWhenSimd
};

// One field of a params struct initializer: `.name = value`.
struct Field {
  std::string name;
  std::string value;  // a C expression (number, array name, `{1, 2, 3}`)
  std::string condition;
};

// The C array of the single arena (a plan without a memory hierarchy).
constexpr const char* kSingleArena = "ta_arena";

// Where a tensor lives at run time.
struct TensorRef {
  int32_t tensor = -1;
  std::string arena = kSingleArena;  // the C array of its memory's arena
  int64_t offset = 0;  // in that arena
  int64_t bytes = 0;
  std::string c_type = "int8_t";
  bool in_caller_array = false;  // `arena` names an invoke argument (liveness caller_tensors), never copied
};

struct KernelCall {
  int32_t op_index = 0;
  std::string op_type;
  std::string kernel_source;            // the kernel library file it needs, e.g. "conv.c"
  std::vector<ConstArray> arrays;
  std::string params_type;              // e.g. "ta_conv_params"; empty when the call has none
  std::vector<Field> params;
  std::string call;                     // C statement(s); `params` names the params struct
  std::vector<TensorRef> outputs;       // traced after the call in debug builds
  // A dense one-input elementwise call `kernel(first, in, out, n)`: the kernel and its first
  // argument, so a tiled schedule can call it on sub-ranges; both empty for every other call.
  std::string elementwise_kernel;
  std::string elementwise_first;
  // A windowed call's kernel function (CONV_2D: ta_conv_s8 or ta_conv_s8_packed16, by the layer's
  // weight layout), which tiled schedules call on stripes and regions; empty for other calls.
  std::string window_kernel;
  // The variant families of kernel_source the call reaches (op_params::kernel_variants); the
  // Makefile leaves out the families no call of the model reaches.
  std::vector<std::string> variants;
};

struct ModelIO {
  std::string name;  // tensor name in the model
  TensorRef tensor;
  std::vector<int32_t> shape;
  std::string dtype;  // "int8", "float32", ...
  float scale = 0.0f;
  int64_t zero_point = 0;
  bool streamed = false;  // an input the code pulls row by row (TA_INPUT_ROWS), never copied whole
};

// One memory's arena in model.c: a static array in linker section
// `.tinyarena.<memory>`, which tinyarena_sections.ld places in the linker
// memory region named `<memory>`.
struct Arena {
  std::string memory;         // the memory's name (a C identifier)
  std::string symbol;         // the C array: tinyarena_<model>_arena_<memory>
  int64_t bytes = 0;          // the memory's planned peak
  int64_t alignment = 16;     // of the array: its memory's and its buffers' alignment
  int64_t memory_bytes = 0;   // the memory's size (the linker region's length)
  uint64_t base_address = 0;  // where the memory starts (the linker region's origin)
};

// The on-device training step of a training build (training_lowering.h); empty for inference.
struct TrainingCode {
  std::string declarations;    // model.h: the training API's prototypes
  std::string definitions;     // model.c, after invoke: backward params, train_init, train_step
  std::string globals;         // model.c, before the ops' data: the training state
  std::string invoke_prologue; // model.c: first statement(s) of invoke (the trainables' one-time copy)
  std::string harness;         // main.c in place of the inference harness
  std::vector<std::string> kernel_sources;  // kernel library files it calls besides the forward's
  std::string cflags;          // CFLAGS the build needs (the portable kernels: -DTA_NO_SIMD)
  bool empty() const { return definitions.empty(); }
};

struct Program {
  std::string name;  // C identifier used in the API: tinyarena_<name>_invoke
  int64_t arena_bytes = 0;  // all arenas together
  std::vector<Arena> arenas;  // one per used memory of a hierarchy; empty: the single arena kSingleArena
  std::vector<ModelIO> inputs, outputs;
  std::vector<KernelCall> calls;  // in execution order; views emit no call
  TrainingCode training;          // a training build's step (empty: inference only)
};

// Bytes of the constant arrays (weights, biases, tables) the build of
// `target` compiles in (op_params::Build: portable int8 weights; the DSP
// build's int8 conv and packed int16 other weights and requantization
// records; Helium's packed int16 conv weights). Params structs are not counted.
int64_t const_array_bytes(const Program& program, const std::string& target);

}  // namespace tinyarena::codegen
