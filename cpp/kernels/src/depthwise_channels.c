/*
 * DEPTHWISE_CONV_2D of one-dimensional kernels (K x 1 or 1 x K: Conv1D exports, streaming audio
 * and sensor models), channel-parallel on the DSP builds without Helium (TA_DW_CHANNELS; the layers
 * ta_dw_channels_applies picks). The plane path (depthwise_simd.c) pays per channel and row --
 * constants, a plane per channel, a job per row -- which on a map one pixel wide is most of the
 * work (str_ww_ref_model: about 17 instructions a MAC). Here one NHWC word holds 4 channels:
 *   1. per group of 4 channels (the last group is the last 4 channels, recomputing up to 3 that
 *      the previous group wrote with the same bytes): each tap's weight word widened once into
 *      (c0, c2) and (c1, c3) halves, and each channel's constants -- ta_rqd when the doubled
 *      accumulator is exact (|bias| < room, as depthwise_simd.c decides), the bias with
 *      input_offset * sum(w) folded in;
 *   2. per output pixel of the group: per tap LDR, 2 SXTB16, 4 SMLABB/SMLATT (the word's 4
 *      channels) and LDRD of its weights, a tap outside the input taking the zero point (its
 *      folded term then cancels);
 *   3. per run of CHAN_RUN pixels, channel by channel (its constants in registers), the
 *      requantizations and byte stores.
 * In place each group first copies its channels of the whole input into a window (scratch, 4
 * bytes a pixel), so no output overwrites input a later output reads; where the window does not
 * fit the layer's in-place scratch the layer runs the planes.
 * Limits: depth multiplier 1, at least 4 channels, int8 weights (the layer's packed_weights
 * unused), up to TA_DW_CHANNELS_MAX_TAPS taps.
 * Invariant: every output is the portable path's byte.
 */
#include <stddef.h>

#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_simd.h"
#include "depthwise_simd.h"

#if TA_DW_CHANNELS_BUILT
/* A group's constants: per tap t the widened weights (w[2t]: channels 0, 2; w[2t + 1]: 1, 3),
 * per channel the accumulator start and requantization. */
typedef struct chan_group {
  int32_t w[2 * TA_DW_CHANNELS_MAX_TAPS];
  int32_t bias[4];
  ta_rqd q[4];
  int32_t fast[4];
} chan_group;

/* Step 1 for channels c0 .. c0+3 of a layer with `taps` taps (weights [tap][in_c]). */
static void group_prepare(const ta_dwconv_params *p, int32_t taps, int32_t c0, chan_group *g) {
  const int64_t room64 = ((int64_t)1 << 30) - (int64_t)taps * 32640;
  const int32_t room = room64 > 0 ? (int32_t)room64 : 0;
  int32_t sum02 = 0, sum13 = 0, t, j;
  for (t = 0; t < taps; ++t) {
    const int32_t w = ta_read32(p->weights + (size_t)t * p->in_c + c0);
    g->w[2 * t] = ta_sxtb16(w), g->w[2 * t + 1] = sxtb16_odd(w);
    sum02 = ta_sadd16(sum02, g->w[2 * t]), sum13 = ta_sadd16(sum13, g->w[2 * t + 1]); /* |sum| <= 128 * taps: int16 */
  }
  for (j = 0; j < 4; ++j) {
    const int32_t c = c0 + j, bias = p->bias ? p->bias[c] : 0;
    const int32_t halves = j & 1 ? sum13 : sum02, sum = (int16_t)(j & 2 ? halves >> 16 : halves);
    g->q[j] = ta_rqd_prep(p->out_mult[c], p->out_shift[c], p->output_offset);
    g->fast[j] = g->q[j].r >= 0 && bias < room && bias > -room;
    g->bias[j] = ta_wrap_add(bias, (int32_t)((uint32_t)sum * (uint32_t)p->input_offset));
  }
}

/* The 4 channels' accumulators (channel j in a[j]), held in registers. */
typedef struct acc4 {
  int32_t a0, a1, a2, a3;
} acc4;

