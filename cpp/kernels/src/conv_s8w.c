/*
 * CONV_2D, the SIMD path on int8 weights (TA_PACKED_S8; see conv.c for the semantics, conv_simd.c
 * for the int16-weight path): the weights stay int8 in flash and are widened in the MAC loop. Each
 * weight word holds one SIMD word of two channels (SXTB16 gives one, SXTB16 ROR 8 the other), and
 * every widened word serves 4 output pixels, so the column buffer (conv_im2col.c) has 4 slots:
 * per SIMD word 1 LDR + 2 SXTB16 of weights, 2 LDRD of inputs and 8 SMLAD (2 channels x 4
 * pixels). In a doubled layer (packed_doubled) the column holds 2 (x + offset), so the
 * accumulators are the doubled ones the ta_rqd records take. Pixels run in row-major order, 4 at
 * a time (a group may span rows; the last group of a call repeats its last pixel, whose outputs
 * are then written twice with the same bytes). Invariant: the bytes equal the portable path's.
 */
#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_simd.h"
#include "conv_simd.h"

#if TA_SIMD
/* 2 channels x 4 pixels over the column's nwords SIMD words: a[channel][pixel] += the products;
 * *pw moves past the pair's weights. */
TA_INLINE void mac_2x4(const int8_t **pw, const ta_i32a *col, int32_t nwords, int32_t a[2][4]) {
  const int8_t *wp = *pw;
  const ta_i32a *const end = col + TA_COL_SLOTS_S8 * nwords;
  int32_t j;
  for (; col < end; col += TA_COL_SLOTS_S8, wp += 4) {
    const int32_t r = ta_read32(wp), w0 = ta_sxtb16(r), w1 = ta_sxtb16_ror8(r);
    for (j = 0; j < TA_COL_SLOTS_S8; ++j) {
      a[0][j] = ta_smlad(w0, col[j], a[0][j]);
      a[1][j] = ta_smlad(w1, col[j], a[1][j]);
    }
  }
  *pw = wp;
}

/* Every output channel of the 4 pixels in the column buffer, for any records and activation
 * range (an odd last channel's partner has zero weights and is not stored). */
TA_INLINE void gemm_4px(const ta_conv_params *p, const ta_i32a *col, int32_t nwords, const conv_ch *ch,
                        int8_t *const o[4], int dbl, int full) {
  const int8_t *wp = p->packed_s8_weights;
  const int32_t out_c = p->out_c, oo = p->output_offset, lo = p->act_min, hi = p->act_max;
  int32_t oc, c, j;
  for (oc = 0; oc < out_c; oc += 2) {
    const int32_t channels = oc + 1 < out_c ? 2 : 1;
#if TA_S8W_ASM
    int32_t a[8]; /* pixel j, channel c: a[TA_S8W_ACC_INDEX(j, c)], the assembly's register order */
    for (j = 0; j < 4; ++j)
      a[TA_S8W_ACC_INDEX(j, 0)] = ch[oc].bias, a[TA_S8W_ACC_INDEX(j, 1)] = channels > 1 ? ch[oc + 1].bias : 0;
    wp = ta_conv_s8w_mac(a, wp, col); /* stops at the column's end mark */
    (void)nwords;
#define TA_ACC(c, j) a[TA_S8W_ACC_INDEX(j, c)]
#else
    int32_t a[2][4];
    for (j = 0; j < 4; ++j) a[0][j] = ch[oc].bias, a[1][j] = channels > 1 ? ch[oc + 1].bias : 0;
    mac_2x4(&wp, col, nwords, a);
#define TA_ACC(c, j) a[c][j]
#endif
    for (c = 0; c < channels; ++c)
      for (j = 0; j < 4; ++j)
        o[j][oc + c] = conv_out(&ch[oc + c], TA_ACC(c, j), oo, lo, hi, full, dbl);
#undef TA_ACC
  }
}

/* gemm_4px out of line, the doubling and the activation range read per output (one copy of the
 * loop: it runs only the layers the doubled loops do not take). */
static TA_NOINLINE void gemm_4px_general(const ta_conv_params *p, const ta_i32a *col, int32_t nwords,
                                         const conv_ch *ch, int8_t *const o[4]) {
  gemm_4px(p, col, nwords, ch, o, p->packed_doubled != 0, p->act_min == -128 && p->act_max == 127);
}

#if !TA_S8W_ASM
/* What the assembly loops compute, in C: per channel pair the 2x4 MAC loop and ta_rqd, or for a
 * constant pair (bias TA_CONSTANT_PAIR) its two values without the loop. */
