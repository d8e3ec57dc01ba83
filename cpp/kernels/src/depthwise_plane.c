/*
 * DEPTHWISE_CONV_2D, the SIMD path's int16 planes (see depthwise_simd.c): input rows of a group of
 * up to 4 channels widened from NHWC into plane rows (raw values; the zero point outside the
 * input), and the zero-point columns of the scratch's rows. Invariant: a plane row holds the
 * input row's columns -pad_left .. width - pad_left - 1, the zero point where they leave the input.
 */
#include <stddef.h>

#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_simd.h"
#include "depthwise_simd.h"

#if TA_SIMD
/* Plane rows of a group from n input rows of NHWC (s: first row's column xa, channel c0; d: the
 * first slot, channel j of a slot at + j * width), columns [xa, xb). 4 channels take two pixel
 * loads, PKHBT/PKHTB and four SXTB16 per 2 columns (channel c's pair of columns per word), 4
 * columns a pass (a word pair per channel, STRD). */
TA_INLINE void widen4(const int8_t *q, int32_t ps, int32_t *c0, int32_t *c1, int32_t *c2, int32_t *c3) {
  const int32_t a = ta_read32(q), b = ta_read32(q + ps);
  const int32_t lo = pack_lo16(a, b), hi = pack_hi16(a, b);
  *c0 = ta_sxtb16(lo), *c1 = sxtb16_odd(lo), *c2 = ta_sxtb16(hi), *c3 = sxtb16_odd(hi);
}

#if TA_SIMD_NATIVE
/* What the row loop of widen_rows4 reads (at these offsets): the next row's first input pixel
 * (column xa) and its plane word (column xa & ~1, channel c0), rows left, the row steps, passes
 * of 4 columns per row, the row's extras (1: a zero point then column xa, an odd xa; 2: a pair of
 * columns after the passes; 4: a last column then a zero point), 4 zero-point bytes, the bytes
 * from one channel's plane row to the next's, the input pixel stride. */
typedef struct rows4_job {
  const int8_t *s;
  ta_i32a *d;
  int32_t n, in_row_stride, pitch_bytes, quads, extras, zz, plane_bytes, ps;
} rows4_job;
typedef char rows4_job_layout_check[(offsetof(rows4_job, d) == 4 && offsetof(rows4_job, n) == 8 &&
                                     offsetof(rows4_job, in_row_stride) == 12 && offsetof(rows4_job, quads) == 20 &&
                                     offsetof(rows4_job, extras) == 24 && offsetof(rows4_job, zz) == 28 &&
                                     offsetof(rows4_job, plane_bytes) == 32 && offsetof(rows4_job, ps) == 36)
                                        ? 1
                                        : -1];

/* One word per channel from r9 = (x0.lo, x1.lo), r10 = (x0.hi, x1.hi) (two pixels' bytes, PKHBT /
 * PKHTB): SXTB16 and SXTB16 ROR 8 of each, stored at r2..r5 (POST: the post-increment). */
#define W4_STORE(POST)                                                                               \
  "sxtb16 r11, r9\n\t"                                                                               \
  "str r11, [r2]" POST "\n\t"                                                                        \
  "sxtb16 r11, r9, ror #8\n\t"                                                                       \
  "str r11, [r3]" POST "\n\t"                                                                        \
  "sxtb16 r11, r10\n\t"                                                                              \
  "str r11, [r4]" POST "\n\t"                                                                        \
  "sxtb16 r11, r10, ror #8\n\t"                                                                      \
  "str r11, [r5]" POST "\n\t"

/* The rows of a group of 4 channels in one loop (per row ~25 instructions besides the passes; in C
 * the row set-up took ~41 with its spills). Registers: lr the job, r0 the input pixel, r1 its
 * stride, r2..r5 the 4 channels' plane words, r6 the passes' end, r7..r12 data. A pass of 4
 * columns: 4 pixel loads, PKHBT/PKHTB, 8 SXTB16, 4 STRD (24 instructions for 16 values). */
