/*
 * DEPTHWISE_CONV_2D on Helium (MVE, Cortex-M55), on the model's int8 weights (see depthwise.c for
 * the semantics). Two paths: maps narrower than TA_DW_CHAN_MAX_W with depth multiplier 1 and at
 * least 16 channels run channel-parallel on NHWC (dw_chan16, below: no per-channel set-up, which
 * dominates small maps; in place on the buffer itself where no output reads a pixel written before
 * it, e.g. VALID stride 1, else through a sliding window of input rows); the rest run on planes.
 * The plane path, as the portable one: per input channel its padded plane of x + input_offset as
 * int16 in scratch (0 outside the input: the zeroes written once per call, the same for every
 * channel), then per output channel its rows, the outputs of a row in int32 lanes:
 *   - a plane row of stride S (1 or 2) across is stored in S phases (plane column c at phase
 *     c % S, position c / S), so the values of a tap for consecutive outputs are consecutive and
 *     every tap is one contiguous widening load (VLDRH.S32), whatever the stride;
 *   - the plane fills 8 values per gather (VLDRB.S16 at offsets 0, SP, .., 7SP of the NHWC
 *     input, P its pixel stride), one VADD of the offset and one store: no byte-by-byte transposition;
 *   - per tap one load and one VMLA by the tap's weight (a scalar) per 4 outputs: 3x3, 5x5 and
 *     7x7 kernels (dilation 1) run 8 outputs per step, kernel rows unrolled (rows_kxk); the rest
 *     of a row, other kernels and channels outside the fast requantization take rows_any (8
 *     outputs a step, the last 1-7 four a step under a tail predicate);
 *   - 4 sums requantize as one vector (ta_mve_requantize1, or store_fast: TFLite's double
 *     rounding) and scatter to NHWC in one VSTRB.
 * The int32 sums are TFLite's accumulator (proven to fit int32), so the bytes are the portable
 * path's.
 */
#include <string.h>

#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "depthwise_simd.h"
#include "depthwise_mve.h"

#if TA_MVE
/* One output channel's rows: where to read and write, and its constants. */
typedef struct mve_dw_job {
  const int16_t *x;           /* plane row of output row y0's first kernel row */
  int32_t row_len, phase_len; /* int16 values per plane row (S phases), per phase */
  int32_t row_step;           /* plane values between output rows */
  int32_t rows, out_w;
  int32_t bias;
  const int32_t *w;   /* the channel's weights, kernel row by row */
  const int32_t *tap; /* each tap's plane offset from an output's (kernel row, phase, position) */
  int8_t *o;          /* the channel's output at row y0 */
  int32_t o_row, o_pix;
  uint32x4_t o_offs; /* 0, o_pix, 2 o_pix, 3 o_pix: the scatter's byte offsets */
  ta_mve_rq1 q;
  int32x4_t lo, hi; /* the activation range */
} mve_dw_job;

/* 4 sums of a channel in the fast form (its shift a right shift, the range all of int8:
 * ta_mve_requantize1_s8), scattered to o. */
static TA_ALWAYS_INLINE void store_fast(int32x4_t acc, int32_t m, int32_t right, int32_t oo, int8_t *o,
                                        uint32x4_t o_offs) {
  vstrbq_scatter_offset_s32(o, o_offs, ta_mve_requantize1_s8(acc, m, right, oo));
}

/* A kernel row of K taps (stride S, dilation 1) into the sums of 8 outputs: tap kx at phase
 * kx % S, position kx / S of the row at x (p0: phase 0, p1: phase 1). */
#define TA_DW_TAP(KX)                                                                               \
  do {                                                                                              \
    const int16_t *const t = ((KX) % S ? p1 : p0) + (KX) / S;                                       \
    const int32_t wk = w[KX];                                                                       \
    a0 = vmlaq_n_s32(a0, vldrhq_s32(t), wk), a1 = vmlaq_n_s32(a1, vldrhq_s32(t + 4), wk);           \
  } while (0)

/* The full groups of 8 outputs of a K x K channel (stride S across, dilation 1) in the fast
 * requantization form (store_fast). Everything it reads of j is copied to locals first (the byte
 * stores could alias j). */