/* a += the products of taps w[0 .. n) with the words at src, src + step, ... */
TA_INLINE acc4 taps_inside(const int8_t *src, int32_t step, const int32_t *w, int32_t n, acc4 a) {
  const int32_t *const end = w + 2 * n;
  for (; w < end; w += 2, src += step) {
    const int32_t x = ta_read32(src), x02 = ta_sxtb16(x), x13 = sxtb16_odd(x);
    a.a0 = ta_smlabb(x02, w[0], a.a0), a.a2 = ta_smlatt(x02, w[0], a.a2);
    a.a1 = ta_smlabb(x13, w[1], a.a1), a.a3 = ta_smlatt(x13, w[1], a.a3);
  }
  return a;
}

/* The same for taps outside the input: every word the zero point (zp16: it widened, twice). */
TA_INLINE acc4 taps_outside(int32_t zp16, const int32_t *w, int32_t n, acc4 a) {
  const int32_t *const end = w + 2 * n;
  for (; w < end; w += 2) {
    a.a0 = ta_smlabb(zp16, w[0], a.a0), a.a2 = ta_smlatt(zp16, w[0], a.a2);
    a.a1 = ta_smlabb(zp16, w[1], a.a1), a.a3 = ta_smlatt(zp16, w[1], a.a3);
  }
  return a;
}

/* A channel off the doubled accumulator: the general requantization, out of line. */
TA_NOINLINE static int8_t chan_out_slow(const ta_dwconv_params *p, int32_t c, int32_t acc) {
  return ta_requant_acc(acc, p->out_mult[c], p->out_shift[c], p->output_offset, p->act_min, p->act_max);
}

/* Outputs a run of pixels keeps in int32 before requantizing them channel by channel. */
#define CHAN_RUN 8

/* A run's accumulators (pixel k, channel j: acc[k][j]) and its pixels' offsets in the output. */
typedef struct chan_run {
  int32_t acc[CHAN_RUN][4];
  ptrdiff_t at[CHAN_RUN];
} chan_run;

/* Step 3 for a run: channels first .. 3, each with its constants in registers, as the plane
 * path's dw_requant (the doubled accumulator's ta_rqd, or the general requantization). Inlined:
 * as a function of its own, GCC 12.2's mod-ref analysis took the caller's output for never
 * written (with -fno-inline) and dropped the caller. */
TA_INLINE void run_store(const ta_dwconv_params *p, const chan_group *g, int32_t c0, int32_t first, const chan_run *r,
                         int32_t n, int8_t *out) {
  const int32_t lo = p->act_min, hi = p->act_max;
  int32_t j, k;
  for (j = first; j < 4; ++j) {
    if (g->fast[j]) {
      const ta_rqd q = g->q[j];
      for (k = 0; k < n; ++k) out[r->at[k] + j] = (int8_t)ta_clamp_act(ta_rqd_apply(q, 2 * r->acc[k][j]), lo, hi);
    } else {
      for (k = 0; k < n; ++k) out[r->at[k] + j] = chan_out_slow(p, c0 + j, r->acc[k][j]);
    }
  }
}

/* Step 2 for one output pixel into slot k of the run: taps [ta, tb) inside the input at
 * src + t * step, the others the zero point (zp16: it widened, twice). */
static void group_pixel(const chan_group *g, const int8_t *src, int32_t step, int32_t taps, int32_t ta, int32_t tb,
                        int32_t zp16, ptrdiff_t at, chan_run *r, int32_t k) {
  acc4 a = {g->bias[0], g->bias[1], g->bias[2], g->bias[3]};
  int32_t *const slot = r->acc[k];
  a = taps_outside(zp16, g->w, ta, a);
  a = taps_inside(src + ta * step, step, g->w + 2 * ta, tb - ta, a);
  a = taps_outside(zp16, g->w + 2 * tb, taps - tb, a);
  slot[0] = a.a0, slot[1] = a.a1, slot[2] = a.a2, slot[3] = a.a3;
  r->at[k] = at;
}

/* The in-bounds taps [*ta, *tb) of a line of `taps` taps from input index i0, `dil` apart, in
 * an input of n. */
static void inside_taps(int32_t i0, int32_t dil, int32_t taps, int32_t n, int32_t *ta, int32_t *tb) {
  int32_t a = 0, b = taps;
  while (a < taps && i0 + a * dil < 0) ++a;
  while (b > a && i0 + (b - 1) * dil >= n) --b;
  *ta = a, *tb = b;
}

/* Where a group reads its 4 channels: the layer's input from its first channel on, or in place
 * the group's window (4 bytes a pixel). */
