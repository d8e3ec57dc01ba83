/*
 * tinyarena kernels: int8 kernels (C99) that generated code calls. Bit-exact with TFLite's
 * reference kernels (the interpreter's OpResolverType.BUILTIN_REF).
 *
 * Conventions (all kernels)
 * -------------------------
 * - Pure functions: no malloc, no globals, no static state. Tensor pointers are arguments;
 *   everything constant for an op (shapes, quantization, weights) sits in a params struct that
 *   the generator can place in flash (`static const`).
 * - Activations are NHWC int8. A kernel processes one image; callers loop over batches
 *   (except FULLY_CONNECTED, MEAN and the shape ops, which take the full shape).
 * - Zero points: fields named `*_offset` follow TFLite's ArithmeticParams convention:
 *   input_offset = -input_zero_point, output_offset = +output_zero_point. Fields named
 *   `*_zero_point` are the zero point itself.
 * - Multipliers: (mult, shift) pairs exactly as TFLite's QuantizeMultiplier produces them
 *   (real = mult * 2^(shift-31); shift > 0 is a left shift). Per-channel arrays have one
 *   entry per output channel.
 * - act_min/act_max: the fused activation range in the output's int8 domain (TFLite's
 *   CalculateActivationRangeQuantized), [-128, 127] for no activation.
 * - Strides (`*_row_stride`, `*_pix_stride`) are in elements (= bytes for int8); 0 means the
 *   dense default (pix_stride = channels, row_stride = width * pix_stride). A producer can write
 *   into a channel slice of a concatenation by passing out = concat_base + channel_offset and
 *   out_pix_stride = concat_channels (or a row slice with out_row_stride).
 * - Row ranges: conv, depthwise and pools compute output rows [y0, y1) only. `input`/`output`
 *   always point at (the virtual) row 0 of the full tensors; a tiled caller may pass a virtual
 *   base so that only the rows the stripe needs are ever touched.
 * - Scratch: kernels that need scratch memory take a `void *scratch` (4-byte aligned) and have
 *   a `*_scratch_bytes(params)` function. The sizes returned are for the DSP path (the
 *   largest need), independent of the build, so a host-side generator gets the same number.
 * - Padding: explicit pad_top/left/bottom/right. Positions outside the input read as the
 *   input zero point (conv/depthwise) or are skipped (pools), exactly as TFLite does; the
 *   bottom/right values are documentation for the caller's output-size computation (the
 *   kernel only ever tests input bounds), so asymmetric padding from a folded PAD works.
 * - DSP: with __ARM_FEATURE_DSP (Cortex-M4/M7/M33/M55) conv, depthwise and fully connected use
 *   2-MAC SIMD instructions when the params carry packed weights (see "Packed weights"); with
 *   Helium (__ARM_FEATURE_MVE: Cortex-M55) conv runs 16-MAC VMLADAVA.S8 on int8 weights
 *   (TA_PACKED_MVE), depthwise VMLA on int32 lanes on the model's int8 weights, and fully
 *   connected reads the packed int16 weights with 8-MAC vector instructions.
 *   Results are identical to the portable path. Define TA_NO_SIMD to force the portable path,
 *   TA_SIMD_EMULATE to run the SIMD-structured code with C emulation of the intrinsics (tests).
 *
 * Packed weights (format TA_PACKED_S16, produced by ta_pack_*() on the host or by the generator)
 * --------------------------------------------------------------------------------------------
 * CONV_2D / FULLY_CONNECTED ("GEMM" weights, K = kernel_h*kernel_w*in_c or in_depth,
 * Kq = K rounded up to a multiple of 4, N = out channels):
 *   int16 array of N*Kq values: Kq/2 SIMD words per channel. Word t holds the two k values
 *   k0 = 4*(t/2) + t%2 and k0 + 2, i.e. each group of 4 values k..k+3 forms the words (k, k+2)
 *   and (k+1, k+3) -- the order SXTB16 / SXTB16 ROR 8 widen 4 input bytes into. For each
 *   output-channel pair (n, n+1), n even, for each word t: word t of channel n, then of n+1;
 *   a final odd channel n = N-1 stores its words alone. Values past K are 0.
 *   w[n][k] is the TFLite weight (OHWI order for conv, [N][K] for FC) plus weights_offset
 *   (FC only; 0 for symmetric weights). So each 32-bit word is one SMLAD operand.
 * DEPTHWISE_CONV_2D: int16 array of out_c * kernel_h * KWp values, KWp = kernel_w rounded up
 *   to even: channel-major, then row, then tap; taps past kernel_w are 0. Each value is TWICE
 *   the weight (|2w| <= 256), so the MAC loops produce the doubled accumulator that the
 *   three-instruction requantization (ta_rqd) takes.
 * ta_pack_gemm_weights_s16() / ta_pack_dw_weights_s16() implement this; the *_bytes()
 * functions give the sizes. Packed weights take twice the flash of int8 weights and must be
 * 4-byte aligned (emit them with __attribute__((aligned(4)))).
 */