static TA_ALWAYS_INLINE void rows_kxk(const mve_dw_job *j, int32_t K, int32_t S) {
  const int32_t row_len = j->row_len, phase_len = j->phase_len, groups = j->out_w >> 3, rows = j->rows;
  const int32_t row_step = j->row_step, o_row = j->o_row, o_step = 4 * j->o_pix;
  const int32_t bias = j->bias, m = j->q.m, right = j->q.right, oo = j->q.oo;
  const uint32x4_t o_offs = j->o_offs;
  const int32_t *const w0 = j->w;
  int32_t y, g, ky;
  for (y = 0; y < rows; ++y) {
    const int16_t *x = j->x + y * row_step;
    int8_t *o = j->o + y * o_row;
    for (g = 0; g < groups; ++g, x += 8, o += 2 * o_step) {
      int32x4_t a0 = vdupq_n_s32(bias), a1 = a0;
      const int32_t *w = w0;
      for (ky = 0; ky < K; ++ky, w += K) {
        const int16_t *const p0 = x + ky * row_len, *const p1 = p0 + phase_len;
        TA_DW_TAP(0);
        TA_DW_TAP(1);
        TA_DW_TAP(2);
        if (K > 3) {
          TA_DW_TAP(3);
          TA_DW_TAP(4);
        }
        if (K > 5) {
          TA_DW_TAP(5);
          TA_DW_TAP(6);
        }
      }
      store_fast(a0, m, right, oo, o, o_offs);
      store_fast(a1, m, right, oo, o + o_step, o_offs);
    }
  }
}
#undef TA_DW_TAP

/* The 3x3 kernel's constants, in the order its assembly reads them (byte offsets): the 9
 * weights (0), the active lanes of a last partial group's two vectors (36, 40: 0 for none), the
 * bias (48), multiplier (64), right shift (80) and output offset (96) in every lane, the scatter's
 * offsets 0, o_pix, 2 o_pix, 3 o_pix (112), the rows (128). */
typedef struct dw3_consts {
  int32_t w[9], tail[2], unused;
  int32_t bias[4], m[4], right[4], oo[4];
  uint32_t o_offs[4];
  /* the rows (128): full groups per row, rows left, bytes from a row's plane values and outputs
   * to the next row's, and the current row's (kept here: the registers are all taken) */
  int32_t groups, rows, x_step, o_step;
  const int16_t *x_row;
  int8_t *o_row;
} dw3_consts;

/* One step of a kernel row: tap at A for outputs 0-3 and at A + 8 bytes for outputs 4-7, times W. */
#define TA_DW3_TAP(A, A8, W)                                                                        \
  "vldrh.s32 q2, " A "\n\tvldrh.s32 q3, " A8 "\n\t"                                                  \
  "vmla.s32 q0, q2, " W "\n\tvmla.s32 q1, q3, " W "\n\t"
/* Kernel row R's weights (byte offset R * 12 of the constants). */
#define TA_DW3_W(R) "ldrd %[w0], %[w1], [%[c], #" #R "]\n\tldr %[w2], [%[c], #" #R "+8]\n\t"
/* The 8 sums of a group, stride 1: kernel row r's taps at t + 0, 2, 4 bytes (t = x + r row_len). */
#define TA_DW3_SUMS_S1                                                                              \
  "vldrw.32 q0, [%[c], #48]\n\tvmov q1, q0\n\t" TA_DW3_W(0)                                           \
  TA_DW3_TAP("[%[x]]", "[%[x], #8]", "%[w0]") TA_DW3_TAP("[%[x], #2]", "[%[x], #10]", "%[w1]")         \
  TA_DW3_TAP("[%[x], #4]", "[%[x], #12]", "%[w2]")                                                    \
  "add %[t], %[x], %[rl]\n\t" TA_DW3_W(12)                                                           \
  TA_DW3_TAP("[%[t]]", "[%[t], #8]", "%[w0]") TA_DW3_TAP("[%[t], #2]", "[%[t], #10]", "%[w1]")         \
  TA_DW3_TAP("[%[t], #4]", "[%[t], #12]", "%[w2]")                                                    \
  "add %[t], %[t], %[rl]\n\t" TA_DW3_W(24)                                                           \
  TA_DW3_TAP("[%[t]]", "[%[t], #8]", "%[w0]") TA_DW3_TAP("[%[t], #2]", "[%[t], #10]", "%[w1]")         \
  TA_DW3_TAP("[%[t], #4]", "[%[t], #12]", "%[w2]")
