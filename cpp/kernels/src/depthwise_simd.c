/*
 * DEPTHWISE_CONV_2D, the SIMD path (packed int16 weights; see depthwise.c for the semantics): the
 * input channels go in groups of up to 4 whose int16 planes (depthwise_plane.c: raw values, the
 * zero point where the window leaves the input, input_offset * sum(w) folded into the bias, so
 * the row loops have no bounds checks) fill a window of input rows in the scratch, whole or in
 * bands of output rows; per output channel a job runs the rows: 3x3 stride 1/2 in blocks of four
 * outputs (assembly on a DSP core: depthwise_asm.c), 5x5/7x7 in depthwise_wide.c, other kernels
 * kernel_h * ceil(kernel_w/2) SMLADs per output. In place, the plane copy is what frees the
 * channel, so output channel c can be written over input channel c (TinyEngine's trick;
 * depth_multiplier == 1, dense NHWC). Invariant: every path gives the bytes of the portable one.
 */
#include <stddef.h>

#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_simd.h"
#include "depthwise_simd.h"

#if TA_SIMD
/* A packed word of doubled weights halved (both halves are even, so exactly). */
static int32_t half_pair(int32_t w) {
  return ta_pair16((int16_t)(uint16_t)((uint32_t)w & 0xFFFFu) / 2, (int16_t)(uint16_t)((uint32_t)w >> 16) / 2);
}

static dw_ctx dw_context(const ta_dwconv_params *p, const int8_t *in, int8_t *out, void *scratch, size_t budget,
                         int32_t in_pix_stride, int32_t in_row_stride, int32_t out_pix_stride, int32_t out_row_stride,
                         int32_t inplace) {
  dw_ctx x;
  x.p = p, x.in = in, x.out = out;
  x.in_pix_stride = in_pix_stride, x.in_row_stride = in_row_stride;
  x.out_pix_stride = out_pix_stride, x.out_row_stride = out_row_stride;
  x.fast3x3 = ta_dw_fast3x3(p) ? p->stride_w : 0;
  /* stride 1 reads columns up to out_w + 2 (a last odd output reads one pair further) */
  x.width = x.fast3x3 && p->stride_w == 1 ? (p->out_w + 3) & ~1 : plane_width(p);
  x.span = (p->kernel_h - 1) * p->dilation_h + 1;
  x.xa = ta_min32(x.width, ta_max32(0, p->pad_left));
  x.xb = ta_max32(x.xa, ta_min32(x.width, p->in_w + p->pad_left));
  x.inplace = inplace;
  x.words = p->kernel_h * (kw_padded(p) >> 1);
  {
    const int64_t room = ((int64_t)1 << 30) - (int64_t)p->kernel_h * p->kernel_w * 32640;
    x.room = room > 0 ? (int32_t)room : 0;
  }
  x.asm_layer = TA_SIMD_NATIVE && (x.fast3x3 == 1 ? TA_DW_3X3_S1_ASM : x.fast3x3 == 2 && TA_DW_3X3_S2_ASM) &&
                p->act_min == -128 && p->act_max == 127;
  x.wide = (TA_DW_WIDE5 || TA_DW_WIDE7) && !x.fast3x3 && ta_dw_wide_applies(p);
  x.transposed = 0;
  x.plane = (int16_t *)scratch;
  x.budget = budget;
  return x;
}

/* An output channel's constants, computed once per group while at most DW_JOBS of them (a
 * stack array); its first 40 bytes are the job's. */
typedef struct dw_chan {
  int32_t w[6], bias, m, c, r;
  int32_t qoo;
  int16_t fast, use_asm;
  const ta_i32a *wq;                /* the channel's packed words: in packed_weights, or `own` */
  ta_i32a own[TA_DW_INT8_MAX_WORDS]; /* widened from int8 weights (no packed_weights) */
} dw_chan;

/* 3x3 weight words, the same for both strides, from the rows (w0, w1), (w2, 0) of the packed
 * layout q: per kernel row r, W_r = (wr0, wr1) and z_r = (wr2, wr1). */
