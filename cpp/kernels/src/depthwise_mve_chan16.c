/*
 * DEPTHWISE_CONV_2D on Helium (MVE, Cortex-M55), the channel-parallel path (ta_depthwise_mve_chan16)
 * for small maps: NHWC, 16 channels a step, no planes (depthwise_mve.c holds the plane path and
 * picks through ta_depthwise_mve_chan16_mode).
 * Per output pixel and 16 consecutive channels, per tap inside the input (TFLite skips the
 * others), in assembly: two VLDRB.S16 of the input's channels and two VADD of the input offset
 * (|x + offset| <= 255, so the product with an int8 weight fits int16 and VMULL.S16 is exact), two
 * VLDRB.S16 of the tap's int8 weights (read where the model keeps them: no copy), VMULLB / VMULLT
 * (the even and odd channels' int32 products) and VADD into 4 accumulators: 16 instructions for
 * 16 MACs. Then each 8 channels requantize as two vectors (even, odd) and narrow back into channel
 * order (VQMOVNB / VQMOVNT), one VSTRB.16. A last group of C % 16 channels reruns channels
 * C - 16 .. C - 1 (the same bytes written twice: the output is not the input). Nothing is set up
 * per channel or per row but the tap range, which is what small maps pay for on the plane path
 * (below TA_DW_CHAN_MAX_W its 8-output groups are mostly partial): 1.92-2.06 instructions/MAC on
 * 3x3 layers of 12 x 12 down to 3 x 3 maps, 1.31 on a 5x5 layer of 12 x 12.
 */
#include <string.h>

#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "depthwise_mve.h"

#if TA_MVE
/* The geometry ta_depthwise_mve_chan16 reads, copied out of the params (the byte stores could alias them). */
typedef struct chan16_geom {
  int32_t in_h, in_w, C, kh, kw, dh, dw, sh, sw, pad_top, pad_left, P, irs, out_w, o_pix, o_row;
  int32_t off;
} chan16_geom;

/* [*k0, *k1): the taps k of a kernel extent n (dilation d) whose coordinate i0 + k d lies in [0, len). */
static TA_ALWAYS_INLINE void valid_taps(int32_t i0, int32_t n, int32_t d, int32_t len, int32_t *k0, int32_t *k1) {
  int32_t a, b;
  if (d == 1) a = i0 < 0 ? -i0 : 0, b = len - i0;
  else a = i0 < 0 ? (-i0 + d - 1) / d : 0, b = len - i0 <= 0 ? 0 : (len - i0 + d - 1) / d;
  *k0 = a, *k1 = b < n ? b : n;
}

/* Half a tap (8 channels) in assembly: the input bytes at [xa + XOFF] plus the offset and the
 * weights at [wa + XOFF], both widened to int16 (VLDRB.S16), multiplied into int32: the even
 * channels' products added to E, the odd ones' to O. */
#define TA_CHAN16_HALF(XOFF, E, O)                                                                  \
  "vldrb.s16 q2, [%[xa]" XOFF "]\n\tvldrb.s16 q3, [%[wa]" XOFF "]\n\tvadd.i16 q2, q2, %[off]\n\t"         \
  "vmullb.s16 q4, q2, q3\n\tvmullt.s16 q5, q2, q3\n\t"                                               \
  "vadd.i32 %q[" E "], %q[" E "], q4\n\tvadd.i32 %q[" O "], %q[" O "], q5\n\t"
/* A tap of 16 channels, then xa and wa step to the next tap (16 instructions). */
#define TA_CHAN16_TAP                                                                               \
  TA_CHAN16_HALF("", "e0", "o0") TA_CHAN16_HALF(", #8", "e1", "o1")                                 \
  "add %[xa], %[xa], %[cs]\n\tadd %[wa], %[wa], %[wc]\n\t"