/* Stride 2: taps 0 and 2 in phase 0 (t, t + 2 bytes), tap 1 in phase 1 (u = t + phase_len bytes). */
#define TA_DW3_SUMS_S2                                                                              \
  "vldrw.32 q0, [%[c], #48]\n\tvmov q1, q0\n\t" TA_DW3_W(0) "add %[u], %[x], %[pl]\n\t"                 \
  TA_DW3_TAP("[%[x]]", "[%[x], #8]", "%[w0]") TA_DW3_TAP("[%[u]]", "[%[u], #8]", "%[w1]")              \
  TA_DW3_TAP("[%[x], #2]", "[%[x], #10]", "%[w2]")                                                    \
  "add %[t], %[x], %[rl]\n\t" TA_DW3_W(12) "add %[u], %[t], %[pl]\n\t"                                 \
  TA_DW3_TAP("[%[t]]", "[%[t], #8]", "%[w0]") TA_DW3_TAP("[%[u]]", "[%[u], #8]", "%[w1]")              \
  TA_DW3_TAP("[%[t], #2]", "[%[t], #10]", "%[w2]")                                                    \
  "add %[t], %[t], %[rl]\n\t" TA_DW3_W(24) "add %[u], %[t], %[pl]\n\t"                                 \
  TA_DW3_TAP("[%[t]]", "[%[t], #8]", "%[w0]") TA_DW3_TAP("[%[u]]", "[%[u], #8]", "%[w1]")              \
  TA_DW3_TAP("[%[t], #2]", "[%[t], #10]", "%[w2]")
/* The 8 sums requantized (ta_mve_requantize_s8's steps: any shift <= 0), in q0 (outputs 0-3)
 * and q1 (4-7). */
#define TA_DW3_RQ                                                                                   \
  "vqrdmulh.s32 q0, q0, q5\n\tvqrdmulh.s32 q1, q1, q5\n\t"                                          \
  "vand q2, q0, q6\n\tvand q3, q1, q6\n\t"                                                          \
  "vshr.s32 q2, q2, #31\n\tvshr.s32 q3, q3, #31\n\t"                                                \
  "vqadd.s32 q0, q0, q2\n\tvqadd.s32 q1, q1, q3\n\t"                                                \
  "vrshl.s32 q0, q0, q6\n\tvrshl.s32 q1, q1, q6\n\t"                                                \
  "vqadd.s32 q0, q0, q7\n\tvqadd.s32 q1, q1, q7\n\t"                                                \
  "vqmovnb.s32 q0, q0\n\tvqmovnb.s32 q1, q1\n\t"                                                    \
  "vqmovnb.s16 q0, q0\n\tvqmovnb.s16 q1, q1\n\t"
#define TA_DW3_STORE "vstrb.32 q0, [%[o], q4]\n\tadd %[t], %[o], %[o4]\n\tvstrb.32 q1, [%[t], q4]\n\t"
/* A partial group: the stores under the tail predicates (VPR kept in w2 meanwhile). */
#define TA_DW3_STORE_TAIL                                                                          \
  "vmrs %[w2], p0\n\tldrd %[w0], %[w1], [%[c], #36]\n\tadd %[t], %[o], %[o4]\n\t"                       \
  "vctp.32 %[w0]\n\tvpst\n\tvstrbt.32 q0, [%[o], q4]\n\t"                                               \
  "vctp.32 %[w1]\n\tvpst\n\tvstrbt.32 q1, [%[t], q4]\n\tvmsr p0, %[w2]\n\t"