TA_INLINE void dw_chan_weights(dw_chan *k, const ta_i32a *q) {
  int32_t r;
  if (k->fast) {
    const int32_t w0 = q[0], w1 = q[2], w2 = q[4];
    k->w[0] = w0, k->w[1] = pack_lo16(q[1], w0 >> 16), k->w[2] = w1, k->w[3] = pack_lo16(q[3], w1 >> 16);
    k->w[4] = w2, k->w[5] = pack_lo16(q[5], w2 >> 16);
  } else {
    for (r = 0; r < 3; ++r) {
      const int32_t w = half_pair(q[2 * r]);
      k->w[2 * r] = w, k->w[2 * r + 1] = pack_lo16(half_pair(q[2 * r + 1]), w >> 16);
    }
  }
}

/* The stride 1 weight words of the transposed 3x3 kernel: tap (r, c) of the transpose is tap
 * (c, r), packed at c * 4 + r (doubled, or halved as dw_chan_weights does when not fast). */
TA_NOINLINE static void dw_chan_transpose(dw_chan *k, const ta_i32a *wq) {
  const int16_t *v = (const int16_t *)(const void *)wq;
  ta_i32a t[6];
  int32_t i;
  for (i = 0; i < 3; ++i) t[2 * i] = ta_pair16(v[i], v[4 + i]), t[2 * i + 1] = ta_pair16(v[8 + i], 0);
  dw_chan_weights(k, t);
}

/* Whether output channel oc takes ta_rqd on the doubled accumulator (dw_chan_prepare's fast). */
static int32_t chan_fast(const dw_ctx *x, int32_t oc) {
  const ta_dwconv_params *p = x->p;
  const int32_t bias = p->bias ? p->bias[oc] : 0;
  return ta_rqd_prep(p->out_mult[oc], p->out_shift[oc], p->output_offset).r >= 0 && bias < x->room &&
         bias > -x->room;
}

/* Output channel oc's packed words: its part of packed_weights, or its int8 weights widened into
 * k->own (once per prepare: the kernel's taps against the channel's MACs over a band of rows). */
static const ta_i32a *chan_words(const dw_ctx *x, int32_t oc, dw_chan *k) {
  const ta_dwconv_params *p = x->p;
  if (p->packed_weights) return k->wq = (const ta_i32a *)p->packed_weights + (size_t)oc * x->words;
  ta_dw_pack_channel(p->weights, p->in_c * p->depth_multiplier, oc, p->kernel_h, p->kernel_w, (int16_t *)k->own);
  return k->wq = k->own;
}

/* Constants of output channel oc. The doubled accumulator is exact when |acc| < 2^30, which
 * |bias| < room = 2^30 - 255 * 128 * taps guarantees; otherwise the channel runs undoubled. */
static void dw_chan_prepare(const dw_ctx *x, int32_t oc, dw_chan *k) {
  const ta_dwconv_params *p = x->p;
  const int32_t nw = x->words, bias = p->bias ? p->bias[oc] : 0;
  const ta_rqd q = ta_rqd_prep(p->out_mult[oc], p->out_shift[oc], p->output_offset);
  const ta_i32a *const wq = chan_words(x, oc, k);
  int32_t sum2 = 0, i;
  for (i = 0; i + 1 < nw; i += 2) sum2 = ta_smlad(wq[i + 1], 0x00010001, ta_smlad(wq[i], 0x00010001, sum2));
  if (i < nw) sum2 = ta_smlad(wq[i], 0x00010001, sum2); /* sum2: twice the taps' sum */
  k->fast = q.r >= 0 && bias < x->room && bias > -x->room; /* as chan_fast */
  k->bias = k->fast ? ta_wrap_add(ta_wrap_add(bias, bias), (int32_t)((uint32_t)sum2 * (uint32_t)p->input_offset))
                    : ta_wrap_add(bias, (int32_t)((uint32_t)(sum2 / 2) * (uint32_t)p->input_offset));
  k->m = q.m, k->c = q.c, k->r = q.r, k->qoo = q.oo;
  k->use_asm = x->asm_layer && k->fast && q.oo == 0;
  if (TA_DW_3X3_S1 && x->transposed)
    dw_chan_transpose(k, wq);
  else if (TA_DW_3X3 && x->fast3x3)
    dw_chan_weights(k, wq);
}

typedef char dw_chan_layout_check[(offsetof(dw_chan, qoo) == offsetof(dw_job, out_pix_stride) &&
                                   offsetof(dw_chan, r) == offsetof(dw_job, r))
                                      ? 1
                                      : -1];

