#include "tinyarena/codegen/op_lowering.h"

namespace tinyarena::codegen {

std::vector<OpLowering> all_op_lowerings() {
  std::vector<OpLowering> all;
  for (auto family : {pool_lowerings, softmax_lowerings, conv_lowerings, fully_connected_lowerings,
                      binary_lowerings, activation_lowerings, mean_lowerings, data_movement_lowerings,
                      lstm_lowerings}) {
    const auto lowerings = family();
    all.insert(all.end(), lowerings.begin(), lowerings.end());
  }
  return all;
}

}  // namespace tinyarena::codegen