/* After a kernel row: xr and wr to the next one (rs, ws in memory, xa the scratch), ny counted. */
#define TA_CHAN16_NEXT_ROW                                                                          \
  "ldr %[xa], %[rs]\n\tadd %[xr], %[xr], %[xa]\n\tldr %[xa], %[ws]\n\tadd %[wr], %[wr], %[xa]\n\t"     \
  "subs %[ny], %[ny], #1\n\tbne 1b"

/* The 16 channels of one output pixel added to a[0] (channels c, c+2, .., c+6), a[1] (c+1, ..,
 * c+7), a[2] (c+8, ..), a[3] (c+9, ..): ny > 0 kernel rows of nx > 0 taps, the first at xr (input
 * bytes; rows rs apart, taps cs apart) and wr (the int8 weights at channel c; taps wc = C apart,
 * rows ws); a row of 3 taps unrolled, other widths in a loop. */
static TA_ALWAYS_INLINE void chan16_pixel(const int8_t *xr, const int8_t *wr, int32_t ny, int32_t nx, int32_t cs,
                                          int32_t wc, int32_t rs, int32_t ws, int32_t off, int32x4_t *a) {
  const int8_t *xa, *wa;
  int32_t n;
  if (nx == 3)
    __asm__ volatile("1:\n\tmov %[xa], %[xr]\n\tmov %[wa], %[wr]\n\t" TA_CHAN16_TAP TA_CHAN16_TAP TA_CHAN16_TAP
                     TA_CHAN16_NEXT_ROW
                     : [xr] "+r"(xr), [wr] "+r"(wr), [ny] "+r"(ny), [xa] "=&l"(xa), [wa] "=&l"(wa),
                       [e0] "+w"(a[0]), [o0] "+w"(a[1]), [e1] "+w"(a[2]), [o1] "+w"(a[3])
                     : [cs] "r"(cs), [wc] "r"(wc), [rs] "m"(rs), [ws] "m"(ws), [off] "r"(off)
                     : "q2", "q3", "q4", "q5", "cc", "memory");
  else
    __asm__ volatile("1:\n\tmov %[xa], %[xr]\n\tmov %[wa], %[wr]\n\tldr %[n], %[nx]\n\t"
                     "2:\n\t" TA_CHAN16_TAP "subs %[n], %[n], #1\n\tbne 2b\n\t" TA_CHAN16_NEXT_ROW
                     : [xr] "+r"(xr), [wr] "+r"(wr), [ny] "+r"(ny), [xa] "=&l"(xa), [wa] "=&l"(wa), [n] "=&r"(n),
                       [e0] "+w"(a[0]), [o0] "+w"(a[1]), [e1] "+w"(a[2]), [o1] "+w"(a[3])
                     : [nx] "m"(nx), [cs] "r"(cs), [wc] "r"(wc), [rs] "m"(rs), [ws] "m"(ws), [off] "r"(off)
                     : "q2", "q3", "q4", "q5", "cc", "memory");
}
#undef TA_CHAN16_TAP
#undef TA_CHAN16_HALF
#undef TA_CHAN16_NEXT_ROW

/* The group's requantization: per 4 channels (c, c+2, c+4, c+6; c+1, ..; c+8, ..; c+9, ..) the
 * multipliers and shifts as ta_mve_rq. */
typedef struct chan16_rq {
  ta_mve_rq q[4];
} chan16_rq;

/* 8 channels' outputs (sums e of the even channels, o of the odd; constants q[0], q[1])
 * requantized and stored at out. fast (every shift <= 0, the range all of int8):
 * ta_mve_requantize_s8's steps, VQMOVN saturating to int8; else ta_mve_requantize (the values are
 * already inside [lo, hi]: VMOVN keeps them). */