/* The job of output channel oc from its constants (the layer's fields are set already). */
static void dw_job_load(const dw_ctx *x, const dw_chan *k, int32_t oc, dw_job *j) {
  memcpy(j, k, offsetof(dw_chan, qoo));
  j->qoo = k->qoo, j->fast = k->fast, j->use_asm = k->use_asm;
  j->wq = k->wq, j->oc = oc;
  j->mult = x->p->out_mult[oc], j->shift = x->p->out_shift[oc];
}

TA_INLINE int8_t dw_requant(const dw_job *j, int32_t acc) {
  if (j->fast) {
    const ta_rqd q = {j->m, j->c, j->r, j->qoo};
    return (int8_t)ta_clamp_act(ta_rqd_apply(q, acc), j->lo, j->hi);
  }
  return ta_requant_acc(acc, j->mult, j->shift, j->oo, j->lo, j->hi);
}

/* 3x3 stride 1, the assembly's sums (depthwise_asm.c) two outputs a step: with a = (x0, x1),
 * b = (x2, x3) of each kernel row: out0 = SMLAD(a, W) + SMLABB(b, z), out1 = SMLATB(a, W) + SMLADX(b, z). */
TA_NOINLINE static void dw3x3s1_rows_c(const dw_job *j) {
  const int32_t w0 = j->w[0], z0 = j->w[1], w1 = j->w[2], z1 = j->w[3], w2 = j->w[4], z2 = j->w[5];
  const uint8_t *row = (const uint8_t *)j->row0;
  int8_t *o = j->out;
  int32_t k, x;
  for (k = 0; k < j->rows; ++k, row += j->in_step, o += j->out_step) {
    const ta_i32a *r0 = (const ta_i32a *)(const void *)row, *r1 = (const ta_i32a *)(const void *)(row + j->pitch),
                  *r2 = (const ta_i32a *)(const void *)(row + 2 * j->pitch);
    for (x = 0; x < j->n; x += 2, ++r0, ++r1, ++r2) {
      int32_t s0 = ta_smlad(r0[0], w0, j->bias), s1 = ta_smlatb(r0[0], w0, j->bias);
      s0 = ta_smlabb(r0[1], z0, s0), s1 = ta_smladx(r0[1], z0, s1);
      s0 = ta_smlad(r1[0], w1, s0), s1 = ta_smlatb(r1[0], w1, s1);
      s0 = ta_smlabb(r1[1], z1, s0), s1 = ta_smladx(r1[1], z1, s1);
      s0 = ta_smlad(r2[0], w2, s0), s1 = ta_smlatb(r2[0], w2, s1);
      s0 = ta_smlabb(r2[1], z2, s0), s1 = ta_smladx(r2[1], z2, s1);
      o[x * j->out_pix_stride] = dw_requant(j, s0);
      if (x + 1 < j->n) o[(x + 1) * j->out_pix_stride] = dw_requant(j, s1);
    }
  }
}

/* 3x3 stride 2: output x reads the words x and x + 1 of each kernel row:
 * out = SMLAD(word x, W) + SMLABB(word x + 1, z). */
TA_NOINLINE static void dw3x3s2_rows_c(const dw_job *j) {
  const int32_t w0 = j->w[0], z0 = j->w[1], w1 = j->w[2], z1 = j->w[3], w2 = j->w[4], z2 = j->w[5];
  const uint8_t *row = (const uint8_t *)j->row0;
  int8_t *o = j->out;
  int32_t k, x;
  for (k = 0; k < j->rows; ++k, row += j->in_step, o += j->out_step) {
    const ta_i32a *r0 = (const ta_i32a *)(const void *)row, *r1 = (const ta_i32a *)(const void *)(row + j->pitch),
                  *r2 = (const ta_i32a *)(const void *)(row + 2 * j->pitch);
    for (x = 0; x < j->n; ++x) {
      int32_t s = ta_smlabb(r0[x + 1], z0, ta_smlad(r0[x], w0, j->bias));
      s = ta_smlabb(r1[x + 1], z1, ta_smlad(r1[x], w1, s));
      o[x * j->out_pix_stride] = dw_requant(j, ta_smlabb(r2[x + 1], z2, ta_smlad(r2[x], w2, s)));
    }
  }
}

/* Two outputs of one channel whose windows start `delta` plane values apart (dilation_w 1):
 * each weight word is loaded once for both SMLADs; `half`: undoubled job, weights halved. */