/* The row: the constants into q4-q7, `groups` full groups, then a partial one if tail[0] > 0. */
#define TA_DW3_ROWS(SUMS)                                                                           \
  "vldrw.32 q4, [%[c], #112]\n\tvldrw.32 q5, [%[c], #64]\n\t"                                       \
  "vldrw.32 q6, [%[c], #80]\n\tvldrw.32 q7, [%[c], #96]\n\t"                                        \
  "str %[x], [%[c], #144]\n\tstr %[o], [%[c], #148]\n\t"                                             \
  "4:\n\tldr %[n], [%[c], #128]\n\tcmp %[n], #0\n\tbeq 2f\n\t"                                        \
  "1:\n\t" SUMS TA_DW3_RQ TA_DW3_STORE                                                               \
  "add %[o], %[o], %[os]\n\tadd %[x], %[x], #16\n\tsubs %[n], %[n], #1\n\tbne 1b\n\t"                    \
  "2:\n\tldr %[w0], [%[c], #36]\n\tcmp %[w0], #0\n\tbeq 3f\n\t" SUMS TA_DW3_RQ TA_DW3_STORE_TAIL "3:\n\t" \
  "ldr %[x], [%[c], #144]\n\tldr %[w0], [%[c], #136]\n\tadd %[x], %[x], %[w0]\n\tstr %[x], [%[c], #144]\n\t"  \
  "ldr %[o], [%[c], #148]\n\tldr %[w0], [%[c], #140]\n\tadd %[o], %[o], %[w0]\n\tstr %[o], [%[c], #148]\n\t"  \
  "ldr %[w0], [%[c], #132]\n\tsubs %[w0], %[w0], #1\n\tstr %[w0], [%[c], #132]\n\tbne 4b\n\t"

/* A 3x3 channel's rows, stride 1: per row c->groups full groups of 8 outputs and a partial one
 * (c->tail), each 36 loads and VMLA, 9 weight loads (6 instructions) and the requantization: 69
 * instructions for 72 MACs. x: the first kernel row of the first output row (row_len bytes
 * apart), o: its first output (o4 bytes to output 4, ostep to the next group). A partial group
 * reads up to 7 plane values past the row (inside the scratch: the plane's spare values and the
 * out_w + 1 words after it) and stores its own. */
static void dw3_s1_rows(const int16_t *x, int8_t *o, dw3_consts *c, int32_t row_len, int32_t o4, int32_t ostep) {
  int32_t n, t, w0, w1, w2;
  __asm__ volatile(TA_DW3_ROWS(TA_DW3_SUMS_S1)
                   : [x] "+l"(x), [o] "+r"(o), [n] "=&r"(n), [t] "=&l"(t), [w0] "=&r"(w0), [w1] "=&r"(w1),
                     [w2] "=&r"(w2)
                   : [c] "r"(c), [rl] "r"(row_len), [o4] "r"(o4), [os] "r"(ostep)
                   : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "cc", "memory");
}

/* The same at stride 2 (phase_len bytes from a row's phase 0 to its phase 1). */
static void dw3_s2_rows(const int16_t *x, int8_t *o, dw3_consts *c, int32_t row_len, int32_t phase_len, int32_t o4,
                        int32_t ostep) {
  int32_t n, t, u, w0, w1, w2;
  __asm__ volatile(TA_DW3_ROWS(TA_DW3_SUMS_S2)
                   : [x] "+l"(x), [o] "+r"(o), [n] "=&r"(n), [t] "=&l"(t), [u] "=&l"(u), [w0] "=&r"(w0),
                     [w1] "=&r"(w1), [w2] "=&r"(w2)
                   : [c] "r"(c), [rl] "r"(row_len), [pl] "r"(phase_len), [o4] "r"(o4), [os] "r"(ostep)
                   : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "cc", "memory");
}
#undef TA_DW3_TAP
#undef TA_DW3_W
#undef TA_DW3_SUMS_S1
#undef TA_DW3_SUMS_S2
#undef TA_DW3_RQ
#undef TA_DW3_STORE
#undef TA_DW3_STORE_TAIL
#undef TA_DW3_ROWS

/* Every output of a 3x3 channel (stride S across, dilation 1) in the fast requantization form,
 * through dw3_s1_rows / dw3_s2_rows. */