TA_NOINLINE static void widen_rows4(rows4_job *job) {
  register rows4_job *j __asm__("r0") = job;
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "mov lr, r0\n\t"
      "ldr r1, [lr, #36]\n\t"
      "1:\n\t"
      "ldrd r0, r2, [lr, #0]\n\t"
      "ldr r7, [lr, #32]\n\t"
      "add r3, r2, r7\n\t"
      "add r4, r3, r7\n\t"
      "add r5, r4, r7\n\t"
      "ldr r6, [lr, #24]\n\t"
      "tst r6, #1\n\t"
      "beq 2f\n\t"
      "ldr r8, [r0]\n\t"
      "ldr r7, [lr, #28]\n\t"
      "add r0, r0, r1\n\t"
      "pkhbt r9, r7, r8, lsl #16\n\t"
      "pkhtb r10, r8, r7, asr #16\n\t" W4_STORE(", #4")
      "2:\n\t"
      "ldr r7, [lr, #20]\n\t"
      "add r6, r2, r7, lsl #3\n\t"
      "cmp r2, r6\n\t"
      "beq 4f\n\t"
      "3:\n\t"
      "ldr r7, [r0]\n\t"
      "ldr r8, [r0, r1]\n\t"
      "add r0, r0, r1, lsl #1\n\t"
      "ldr r9, [r0]\n\t"
      "ldr r10, [r0, r1]\n\t"
      "add r0, r0, r1, lsl #1\n\t"
      "pkhbt r11, r7, r8, lsl #16\n\t"
      "pkhtb r7, r8, r7, asr #16\n\t"
      "pkhbt r8, r9, r10, lsl #16\n\t"
      "pkhtb r9, r10, r9, asr #16\n\t"
      "sxtb16 r10, r11\n\t"
      "sxtb16 r12, r8\n\t"
      "strd r10, r12, [r2], #8\n\t"
      "sxtb16 r10, r11, ror #8\n\t"
      "sxtb16 r12, r8, ror #8\n\t"
      "strd r10, r12, [r3], #8\n\t"
      "sxtb16 r10, r7\n\t"
      "sxtb16 r12, r9\n\t"
      "strd r10, r12, [r4], #8\n\t"
      "sxtb16 r10, r7, ror #8\n\t"
      "sxtb16 r12, r9, ror #8\n\t"
      "strd r10, r12, [r5], #8\n\t"
      "cmp r2, r6\n\t"
      "bne 3b\n\t"
      "4:\n\t"
      "ldr r6, [lr, #24]\n\t"
      "tst r6, #2\n\t"
      "beq 5f\n\t"
      "ldr r7, [r0]\n\t"
      "ldr r8, [r0, r1]\n\t"
      "add r0, r0, r1, lsl #1\n\t"
      "pkhbt r9, r7, r8, lsl #16\n\t"
      "pkhtb r10, r8, r7, asr #16\n\t" W4_STORE(", #4")
      "5:\n\t"
      "tst r6, #4\n\t"
      "beq 6f\n\t"
      "ldr r7, [r0]\n\t"
      "ldr r8, [lr, #28]\n\t"
      "pkhbt r9, r7, r8, lsl #16\n\t"
      "pkhtb r10, r8, r7, asr #16\n\t" W4_STORE("")
      "6:\n\t"
      "ldrd r0, r2, [lr, #0]\n\t"
      "ldrd r7, r8, [lr, #12]\n\t"
      "add r0, r0, r7\n\t"
      "add r2, r2, r8\n\t"
      "strd r0, r2, [lr, #0]\n\t"
      "ldr r7, [lr, #8]\n\t"
      "subs r7, r7, #1\n\t"
      "str r7, [lr, #8]\n\t"
      "bne 1b\n\t"
      "pop {r4-r11, lr}\n\t"
      : "+r"(j)
      :
      : "r1", "r2", "r3", "r12", "cc", "memory");
}