TA_INLINE void generic_pair(const int16_t *a, int32_t delta, const ta_i32a *w, int32_t kh, int32_t kwp2,
                            int32_t kstep, int32_t half, int32_t *s0, int32_t *s1) {
  int32_t acc0 = *s0, acc1 = *s1, ky, t;
  for (ky = 0; ky < kh; ++ky, a += kstep, w += kwp2)
    for (t = 0; t < kwp2; ++t) {
      const int32_t wt = half ? half_pair(w[t]) : w[t];
      acc0 = ta_smlad(wt, ta_read32(a + 2 * t), acc0);
      acc1 = ta_smlad(wt, ta_read32(a + delta + 2 * t), acc1);
    }
  *s0 = acc0, *s1 = acc1;
}

/* The same for two channels (weights wa, wb) of one input plane: each data word feeds both. */
static void generic_quad(const int16_t *a, int32_t delta, const ta_i32a *wa, const ta_i32a *wb, int32_t kh,
                         int32_t kwp2, int32_t kstep, int32_t s[4]) {
  int32_t a0 = s[0], a1 = s[1], b0 = s[2], b1 = s[3];
  const ta_i32a *const wend = wa + kh * kwp2;
  for (; wa < wend; a += kstep) {
    const int16_t *r = a;
    const ta_i32a *const rend = wa + kwp2;
    for (; wa < rend; ++wa, ++wb, r += 2) {
      const int32_t x0 = ta_read32(r), x1 = ta_read32(r + delta), wta = *wa, wtb = *wb;
      a0 = ta_smlad(wta, x0, a0), a1 = ta_smlad(wta, x1, a1);
      b0 = ta_smlad(wtb, x0, b0), b1 = ta_smlad(wtb, x1, b1);
    }
  }
  s[0] = a0, s[1] = a1, s[2] = b0, s[3] = b1;
}

/* ta_rqd requantization of a fast channel's doubled accumulator. */
static int8_t chan_requant(const dw_chan *k, const dw_job *j, int32_t acc) {
  const ta_rqd q = {k->m, k->c, k->r, k->qoo};
  return (int8_t)ta_clamp_act(ta_rqd_apply(q, acc), j->lo, j->hi);
}

/* generic_store2 for the job's channel and the next one (constants k2, output at + 1), both fast. */
TA_NOINLINE static void generic_store4(const dw_job *j, const dw_chan *k2, const int16_t *a, int32_t delta,
                                       int8_t *o, int32_t ostep, int32_t kh, int32_t kwp2, int32_t kstep) {
  int32_t s[4];
  s[0] = s[1] = j->bias, s[2] = s[3] = k2->bias;
  generic_quad(a, delta, j->wq, k2->wq, kh, kwp2, kstep, s);
  o[ostep + 1] = chan_requant(k2, j, s[3]), o[1] = chan_requant(k2, j, s[2]);
  o[ostep] = dw_requant(j, s[1]), o[0] = dw_requant(j, s[0]);
}

/* Outputs o and o + ostep from windows a and a + delta (delta = ostep = 0: one output); with k2
 * also the next channel's (generic_store4). */
static void generic_store2(const dw_job *j, const dw_chan *k2, const int16_t *a, int32_t delta, int8_t *o,
                           int32_t ostep, int32_t kh, int32_t kwp2, int32_t kstep) {
  int32_t s0 = j->bias, s1 = j->bias;
  if (k2) {
    generic_store4(j, k2, a, delta, o, ostep, kh, kwp2, kstep);
    return;
  }
  if (j->fast)
    generic_pair(a, delta, j->wq, kh, kwp2, kstep, 0, &s0, &s1);
  else
    generic_pair(a, delta, j->wq, kh, kwp2, kstep, 1, &s0, &s1);
  o[ostep] = dw_requant(j, s1);
  o[0] = dw_requant(j, s0);
}