static void rows_3x3(const mve_dw_job *j, int32_t S) {
  const int32_t rem = j->out_w & 7;
  dw3_consts c;
  int32_t i;
  for (i = 0; i < 9; ++i) c.w[i] = j->w[i];
  c.tail[0] = rem < 4 ? rem : 4, c.tail[1] = rem > 4 ? rem - 4 : 0, c.unused = 0;
  for (i = 0; i < 4; ++i) {
    c.bias[i] = j->bias, c.m[i] = j->q.m, c.right[i] = j->q.right, c.oo[i] = j->q.oo;
    c.o_offs[i] = (uint32_t)(i * j->o_pix);
  }
  c.groups = j->out_w >> 3, c.rows = j->rows;
  c.x_step = 2 * j->row_step, c.o_step = j->o_row;
  if (S == 1)
    dw3_s1_rows(j->x, j->o, &c, 2 * j->row_len, 4 * j->o_pix, 8 * j->o_pix);
  else
    dw3_s2_rows(j->x, j->o, &c, 2 * j->row_len, 2 * j->phase_len, 4 * j->o_pix, 8 * j->o_pix);
}

TA_NOINLINE static void rows_3x3_s1(const mve_dw_job *j) { rows_3x3(j, 1); }
TA_NOINLINE static void rows_3x3_s2(const mve_dw_job *j) { rows_3x3(j, 2); }
TA_NOINLINE static void rows_5x5_s1(const mve_dw_job *j) { rows_kxk(j, 5, 1); }
TA_NOINLINE static void rows_5x5_s2(const mve_dw_job *j) { rows_kxk(j, 5, 2); }
TA_NOINLINE static void rows_7x7_s1(const mve_dw_job *j) { rows_kxk(j, 7, 1); }
TA_NOINLINE static void rows_7x7_s2(const mve_dw_job *j) { rows_kxk(j, 7, 2); }

/* Outputs from column ox0 on, any kernel and dilation, the general requantization: 8 a step (each
 * tap's offset and weight loaded once for two sums), the last 1-7 four a step under a tail
 * predicate (lanes past the row read and write nothing). */
TA_NOINLINE static void rows_any(const mve_dw_job *j, int32_t taps, int32_t ox0) {
  int32_t y, ox, t;
  for (y = 0; y < j->rows; ++y) {
    const int16_t *const x = j->x + y * j->row_step;
    int8_t *const o = j->o + y * j->o_row;
    for (ox = ox0; ox + 8 <= j->out_w; ox += 8) {
      const int16_t *xo = x + ox;
      const int32_t *tap = j->tap, *w = j->w;
      int32x4_t a0 = vdupq_n_s32(j->bias), a1 = a0;
      __asm__("" : "+r"(xo)); /* one base register: the compiler would add ox and x per tap */
      for (t = taps; t > 0; --t) {
        const int16_t *const xt = xo + *tap++;
        const int32_t wt = *w++;
        a0 = vmlaq_n_s32(a0, vldrhq_s32(xt), wt), a1 = vmlaq_n_s32(a1, vldrhq_s32(xt + 4), wt);
      }
      vstrbq_scatter_offset_s32(o + ox * j->o_pix, j->o_offs, ta_mve_requantize1(a0, &j->q, j->lo, j->hi));
      vstrbq_scatter_offset_s32(o + (ox + 4) * j->o_pix, j->o_offs, ta_mve_requantize1(a1, &j->q, j->lo, j->hi));
    }
    for (; ox < j->out_w; ox += 4) {
      const mve_pred16_t live = vctp32q((uint32_t)(j->out_w - ox));
      const int16_t *xo = x + ox;
      const int32_t *tap = j->tap, *w = j->w;
      int32x4_t acc = vdupq_n_s32(j->bias);
      __asm__("" : "+r"(xo));
      for (t = taps; t > 0; --t) acc = vmlaq_n_s32(acc, vldrhq_z_s32(xo + *tap++, live), *w++);
      vstrbq_scatter_offset_p_s32(o + ox * j->o_pix, j->o_offs, ta_mve_requantize1(acc, &j->q, j->lo, j->hi), live);
    }
  }
}

/* n int16 values x + off into dst from the int8 values at src, offsets[i] apart (8 per gather). */
static TA_ALWAYS_INLINE void fill_run(const int8_t *src, int32_t step, uint16x8_t offs, int16_t off, int32_t n,
                                      int16_t *dst) {
  for (; n >= 8; n -= 8, src += step, dst += 8) vst1q_s16(dst, vaddq_n_s16(vldrbq_gather_offset_s16(src, offs), off));
  if (n > 0) {
    const mve_pred16_t t = vctp16q((uint32_t)n);
    vstrhq_p_s16(dst, vaddq_n_s16(vldrbq_gather_offset_z_s16(src, offs, t), off), t);
  }
}

