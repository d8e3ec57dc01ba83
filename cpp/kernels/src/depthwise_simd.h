/*
 * Internal to DEPTHWISE_CONV_2D (depthwise.c, depthwise_simd.c, depthwise_plane.c, depthwise_asm.c,
 * depthwise_wide.c): the plane geometry the scratch size and the SIMD path share, the job the 3x3
 * row kernels and their assembly read, a group's context, and the entry points of the SIMD path,
 * the planes and the assembly. Invariant: the
 * assembly reads dw_job at the offsets its comments give (checked at compile time).
 */
#ifndef TA_DEPTHWISE_SIMD_H
#define TA_DEPTHWISE_SIMD_H

#include "tinyarena_kernels.h"
#include "ta_simd.h"
#include "ta_mve.h" /* TA_MVE: TA_DW_CHANNELS_BUILT */

/* Plane geometry for output rows [y0, y1): rows of the padded input window and its width,
 * rounded up to even so that every plane row starts on a 4-byte boundary (aligned pair loads). */
static inline int32_t kw_padded(const ta_dwconv_params *p) { return (p->kernel_w + 1) & ~1; }
static inline int32_t plane_rows(const ta_dwconv_params *p, int32_t y0, int32_t y1) {
  return (y1 - y0 - 1) * p->stride_h + (p->kernel_h - 1) * p->dilation_h + 1;
}
static inline int32_t plane_width(const ta_dwconv_params *p) {
  return ((p->out_w - 1) * p->stride_w + (kw_padded(p) - 1) * p->dilation_w + 2) & ~1;
}

/* Output channel oc's TA_PACKED_S16 depthwise words (per kernel row, kw_padded doubled int16
 * values, the last 0 for an odd kernel_w) from the TFLite layout [1][kh][kw][out_c]. */
static inline void ta_dw_pack_channel(const int8_t *w, int32_t out_c, int32_t oc, int32_t kernel_h, int32_t kernel_w,
                                      int16_t *d) {
  const int8_t *tap = w + oc; /* taps are out_c apart, row after row */
  int32_t y, x;
  for (y = 0; y < kernel_h; ++y) {
    for (x = 0; x < kernel_w; ++x, tap += out_c) *d++ = (int16_t)(2 * *tap);
    if (kernel_w & 1) *d++ = 0;
  }
}

/* The row-kernel families the DSP build compiles. The generated Makefile sets a family to 0
 * (-DTA_DW_WIDE5_S1=0, ...) when no layer of the model reaches it, so --gc-sections drops its code
 * (op_params::kernel_variants decides, from the same conditions as below); unset, a family is
 * compiled. A family compiled out hands its layers on to a more general one, so every set of
 * families gives the same bytes: 3x3 (TA_DW_3X3_S1/S2) and 5x5/7x7 (TA_DW_WIDE5/7_S1/S2), one
 * family per stride, to the generic rows (TA_DW_GENERIC), and a layer the SIMD families left
 * cannot run (ta_dw_simd_covers) to the portable path (TA_DW_PORTABLE: in a DSP build without
 * Helium only; 0 when every layer runs the SIMD path). TA_DW_3X3_S1/S2_ASM: the 3x3 rows'
 * assembly per stride (depthwise_asm.c), reached only by layers of its stride's family with all of
 * int8 as the activation range (dw_ctx.asm_layer); 0 hands them to the same sums in C. The portable
 * and Helium builds compile their own paths whatever is set. */
#ifndef TA_DW_3X3_S1
#define TA_DW_3X3_S1 1
#endif
#ifndef TA_DW_3X3_S2
#define TA_DW_3X3_S2 1
#endif
#define TA_DW_3X3 (TA_DW_3X3_S1 || TA_DW_3X3_S2)
#ifndef TA_DW_3X3_S1_ASM
#define TA_DW_3X3_S1_ASM 1
#endif
#ifndef TA_DW_3X3_S2_ASM
#define TA_DW_3X3_S2_ASM 1
#endif
#define TA_DW_3X3_ASM (TA_DW_3X3_S1_ASM || TA_DW_3X3_S2_ASM)
#ifndef TA_DW_WIDE5_S1 /* TA_DW_WIDE5/7: one family per stride */
#define TA_DW_WIDE5_S1 1
#endif
#ifndef TA_DW_WIDE5_S2
#define TA_DW_WIDE5_S2 1
#endif
#ifndef TA_DW_WIDE7_S1
#define TA_DW_WIDE7_S1 1
#endif
#ifndef TA_DW_WIDE7_S2
#define TA_DW_WIDE7_S2 1
#endif
#define TA_DW_WIDE5 (TA_DW_WIDE5_S1 || TA_DW_WIDE5_S2)
#define TA_DW_WIDE7 (TA_DW_WIDE7_S1 || TA_DW_WIDE7_S2)
#ifndef TA_DW_GENERIC
#define TA_DW_GENERIC 1
#endif
#ifndef TA_DW_PORTABLE
#define TA_DW_PORTABLE 1
#endif