static TA_NOINLINE void gemm_4px_doubled(const ta_s8w_job *job) {
  const int8_t *wp = job->wp;
  const conv_ch *ch = job->ch;
  int8_t *o0 = job->o0;
  const int32_t d[4] = {0, job->d1, job->d2, job->d3};
  int32_t c, j;
  for (; ch < job->end; ch += 2, o0 += 2) {
    int32_t a[2][4];
    if (ch[0].bias == TA_CONSTANT_PAIR) {
      for (j = 0; j < 4; ++j) o0[d[j]] = (int8_t)(ch[0].c >> 1), o0[d[j] + 1] = (int8_t)(ch[1].c >> 1);
      wp += job->pair_bytes;
      continue;
    }
    for (j = 0; j < 4; ++j) a[0][j] = ch[0].bias, a[1][j] = ch[1].bias;
    mac_2x4(&wp, job->col, job->pair_bytes / 4, a);
    for (c = 0; c < 2; ++c)
      for (j = 0; j < 4; ++j) o0[d[j] + c] = (int8_t)ta_ssat8(conv_ch_rqd(&ch[c], a[c][j]));
  }
}
#endif

/* Whether the doubled loops (assembly, or gemm_4px_doubled) can take the layer. */
static int doubled_loop_fits(const ta_conv_params *p, const conv_ch *chs) {
  int32_t oc;
  if (!p->packed_doubled || (p->out_c & 1) || p->act_min != -128 || p->act_max != 127) return 0;
  for (oc = 0; oc < p->out_c; ++oc)
    if (!rq_usable(&chs[oc], 1)) return 0;
  return 1;
}

/* How a layer's columns are built: pointwise with every tap inside the input and small patches
 * (1x1 ones too: in_c not a multiple of 4, or padding) widen two pixels per pass, the rest one
 * pixel at a time (TA_CONV_COL_PIXEL; op_params::kernel_variants mirrors this choice). */
enum { COLUMN_POINTWISE, COLUMN_SMALL_PATCH, COLUMN_PIXEL };

static int column_mode(const ta_conv_params *p) {
  if (p->kernel_h == 1 && p->kernel_w == 1 && (p->in_c & 3) == 0 && p->pad_top == 0 && p->pad_left == 0 &&
      (p->out_h - 1) * p->stride_h < p->in_h && (p->out_w - 1) * p->stride_w < p->in_w)
    return COLUMN_POINTWISE;
  if (p->kernel_h * p->kernel_w * p->in_c <= TA_SMALL_PATCH) return COLUMN_SMALL_PATCH;
  return COLUMN_PIXEL;
}

/* The column of the group's 4 pixels (py[j], px[j]) (slots 0..3). */
static void group_columns(const ta_conv_params *p, const int8_t *input, const ta_col_geom *g, int mode,
                          const int32_t py[4], const int32_t px[4], int16_t *col) {
  int32_t j;
  if (mode == COLUMN_POINTWISE) {
    for (j = 0; j < 4; j += 2)
      ta_conv_widen_pair(input + py[j] * p->stride_h * g->in_row_stride + px[j] * p->stride_w * g->in_pix_stride,
                         input + py[j + 1] * p->stride_h * g->in_row_stride +
                             px[j + 1] * p->stride_w * g->in_pix_stride,
                         p->in_c, col, j, g);
  } else if (mode == COLUMN_SMALL_PATCH) {
    ta_conv_small_patch_quad(p, input, g, py, px, col);
  } else if (TA_CONV_COL_PIXEL) {
    for (j = 0; j < 4; ++j) ta_conv_im2col_pixel(p, input, g, py[j], px[j], col, j);
  } else {
    TA_FAMILY_MISSING();
  }
}

/* The column of the 4 pixels (oy, ox + j) of one output row. */
static void row_group_columns(const ta_conv_params *p, const int8_t *input, const ta_col_geom *g, int mode, int32_t oy,
                              int32_t ox, int16_t *col) {
  int32_t py[4], px[4], j;
  if (mode == COLUMN_POINTWISE) {
    const int32_t step = p->stride_w * g->in_pix_stride; /* equally spaced: one pass */
    ta_conv_widen_quad(input + oy * p->stride_h * g->in_row_stride + ox * step, step, p->in_c, col, g);
    return;
  }
  for (j = 0; j < 4; ++j) py[j] = oy, px[j] = ox + j;
  group_columns(p, input, g, mode, py, px, col);
}

/* A group that does not fit in the rest of output row *oy: its 4 pixels from (*oy, *ox) on in
 * row-major order (past the call's rows the last pixel repeats), their outputs o[] and column;
 * moves (*oy, *ox) past them. */
