/*
 * DEPTHWISE_CONV_2D on Helium (MVE, Cortex-M55), on the model's int8 weights (see depthwise.c for
 * the semantics). Two paths: maps narrower than TA_DW_CHAN_MAX_W with depth multiplier 1 and at
 * least 16 channels run channel-parallel on NHWC (depthwise_mve_chan16.c: no per-channel set-up, which
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
 * (the fast row kernel, then rows_any for what it leaves). Not inlined: its frame (the job, the
 * weights' and taps' arrays) exists only while it runs, not above the channel-parallel path's. */
TA_NOINLINE static void mve_planes(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0,
                                   int32_t y1, int16_t *scratch) {
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

/* Both paths are tail calls (the channel-parallel mode decided first): this frame is gone before
 * theirs, chan16_rows' 880 B included. */
void ta_depthwise_mve(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                      int16_t *scratch) {
  const int chan16 = ta_depthwise_mve_chan16_mode(p, input, output, y0, y1);
  if (chan16 != TA_DW_CHAN16_NONE)
    ta_depthwise_mve_chan16(p, input, output, y0, y1, chan16 == TA_DW_CHAN16_WINDOW ? (int8_t *)scratch : NULL);
  else
    mve_planes(p, input, output, y0, y1, scratch);
}
#else
/* Nothing here without Helium; ISO C wants a declaration in every translation unit. */
typedef int ta_depthwise_mve_not_compiled;
#endif