/* Dilated columns: one output at a time, each tap pair gathered. */
static void dw_dilated_rows(const dw_ctx *x, const dw_job *j) {
  const ta_dwconv_params *p = x->p;
  const int32_t kh = p->kernel_h, kwp2 = kw_padded(p) >> 1, sw = p->stride_w, dw = p->dilation_w;
  const int32_t kstep = p->dilation_h * (j->pitch >> 1);
  const int16_t *row = j->row0;
  int8_t *o = j->out;
  int32_t k, ox, ky, t;
  for (k = 0; k < j->rows; ++k, row += j->in_step >> 1, o += j->out_step) {
    for (ox = 0; ox < j->n; ++ox) {
      const ta_i32a *w = j->wq;
      int32_t acc = j->bias;
      for (ky = 0; ky < kh; ++ky, w += kwp2) {
        const int16_t *r = row + ox * sw + ky * kstep;
        for (t = 0; t < kwp2; ++t)
          acc = ta_smlad(j->fast ? w[t] : half_pair(w[t]), ta_pair16(r[2 * t * dw], r[(2 * t + 1) * dw]), acc);
      }
      o[ox * j->out_pix_stride] = dw_requant(j, acc);
    }
  }
}

/* Any kernel: kernel_h * ceil(kernel_w / 2) SMLADs per output, two outputs per pass (neighbours
 * in a row, or in a column when rows hold one output). */
TA_NOINLINE static void dw_generic_rows(const dw_ctx *x, const dw_job *j) {
  const ta_dwconv_params *p = x->p;
  const int32_t kh = p->kernel_h, kwp2 = kw_padded(p) >> 1, sw = p->stride_w;
  const int32_t kstep = p->dilation_h * (j->pitch >> 1), rstep = j->in_step >> 1;
  const int16_t *row = j->row0;
  int8_t *o = j->out;
  int32_t k, ox;
  dw_chan next;
  const dw_chan *k2 = NULL;
  if (p->depth_multiplier > 1 && p->dilation_w == 1) { /* multipliers m, m + 1 (m even) together if both fast */
    const int32_t oc = j->oc;
    const int32_t m = oc % p->depth_multiplier;
    if (m & 1) {
      if (j->fast && chan_fast(x, oc - 1)) return; /* ran along channel oc - 1 */
    } else if (m + 1 < p->depth_multiplier && j->fast && chan_fast(x, oc + 1)) {
      dw_chan_prepare(x, oc + 1, &next);
      k2 = &next;
    }
  }
  if (p->dilation_w != 1) {
    dw_dilated_rows(x, j);
  } else if (j->n == 1) {
    for (k = 0; k + 1 < j->rows; k += 2, row += 2 * rstep, o += 2 * j->out_step)
      generic_store2(j, k2, row, rstep, o, j->out_step, kh, kwp2, kstep);
    if (k < j->rows) generic_store2(j, k2, row, 0, o, 0, kh, kwp2, kstep);
  } else {
    for (k = 0; k < j->rows; ++k, row += rstep, o += j->out_step) {
      for (ox = 0; ox + 1 < j->n; ox += 2)
        generic_store2(j, k2, row + ox * sw, sw, o + ox * j->out_pix_stride, j->out_pix_stride, kh, kwp2, kstep);
      if (ox < j->n) generic_store2(j, k2, row + ox * sw, 0, o + ox * j->out_pix_stride, 0, kh, kwp2, kstep);
    }
  }
}

TA_NOINLINE static void dw_run(const dw_ctx *x, dw_job *j) {
  const int32_t stride1 = x->fast3x3 == 1;
  if (!TA_DW_3X3 || !x->fast3x3) {
    if (x->wide && j->fast)
      ta_dw_wide_rows(x->p, j);
    else if (TA_DW_GENERIC) /* without it, ta_dw_simd_covers keeps such layers out */
      dw_generic_rows(x, j);
    return;
  }
#if TA_SIMD_NATIVE && TA_DW_3X3_ASM
  if (j->use_asm) { /* only in a layer of a stride whose assembly is compiled: dw_context */
    j->last = j->out + j->rows * j->out_step;
    if (TA_DW_3X3_S1_ASM && stride1)
      ta_dw3x3s1_asm(j);
    else if (TA_DW_3X3_S2_ASM)
      ta_dw3x3s2_asm(j);
    return;
  }
#endif
  if (TA_DW_3X3_S1 && stride1) /* fast3x3 is set for the compiled strides only */
    dw3x3s1_rows_c(j);
  else if (TA_DW_3X3_S2)
    dw3x3s2_rows_c(j);
}

/* At most this many output channels' jobs are prepared once per group (a stack array). */
#define DW_JOBS 4

