/*
 * Internal to DEPTHWISE_CONV_2D: the Helium (MVE) path on the int8 weights (depthwise_mve.c), which
 * a Helium build's entry points take for every layer it supports, with the scratch the other
 * paths use (it reads the portable path's plane of it).
 */
#ifndef TA_DEPTHWISE_MVE_H
#define TA_DEPTHWISE_MVE_H

#include "tinyarena_kernels.h"
#include "ta_mve.h"

/* Kernels of at most this many taps (per tap its weight and plane offset sit on the stack, 8 B:
 * at most 2 KB, 72 B for 3x3). */
#define TA_DW_MVE_TAPS 256
/* Input pixel strides of at most this many bytes: the plane's gathers take 16-bit offsets 0..7 P. */
#define TA_DW_MVE_MAX_PIX 9362
/* Maps narrower than this (out_w) with depth multiplier 1 and at least 16 channels run
 * channel-parallel (16 channels a step, no planes; in place when 16 | C and either no output reads
 * a pixel written before it or the window of input rows fits the scratch). Measured on the M55 (instructions/MAC, planes -> channel-parallel):
 * 3x3 stride 1 on 12 x 12 2.13 -> 1.92, 6 x 6 3.31 -> 1.93, 3 x 3 8.72 -> 2.06; stride 2 from
 * 24 x 24 3.19 -> 1.98, from 12 x 12 4.63 -> 2.04; 5x5 / 7x7 on 12 x 12 1.98 / 1.65 -> 1.31 / 1.05;
 * the planes stay ahead from 16 across (3x3 at 16 x 16: 1.50 against 1.88). */
#define TA_DW_CHAN_MAX_W 16

#if TA_MVE
/* Whether the path runs p: int8 weights, TA_DW_MVE_TAPS, TA_DW_MVE_MAX_PIX. */
int ta_depthwise_mve_supported(const ta_dwconv_params *p);
/* Output rows [y0, y1) (y1 > y0, out_w > 0); `output` may be `input` (in place: dense,
 * multiplier 1). */
void ta_depthwise_mve(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                      int16_t *scratch);
/* How the channel-parallel path (depthwise_mve_chan16.c) runs rows [y0, y1) of p (depth
 * multiplier 1, >= 16 channels, out_w < TA_DW_CHAN_MAX_W; in place only as described there):
 * TA_DW_CHAN16_DIRECT on the input as it is, TA_DW_CHAN16_WINDOW in place through a window of
 * input rows in the scratch, TA_DW_CHAN16_NONE not at all (the plane path must). */
enum { TA_DW_CHAN16_NONE, TA_DW_CHAN16_DIRECT, TA_DW_CHAN16_WINDOW };
int ta_depthwise_mve_chan16_mode(const ta_dwconv_params *p, const int8_t *input, const int8_t *output, int32_t y0,
                                 int32_t y1);
/* The channel-parallel path on rows [y0, y1): window NULL for TA_DW_CHAN16_DIRECT, the scratch for
 * TA_DW_CHAN16_WINDOW. */
void ta_depthwise_mve_chan16(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                             int8_t *window);
#endif

#endif /* TA_DEPTHWISE_MVE_H */