TA_NOINLINE static void build_rows4(const dw_ctx *x, const int8_t *s, int16_t *d, int32_t n, int32_t pitch) {
  const int32_t xa = x->xa, pairs = (x->xb - xa - (xa & 1)) >> 1;
  rows4_job j;
  j.s = s, j.d = (ta_i32a *)(void *)(d + (xa & ~1)), j.n = n;
  j.in_row_stride = x->in_row_stride, j.pitch_bytes = pitch * (int32_t)sizeof(int16_t);
  j.quads = pairs >> 1;
  j.extras = (xa & 1) | (pairs & 1) << 1 | ((x->xb - xa - (xa & 1)) & 1) << 2;
  j.zz = (int32_t)(0x01010101u * (uint8_t)-x->p->input_offset);
  j.plane_bytes = x->width * (int32_t)sizeof(int16_t), j.ps = x->in_pix_stride;
  widen_rows4(&j);
}
#else
/* `quads` passes of 4 columns from q (pixel stride ps) into channel planes d, d + w2, d + 2 w2,
 * d + 3 w2 (words); returns q past them. */
static const int8_t *widen_quads(const int8_t *q, int32_t ps, ta_i32a *d, int32_t w2, int32_t quads) {
  int32_t a0, a1, a2, a3, b0, b1, b2, b3;
  for (; quads > 0; --quads, d += 2, q += 4 * ps) {
    widen4(q, ps, &a0, &a1, &a2, &a3);
    widen4(q + 2 * ps, ps, &b0, &b1, &b2, &b3);
    d[0] = a0, d[1] = b0, d[w2] = a1, d[w2 + 1] = b1;
    d[2 * w2] = a2, d[2 * w2 + 1] = b2, d[3 * w2] = a3, d[3 * w2 + 1] = b3;
  }
  return q;
}

TA_NOINLINE static void build_rows4(const dw_ctx *x, const int8_t *s, int16_t *d, int32_t n, int32_t pitch) {
  const int32_t in_pix_stride = x->in_pix_stride, xa = x->xa, xb = x->xb, w2 = x->width >> 1;
  const int32_t pairs = (xb - xa - (xa & 1)) >> 1, lead = xa & 1, last = (xb - xa - lead) & 1;
  const int32_t zz = (int32_t)(0x01010101u * (uint8_t)-x->p->input_offset); /* 4 zero-point bytes */
  int32_t a0, a1, a2, a3;
  for (; n > 0; --n, s += x->in_row_stride, d += pitch) {
    const int8_t *q = s;
    ta_i32a *d0 = (ta_i32a *)(void *)(d + (xa & ~1)); /* an odd xa: the word with the zero point before it */
    if (lead) {
      const int32_t a = ta_read32(q), lo = pack_lo16(zz, a), hi = pack_hi16(zz, a);
      d0[0] = ta_sxtb16(lo), d0[w2] = sxtb16_odd(lo), d0[2 * w2] = ta_sxtb16(hi), d0[3 * w2] = sxtb16_odd(hi);
      ++d0, q += in_pix_stride;
    }
    q = widen_quads(q, in_pix_stride, d0, w2, pairs >> 1);
    d0 += pairs & ~1;
    if (pairs & 1) {
      widen4(q, in_pix_stride, &a0, &a1, &a2, &a3);
      d0[0] = a0, d0[w2] = a1, d0[2 * w2] = a2, d0[3 * w2] = a3;
      ++d0, q += 2 * in_pix_stride;
    }
    if (last) { /* the last column and the zero point after it (xb < width: xb - 1 is even) */
      const int32_t a = ta_read32(q), lo = pack_lo16(a, zz), hi = pack_hi16(a, zz);
      d0[0] = ta_sxtb16(lo), d0[w2] = sxtb16_odd(lo), d0[2 * w2] = ta_sxtb16(hi), d0[3 * w2] = sxtb16_odd(hi);
    }
  }
}
#endif

