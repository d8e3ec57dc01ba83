/*
 * Internal to CONV_2D: the Helium (MVE) path on int8 weights (conv_mve.c), which a Helium build's
 * ta_conv_s8 runs on packed_s8_weights in the TA_PACKED_MVE layout and rq_records made by
 * ta_conv_s8_mve_records.
 */
#ifndef TA_CONV_MVE_H
#define TA_CONV_MVE_H

#include "tinyarena_kernels.h"
#include "ta_mve.h"

#if TA_MVE
/* `col`: the scratch (two patches of K int8). */
void ta_conv_s8_mve(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                    int8_t *col);
#endif

#endif /* TA_CONV_MVE_H */