/* Channel ic's values inside the input into its plane (rows from input row y0 * stride_h -
 * pad_top on; each row's S phases). Per phase: the first plane column inside the input of that
 * phase (c0 <= c < c1, c % S == phase), their count n and where they sit (the same every row). */
static void fill_plane(const ta_dwconv_params *p, const int8_t *input, int32_t ic, int32_t y0, int32_t rows,
                       const mve_dw_job *j, int16_t *plane) {
  const int32_t P = TA_OR_DEFAULT(p->in_pix_stride, p->in_c), S = p->stride_w;
  const int32_t in_row_stride = TA_OR_DEFAULT(p->in_row_stride, p->in_w * P);
  const int32_t iy0 = y0 * p->stride_h - p->pad_top, width = j->phase_len * S;
  const int16_t off = (int16_t)p->input_offset;
  const int32_t c0 = ta_clamp32(p->pad_left, 0, width), c1 = ta_clamp32(p->pad_left + p->in_w, c0, width);
  const int32_t r0 = ta_clamp32(-iy0, 0, rows), r1 = ta_clamp32(p->in_h - iy0, r0, rows);
  const uint16x8_t offs = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)(S * P));
  const int32_t first0 = c0, first1 = c0 + 1 < c1 ? c0 + 1 : c1;
  const int32_t n0 = (c1 - first0 + S - 1) / S, n1 = S == 2 ? (c1 - first1 + 1) / 2 : 0;
  const int32_t d0 = (first0 % S) * j->phase_len + first0 / S, d1 = (first1 % S) * j->phase_len + first1 / S;
  const int32_t s0 = (first0 - p->pad_left) * P + ic, s1 = (first1 - p->pad_left) * P + ic;
  int32_t r;
  for (r = r0; r < r1; ++r) {
    const int8_t *const src = input + (iy0 + r) * in_row_stride;
    int16_t *const dst = plane + r * j->row_len;
    fill_run(src + s0, 8 * S * P, offs, off, n0, dst + d0);
    if (n1 > 0) fill_run(src + s1, 8 * S * P, offs, off, n1, dst + d1);
  }
}

/* ---- channel-parallel path (dw_chan16): NHWC, 16 channels a step, no planes ----
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
 * 3x3 layers of 12 x 12 down to 3 x 3 maps, 1.31 on a 5x5 layer of 12 x 12. */

/* The geometry dw_chan16 reads, copied out of the params (the byte stores could alias them). */
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

/* Whether dw_chan16 may run in place on the buffer itself (no window): 16 | C, and no output
 * pixel k (raster order) reads an input pixel below k, which the outputs before it overwrote --
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
TA_NOINLINE static void dw_chan16(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0,
                                  int32_t y1, int8_t *window) {
  int fast = p->act_min == -128 && p->act_max == 127;
  int32_t c;
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
  fast = 0;
#endif
  for (c = 0; fast && c < p->in_c; ++c) fast = p->out_shift[c] <= 0;
  chan16_rows(p, input, output, y0, y1, window, fast);
}

int ta_depthwise_mve_supported(const ta_dwconv_params *p) {
  const int32_t P = TA_OR_DEFAULT(p->in_pix_stride, p->in_c);
  return p->weights && p->kernel_h * p->kernel_w <= TA_DW_MVE_TAPS && (p->stride_w == 1 || p->stride_w == 2) &&
         p->stride_w * P <= TA_DW_MVE_MAX_PIX;
}

/* The row kernel of 8 outputs a step for p's kernel, or NULL. */
typedef void rows_fn(const mve_dw_job *j);
static rows_fn *fast_rows(const ta_dwconv_params *p) {
  const int32_t k = p->kernel_h, s = p->stride_w;
  if (k != p->kernel_w || p->dilation_h != 1 || p->dilation_w != 1 || p->act_min != -128 || p->act_max != 127)
    return NULL;
  if (k == 3) return s == 1 ? rows_3x3_s1 : rows_3x3_s2;
  if (k == 5) return s == 1 ? rows_5x5_s1 : rows_5x5_s2;
  if (k == 7) return s == 1 ? rows_7x7_s1 : rows_7x7_s2;
  return NULL;
}

