#include "tinyarena/op_params/targets.h"

#include <stdexcept>

namespace tinyarena::op_params {

const std::vector<Target>& targets() {
  // Cortex-M3 has no DSP extension, so its compiler selects the portable kernels; the mps2
  // boards (AN385/AN386/AN500) share one memory map, the TrustZone boards (AN505, AN547)
  // boot in secure state and are linked at their secure aliases.
  static const std::vector<Target> table = {
      {"host", Build::Portable, "", "", ""},
      {"cortex-m3", Build::Portable, "-mcpu=cortex-m3 -mthumb -mfloat-abi=soft", "mps2-an385", "board_mps2.ld"},
      {"cortex-m4", Build::Simd, "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard", "mps2-an386",
       "board_mps2.ld"},
      {"cortex-m7", Build::Simd, "-mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard", "mps2-an500",
       "board_mps2.ld"},
      {"cortex-m33", Build::Simd, "-mcpu=cortex-m33 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard", "mps2-an505",
       "board_mps2-an505.ld"},
      {"cortex-m55", Build::Helium, "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard", "mps3-an547", "board_mps3-an547.ld"},
  };
  return table;
}

std::string target_names() {
  const std::vector<Target>& all = targets();
  std::string names;
  for (size_t i = 0; i < all.size(); ++i) names += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i].name;
  return names;
}

const Target& find_target(const std::string& name) {
  for (const Target& target : targets())
    if (target.name == name) return target;
  throw std::invalid_argument("unknown target '" + name + "': use " + target_names());
}

Build target_build(const std::string& name) { return find_target(name).build; }

}  // namespace tinyarena::op_params