static TA_ALWAYS_INLINE void chan8_store(int32x4_t e, int32x4_t o, const ta_mve_rq *q, const ta_mve_rq_range *range,
                                         int fast, int8_t *out) {
  int16x8_t v = vdupq_n_s16(0);
#if !(defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING)
  if (fast) {
    int32x4_t a = vqrdmulhq_s32(e, q[0].m), b = vqrdmulhq_s32(o, q[1].m);
    a = vqaddq_n_s32(vrshlq_s32(vqaddq_s32(a, vshrq_n_s32(vandq_s32(a, q[0].right), 31)), q[0].right), range->oo_s);
    b = vqaddq_n_s32(vrshlq_s32(vqaddq_s32(b, vshrq_n_s32(vandq_s32(b, q[1].right), 31)), q[1].right), range->oo_s);
    v = vqmovnbq_s32(v, a), v = vqmovntq_s32(v, b);
    v = vreinterpretq_s16_s8(vqmovnbq_s16(vreinterpretq_s8_s16(v), v));
    vstrbq_s16(out, v);
    return;
  }
#else
  (void)fast;
#endif
  v = vmovnbq_s32(v, ta_mve_requantize(e, &q[0], range));
  v = vmovntq_s32(v, ta_mve_requantize(o, &q[1], range));
  vstrbq_s16(out, v);
}

/* Per output column ox (out_w < TA_DW_CHAN_MAX_W): its first tap inside the input across, as
 * the input byte offset from the row's start (x) and the weight offset (w, int16 values), and
 * how many taps across are inside (n; 0: none). The same for every row and channel group. */
typedef struct chan16_cols {
  int32_t x[TA_DW_CHAN_MAX_W], w[TA_DW_CHAN_MAX_W], n[TA_DW_CHAN_MAX_W];
} chan16_cols;

static void chan16_cols_of(const chan16_geom *g, chan16_cols *cols) {
  int32_t ox, kx0, kx1;
  for (ox = 0; ox < g->out_w; ++ox) {
    const int32_t ix0 = ox * g->sw - g->pad_left;
    valid_taps(ix0, g->kw, g->dw, g->in_w, &kx0, &kx1);
    cols->x[ox] = (ix0 + kx0 * g->dw) * g->P, cols->w[ox] = kx0 * g->C, cols->n[ox] = kx1 > kx0 ? kx1 - kx0 : 0;
  }
}

/* Output row oy of the group at channel c (x: input row x_row at channel c, the rows g->irs
 * apart; w: the weights at channel c; bias: its 4 bias vectors in chan16_rq's order). */
static TA_ALWAYS_INLINE void chan16_row(const chan16_geom *g, const chan16_cols *cols, const int8_t *x,
                                        int32_t x_row, const int8_t *w, const int32x4_t *bias, const chan16_rq *q,
                                        const ta_mve_rq_range *range, int fast, int32_t oy, int8_t *out) {
  const int32_t iy0 = oy * g->sh - g->pad_top, cs = g->dw * g->P, rs = g->dh * g->irs, ws = g->kw * g->C;
  const int32_t out_w = g->out_w, o_pix = g->o_pix, off = g->off;
  int32_t ky0, ky1, ox;
  valid_taps(iy0, g->kh, g->dh, g->in_h, &ky0, &ky1);
  x += (iy0 + ky0 * g->dh - x_row) * g->irs, w += ky0 * ws;
  for (ox = 0; ox < out_w; ++ox, out += o_pix) {
    int32x4_t a[4];
    const int32_t n = cols->n[ox];
    a[0] = bias[0], a[1] = bias[1], a[2] = bias[2], a[3] = bias[3];
    if (ky1 > ky0 && n > 0) chan16_pixel(x + cols->x[ox], w + cols->w[ox], ky1 - ky0, n, cs, g->C, rs, ws, off, a);
    chan8_store(a[0], a[1], q->q, range, fast, out);
    chan8_store(a[2], a[3], q->q + 2, range, fast, out + 8);
  }
}