TA_NOINLINE static void build_rows2(const dw_ctx *x, const int8_t *s, int16_t *d, int32_t n, int32_t pitch) {
  const int32_t in_pix_stride = x->in_pix_stride, width = x->width, xa = x->xa, xb = x->xb;
  for (; n > 0; --n, s += x->in_row_stride, d += pitch) {
    const int8_t *q = s;
    int32_t col = xa;
    if (col & 1) d[col] = q[0], d[width + col] = q[1], ++col, q += in_pix_stride;
    for (; col + 2 <= xb; col += 2, q += 2 * in_pix_stride) {
      uint16_t a, b;
      int32_t v;
      memcpy(&a, q, 2), memcpy(&b, q + in_pix_stride, 2);
      v = pack_lo16(a, b);
      ta_write32(d + col, ta_sxtb16(v));
      ta_write32(d + width + col, sxtb16_odd(v));
    }
    if (col < xb) d[col] = q[0], d[width + col] = q[1];
  }
}

TA_NOINLINE static void build_rows1(const dw_ctx *x, const int8_t *s, int16_t *d, int32_t n, int32_t pitch) {
  const int32_t in_pix_stride = x->in_pix_stride, xa = x->xa, xb = x->xb;
  for (; n > 0; --n, s += x->in_row_stride, d += pitch) {
    const int8_t *q = s;
    int32_t col = xa;
    if (col & 1) d[col++] = q[0], q += in_pix_stride;
    for (; col + 4 <= xb; col += 4, q += 4 * in_pix_stride) { /* PKHBT: the low halves of two values */
      ta_write32(d + col, pack_lo16(q[0], q[in_pix_stride]));
      ta_write32(d + col + 2, pack_lo16(q[2 * in_pix_stride], q[3 * in_pix_stride]));
    }
    for (; col + 2 <= xb; col += 2, q += 2 * in_pix_stride) ta_write32(d + col, pack_lo16(q[0], q[in_pix_stride]));
    if (col < xb) d[col] = q[0];
  }
}

/* Fill n int16 with the zero point (n even, d 4-byte aligned). */
static void fill_zp(int16_t *d, int32_t n, int32_t zp) {
  ta_i32a *w = (ta_i32a *)(void *)d, *const end = w + (n >> 1);
  const int32_t zz = ta_pair16(zp, zp);
  while (w < end) *w++ = zz;
}

/* Input rows iy .. iy+n-1 of channels c0 .. c0+g-1 into consecutive slots (g plane rows each):
 * rows outside the input are the zero point, the others are built in one run. */
void ta_dw_load_rows(const dw_ctx *x, int32_t iy, int32_t n, int32_t c0, int32_t g, int16_t *slot) {
  const ta_dwconv_params *p = x->p;
  const int32_t pitch = g * x->width;
  const int32_t above = ta_min32(n, ta_max32(0, -iy)), inside = ta_max32(0, ta_min32(n, p->in_h - iy) - above);
  const int8_t *s = x->in + (iy + above) * x->in_row_stride + c0 + (x->xa - p->pad_left) * x->in_pix_stride;
  int16_t *d = slot + above * pitch;
  fill_zp(slot, above * pitch, -p->input_offset);
  if (inside > 0) {
    if (g == 4) {
      build_rows4(x, s, d, inside, pitch);
    } else {
      if (g >= 2) build_rows2(x, s, d, inside, pitch);
      if (g & 1) build_rows1(x, s + g - 1, d + (g - 1) * x->width, inside, pitch);
    }
  }
  fill_zp(d + inside * pitch, (n - above - inside) * pitch, -p->input_offset);
}

/* The zero-point columns of the plane rows the scratch holds (rows written later only touch
 * [xa, xb), zero-point rows their whole width; a window's rows are plane rows of this layout
 * whatever its group size). */
void ta_dw_fill_borders(const dw_ctx *x) {
  const int16_t zp = (int16_t)-x->p->input_offset;
  const int32_t nrows = (int32_t)(x->budget / ((size_t)x->width * sizeof(int16_t)));
  int16_t *row = x->plane;
  int32_t r, col;
  for (r = 0; r < nrows; ++r, row += x->width) {
    for (col = 0; col < x->xa; ++col) row[col] = zp;
    for (col = x->xb; col < x->width; ++col) row[col] = zp;
  }
}
#else
/* Nothing here without the SIMD path; ISO C wants a declaration in every translation unit. */
typedef int ta_depthwise_plane_not_compiled;
#endif