#ifndef TINYARENA_KERNELS_H
#define TINYARENA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "tinyarena_requantize.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TA_MAX_DIMS 6

/* 1 when this build runs the SIMD-structured paths (native DSP instructions, or their C
 * emulation with TA_SIMD_EMULATE) and so reads `packed_weights`; 0 when only the portable paths
 * are compiled (no DSP extension, or TA_NO_SIMD) and `weights` are read. Generated code uses it
 * to ship one of the two weight formats, never both. */
#if !defined(TA_NO_SIMD) && (defined(__ARM_FEATURE_DSP) || defined(TA_SIMD_EMULATE))
#define TA_KERNELS_SIMD 1
#else
#define TA_KERNELS_SIMD 0
#endif
/* 1 on a core with Helium (__ARM_FEATURE_MVE: Cortex-M55) running native SIMD paths: CONV_2D
 * (ta_conv_s8) then reads int8 weights in the TA_PACKED_MVE layout and its own records. */
#if TA_KERNELS_SIMD && defined(__ARM_FEATURE_MVE) && !defined(TA_SIMD_EMULATE)
#define TA_KERNELS_HELIUM 1
#else
#define TA_KERNELS_HELIUM 0
#endif

/* ------------------------------------------------------------------ CONV_2D */
typedef struct ta_conv_params {
  int32_t in_h, in_w, in_c;
  int32_t out_h, out_w, out_c;
  int32_t kernel_h, kernel_w;
  int32_t stride_h, stride_w;
  int32_t dilation_h, dilation_w;
  int32_t pad_top, pad_left, pad_bottom, pad_right;
  int32_t in_row_stride, in_pix_stride;   /* 0 = dense */
  int32_t out_row_stride, out_pix_stride; /* 0 = dense */
  int32_t input_offset;                   /* -input zero point */
  int32_t output_offset;                  /* output zero point */
  int32_t act_min, act_max;
  const int8_t *weights;        /* TFLite layout [out_c][kh][kw][in_c] */
  const int16_t *packed_weights; /* TA_PACKED_S16 (read by ta_conv_s8_packed16) or NULL */
  const int32_t *bias;          /* [out_c] or NULL */
  const int32_t *out_mult;      /* [out_c] */
  const int32_t *out_shift;     /* [out_c] */
  /* [out_c][TA_CONV_RQ_WORDS] from ta_conv_s8_rq_records (4-byte aligned, e.g. const in flash):
   * the SIMD paths need them (NULL: the portable path runs). */
  const int32_t *rq_records;
  /* 1: packed_weights hold 2*w (ta_conv_s8_pack_weights) and the SIMD path requantizes the
   * doubled accumulator (ta_rqd); set it only where ta_conv_s8_can_double(p). 0: 1*w, ta_rq4. */
  int32_t packed_doubled;
  /* TA_PACKED_S8 (ta_conv_s8_pack_weights_s8; read by ta_conv_s8) or NULL: int8 weights the
   * SIMD path widens in the MAC loop; packed_doubled then doubles the column values instead of
   * the weights. */
  const int8_t *packed_s8_weights;
} ta_conv_params;

/* The SIMD path runs on packed_s8_weights when set, with rq_records (else the portable path). In a
 * Helium build (TA_KERNELS_HELIUM) those two are the TA_PACKED_MVE layout
 * (ta_conv_s8_pack_weights_mve) and ta_conv_s8_mve_records' records; without packed_s8_weights a
 * Helium build runs ta_conv_s8_packed16. */
void ta_conv_s8(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                void *scratch);
/* The same for int16 weights: the SIMD path runs on packed_weights and rq_records when set (else
 * the portable path). A function of its own, so that a build whose layers all take int8 weights links no
 * int16 path. */
