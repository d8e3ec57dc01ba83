// Lowering of a training plan (training/training_plan.h) to a Program with a
// training step beside invoke:
//   void  tinyarena_<name>_train_init(void)   trainable tensors := their flash values
//   float tinyarena_<name>_train_step(const int8_t *input, int32_t label, float learning_rate)
// train_step runs the forward ops (int8, as invoke; 1-bit RELU masks written
// after the ops that make them), the softmax cross-entropy gradient, the
// backward steps (int8 activation gradients with one run-time scale each,
// int32 accumulation, power-of-two requantization) and the SGD updates of the
// trainable tensors (QAS scaling), in the plan's step order, every buffer at its
// planned offset in the one arena; it returns the loss. The trainable tensors
// are SRAM copies of the flash weights and biases, made by train_init (invoke
// and train_step make it on their first call); invoke reads them, so it runs the
// model as trained. Formats and formulas: cpp/kernels/include/tinyarena_training.h.
//
// The build runs the portable kernels (-DTA_NO_SIMD: the forward reads the int8
// trainable copies, not packed flash weights). With -DTINYARENA_TRACE the step
// also reports every gradient and the updated trainables to
// tinyarena_train_trace (the verification harness's main.c writes them out).
//
// A partial update (layers:I@FRACTION) of a CONV_2D / FULLY_CONNECTED keeps the
// first weight_channels output channels' weights in SRAM only: its forward call
// runs over the two channel ranges (ta_conv_s8_split / ta_fully_connected_s8_split)
// and its input gradient reads the other channels from flash. With the updates
// at the end (reorder_updates off) each whole int32 weight gradient is written
// to its planned buffer and every SGD update runs after the backward pass, with
// the arithmetic of the fused per-channel updates (the same updated parameters).
//
// Supported: batch 1, one int8 input, the gradients of training_graph.h
// (GRAD_SUM, ADD and PAD included); AVERAGE_POOL_2D / MEAN only with windows
// that neither overlap nor leave the input; @FRACTION on CONV_2D and
// FULLY_CONNECTED with the plain int8 weight layout (not DEPTHWISE_CONV_2D, whose
// channels are not contiguous). Anything else throws UnsupportedError naming the
// op (index and type).
#pragma once

#include <string>

#include "tinyarena/codegen/program.h"
#include "tinyarena/training/training_plan.h"

namespace tinyarena::codegen {

Program lower_training_program(const training::TrainingPlan& plan, const std::string& name);

}  // namespace tinyarena::codegen
