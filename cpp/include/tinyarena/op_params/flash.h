// Flash the generated code spends on an op, per build: the constant arrays its
// kernel call carries (weights in the build's layout, biases, requantization
// records, tables) and the kernel library function it links. The code
// generator emits exactly these arrays; the planner reports them before any
// code is generated.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/op_params/targets.h"
#include "tinyarena/op_params/weight_layouts.h"

namespace tinyarena::op_params {

// Build and target_build: tinyarena/op_params/targets.h.

struct ConstantBytes {
  int64_t weights = 0;  // weights in the build's layout, and constant data inputs
  int64_t biases = 0;
  int64_t requant = 0;  // per-channel multipliers and shifts, CONV_2D records, FULLY_CONNECTED double scales
  int64_t tables = 0;   // LOGISTIC / TANH lookup tables, CONCATENATION / SPLIT copy sizes
  int64_t total() const { return weights + biases + requant + tables; }
};

// The constant arrays of the op's kernel call in `build` with its weights in `layout`
// (weight_layouts.h; the portable build reads kPlain whatever the layout). Ops that emit no call
// (views, elided ops) have none. An op the library cannot run gets its raw
// constant tensors (the code generator then reports why it cannot run).
ConstantBytes constant_bytes(const graph::Graph& graph, const graph::Op& op, Build build, WeightLayout layout);
// The same in the op's default layout.
ConstantBytes constant_bytes(const graph::Graph& graph, const graph::Op& op, Build build);

// The library function the op's call runs (e.g. "ta_conv_s8"; `in_place`: the
// in-place depthwise kernel; a CONV_2D in kPackedInt16: "ta_conv_s8_packed16") and its source
// file; empty for ops that emit no call.
struct KernelFunction {
  std::string function, source;
  std::vector<std::string> variants;  // kernel_variants: the families of `source` the call reaches
};
KernelFunction kernel_function(const graph::Graph& graph, const graph::Op& op, bool in_place,
                               WeightLayout layout = WeightLayout::kPlain);

// The variant families of its source's code an op's call reaches in the DSP build with its weights
// in `layout` (kernel_variants.cpp): CONV_2D TA_CONV_PORTABLE (conv.c) or the guards of conv_simd.h
// (TA_CONV_COL_PIXEL, TA_CONV_S8W_GENERAL) or none; DEPTHWISE_CONV_2D the guards of
// depthwise_simd.h (TA_DW_3X3_S1/_S2 and their _ASM, TA_DW_WIDE5_S1/_S2, TA_DW_WIDE7_S1/_S2,
// TA_DW_GENERIC, TA_DW_PORTABLE), with the code the SIMD ones share ("depthwise.c SIMD path");
// FULLY_CONNECTED TA_FC_PACKED16 or TA_FC_PORTABLE (fully_connected.c) or none; empty for other
// ops. The generated Makefile sets every guard of a source that no call reaches to 0, so the
// build links only the families the model uses.
std::vector<std::string> kernel_variants(const graph::Graph& graph, const graph::Op& op, WeightLayout layout);
// The same for the op run on the regions of a tiled schedule (patches, column strips: the region's
// pads shifted, negative inside the map, so a 1x1 layer is not pointwise and builds its columns one
// pixel at a time).
std::vector<std::string> region_kernel_variants(const graph::Graph& graph, const graph::Op& op, WeightLayout layout);
// The guard macros of a source's variant families (empty for a source without them).
const std::vector<std::string>& kernel_variant_guards(const std::string& source);

// Code bytes of a kernel function, and of all the functions of a source file
// linked together: measured with arm-none-eabi-gcc as the generated Makefile
// builds for Cortex-M4 (-O2, --gc-sections; libc and libgcc helpers not
// counted) by tools/kernel_code_bytes.py. 0 for unknown names.
int64_t kernel_code_bytes(const std::string& function);
int64_t kernel_source_code_bytes(const std::string& source);
// Code bytes of a variant family (what leaving it out of the whole source saves), measured the
// same way; a source with families has its function and source bytes measured with none of them.
int64_t kernel_variant_code_bytes(const std::string& variant);

// The kernel code a build links, counted at each kernel's first caller; the
// functions of one source together never above what that whole source links;
// each variant family counted at its first caller.
class KernelCodeTally {
 public:
  // The bytes `kernel` adds to what the calls before it link (0 if already linked).
  int64_t add(const KernelFunction& kernel);

 private:
  std::set<std::string> functions_, variants_;
  std::map<std::string, int64_t> by_source_;
};

}  // namespace tinyarena::op_params
