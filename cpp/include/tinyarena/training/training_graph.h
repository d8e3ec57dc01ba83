// The training step of an int8 graph, derived at compile time: the forward ops
// (the inference graph as it is), the activations the backward pass reads
// (saved), and the backward steps pruned to an update: a tensor gets a gradient
// only when it depends on an updated parameter and reaches the loss, so no
// gradient flows below the earliest layer that updates anything.
//
// Number formats (the byte counts below follow from them):
// - forward: int8 exactly as inference; saved activations are the forward int8
//   tensors themselves, kept alive until their last backward reader -- except a
//   tensor saved only for an activation-function derivative (a fused or standalone
//   RELU/RELU6 output: the derivative is 1 inside the active range, else 0), which
//   is saved as a 1-bit mask, ceil(n/8) bytes for n elements, written by the
//   forward op that makes the tensor and alive from there to its last backward
//   reader (the int8 tensor itself then dies after its forward readers). A tensor
//   a weight gradient or the loss reads stays int8, and a derivative at it reads
//   the int8 (no mask beside it);
// - activation gradients: int8, one per-tensor scale chosen at run time (a float
//   beside the kernel, not in the arena). Views (RESHAPE, SQUEEZE, EXPAND_DIMS)
//   and ADD pass the gradient on unchanged (same buffer); pooling's 1/window goes
//   into the scale; PAD's input gradient is the output gradient cropped (a copy); a tensor read by several ops sums its gradients (GRAD_SUM);
// - the loss gradient softmax(logits) - onehot(label): int8, scale max|gradient| / 127 (chosen at run time);
// - weight and bias gradients: int32, one per updated element (updated output
//   channels only), read by the SGD update of that parameter. With updates at the
//   end that is the whole tensor. With updates reordered, a weight gradient is
//   computed and applied one output channel at a time (channel k's gradient reads
//   channel k of the output gradient and the saved input): one fused step,
//   gradient + SGD update, whose only gradient buffer is one channel's int32
//   values (channel_weights * 4 bytes) as its kernel scratch. Bias gradients stay
//   whole (C_out int32 values) in both orders;
// - trainable tensors (SRAM copies of flash parameters, persistent across steps):
//   int8 weights of the updated output channels only, int32 biases (C_out each);
// - backward kernel scratch, per step: the input gradient of CONV_2D,
//   DEPTHWISE_CONV_2D and FULLY_CONNECTED, and of an AVERAGE_POOL_2D whose windows
//   overlap, is accumulated in int32 and requantized to int8 with the per-tensor
//   scale its largest |value| gives. Two passes (default): each input-gradient row
//   is computed (gathered from the output gradient) twice, first for the maximum,
//   then to be written: scratch is one row in int32 (W * C * 4 bytes; a dense
//   input: C * 4), for twice the MACs. One pass: the whole tensor in int32
//   (4 bytes per input element). Every other backward step needs none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinyarena/graph/graph.h"
#include "tinyarena/training/spec.h"

namespace tinyarena::training {

enum class ValueClass { Activation, Scratch, Trainable, Gradient };
const char* value_class_name(ValueClass cls);

// A value the backward pass adds: a gradient, a trainable parameter copy.
struct TrainValue {
  std::string name;
  ValueClass cls = ValueClass::Gradient;
  int64_t bytes = 0;
  int32_t tensor = -1;  // the forward tensor it is the gradient of, or the parameter tensor
  bool parameter_gradient = false;  // int32 weight or bias gradient (else an activation gradient)
  int32_t forward_op = -1;  // a saved 1-bit mask: the forward op that writes it (else -1)
};

enum class StepKind { Forward, Loss, Backward, Update };
const char* step_kind_name(StepKind kind);

// What a loss, backward or update step computes (the kernel it runs).
enum class StepMath {
  Loss,             // softmax cross-entropy gradient of the logits
  ActivationGrad,   // a RELU/RELU6 derivative (fused or standalone): the gradient masked
  InputGrad,        // a weight layer's, pool's or PAD's input gradient
  WeightGrad,       // a whole int32 weight gradient
  BiasGrad,         // an int32 bias gradient
  GradSum,          // the sum of a tensor's gradients
  SgdUpdate,        // the SGD update of a parameter from its gradient
  ChannelUpdate,    // a weight gradient computed and applied per output channel
};
// "loss", "activation_grad", "input_grad", "weight_grad", "bias_grad", "grad_sum", "sgd_update",
// "channel_update".
const char* step_math_name(StepMath math);

// One backward, loss or update step; forward steps are the graph's ops in order.
struct TrainStep {
  StepKind kind = StepKind::Backward;
  StepMath math = StepMath::InputGrad;
  int32_t op = -1;             // the forward op it differentiates (or whose parameter it updates)
  std::string what;            // e.g. "CONV_2D grad input"
  std::vector<int32_t> reads;  // value indices (gradients, trainables, saved masks)
  std::vector<int32_t> saved;  // forward tensors read as int8 (saved activations)
  std::vector<int32_t> writes; // value indices
  int64_t scratch_bytes = 0;              // kernel scratch of this step, two-pass requantization
  int64_t single_pass_scratch_bytes = 0;  // the same with one pass (the whole int32 accumulator)
  bool in_place_candidate = false;  // elementwise: may write over reads[0] when nothing reads it later
};

struct TrainingGraph {
  graph::Graph forward;                 // the inference graph, unchanged
  std::vector<LayerUpdate> updates;     // ascending op index
  std::vector<TrainValue> values;
  std::vector<TrainStep> backward;      // loss first, then backward steps (no updates)
  std::vector<TrainStep> sgd_updates;   // the SGD update of each parameter gradient, in gradient order
  std::vector<int32_t> update_after;    // per SGD update: the backward step that makes its gradient
  // Per updated weight tensor: the fused per-output-channel gradient + SGD update
  // that replaces the whole-gradient step and its update when updates are reordered.
  std::vector<TrainStep> channel_updates;
  std::vector<int32_t> channel_update_replaces;  // per channel update: the backward step it replaces
  std::vector<int32_t> saved;           // forward tensors a backward step reads as int8, ascending
  std::vector<int32_t> masks;           // values: the 1-bit masks saved for activation derivatives
  std::vector<int32_t> backward_ops;    // forward ops a gradient passes through or that update, descending
  int32_t loss_tensor = -1;             // the int8 tensor the loss reads (softmax output or logits)
  int64_t updated_parameters = 0;
};

// Throws UnsupportedError naming the op index and type of an op on the backward
// path without a gradient here (or with a float tensor, or a fused activation
// other than RELU/RELU6), and for a graph whose output is not one int8 tensor of
// class scores; std::invalid_argument when `updates` is empty.
TrainingGraph derive_training_graph(const graph::Graph& graph, std::vector<LayerUpdate> updates);

}  // namespace tinyarena::training