/* TA_DW_CHANNELS: one-dimensional kernels channel-parallel (depthwise_channels.c) on the layers
 * ta_dw_channels_applies picks (op_params::kernel_variants mirrors this; in place, where the
 * window does not fit, such a layer runs the generic rows). */
#ifndef TA_DW_CHANNELS
#define TA_DW_CHANNELS 1
#endif
/* Compiled on the DSP builds without Helium (a Helium build runs such layers on its own path, or
 * on the planes where that path does not apply). */
#define TA_DW_CHANNELS_BUILT (TA_SIMD && TA_DW_CHANNELS && !TA_MVE)
static inline int32_t ta_dw_channels_applies(const ta_dwconv_params *p) {
  const int32_t taps = TA_DW_LINE_TAPS(p->kernel_h, p->kernel_w);
  return TA_DW_CHANNELS_BUILT && p->depth_multiplier == 1 && p->in_c >= 4 && p->weights && !p->packed_weights &&
         p->simd_int8_weights && taps >= 1 && taps <= TA_DW_CHANNELS_MAX_TAPS && p->out_h > 0 && p->out_w > 0;
}

/* 3x3, equal strides 1 or 2, dilation 1: the 3x3 row kernels (when the stride's family is compiled). */
static inline int32_t ta_dw_fast3x3(const ta_dwconv_params *p) {
  return p->kernel_h == 3 && p->kernel_w == 3 && p->dilation_h == 1 && p->dilation_w == 1 &&
         p->stride_h == p->stride_w && (p->stride_w == 1 ? TA_DW_3X3_S1 : p->stride_w == 2 && TA_DW_3X3_S2);
}

/* Whether the SIMD families compiled run every channel of the layer (the generic rows run any). */
static inline int32_t ta_dw_simd_covers(const ta_dwconv_params *p) { return TA_DW_GENERIC || ta_dw_fast3x3(p); }

/* Whether the SIMD path has weights it can read: packed ones, or int8 ones it widens per channel. */
static inline int32_t ta_dw_simd_weights(const ta_dwconv_params *p) {
  return p->packed_weights != 0 ||
         (p->simd_int8_weights && p->kernel_h * (kw_padded(p) >> 1) <= TA_DW_INT8_MAX_WORDS);
}

/* One output channel's work for a run of output rows: constants, then where to read and write.
 * The 3x3 row kernels (and their assembly, which reads the fields at these offsets) compute the
 * DOUBLED accumulator from the doubled packed weights and requantize it with ta_rqd in
 * ADD, SMMLAR, ASR, SSAT. */
typedef struct dw_job {
  int32_t w[6];         /*  0: 3x3 weight words W0, z0, W1, z1, W2, z2, see dw_chan_weights */
  int32_t bias;         /* 24: accumulator start (input offset folded in; doubled when fast) */
  int32_t m, c, r;      /* 28: ta_rqd multiplier, constant, shift */
  int32_t out_pix_stride; /* 40: output pixel stride */
  const int16_t *row0;  /* 44: plane row of the first output row's first kernel row */
  int32_t in_skip;      /* 48: bytes from the end of a row's plane columns to the next row's start */
  int32_t out_skip;     /* 52: bytes from the end of a row's outputs to the next row's first */
  int8_t *out;          /* 56: first output of the first row */
  int32_t pitch;        /* 60: bytes from one kernel row to the next */
  int32_t quad_bytes;   /* 64: output bytes of a row's blocks of four, (n / 4) * 4 * out_pix_stride */
  int8_t *last;         /* 68: out + rows * out_step (the assembly's end) */
  int32_t n;            /* 72: outputs per row */
  int32_t end;          /* 76: the assembly's end of a row's blocks */
  int32_t in_step;      /* bytes from one output row's plane rows to the next's */
  int32_t out_step;     /* output row stride */
  int32_t rows;
  const ta_i32a *wq;    /* the channel's packed words */
  int32_t fast;         /* ta_rqd applies (else: undoubled accumulator, ta_multiply_by_quantized_multiplier) */
  int32_t use_asm;      /* fast, 3x3, all of int8 as range, output offset folded */
  int32_t qoo, oo, lo, hi, mult, shift;
  int32_t oc;           /* the output channel */
} dw_job;