/* Channels c0 .. c0+g-1 (all their output channels) for output rows [y0, y1), in bands of
 * output rows whose input rows fit the window of `slots` rows: the rows a band shares with the
 * previous one move to the window's top, the others are built from the input. */
static void dw_group(const dw_ctx *x, int32_t c0, int32_t g, int32_t slots, int32_t y0, int32_t y1) {
  const ta_dwconv_params *p = x->p;
  const int32_t sh = p->stride_h, dm = p->depth_multiplier, pitch = g * x->width;
  const int32_t band = (slots - x->span) / sh + 1;
  int32_t yb, have_lo = 0, have_n = 0, j, m;
  dw_chan chans[DW_JOBS];
  dw_job job;
  const int32_t cached = g * dm <= DW_JOBS;
  if (cached)
    for (j = 0; j < g * dm; ++j) dw_chan_prepare(x, c0 * dm + j, &chans[j]);
  job.out_pix_stride = x->out_pix_stride, job.oo = p->output_offset, job.lo = p->act_min, job.hi = p->act_max;
  job.pitch = pitch * 2, job.in_step = sh * pitch * 2, job.out_step = x->out_row_stride;
  job.n = p->out_w, job.quad_bytes = (p->out_w >> 2) * 4 * x->out_pix_stride;
  job.in_skip = job.in_step - p->out_w * x->fast3x3 * 2, job.out_skip = job.out_step - p->out_w * x->out_pix_stride;
  for (yb = y0; yb < y1; yb += band) {
    const int32_t ye = ta_min32(y1, yb + band), iy = yb * sh - p->pad_top;
    const int32_t rows = (ye - yb - 1) * sh + x->span;
    int32_t keep = 0;
    if (have_n > 0 && iy >= have_lo && iy < have_lo + have_n) {
      const size_t bytes = (size_t)(have_lo + have_n - iy) * (size_t)pitch * sizeof(int16_t);
      keep = have_lo + have_n - iy;
      if (keep <= iy - have_lo) /* the rows kept do not overlap their new place */
        memcpy(x->plane, x->plane + (iy - have_lo) * pitch, bytes);
      else
        memmove(x->plane, x->plane + (iy - have_lo) * pitch, bytes);
    }
    ta_dw_load_rows(x, iy + keep, rows - keep, c0, g, x->plane + keep * pitch);
    have_lo = iy, have_n = rows;
    for (j = 0; j < g; ++j) {
      for (m = 0; m < dm; ++m) {
        const int32_t oc = (c0 + j) * dm + m;
        if (!cached) dw_chan_prepare(x, oc, &chans[0]);
        dw_job_load(x, cached ? &chans[j * dm + m] : &chans[0], oc, &job);
        job.row0 = x->plane + j * x->width; /* the assembly advances row0, out, rows */
        job.out = x->out + yb * x->out_row_stride + oc;
        job.rows = ye - yb;
        dw_run(x, &job);
      }
    }
  }
}

/* Whether bands of `band` output rows may run in place: every input row a band builds from the
 * input is read before any output row written so far overlaps it (NHWC, output rows are
 * out_w pixels, input rows in_w). */
static int32_t bands_inplace_ok(const ta_dwconv_params *p, int32_t span, int32_t band) {
  int32_t yb, next = -p->pad_top; /* first input row not yet read */
  for (yb = 0; yb < p->out_h; yb += band) {
    const int32_t iy = yb * p->stride_h - p->pad_top;
    const int32_t first = ta_max32(ta_max32(iy, next), 0);
    if (first < p->in_h && (int64_t)yb * p->out_w > (int64_t)first * p->in_w) return 0;
    next = ta_max32(next, (ta_min32(p->out_h, yb + band) - 1) * p->stride_h - p->pad_top + span);
  }
  return 1;
}

/* Window slots for a group of g channels within the scratch budget: all the rows needed, or
 * bands of at least DW_MIN_BAND output rows (shorter bands cost more in row moves and calls than
 * fewer channels per group save), or 0. In place, bands must not overwrite rows still to read. */
#define DW_MIN_BAND 2
static int32_t dw_slots(const dw_ctx *x, int32_t g, int32_t rows_needed, int32_t y_rows) {
  const int32_t slots = (int32_t)(x->budget / ((size_t)g * (size_t)x->width * sizeof(int16_t)));
  const int32_t band = slots >= x->span ? (slots - x->span) / x->p->stride_h + 1 : 0;
  if (slots >= rows_needed) return rows_needed;
  if (band < ta_min32(DW_MIN_BAND, y_rows)) return 0;
  if (x->inplace && (x->transposed || !bands_inplace_ok(x->p, x->span, band))) return 0;
  return slots;
}