/* The plane path over rows [y0, y1): per input channel its plane, per output channel its rows
 * (the fast row kernel, then rows_any for what it leaves). */
static void mve_planes(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                       int16_t *scratch) {
  const int32_t dm = p->depth_multiplier, out_c = p->in_c * dm, taps = p->kernel_h * p->kernel_w;
  const int32_t o_pix = TA_OR_DEFAULT(p->out_pix_stride, out_c), S = p->stride_w;
  const int32_t rows = plane_rows(p, y0, y1);
  const int32_t width = (p->out_w - 1) * S + (p->kernel_w - 1) * p->dilation_w + 1;
  rows_fn *const fast = fast_rows(p);
  int32_t w[taps], tap[taps]; /* the channel's weights, each tap's plane offset: 8 B of stack a tap */
  int32_t ic, m, t;
  mve_dw_job j;
  j.phase_len = (width + S - 1) / S, j.row_len = j.phase_len * S; /* within plane_width(p) for S <= 2 */
  j.o_row = TA_OR_DEFAULT(p->out_row_stride, p->out_w * o_pix), j.o_pix = o_pix;
  j.o_offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)o_pix);
  j.lo = vdupq_n_s32(p->act_min), j.hi = vdupq_n_s32(p->act_max);
  j.x = scratch, j.w = w, j.tap = tap;
  j.row_step = p->stride_h * j.row_len;
  j.rows = y1 - y0, j.out_w = p->out_w;
  for (t = 0; t < taps; ++t) { /* tap (ky, kx) reads column ox * S + kx * dilation_w */
    const int32_t c = (t % p->kernel_w) * p->dilation_w;
    tap[t] = (t / p->kernel_w) * p->dilation_h * j.row_len + (c % S) * j.phase_len + c / S;
  }
  memset(scratch, 0, (size_t)rows * (size_t)j.row_len * sizeof(int16_t));
  for (ic = 0; ic < p->in_c; ++ic) {
    fill_plane(p, input, ic, y0, rows, &j, scratch);
    for (m = 0; m < dm; ++m) {
      const int32_t oc = ic * dm + m;
      int32_t done = 0;
      for (t = 0; t < taps; ++t) w[t] = p->weights[t * out_c + oc];
      j.bias = p->bias ? p->bias[oc] : 0;
      j.o = output + y0 * j.o_row + oc;
      j.q = ta_mve_rq1_of(p->out_mult[oc], p->out_shift[oc], p->output_offset);
#if defined(TA_SINGLE_ROUNDING) && TA_SINGLE_ROUNDING
      (void)fast; /* the fast forms are double rounding's */
#else
      /* the fast requantization: 3x3 any shift <= 0 (TA_DW3_RQ), else right shifts (store_fast) */
      if (fast && (p->kernel_w == 3 ? j.q.left == 0 : j.q.right < 0 && p->out_w >= 8)) {
        fast(&j);
        done = p->kernel_w == 3 ? p->out_w : p->out_w & ~7; /* 3x3: partial groups too */
      }
#endif
      if (done < p->out_w) rows_any(&j, taps, done);
    }
  }
}

void ta_depthwise_mve(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                      int16_t *scratch) {
  const int whole = y0 == 0 && y1 == p->out_h;
  if (p->depth_multiplier == 1 && p->in_c >= 16 && p->out_w < TA_DW_CHAN_MAX_W) {
    if (output != input || (whole && chan16_direct_ok(p))) {
      dw_chan16(p, input, output, y0, y1, NULL);
      return;
    }
    if (whole && chan16_inplace_ok(p)) {
      dw_chan16(p, input, output, y0, y1, (int8_t *)scratch);
      return;
    }
  }
  mve_planes(p, input, output, y0, y1, scratch);
}
#else
/* Nothing here without Helium; ISO C wants a declaration in every translation unit. */
typedef int ta_depthwise_mve_not_compiled;
#endif