void ta_conv_s8_packed16(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                         void *scratch);
/* The SIMD path's column buffer. Every path needs this scratch (the portable one its first 8 K
 * bytes, for two pixel columns of int32). */
size_t ta_conv_s8_scratch_bytes(const ta_conv_params *p);

/* Per-output-channel constants of the SIMD path: {m, c, bias}, TA_CONV_RQ_WORDS int32 per channel,
 * written to records[0..out_c * TA_CONV_RQ_WORDS) from out_mult, out_shift, output_offset, bias and
 * packed_doubled. m and c are the fast requantization with the output offset folded in (ta_rqd's
 * when p->packed_doubled, else ta_rq4's m, c_hi); its right shift (ta_rqd's r, ta_rq4's rs) is not
 * stored: c's lowest set bit is bit r - 1 (c = 2^(r-1) + (offset << r), r >= 1), so r is one more
 * than c's trailing zeros. A channel without the fast form has c = TA_CONV_RQ_GENERAL + its TFLite
 * shift (below -2^30; a fast c lies in [-255 * 2^21, 2^30]). Then the bias, doubled with the
 * weights. Valid for every build (with TA_SINGLE_ROUNDING the kernel takes the general
 * requantization for every channel). With records passed in rq_records, the SIMD paths read
 * neither bias, out_mult nor out_shift (they may be NULL). */
#define TA_CONV_RQ_WORDS 3
#define TA_CONV_RQ_GENERAL (INT32_MIN + (1 << 29))
#define TA_CONV_RQ_IS_FAST(c) ((c) >= -(1 << 30)) /* whether a record's c is a fast form's */
void ta_conv_s8_rq_records(const ta_conv_params *p, int32_t *records);

/* ------------------------------------------------------- DEPTHWISE_CONV_2D */
typedef struct ta_dwconv_params {
  int32_t in_h, in_w, in_c;
  int32_t out_h, out_w;          /* out_c = in_c * depth_multiplier */
  int32_t depth_multiplier;
  int32_t kernel_h, kernel_w;
  int32_t stride_h, stride_w;
  int32_t dilation_h, dilation_w;
  int32_t pad_top, pad_left, pad_bottom, pad_right;
  int32_t in_row_stride, in_pix_stride;
  int32_t out_row_stride, out_pix_stride;
  int32_t input_offset, output_offset;
  int32_t act_min, act_max;
  const int8_t *weights;         /* TFLite layout [1][kh][kw][out_c] */
  const int16_t *packed_weights; /* TA_PACKED_S16 depthwise layout or NULL */
  const int32_t *bias;           /* [out_c] or NULL */
  const int32_t *out_mult, *out_shift; /* [out_c] */
  /* 1: with packed_weights NULL the DSP SIMD path reads the int8 `weights`, widening one output
   * channel's kernel into TA_PACKED_S16 words on the stack each time it prepares the channel
   * (kernels of at most TA_DW_INT8_MAX_WORDS words, kernel_h * ceil(kernel_w / 2): up to 7x7;
   * larger ones run the portable path); 0: the SIMD path needs packed_weights. */
  int32_t simd_int8_weights;
} ta_dwconv_params;
#define TA_DW_INT8_MAX_WORDS 28
/* The DSP build's channel-parallel path takes one-dimensional kernels (K x 1, 1 x K) of up to
 * this many taps (depthwise_channels.c); TA_DW_LINE_TAPS is such a kernel's K, 0 for any other. */
#define TA_DW_CHANNELS_MAX_TAPS 16
#define TA_DW_LINE_TAPS(kernel_h, kernel_w) ((kernel_w) == 1 ? (kernel_h) : (kernel_h) == 1 ? (kernel_w) : 0)

void ta_depthwise_conv_s8(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                          void *scratch);
/* The scratch every path needs (the SIMD path's planes and row words; the portable path's plane). */
size_t ta_depthwise_conv_s8_scratch_bytes(const ta_dwconv_params *p);

/* In place (TinyEngine's trick): the output overwrites the input in `buf`. Valid when
 * depth_multiplier == 1, both tensors are dense NHWC (all strides 0) and out_h*out_w <= in_h*in_w.
 * For each channel the input plane is copied to scratch, then that output channel is written. */
