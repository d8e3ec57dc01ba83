// The code generation targets: one table that the flash model, the emitted
// Makefile and the Python package (tinyarena.codegen.TARGETS, the QEMU boards
// verify runs on) all read.
#pragma once

#include <string>
#include <vector>

namespace tinyarena::op_params {

// Which kernels a build compiles: the SIMD build (cores with the DSP extension,
// __ARM_FEATURE_DSP: Cortex-M4/M7/M33) stores CONV_2D's weights as int8 (widened in its MAC
// loop), the other layers' as packed int16, and CONV_2D's per-channel records; the Helium build
// (Cortex-M55) keeps int8 weights everywhere (CONV_2D's in TA_PACKED_MVE with records of its
// own, depthwise and fully connected the model's; packed int16 only for fully connected with a
// weights offset and kPackedInt16 conv layers); the portable one (host, Cortex-M3) int8 weights.
enum class Build { Portable, Simd, Helium };

struct Target {
  std::string name;          // "host", "cortex-m4", ...
  Build build;               // the kernels (and constant layouts) the target's compiler selects
  std::string gcc_flags;     // arm-none-eabi-gcc CPU/FPU flags; empty for host
  std::string qemu_machine;  // the QEMU board the test harness runs on; empty for host
  std::string board_script;  // target/<file>: the board's MEMORY (VECTORS, ROM, RAM) for the harness
};

// Every target, host first, then the Cortex-M cores by architecture.
const std::vector<Target>& targets();

// The names of every target, for messages: "host, cortex-m3, ... or cortex-m55".
std::string target_names();

// The target called `name`; std::invalid_argument naming the known targets otherwise.
const Target& find_target(const std::string& name);

// The build of target `name` (std::invalid_argument for an unknown name).
Build target_build(const std::string& name);

}  // namespace tinyarena::op_params