/* In place (the output overwrites the input): the input rows a group's output row reads,
 * [iy0, iy0 + span), its 16 channels copied into `window` (dense: 16 bytes a pixel) before the row
 * is written -- the rows kept from the previous output row moved down, the new ones copied from
 * buf (rows outside the input are never read). Valid when every row is copied before the group's
 * outputs overwrite it (chan16_inplace_ok). */
static void chan16_window(const ta_dwconv_params *p, const int8_t *buf, int32_t c, int32_t iy0, int32_t prev,
                          int32_t span, int8_t *window) {
  const int32_t in_w = p->in_w, row = in_w * 16, C = p->in_c;
  const int32_t kept = prev + span > iy0 && prev <= iy0 ? prev + span - iy0 : 0;
  int32_t iy, ix;
  if (kept > 0) { /* down by whole rows (16-byte pixels), ascending: the source lies above */
    const int8_t *src = window + (iy0 - prev) * row;
    int8_t *dst = window;
    for (ix = kept * in_w; ix > 0; --ix, src += 16, dst += 16) vst1q_s8(dst, vld1q_s8(src));
  }
  for (iy = iy0 + kept; iy < iy0 + span; ++iy)
    if (iy >= 0 && iy < p->in_h)
      for (ix = 0; ix < in_w; ++ix) vst1q_s8(window + (iy - iy0) * row + ix * 16, vld1q_s8(buf + (iy * in_w + ix) * C + c));
}

/* Whether chan16_window keeps ta_depthwise_conv_s8_inplace exact: 16 | C (no overlapping last
 * group: it would read outputs), the window fits the in-place scratch, and at every output row
 * the rows first copied then are not yet overwritten by the oy * out_w outputs written before. */
static int chan16_inplace_ok(const ta_dwconv_params *p) {
  const int32_t span = (p->kernel_h - 1) * p->dilation_h + 1;
  int32_t oy;
  if (p->in_c % 16 || (size_t)span * (size_t)p->in_w * 16u > ta_depthwise_conv_s8_inplace_scratch_bytes(p)) return 0;
  for (oy = 1; oy < p->out_h; ++oy) {
    const int32_t first_new = (oy - 1) * p->stride_h - p->pad_top + span; /* the first row not copied before */
    if (first_new < p->in_h && first_new * p->in_w < oy * p->out_w) return 0;
  }
  return 1;
}

/* Whether ta_depthwise_mve_chan16 may run in place on the buffer itself (no window): 16 | C, and
 * no output pixel k (raster order) reads an input pixel below k, which the outputs before it overwrote --
 * e.g. VALID layers of stride 1 (str_ww's K x 1 kernels down one-column maps). */
static int chan16_direct_ok(const ta_dwconv_params *p) {
  int32_t oy, ox, ky0, ky1, kx0, kx1;
  if (p->in_c % 16) return 0;
  for (oy = 0; oy < p->out_h; ++oy) {
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    valid_taps(iy0, p->kernel_h, p->dilation_h, p->in_h, &ky0, &ky1);
    for (ox = 0; ox < p->out_w && ky1 > ky0; ++ox) {
      const int32_t ix0 = ox * p->stride_w - p->pad_left;
      valid_taps(ix0, p->kernel_w, p->dilation_w, p->in_w, &kx0, &kx1);
      if (kx1 > kx0 && (iy0 + ky0 * p->dilation_h) * p->in_w + ix0 + kx0 * p->dilation_w < oy * p->out_w + ox)
        return 0;
    }
  }
  return 1;
}

/* Rows [y0, y1) of every channel, 16 channels a step (in_c >= 16, depth multiplier 1); window:
 * NULL, or in place (output == input, rows 0 .. out_h, chan16_inplace_ok) the scratch for
 * chan16_window. */