void ta_depthwise_conv_s8_inplace(const ta_dwconv_params *p, int8_t *buf, void *scratch);
size_t ta_depthwise_conv_s8_inplace_scratch_bytes(const ta_dwconv_params *p);

/* --------------------------------------------------------- FULLY_CONNECTED */
typedef struct ta_fc_params {
  int32_t batches;        /* rows of the input */
  int32_t in_depth;       /* K */
  int32_t out_depth;      /* N */
  int32_t input_offset;   /* -input zero point */
  int32_t weights_offset; /* -weights zero point (0 for symmetric int8 weights) */
  int32_t output_offset;
  int32_t act_min, act_max;
  int32_t per_channel;    /* 0: out_mult[0]/out_shift[0] for every channel */
  int32_t out_row_stride; /* elements between output rows; 0 = out_depth */
  const int8_t *weights;  /* [N][K] */
  const int16_t *packed_weights; /* TA_PACKED_S16 GEMM layout (offset folded in) or NULL */
  const int32_t *bias;    /* [N] or NULL */
  const int32_t *out_mult, *out_shift; /* integer requantization (TFLM / CMSIS-NN, older TFLite) */
  /* If non-NULL: requantize as TFLite's current reference FULLY_CONNECTED does, in double:
   * out = (int32)round((double)acc * out_scale_f64[n]) + output_offset (limited to the activation
   * range before the cast, so a product outside int32 is defined), with
   * out_scale_f64 = (double)in_scale * (double)w_scale / (double)out_scale (per channel or [0]).
   * On cores without a double FPU this uses the compiler's soft-float (IEEE exact). */
  const double *out_scale_f64;
  /* 1: the DSP (not Helium) SIMD path reads the int8 `weights` (weights_offset must be 0) and
   * widens them in its loop (SXTB16), so the layer needs no packed_weights; 0: the SIMD path needs
   * packed_weights. */
  int32_t simd_int8_weights;
  /* If non-NULL (out_scale_f64 then NULL): out_scale_f64's rescale as one int32 multiply, which the
   * compiler proved equal for every int32 accumulator (op_params/integer_rescale.h): with
   * s = rescale_shift[n] in 1..30, out = clamp(((int64)acc * rescale_mult[n] + 2^(31 + s) - [acc < 0]) >> (32 + s))
   * + output_offset, the clamp as out_scale_f64's (per channel or [0]). */
  const int32_t *rescale_mult, *rescale_shift;
} ta_fc_params;

void ta_fully_connected_s8(const ta_fc_params *p, const int8_t *input, int8_t *output, void *scratch);
size_t ta_fully_connected_s8_scratch_bytes(const ta_fc_params *p);

/* --------------------------------------------------- AVERAGE/MAX_POOL_2D */
typedef struct ta_pool_params {
  int32_t in_h, in_w, channels;
  int32_t out_h, out_w;
  int32_t filter_h, filter_w;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left, pad_bottom, pad_right;
  int32_t in_row_stride, in_pix_stride;
  int32_t out_row_stride, out_pix_stride;
  int32_t act_min, act_max;
} ta_pool_params;

void ta_avg_pool_s8(const ta_pool_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1);
void ta_max_pool_s8(const ta_pool_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1);
/* A global AVERAGE_POOL_2D (one window = the whole input, no padding, one output pixel) streamed
 * by rows: accumulate adds input rows [y0, y1) (input addressed from row 0; y0 == 0 clears `sums`,
 * C int32), finish writes the C averages once every row is in. Bit-exact with ta_avg_pool_s8. */
void ta_avg_pool_global_accumulate_s8(const ta_pool_params *p, const int8_t *input, int32_t y0, int32_t y1,
                                      int32_t *sums);
void ta_avg_pool_global_finish_s8(const ta_pool_params *p, const int32_t *sums, int8_t *output);

/* ------------------------------------------ ADD / SUB / MUL / SQUARED_DIFFERENCE */
/* Broadcasting follows TFLite (numpy rules, up to 6 dims): shapes are right-aligned into
 * TA_MAX_DIMS entries (leading 1s). `out` may alias an input whose shape equals the output's.
 * SUB is ta_add_s8 with input2_mult negated (TFLite's int8 SUB runs its ADD kernel so). */
