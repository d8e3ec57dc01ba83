// UNIDIRECTIONAL_SEQUENCE_LSTM -> ta_lstm_s8 over every step. The state
// tensors (inputs 18 and 19, variable) are reset first, to the hidden state's
// zero point and 0, as a freshly allocated TFLite interpreter holds them: each
// invoke runs the sequence from reset, so the state lives only across this op.
// With its input's QUANTIZE folded in (zero_copy), ta_lstm_s8_float_input
// reads the float sequence and quantizes each step's row into the op's scratch.
#include "tinyarena/codegen/op_lowering.h"
#include "tinyarena/op_params/kernel_params.h"

namespace tinyarena::codegen {
namespace {

constexpr size_t kHiddenState = 18, kCellState = 19;
constexpr const char* kGateNames[4] = {"input", "forget", "cell", "output"};

// `{a, b, c, d}` of the four gates' array names (NULL where absent).
std::string gate_list(const std::vector<std::string>& names) {
  std::string text = "{";
  for (size_t g = 0; g < names.size(); ++g) text += (g ? ", " : "") + names[g];
  return text + "}";
}

// The per-gate constant arrays of one kind (weights or biases), added to `call`.
template <typename MakeArray>
std::string gate_arrays(KernelCall& call, const op_params::LstmKernel& k, MakeArray make) {
  std::vector<std::string> names;
  for (int g = 0; g < 4; ++g) {
    if (k.params.use_cifg && g == 0) {
      names.push_back("NULL");
      continue;
    }
    call.arrays.push_back(make(g));
    names.push_back(call.arrays.back().name);
  }
  return gate_list(names);
}

KernelCall lower_lstm(const LoweringContext& context, const graph::Op& op) {
  const graph::Graph& graph = context.graph();
  const op_params::LstmKernel k = op_params::lstm_kernel(graph, op);
  const ta_lstm_params& p = k.params;
  KernelCall call = start_call(context, op, "lstm.c");
  call.params_type = "ta_lstm_params";
  Fields fields;
  fields.add("batches", p.batches).add("steps", p.steps).add("n_input", p.n_input).add("n_cell", p.n_cell)
      .add("time_major", p.time_major).add("use_cifg", p.use_cifg).add("cell_scale_log2", p.cell_scale_log2)
      .add("cell_clip", p.cell_clip).add("hidden_mult", p.hidden_mult).add("hidden_shift", p.hidden_shift)
      .add("hidden_zero_point", p.hidden_zero_point).add("state_zero_point", p.state_zero_point)
      .add_list("input_mult", p.input_mult, 4).add_list("input_shift", p.input_shift, 4)
      .add_list("recurrent_mult", p.recurrent_mult, 4).add_list("recurrent_shift", p.recurrent_shift, 4);
  const auto weights = [&](const std::array<int32_t, 4>& tensors, const char* kind) {
    return [&, kind](int g) {
      const graph::Tensor& w = graph.tensors[tensors[g]];
      const std::string what = std::string(kind) + "_" + kGateNames[g];
      return const_array(op, what.c_str(), ElementType::Int8, graph.constant_data(w),
                         static_cast<size_t>(w.element_count));
    };
  };
  const auto biases = [&](const std::array<std::vector<int32_t>, 4>& values, const char* kind) {
    return [&, kind](int g) {
      const std::string what = std::string(kind) + "_" + kGateNames[g];
      return int32_array(op, what.c_str(), values[g]);
    };
  };
  fields.add("input_weights", gate_arrays(call, k, weights(k.input_weights_tensor, "wx")));
  fields.add("recurrent_weights", gate_arrays(call, k, weights(k.recurrent_weights_tensor, "wh")));
  fields.add("input_bias", gate_arrays(call, k, biases(k.input_bias, "bx")));
  fields.add("recurrent_bias", gate_arrays(call, k, biases(k.recurrent_bias, "bh")));
  fields.add("output_last_step_only", p.output_last_step_only);
  if (p.input_is_float)
    fields.add("input_is_float", 1).add("input_scale", float_literal(p.input_scale))
        .add("input_zero_point", p.input_zero_point);
  call.params = fields.take();
  const std::string hidden = context.address(op.inputs.at(kHiddenState));
  const std::string cell = context.address(op.inputs.at(kCellState));
  std::vector<std::string> args = {params_ref(op), operand(context, call, op, 0)};
  if (p.input_is_float)
    args.push_back(scratch_for(context, op, static_cast<int64_t>(ta_lstm_s8_float_input_scratch_bytes(&p))));
  args.insert(args.end(), {hidden, cell, context.address(op.outputs[0])});
  call.call = call_text("ta_lstm_s8_reset_state", {params_ref(op), hidden, cell}) + "\n" +
              call_text(p.input_is_float ? "ta_lstm_s8_float_input" : "ta_lstm_s8", args);
  return call;
}

}  // namespace

std::vector<OpLowering> lstm_lowerings() {
  return {{op_params::opcode::kUnidirectionalSequenceLstm, "UNIDIRECTIONAL_SEQUENCE_LSTM", lower_lstm}};
}

}  // namespace tinyarena::codegen