typedef struct chan_src {
  const int8_t *base;
  int32_t ips, irs;
} chan_src;

/* Steps 2-3 for output rows [y0, y1) of the group of channels c .. c+3 (first .. 3 stored). */
static void group_rows(const ta_dwconv_params *p, const chan_group *g, const chan_src *s, int32_t c, int32_t first,
                       int8_t *out, int32_t ops, int32_t ors, int32_t y0, int32_t y1) {
  const int32_t vertical = p->kernel_w == 1; /* taps run down a column (else along a row) */
  const int32_t taps = TA_DW_LINE_TAPS(p->kernel_h, p->kernel_w);
  const int32_t step = vertical ? p->dilation_h * s->irs : p->dilation_w * s->ips;
  const int32_t zp16 = ta_pair16(-p->input_offset, -p->input_offset);
  const int32_t count = (y1 - y0) * p->out_w;
  int32_t done, n, k, oy = y0, ox = 0;
  chan_run r;
  for (done = 0; done < count; done += n) { /* runs of n pixels in row-major order from (oy, ox) */
    n = ta_min32(CHAN_RUN, count - done);
    for (k = 0; k < n; ++k) {
      const int32_t iy = oy * p->stride_h - p->pad_top, ix = ox * p->stride_w - p->pad_left;
      int32_t ta, tb;
      if (vertical) {
        inside_taps(iy, p->dilation_h, taps, p->in_h, &ta, &tb);
        if (ix < 0 || ix >= p->in_w) ta = tb = 0;
      } else {
        inside_taps(ix, p->dilation_w, taps, p->in_w, &ta, &tb);
        if (iy < 0 || iy >= p->in_h) ta = tb = 0;
      }
      group_pixel(g, s->base + ((ptrdiff_t)iy * s->irs + (ptrdiff_t)ix * s->ips), step, taps, ta, tb, zp16,
                  (ptrdiff_t)oy * ors + (ptrdiff_t)ox * ops + c, &r, k);
      if (++ox == p->out_w) ox = 0, ++oy;
    }
    run_store(p, g, c, first, &r, n, out);
  }
}

void ta_dw_channels(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1) {
  const int32_t ips = TA_OR_DEFAULT(p->in_pix_stride, p->in_c), irs = TA_OR_DEFAULT(p->in_row_stride, p->in_w * ips);
  const int32_t ops = TA_OR_DEFAULT(p->out_pix_stride, p->in_c), ors = TA_OR_DEFAULT(p->out_row_stride, p->out_w * ops);
  chan_group g;
  int32_t c0;
  for (c0 = 0; c0 < p->in_c; c0 += 4) { /* the last group's recomputed channels get the same bytes */
    const int32_t c = ta_min32(c0, p->in_c - 4);
    const chan_src s = {input + c, ips, irs};
    group_prepare(p, TA_DW_LINE_TAPS(p->kernel_h, p->kernel_w), c, &g);
    group_rows(p, &g, &s, c, 0, output, ops, ors, y0, y1);
  }
}

int32_t ta_dw_channels_inplace(const ta_dwconv_params *p, int8_t *buf, void *scratch) {
  const int32_t pixels = p->in_h * p->in_w;
  ta_i32a *const window = (ta_i32a *)scratch;
  chan_group g;
  int32_t c0, i;
  if (!scratch || (size_t)pixels * 4u > ta_depthwise_conv_s8_inplace_scratch_bytes(p)) return 0;
  for (c0 = 0; c0 < p->in_c; c0 += 4) { /* the last group stores only channels no group wrote */
    const int32_t c = ta_min32(c0, p->in_c - 4);
    const chan_src s = {(const int8_t *)window, 4, p->in_w * 4};
    const int8_t *in = buf + c;
    for (i = 0; i < pixels; ++i, in += p->in_c) window[i] = ta_read32(in);
    group_prepare(p, TA_DW_LINE_TAPS(p->kernel_h, p->kernel_w), c, &g);
    group_rows(p, &g, &s, c, c0 - c, buf, p->in_c, p->out_w * p->in_c, 0, p->out_h);
  }
  return 1;
}
#else
/* Nothing here without the family; ISO C wants a declaration in every translation unit. */
typedef int ta_depthwise_channels_not_compiled;
#endif