static void spanning_group(const ta_conv_params *p, const int8_t *input, int8_t *output, const ta_col_geom *g, int mode,
                           int32_t out_row_stride, int32_t out_pix_stride, int32_t y1, int32_t *oy, int32_t *ox,
                           int8_t *o[4], int16_t *col) {
  int32_t py[4], px[4], j;
  for (j = 0; j < 4; ++j) {
    if (*oy < y1) {
      py[j] = *oy, px[j] = *ox, o[j] = output + *oy * out_row_stride + *ox * out_pix_stride;
      if (++*ox == p->out_w) *ox = 0, ++*oy;
    } else { /* past the call's rows: the last pixel again */
      py[j] = py[j - 1], px[j] = px[j - 1], o[j] = o[j - 1];
    }
  }
  group_columns(p, input, g, mode, py, px, col);
}

/* The doubled channel loop on one group: assembly, or the same in C. */
TA_INLINE void run_doubled(const ta_s8w_job *job) {
#if TA_S8W_ASM
  ta_conv_s8w_gemm_doubled(job);
#else
  gemm_4px_doubled(job);
#endif
}

void ta_conv_s8w_simd(const ta_conv_params *p, const int8_t *input, int8_t *output, int32_t y0, int32_t y1,
                      int16_t *col) {
  const int32_t in_pix_stride = TA_OR_DEFAULT(p->in_pix_stride, p->in_c);
  const int32_t in_row_stride = TA_OR_DEFAULT(p->in_row_stride, p->in_w * in_pix_stride);
  const int32_t out_pix_stride = TA_OR_DEFAULT(p->out_pix_stride, p->out_c);
  const int32_t out_row_stride = TA_OR_DEFAULT(p->out_row_stride, p->out_w * out_pix_stride);
  const int32_t nwords = ((p->kernel_h * p->kernel_w * p->in_c + 3) & ~3) >> 1; /* SIMD words per pixel, even */
  const ta_col_geom g = {in_row_stride, in_pix_stride, p->input_offset, TA_COL_SLOTS_S8, p->packed_doubled != 0};
  const conv_ch *const chs = (const conv_ch *)(const void *)p->rq_records;
  ta_i32a *const end_group = (ta_i32a *)col + TA_COL_SLOTS_S8 * nwords;
  const int mode = column_mode(p);
  int32_t oy = y0, ox = 0, j;
  int fast;
  ta_s8w_job row_job, span_job; /* groups inside one row (d_j = j out_pix_stride) and the others */
  for (j = 0; j < TA_COL_SLOTS_S8; ++j) end_group[j] = TA_COL_END_MARK;
  fast = doubled_loop_fits(p, chs);
  row_job.wp = p->packed_s8_weights;
  row_job.ch = chs;
  row_job.d1 = out_pix_stride, row_job.d2 = 2 * out_pix_stride, row_job.d3 = 3 * out_pix_stride;
  row_job.col = (const ta_i32a *)col;
  row_job.entry = TA_S8W_STEP_BYTES * ((8 - ((nwords - 1) & 7)) & 7); /* the first word runs before the loop */
  row_job.end = chs + p->out_c;
  row_job.pair_bytes = 4 * nwords;
  span_job = row_job;
  while (oy < y1) {
    int8_t *o[4];
    if (ox + 4 <= p->out_w) { /* the group inside one row */
      row_job.o0 = output + oy * out_row_stride + ox * out_pix_stride;
      row_group_columns(p, input, &g, mode, oy, ox, col);
      if ((ox += 4) == p->out_w) ox = 0, ++oy;
      if (fast) {
        run_doubled(&row_job);
        continue;
      }
      for (j = 0; j < 4; ++j) o[j] = row_job.o0 + j * out_pix_stride;
    } else {
      spanning_group(p, input, output, &g, mode, out_row_stride, out_pix_stride, y1, &oy, &ox, o, col);
      if (fast) {
        span_job.o0 = o[0];
        span_job.d1 = (int32_t)(o[1] - o[0]), span_job.d2 = (int32_t)(o[2] - o[0]), span_job.d3 = (int32_t)(o[3] - o[0]);
        run_doubled(&span_job);
        continue;
      }
    }
    if (TA_CONV_S8W_GENERAL) gemm_4px_general(p, (const ta_i32a *)col, nwords, chs, o);
    else TA_FAMILY_MISSING();
  }
}
#else
/* Nothing here without the SIMD path; ISO C wants a declaration in every translation unit. */
typedef int ta_conv_s8w_not_compiled;
#endif