typedef struct ta_binary_params {
  int32_t input1_offset, input2_offset, output_offset; /* -zp1, -zp2, +zp_out */
  int32_t left_shift;                                  /* ADD/SUB: 20, SQUARED_DIFFERENCE: 7 */
  int32_t input1_mult, input1_shift;                   /* not MUL */
  int32_t input2_mult, input2_shift;                   /* not MUL; negative for SUB */
  int32_t output_mult, output_shift;
  int32_t act_min, act_max;
  int32_t shape1[TA_MAX_DIMS], shape2[TA_MAX_DIMS], out_shape[TA_MAX_DIMS];
} ta_binary_params;

void ta_add_s8(const ta_binary_params *p, const int8_t *in1, const int8_t *in2, int8_t *out);
void ta_mul_s8(const ta_binary_params *p, const int8_t *in1, const int8_t *in2, int8_t *out);
void ta_squared_difference_s8(const ta_binary_params *p, const int8_t *in1, const int8_t *in2, int8_t *out);

/* Float32 ADD / SUB / MUL (what a quantizer leaves in float between DEQUANTIZE and QUANTIZE):
 * one float32 operation per element, clamped as TFLite's ActivationFunctionWithMinMax does to the
 * fused activation's range (no activation: -FLT_MAX..FLT_MAX). Same broadcasting and aliasing
 * rules as the int8 kernels. */
typedef struct ta_binary_f32_params {
  float act_min, act_max;
  int32_t shape1[TA_MAX_DIMS], shape2[TA_MAX_DIMS], out_shape[TA_MAX_DIMS];
} ta_binary_f32_params;

void ta_add_f32(const ta_binary_f32_params *p, const float *in1, const float *in2, float *out);
void ta_sub_f32(const ta_binary_f32_params *p, const float *in1, const float *in2, float *out);
void ta_mul_f32(const ta_binary_f32_params *p, const float *in1, const float *in2, float *out);

/* ------------------------------------------------------ SOFTMAX / LOG_SOFTMAX */
typedef struct ta_softmax_params {
  int32_t outer_size, depth;       /* softmax over the innermost `depth` elements */
  int32_t input_multiplier, input_left_shift, diff_min;
  int32_t reverse_scaling_divisor, reverse_scaling_right_shift; /* LOG_SOFTMAX only */
} ta_softmax_params;

void ta_softmax_s8(const ta_softmax_params *p, const int8_t *input, int8_t *output);
void ta_log_softmax_s8(const ta_softmax_params *p, const int8_t *input, int8_t *output);

/* ----------------------------------------------------------------- activations */
/* Requantize (QUANTIZE int8->int8, RELU, RELU6, RELU_N1_TO_1 in TFLite's formulation):
 * out = clamp(out_zp + multiply_by_quantized_multiplier(in - in_zp, mult, shift), act_min, act_max).
 * In place is fine. */
typedef struct ta_requant_params {
  int32_t input_zero_point, output_zero_point;
  int32_t mult, shift;
  int32_t act_min, act_max;
} ta_requant_params;
void ta_requantize_s8(const ta_requant_params *p, const int8_t *input, int8_t *output, int32_t n);

/* LOGISTIC / TANH (and any int8 -> int8 elementwise op): out[i] = lut[(uint8)in[i]]. In place ok. */
void ta_lut_s8(const int8_t *lut, const int8_t *input, int8_t *output, int32_t n);
/* Host-side LUT builders reproducing TFLite's LUTPopulate<int8_t> (float math and libm, so
 * build tables on the host, where the libm matches the reference interpreter's). */
void ta_lut_logistic_s8(float in_scale, int32_t in_zp, float out_scale, int32_t out_zp, int8_t lut[256]);
void ta_lut_tanh_s8(float in_scale, int32_t in_zp, float out_scale, int32_t out_zp, int8_t lut[256]);

typedef struct ta_hard_swish_params {
  int32_t input_zero_point, output_zero_point;
  int32_t reluish_multiplier_fixedpoint_int16, reluish_multiplier_exponent;
  int32_t output_multiplier_fixedpoint_int16, output_multiplier_exponent;
} ta_hard_swish_params;
void ta_hard_swish_s8(const ta_hard_swish_params *p, const int8_t *input, int8_t *output, int32_t n);

/* LEAKY_RELU (reference_ops::QuantizeLeakyRelu): v = in - input_zero_point, then
 * out = clamp(output_zero_point + multiply_by_quantized_multiplier(v, v >= 0 ? identity : alpha), -128, 127).
 * In place ok. */