/* All channels in groups of up to 4 (the most whose window fits; one channel's whole plane
 * always fits the budget the scratch functions reserve). */
static void dw_simd(const dw_ctx *x, int32_t y0, int32_t y1) {
  const ta_dwconv_params *p = x->p;
  const int32_t rows_needed = (y1 - y0 - 1) * p->stride_h + x->span;
  int32_t c0 = 0, g = 0, slots = 0, asked = 0;
  while (c0 < p->in_c) {
    const int32_t want = ta_min32(4, p->in_c - c0);
    if (want != asked) { /* the group size changes only for the last channels */
      asked = g = want, slots = dw_slots(x, g, rows_needed, y1 - y0);
      while (slots == 0 && g > 1) {
        g = g == 3 ? 2 : g >> 1;
        slots = dw_slots(x, g, rows_needed, y1 - y0);
      }
    }
    dw_group(x, c0, g, slots, y0, y1);
    c0 += g;
  }
}

/* A 3x3 stride 1 layer of narrow rows (out_w <= 8, out_h >= 2 out_w: kws's 25 x 5 maps) runs as
 * its transpose -- rows and columns, their strides and paddings, and the kernel's taps swapped --
 * so the row loops run long rows (the per-row and odd-output costs fall); only for all rows at
 * once, and when one channel's transposed plane fits the budget (in place, groups then take whole
 * planes, never bands). */
static void dw_run_layer(const ta_dwconv_params *p, const int8_t *in, int8_t *out, void *scratch, size_t budget,
                         const int32_t strides[4], int32_t inplace, int32_t y0, int32_t y1) {
  ta_dwconv_params t;
  dw_ctx x;
  if (y0 == 0 && y1 == p->out_h && ta_dw_fast3x3(p) && p->stride_w == 1 && p->out_w <= 8 && p->out_h >= 2 * p->out_w) {
    t = *p;
    t.in_h = p->in_w, t.in_w = p->in_h, t.out_h = p->out_w, t.out_w = p->out_h;
    t.pad_top = p->pad_left, t.pad_left = p->pad_top, t.pad_bottom = p->pad_right, t.pad_right = p->pad_bottom;
    x = dw_context(&t, in, out, scratch, budget, strides[1], strides[0], strides[3], strides[2], inplace);
    if ((size_t)plane_rows(&t, 0, t.out_h) * (size_t)x.width * sizeof(int16_t) <= budget) {
      x.transposed = 1;
      ta_dw_fill_borders(&x);
      dw_simd(&x, 0, t.out_h);
      return;
    }
  }
  x = dw_context(p, in, out, scratch, budget, strides[0], strides[1], strides[2], strides[3], inplace);
  ta_dw_fill_borders(&x);
  dw_simd(&x, y0, y1);
}

void ta_depthwise_conv_s8_simd(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                               void *scratch, size_t budget) {
  const int32_t in_c = p->in_c, in_pix_stride = TA_OR_DEFAULT(p->in_pix_stride, in_c);
  const int32_t out_pix_stride = TA_OR_DEFAULT(p->out_pix_stride, in_c * p->depth_multiplier);
  const int32_t strides[4] = {in_pix_stride, TA_OR_DEFAULT(p->in_row_stride, p->in_w * in_pix_stride), out_pix_stride,
                              TA_OR_DEFAULT(p->out_row_stride, p->out_w * out_pix_stride)};
  dw_run_layer(p, input, output, scratch, budget, strides, 0, y0, y1);
}

void ta_depthwise_conv_s8_inplace_simd(const ta_dwconv_params *p, int8_t *buf, void *scratch, size_t budget) {
  const int32_t C = p->in_c, strides[4] = {C, p->in_w * C, C, p->out_w * C};
  if (p->out_h <= 0) return;
  dw_run_layer(p, buf, buf, scratch, budget, strides, 1, 0, p->out_h);
}
#else
/* Nothing here without the SIMD path; ISO C wants a declaration in every translation unit. */
typedef int ta_depthwise_simd_not_compiled;
#endif