#if TA_SIMD
/* PKHBT (a.lo, b.lo), PKHTB (a.hi, b.hi) as [lo half, hi half], and SXTB16 of bytes 1 and 3. */
#if TA_SIMD_NATIVE
TA_INLINE int32_t pack_lo16(int32_t a, int32_t b) {
  int32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
TA_INLINE int32_t pack_hi16(int32_t a, int32_t b) {
  int32_t r;
  __asm__("pkhtb %0, %2, %1, asr #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
TA_INLINE int32_t sxtb16_odd(int32_t x) {
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
#else
TA_INLINE int32_t pack_lo16(int32_t a, int32_t b) { return (int32_t)(((uint32_t)a & 0xFFFFu) | ((uint32_t)b << 16)); }
TA_INLINE int32_t pack_hi16(int32_t a, int32_t b) {
  return (int32_t)(((uint32_t)a >> 16) | ((uint32_t)b & 0xFFFF0000u));
}
TA_INLINE int32_t sxtb16_odd(int32_t x) { return ta_sxtb16_ror8(x); }
#endif

/* What one group of channels works on: the planes of `g` input channels for `slots` consecutive
 * input rows, slot-major: input row (first + s), channel j at plane + (s * g + j) * width. A
 * plane row holds the input row's columns -pad_left .. width - pad_left - 1 as raw int16; columns
 * outside [xa, xb) and rows outside the input hold the zero point, so (x + offset) is 0 there. */
typedef struct dw_ctx {
  const ta_dwconv_params *p;
  const int8_t *in;
  int8_t *out;
  int32_t in_pix_stride, in_row_stride, out_pix_stride, out_row_stride;
  int32_t fast3x3;  /* 3x3, equal strides 1 or 2, dilation 1: the row kernels below (the stride; else 0) */
  int32_t width;    /* plane row, int16 elements (even) */
  int32_t span;     /* input rows one output row reads */
  int32_t xa, xb;   /* plane columns holding input columns */
  int32_t inplace;  /* output written over the input (ta_depthwise_conv_s8_inplace) */
  int32_t words;    /* packed weight words per output channel */
  int32_t room;     /* |bias| below this: the doubled accumulator is exact (dw_chan_prepare) */
  int32_t asm_layer; /* fast3x3 and all of int8 as the activation range: the assembly's form */
  int32_t wide;     /* kernel 5 or 7 wide: ta_dw_wide_rows for channels on the doubled accumulator */
  int32_t transposed; /* p is the layer's transpose (dw_run_layer): weights transposed too */
  int16_t *plane;
  size_t budget;    /* scratch bytes */
} dw_ctx;


/* The planes (depthwise_plane.c): input rows iy .. iy+n-1 of channels c0 .. c0+g-1 into
 * consecutive window slots (g plane rows each; rows outside the input are the zero point), and
 * the zero-point columns of every plane row the scratch holds. */
void ta_dw_load_rows(const dw_ctx *x, int32_t iy, int32_t n, int32_t c0, int32_t g, int16_t *slot);
void ta_dw_fill_borders(const dw_ctx *x);
#endif

#if TA_SIMD
/* The SIMD path (depthwise_simd.c): packed weights, rows [y0, y1) (y1 > y0), out of place or
 * (ta_depthwise_conv_s8_inplace) over the input; `scratch` holds `budget` bytes (what the
 * scratch-size function of the entry point gives). */
void ta_depthwise_conv_s8_simd(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                               void *scratch, size_t budget);
void ta_depthwise_conv_s8_inplace_simd(const ta_dwconv_params *p, int8_t *buf, void *scratch, size_t budget);

/* 5x5 and 7x7 kernels, stride_w 1 or 2, dilation 1, at least 2 outputs a row (depthwise_wide.c):
 * whether they apply, and a job's rows for a channel on the doubled accumulator (job.fast). */
int32_t ta_dw_wide_applies(const ta_dwconv_params *p);
void ta_dw_wide_rows(const ta_dwconv_params *p, const dw_job *j);
#endif

#if TA_DW_CHANNELS_BUILT
/* A ta_dw_channels_applies layer (depthwise_channels.c): output rows [y0, y1) out of place; in
 * place the whole layer, or 0 (nothing done) when its window does not fit the in-place scratch. */
void ta_dw_channels(const ta_dwconv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1);
int32_t ta_dw_channels_inplace(const ta_dwconv_params *p, int8_t *buf, void *scratch);
#endif

#if TA_SIMD_NATIVE
/* The 3x3 stride 1 and stride 2 row kernels in assembly (depthwise_asm.c), for jobs with use_asm. */
void ta_dw3x3s1_asm(dw_job *job);
void ta_dw3x3s2_asm(dw_job *job);
#endif

#endif /* TA_DEPTHWISE_SIMD_H */