typedef struct ta_leaky_relu_params {
  int32_t input_zero_point, output_zero_point;
  int32_t identity_mult, identity_shift;  /* QuantizeMultiplier(in_scale / out_scale) */
  int32_t alpha_mult, alpha_shift;        /* QuantizeMultiplier(in_scale * alpha / out_scale) */
} ta_leaky_relu_params;
void ta_leaky_relu_s8(const ta_leaky_relu_params *p, const int8_t *input, int8_t *output, int32_t n);

/* ---------------------------------------------------------- QUANTIZE / DEQUANTIZE */
void ta_quantize_f32_s8(const float *input, int8_t *output, int32_t n, float scale, int32_t zero_point);
void ta_dequantize_s8_f32(const int8_t *input, float *output, int32_t n, float scale, int32_t zero_point);

/* -------------------------------------------------------------------- MEAN */
typedef struct ta_mean_params {
  int32_t ndims;
  int32_t in_shape[TA_MAX_DIMS];
  int32_t reduce_mask;            /* bit d set: dimension d is reduced */
  int32_t input_zero_point, output_zero_point;
  int32_t mult, shift;            /* QuantizeMultiplier(in_scale / out_scale) */
} ta_mean_params;
/* Output is written densely in row-major order of the kept dims (same for keep_dims). */
void ta_mean_s8(const ta_mean_params *p, const int8_t *input, int8_t *output);
/* MEAN over H and W (reduce_mask 0b0110 of NHWC [1, H, W, C]) streamed by rows: accumulate adds
 * rows [y0, y1) (input addressed from row 0; y0 == 0 clears `sums`, C int32), finish writes the
 * C means once every row is in. Bit-exact with ta_mean_s8. */
void ta_mean_hw_accumulate_s8(const ta_mean_params *p, const int8_t *input, int32_t y0, int32_t y1, int32_t *sums);
void ta_mean_hw_finish_s8(const ta_mean_params *p, const int32_t *sums, int8_t *output);

/* ------------------------------------------------------------ data movement */
typedef struct ta_pad_params {
  int32_t ndims;
  int32_t in_shape[TA_MAX_DIMS];
  int32_t before[TA_MAX_DIMS], after[TA_MAX_DIMS];
  int32_t pad_value;              /* the output zero point for int8 PAD */
} ta_pad_params;
void ta_pad_s8(const ta_pad_params *p, const int8_t *input, int8_t *output);

/* CONCATENATION and PACK (a concatenation along a new axis). */
typedef struct ta_concat_params {
  int32_t num_inputs;
  int32_t outer_size;             /* product of the dims before the axis */
  const int32_t *copy_sizes;      /* per input: dim[axis] * product of the dims after it */
} ta_concat_params;
void ta_concat_s8(const ta_concat_params *p, const int8_t *const *inputs, int8_t *output);

/* SPLIT, SPLIT_V and UNPACK (a split along an axis that the outputs drop). */
typedef struct ta_split_params {
  int32_t num_outputs;
  int32_t outer_size;
  const int32_t *copy_sizes;      /* per output, as for concat */
} ta_split_params;
void ta_split_s8(const ta_split_params *p, const int8_t *input, int8_t *const *outputs);

/* GATHER (batch_dims 0): out[o][j][k] = in[o][indices[j]][k] for o < outer_size, j < num_indices,
 * k < inner_size; every index is in [0, axis_size) (checked by the generator). */
typedef struct ta_gather_params {
  int32_t outer_size, axis_size, inner_size;
  int32_t num_indices;
  const int32_t *indices;
} ta_gather_params;
void ta_gather_s8(const ta_gather_params *p, const int8_t *input, int8_t *output);

typedef struct ta_transpose_params {
  int32_t ndims;
  int32_t in_shape[TA_MAX_DIMS];
  int32_t perm[TA_MAX_DIMS];      /* output dim d is input dim perm[d] */
} ta_transpose_params;
void ta_transpose_s8(const ta_transpose_params *p, const int8_t *input, int8_t *output);

/* STRIDED_SLICE with resolved per-dimension start/step/count (masks, negative indices and
 * clamping resolved by the generator as TFLite's strided_slice_logic does). */