static void chan16_rows(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0,
                                         int32_t y1, int8_t *window, int fast) {
  const int32_t C = p->in_c, span = (p->kernel_h - 1) * p->dilation_h + 1;
  const ta_mve_rq_range range = ta_mve_rq_range_of(p->output_offset, p->act_min, p->act_max);
  chan16_geom g;
  chan16_cols cols;
  int32_t c = 0, h, oy;
  g.in_h = p->in_h, g.in_w = p->in_w, g.C = C, g.kh = p->kernel_h, g.kw = p->kernel_w, g.dh = p->dilation_h;
  g.dw = p->dilation_w, g.sh = p->stride_h, g.sw = p->stride_w, g.pad_top = p->pad_top, g.pad_left = p->pad_left;
  g.P = window ? 16 : TA_OR_DEFAULT(p->in_pix_stride, C);
  g.irs = window ? p->in_w * 16 : TA_OR_DEFAULT(p->in_row_stride, p->in_w * g.P);
  g.out_w = p->out_w, g.o_pix = TA_OR_DEFAULT(p->out_pix_stride, C);
  g.o_row = TA_OR_DEFAULT(p->out_row_stride, p->out_w * g.o_pix), g.off = p->input_offset;
  chan16_cols_of(&g, &cols);
  for (;;) {
    chan16_rq q;
    int32x4_t bias[4];
    int32_t prev = INT32_MIN / 2;
    for (h = 0; h < 2; ++h) { /* channels c + 8h .. c + 8h + 7: even ones, odd ones */
      int32_t b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      const int32x4x2_t m = vld2q_s32(p->out_mult + c + 8 * h), s = vld2q_s32(p->out_shift + c + 8 * h);
      int32x4x2_t bv;
      q.q[2 * h] = ta_mve_rq_of(m.val[0], s.val[0]), q.q[2 * h + 1] = ta_mve_rq_of(m.val[1], s.val[1]);
      if (p->bias) memcpy(b, p->bias + c + 8 * h, sizeof b);
      bv = vld2q_s32(b);
      bias[2 * h] = bv.val[0], bias[2 * h + 1] = bv.val[1];
    }
    for (oy = y0; oy < y1; ++oy) {
      const int32_t iy0 = oy * g.sh - g.pad_top;
      if (window) chan16_window(p, input, c, iy0, prev, span, window), prev = iy0;
      chan16_row(&g, &cols, window ? window : input + c, window ? iy0 : 0, p->weights + c, bias, &q, &range, fast,
                 oy, output + oy * g.o_row + c);
    }
    if (c + 16 == C) break;
    c = c + 32 <= C ? c + 16 : C - 16; /* the last group ends at channel C - 1 */
  }
}

/* The channel-parallel path over rows [y0, y1) (window: as chan16_rows), in the fast
 * requantization form when every shift is <= 0 and the range is all of int8 (TFLite's double
 * rounding). */
void ta_depthwise_mve_chan16(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                             int8_t *window) {
  int fast = p->act_min == -128 && p->act_max == 127;
  int32_t c;
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  fast = 0;
#endif
  for (c = 0; fast && c < p->in_c; ++c) fast = p->out_shift[c] <= 0;
  chan16_rows(p, input, output, y0, y1, window, fast);
}

int ta_depthwise_mve_chan16_mode(const ta_dwconv_params *p, const int8_t *input, const int8_t *output, int32_t y0,
                                 int32_t y1) {
  const int whole = y0 == 0 && y1 == p->out_h;
  if (p->depth_multiplier != 1 || p->in_c < 16 || p->out_w >= TA_DW_CHAN_MAX_W) return TA_DW_CHAN16_NONE;
  if (output != input || (whole && chan16_direct_ok(p))) return TA_DW_CHAN16_DIRECT;
  return whole && chan16_inplace_ok(p) ? TA_DW_CHAN16_WINDOW : TA_DW_CHAN16_NONE;
}
#else
/* Nothing here without Helium; ISO C wants a declaration in every translation unit. */
typedef int ta_depthwise_mve_chan16_not_compiled;
#endif
