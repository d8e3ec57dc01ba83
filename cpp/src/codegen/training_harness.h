// main.c of a training build (lower_training.cpp): the harness that trains and evaluates.
#pragma once

#include <string>

#include "tinyarena/codegen/program.h"

namespace tinyarena::codegen {

// Reads train_config.bin (int32 samples, int32 steps, float learning rate), train_inputs.bin
// (samples inputs) and train_labels.bin (samples int32); writes scores_before.bin (every sample's
// output from invoke, before training), losses.bin (one float per step: step i trains on sample
// i % samples), scores_after.bin. Built with -DTINYARENA_TRACE it writes each gradient and the
// updated trainables of every step to train_trace.bin: int32 kind, value, channel, bytes, float
// scale, then the bytes (kinds: 0 activation gradient, 1 one output channel's int32 weight
// gradient, 2 int32 bias gradient, 3 trainable tensor after the step).
std::string training_harness(const Program& program);

}  // namespace tinyarena::codegen