typedef struct ta_slice_params {
  int32_t ndims;
  int32_t in_shape[TA_MAX_DIMS];
  int32_t start[TA_MAX_DIMS], step[TA_MAX_DIMS], count[TA_MAX_DIMS];
} ta_slice_params;
void ta_strided_slice_s8(const ta_slice_params *p, const int8_t *input, int8_t *output);

/* TILE: output dim d is in_shape[d] * multiples[d], out[.., i, ..] = in[.., i mod in_shape[d], ..]. */
typedef struct ta_tile_params {
  int32_t ndims;
  int32_t in_shape[TA_MAX_DIMS];
  int32_t multiples[TA_MAX_DIMS];
} ta_tile_params;
void ta_tile_s8(const ta_tile_params *p, const int8_t *input, int8_t *output);

typedef struct ta_resize_params {
  int32_t batches, in_h, in_w, channels, out_h, out_w;
  int32_t align_corners, half_pixel_centers;
} ta_resize_params;
void ta_resize_nearest_s8(const ta_resize_params *p, const int8_t *input, int8_t *output);

/* ------------------------------------------- UNIDIRECTIONAL_SEQUENCE_LSTM */
/* TFLite's integer LSTM (lstm_eval.cc, 8x8->16): int8 input, hidden state and output, int16
 * cell state of scale 2^cell_scale_log2, int16 gates. Per step and gate g (0 input, 1 forget,
 * 2 cell, 3 output): gate = clamp16(mbqm(W_x[g] . x + input_bias[g], input_mult/shift[g]))
 * then += mbqm(W_h[g] . h + recurrent_bias[g], recurrent_mult/shift[g]), clamped to int16 (Q3.12);
 * sigmoid (tanh for the cell gate) in gemmlowp int16 fixed point gives Q0.15;
 * c = (f * c >> 15) + (i * g >> (30 + cell_scale_log2)), clipped to +-cell_clip when > 0;
 * h = clamp8(mbqm(o * tanh(c), hidden_mult/shift) + hidden_zero_point); output[t] = h.
 * The biases are TFLite's effective biases: bias - input zero point * row sums for the input
 * matrices, -hidden zero point * row sums for the recurrent ones. With use_cifg the input gate
 * is 1 - forget gate (its entries [0] are unused). No peephole, layer norm or projection:
 * n_output == n_cell. Batches run one after another (TFLite's batch-major order; time-major
 * input gives the same values, the batches being independent). Each step runs cell by cell
 * (every gate reads the previous hidden state; the rest is per cell), writing the new hidden
 * state into the step's output row, then into `hidden`: no gate buffers, no scratch. */
typedef struct ta_lstm_params {
  int32_t batches, steps, n_input, n_cell;
  int32_t time_major;             /* input [steps][batches][n_input], else [batches][steps][n_input] */
  int32_t use_cifg;
  int32_t cell_scale_log2;        /* in [-15, -9]: tanh(c) reads c with 15 + cell_scale_log2 integer bits */
  int32_t cell_clip;              /* quantized cell clip, 0 = none */
  int32_t hidden_mult, hidden_shift, hidden_zero_point; /* h's requantization (TFLite's hidden intermediate) */
  int32_t state_zero_point;       /* the hidden state tensor's zero point: its reset value */
  int32_t input_mult[4], input_shift[4], recurrent_mult[4], recurrent_shift[4];
  const int8_t *input_weights[4];     /* [n_cell][n_input] */
  const int8_t *recurrent_weights[4]; /* [n_cell][n_cell] */
  const int32_t *input_bias[4], *recurrent_bias[4];
  int32_t output_last_step_only;  /* 1: `output` holds only the last step's h per batch */
  int32_t input_is_float;         /* 1: ta_lstm_s8_float_input's float32 input, quantized per step */
  float input_scale;              /* the int8 input's scale and zero point */
  int32_t input_zero_point;
} ta_lstm_params;

/* Runs every step. `hidden` (int8, batches * n_cell) and `cell` (int16) hold the state and are
 * updated; ta_lstm_s8_reset_state sets them to TFLite's reset values (state_zero_point, 0).
 * output: [batches][steps][n_cell] (time-major: [steps][batches][n_cell]). */
void ta_lstm_s8(const ta_lstm_params *p, const int8_t *input, int8_t *hidden, int16_t *cell, int8_t *output);
void ta_lstm_s8_reset_state(const ta_lstm_params *p, int8_t *hidden, int16_t *cell);
/* The same over a float32 input sequence (the model's QUANTIZE folded in): each step's row is
 * quantized as TFLite's QUANTIZE does (ta_quantize_f32_s8, input_scale / input_zero_point) into
 * `step_input` (ta_lstm_s8_float_input_scratch_bytes: n_input bytes), so the int8 sequence is
 * never stored. */
