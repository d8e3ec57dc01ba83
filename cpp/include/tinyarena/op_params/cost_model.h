// Predicted Cortex-M instructions of one op: a linear model per (build, kernel variant),
// calibrated from exact QEMU counts (tools/calibrate_cost_model.py writes its coefficients to
// cpp/data/cost_model.csv, which the build embeds). Deterministic: the same op and build give
// the same prediction on every machine.
#pragma once

#include <cstdint>
#include <string>

#include "tinyarena/graph/graph.h"
#include "tinyarena/op_params/targets.h"

namespace tinyarena::op_params {

// The quantities an op's kernel loops over; its instructions are modelled as
// sum(coefficient * term). Every term is >= 0.
struct CostTerms {
  double macs = 0;     // multiply-accumulates (pooling: the window's reads, outputs x kh x kw)
  // CONV_2D: the MACs of channels that are not in a constant pair (the SIMD kernels store a pair of
  // output channels whose output is constant without their MAC loop); = macs for other ops
  double live_macs = 0;
  // CONV_2D whose activation range is narrower than int8's (the SIMD kernels then run their
  // general, clamping loop): its live MACs; 0 otherwise
  double clamped_macs = 0;
  double inputs = 0;   // elements of the non-constant inputs
  double outputs = 0;  // elements of the outputs
  double pixels = 0;   // output elements / the output's innermost dimension (requantize/store loops)
  double calls = 1;    // one kernel call
};

struct CostCoefficients {
  double macs = 0, live_macs = 0, clamped_macs = 0, inputs = 0, outputs = 0, pixels = 0, calls = 0;
};

// The kernel variant whose coefficients an op uses: the op type, and for the convolutions the
// path the kernels pick by shape ("CONV_2D/1x1", "CONV_2D/kxk", "CONV_2D/few_in"; depthwise:
// "DEPTHWISE_CONV_2D/multiplier" for a depth multiplier above 1, "DEPTHWISE_CONV_2D/<k>x<k>s<s>"
// for a square k x k window, stride s in both axes and no dilation, else
// "DEPTHWISE_CONV_2D/generic"; "FULLY_CONNECTED/per_channel" or "/per_tensor" by its weight scales).
std::string cost_kernel(const graph::Graph& graph, const graph::Op& op);

CostTerms cost_terms(const graph::Graph& graph, const graph::Op& op);

// "portable", "simd" or "helium": the build's name in the coefficient table.
const char* build_name(Build build);

// The coefficients of (build, kernel): that row of the table, else the build's row for the op
// type (the part of `kernel` before '/'), else the build's "*" row (every other op). A build
// without rows of its own (Helium until it is calibrated) uses the SIMD build's.
const CostCoefficients& cost_coefficients(Build build, const std::string& kernel);

// Predicted instructions of one call of the op's kernel in `build` (0 for an elided op), rounded.
int64_t predicted_instructions(const graph::Graph& graph, const graph::Op& op, Build build);

// A tiled op (row stripes, column strips, patches) runs its kernel as several calls. Each call
// beyond the first repeats the kernel's set-up, and a call over part of the width (column strips,
// patches) runs the kernels' general path (its rows are not contiguous): these terms, with their
// own coefficients per (build, kernel) (cpp/data/cost_model_calls.csv, fitted to QEMU counts of
// tiled programs by tools/calibrate_cost_model.py --tiled). Every term is >= 0; all are 0 for
// one call.
struct CallTerms {
  double calls = 0;     // extra calls
  double channels = 0;  // output channels (innermost dimension) per extra call: per-channel set-up
  // input elements of the rows one call's window reads (input row elements x kernel rows x the
  // call's share of the width) per extra call: depthwise planes, ring shifts
  double window = 0;
  // CONV_2D: MACs of the odd pixel a call ends on (the SIMD conv computes pixels in pairs; a pair
  // never spans two calls): extra calls x (pixels per call mod 2) x MACs per pixel
  double leftover_macs = 0;
  double strip_macs = 0;     // calls over part of the width: the op's tiled MACs
  double strip_channels = 0;  // calls over part of the width: output channels per extra call
};

struct CallCoefficients {
  double calls = 0, channels = 0, window = 0, leftover_macs = 0, strip_macs = 0, strip_channels = 0;
};

// The call terms of the op run as `calls` kernel calls, each over `width_share` of the output's
// width (1 for row stripes, 1 / strips for column strips, 1 / grid columns for patches), doing
// `work_scale` times the untiled op's MACs in all.
CallTerms call_terms(const graph::Graph& graph, const graph::Op& op, double calls, double width_share,
                     double work_scale = 1.0);

// The call coefficients of (build, kernel), found as cost_coefficients finds its row; all 0 when
// the table has none for the build.
const CallCoefficients& call_coefficients(Build build, const std::string& kernel);

// The same op run as `calls` kernel calls (a tiled segment's stripes or patches, each over
// `width_share` of the width) that together do `work_scale` times the untiled op's work (MACs,
// elements: > 1 where halos are recomputed): the untiled prediction with its work scaled, plus
// the call terms of the calls beyond the first. calls = 1, work_scale = 1 is the untiled op.
int64_t predicted_instructions(const graph::Graph& graph, const graph::Op& op, Build build, double calls,
                               double work_scale, double width_share = 1.0);

}  // namespace tinyarena::op_params