size_t ta_lstm_s8_float_input_scratch_bytes(const ta_lstm_params *p);
void ta_lstm_s8_float_input(const ta_lstm_params *p, const float *input, int8_t *step_input, int8_t *hidden,
                            int16_t *cell, int8_t *output);

/* ------------------------------------------------------------ weight packing (host) */
size_t ta_pack_gemm_weights_s16_bytes(int32_t n, int32_t k);
/* w: [n][k] int8 (conv OHWI flattened per channel, or FC [N][K]); weights_offset added. */
void ta_pack_gemm_weights_s16(const int8_t *w, int32_t n, int32_t k, int32_t weights_offset, int16_t *packed);
/* Host side, from p->weights, bias, out_mult, out_shift: 1 when every channel is constant
 * (ta_conv_s8_constant_channel) or its doubled accumulator is exact and ta_rqd fits it
 * (|bias| + 255 * sum |w| < 2^30, m > 2^30, shift in [-31, -1]), so packed_doubled may be set. */
int ta_conv_s8_can_double(const ta_conv_params *p);
/* 1 when output channel oc is the same value (*value) for every input (a dead channel, m = 0, or
 * a bias so large the weights cannot move the rounding), in both roundings; reads p->weights. */
int ta_conv_s8_constant_channel(const ta_conv_params *p, int32_t oc, int32_t *value);
/* p->weights packed as ta_pack_gemm_weights_s16 (ta_pack_gemm_weights_s16_bytes(out_c, K)
 * bytes); when p->packed_doubled, times 2, and 0 for constant channels. */
void ta_conv_s8_pack_weights(const ta_conv_params *p, int16_t *packed);
/* TA_PACKED_S8 (CONV_2D only): int8 weights in flash, as many bytes as the int8 weights (K padded
 * to Kq, N to even): for each output-channel pair (n, n+1), n even, for each SIMD word t of the
 * GEMM order (k values k0 = ta_gemm_pair_k0(t) and k0 + 2), the 4 bytes w[n][k0], w[n+1][k0],
 * w[n][k0+2], w[n+1][k0+2] -- SXTB16 gives channel n's word t, SXTB16 ROR 8 channel n+1's.
 * Values past K, of the missing channel of an odd N and of constant channels (when
 * p->packed_doubled, as ta_conv_s8_pack_weights) are 0; never doubled. */
size_t ta_conv_s8_pack_weights_s8_bytes(int32_t n, int32_t k);
void ta_conv_s8_pack_weights_s8(const ta_conv_params *p, int8_t *packed);
/* TA_PACKED_MVE (CONV_2D in a Helium build, conv_mve.c): int8 weights in groups of 4 output
 * channels (N padded to a multiple of 4 with zero channels); per group the K / 16 full blocks as
 * [block][channel][16 bytes], then each channel's last K % 16 bytes ([channel][K % 16]). */
size_t ta_conv_s8_pack_weights_mve_bytes(int32_t n, int32_t k);
void ta_conv_s8_pack_weights_mve(const ta_conv_params *p, int8_t *packed);
/* The Helium path's records: per group of 4 channels 4 bias' (bias + input_offset * sum of the
 * channel's weights, wrapping), 4 multipliers, 4 TFLite shifts (0 for padded channels):
 * ta_conv_s8_mve_records_words(N) int32 (TA_CONV_MVE_RQ_WORDS per channel, N rounded up to 4). */
#define TA_CONV_MVE_RQ_WORDS 3
size_t ta_conv_s8_mve_records_words(int32_t n);
void ta_conv_s8_mve_records(const ta_conv_params *p, int32_t *records);
size_t ta_pack_dw_weights_s16_bytes(int32_t out_c, int32_t kernel_h, int32_t kernel_w);
/* w: TFLite depthwise [1][kh][kw][out_c]. */
void ta_pack_dw_weights_s16(const int8_t *w, int32_t out_c, int32_t kernel_h, int32_t kernel_w, int16_t *packed);

#ifdef __cplusplus
}
#endif

#endif /* TINYARENA_KERNELS_H */
