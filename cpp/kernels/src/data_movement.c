/*
 * Data movement kernels (int8, value-preserving): PAD, CONCATENATION (and PACK), SPLIT (and
 * SPLIT_V, UNPACK), GATHER, TRANSPOSE, STRIDED_SLICE, TILE, RESIZE_NEAREST_NEIGHBOR. Shapes of
 * rank < 6 are right-aligned internally.
 */
#include <math.h>
#include <string.h>

#include "tinyarena_kernels.h"

/* Right-align a shape of rank n into 6 dims with leading 1s. */
static void to6(int32_t n, const int32_t *in, int32_t *out, int32_t fill) {
  int32_t i, k = TA_MAX_DIMS - n;
  for (i = 0; i < TA_MAX_DIMS; ++i) out[i] = i < k ? fill : in[i - k];
}

static void strides6(const int32_t *shape, int32_t *st) {
  int32_t s = 1, i;
  for (i = TA_MAX_DIMS - 1; i >= 0; --i) {
    st[i] = s;
    s *= shape[i];
  }
}

/* ------------------------------------------------------------------------------- PAD */
static void pad_rec(const int32_t *ish, const int32_t *bef, const int32_t *osh, const int32_t *ist,
                    const int32_t *ost, int32_t d, const int8_t *in, int8_t *out, int8_t v) {
  int32_t i;
  if (d == TA_MAX_DIMS - 1) {
    memset(out, v, (size_t)bef[d]);
    memcpy(out + bef[d], in, (size_t)ish[d]);
    memset(out + bef[d] + ish[d], v, (size_t)(osh[d] - bef[d] - ish[d]));
    return;
  }
  for (i = 0; i < osh[d]; ++i) {
    if (i < bef[d] || i >= bef[d] + ish[d])
      memset(out + (size_t)i * ost[d], v, (size_t)ost[d]);
    else
      pad_rec(ish, bef, osh, ist, ost, d + 1, in + (size_t)(i - bef[d]) * ist[d], out + (size_t)i * ost[d], v);
  }
}

void ta_pad_s8(const ta_pad_params *p, const int8_t *input, int8_t *output) {
  int32_t ish[TA_MAX_DIMS], bef[TA_MAX_DIMS], aft[TA_MAX_DIMS], osh[TA_MAX_DIMS], ist[TA_MAX_DIMS], ost[TA_MAX_DIMS];
  int32_t i;
  to6(p->ndims, p->in_shape, ish, 1);
  to6(p->ndims, p->before, bef, 0);
  to6(p->ndims, p->after, aft, 0);
  for (i = 0; i < TA_MAX_DIMS; ++i) osh[i] = bef[i] + ish[i] + aft[i];
  strides6(ish, ist);
  strides6(osh, ost);
  pad_rec(ish, bef, osh, ist, ost, 0, input, output, (int8_t)p->pad_value);
}

/* ----------------------------------------------------------------- CONCATENATION/SPLIT */
void ta_concat_s8(const ta_concat_params *p, const int8_t *const *inputs, int8_t *output) {
  int32_t o, i;
  for (o = 0; o < p->outer_size; ++o) {
    for (i = 0; i < p->num_inputs; ++i) {
      const int32_t n = p->copy_sizes[i];
      memcpy(output, inputs[i] + (size_t)o * n, (size_t)n);
      output += n;
    }
  }
}

void ta_split_s8(const ta_split_params *p, const int8_t *input, int8_t *const *outputs) {
  int32_t o, i;
  for (o = 0; o < p->outer_size; ++o) {
    for (i = 0; i < p->num_outputs; ++i) {
      const int32_t n = p->copy_sizes[i];
      memcpy(outputs[i] + (size_t)o * n, input, (size_t)n);
      input += n;
    }
  }
}

/* ---------------------------------------------------------------------------- GATHER */
void ta_gather_s8(const ta_gather_params *p, const int8_t *input, int8_t *output) {
  const size_t inner = (size_t)p->inner_size;
  int32_t o, j;
  for (o = 0; o < p->outer_size; ++o) {
    const int8_t *block = input + (size_t)o * p->axis_size * inner;
    for (j = 0; j < p->num_indices; ++j) {
      memcpy(output, block + (size_t)p->indices[j] * inner, inner);
      output += inner;
    }
  }
}

/* ------------------------------------------------------------------------- TRANSPOSE */
void ta_transpose_s8(const ta_transpose_params *p, const int8_t *input, int8_t *output) {
  int32_t ish[TA_MAX_DIMS], ist[TA_MAX_DIMS], perm[TA_MAX_DIMS], osh[TA_MAX_DIMS], s[TA_MAX_DIMS];
  int32_t k = TA_MAX_DIMS - p->ndims, i, i0, i1, i2, i3, i4, i5;
  to6(p->ndims, p->in_shape, ish, 1);
  strides6(ish, ist);
  for (i = 0; i < TA_MAX_DIMS; ++i) perm[i] = i < k ? i : p->perm[i - k] + k;
  for (i = 0; i < TA_MAX_DIMS; ++i) {
    osh[i] = ish[perm[i]];
    s[i] = ist[perm[i]];
  }
  for (i0 = 0; i0 < osh[0]; ++i0)
    for (i1 = 0; i1 < osh[1]; ++i1)
      for (i2 = 0; i2 < osh[2]; ++i2)
        for (i3 = 0; i3 < osh[3]; ++i3)
          for (i4 = 0; i4 < osh[4]; ++i4) {
            const int8_t *b = input + i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3] + i4 * s[4];
            for (i5 = 0; i5 < osh[5]; ++i5) *output++ = b[i5 * s[5]];
          }
}

/* --------------------------------------------------------------------- STRIDED_SLICE */
void ta_strided_slice_s8(const ta_slice_params *p, const int8_t *input, int8_t *output) {
  int32_t ish[TA_MAX_DIMS], ist[TA_MAX_DIMS], st[TA_MAX_DIMS], sp[TA_MAX_DIMS], cn[TA_MAX_DIMS];
  int32_t i0, i1, i2, i3, i4, i5;
  to6(p->ndims, p->in_shape, ish, 1);
  to6(p->ndims, p->start, st, 0);
  to6(p->ndims, p->step, sp, 1);
  to6(p->ndims, p->count, cn, 1);
  strides6(ish, ist);
  for (i0 = 0; i0 < cn[0]; ++i0)
    for (i1 = 0; i1 < cn[1]; ++i1)
      for (i2 = 0; i2 < cn[2]; ++i2)
        for (i3 = 0; i3 < cn[3]; ++i3)
          for (i4 = 0; i4 < cn[4]; ++i4) {
            const int8_t *b = input + (st[0] + i0 * sp[0]) * ist[0] + (st[1] + i1 * sp[1]) * ist[1] +
                              (st[2] + i2 * sp[2]) * ist[2] + (st[3] + i3 * sp[3]) * ist[3] +
                              (st[4] + i4 * sp[4]) * ist[4] + st[5];
            for (i5 = 0; i5 < cn[5]; ++i5) *output++ = b[i5 * sp[5]];
          }
}

/* ------------------------------------------------------------------------------ TILE */
/* Writes the block of output dims d.. that input block `in` tiles into, then returns: the input's
 * dim-d rows are tiled one by one into the first ish[d] output rows, and that run of rows is
 * copied multiples[d] - 1 times after itself (out[.., i, ..] = in[.., i mod ish[d], ..]). */
static void tile_rec(const int32_t *ish, const int32_t *mul, const int32_t *ist, const int32_t *ost, int32_t d,
                     const int8_t *in, int8_t *out) {
  const size_t run = (size_t)ish[d] * (size_t)ost[d];
  int32_t i;
  if (d == TA_MAX_DIMS - 1) {
    memcpy(out, in, (size_t)ish[d]);
  } else {
    for (i = 0; i < ish[d]; ++i) tile_rec(ish, mul, ist, ost, d + 1, in + (size_t)i * ist[d], out + (size_t)i * ost[d]);
  }
  for (i = 1; i < mul[d]; ++i) memcpy(out + (size_t)i * run, out, run);
}

void ta_tile_s8(const ta_tile_params *p, const int8_t *input, int8_t *output) {
  int32_t ish[TA_MAX_DIMS], mul[TA_MAX_DIMS], osh[TA_MAX_DIMS], ist[TA_MAX_DIMS], ost[TA_MAX_DIMS];
  int32_t i;
  to6(p->ndims, p->in_shape, ish, 1);
  to6(p->ndims, p->multiples, mul, 1);
  for (i = 0; i < TA_MAX_DIMS; ++i) {
    if (ish[i] == 0 || mul[i] == 0) return; /* an empty output */
    osh[i] = ish[i] * mul[i];
  }
  strides6(ish, ist);
  strides6(osh, ost);
  tile_rec(ish, mul, ist, ost, 0, input, output);
}

/* ------------------------------------------------------------ RESIZE_NEAREST_NEIGHBOR */
/* TFLite GetNearestNeighbor, in float like the reference kernel. */
static int32_t nearest(int32_t v, int32_t in_size, int32_t out_size, int32_t align, int32_t half) {
  const float scale = (align && out_size > 1) ? (float)(in_size - 1) / (float)(out_size - 1)
                                              : (float)in_size / (float)out_size;
  const float offset = half ? 0.5f : 0.0f;
  int32_t r = align ? (int32_t)roundf(((float)v + offset) * scale) : (int32_t)floorf(((float)v + offset) * scale);
  if (r > in_size - 1) r = in_size - 1;
  if (half && r < 0) r = 0;
  return r;
}

void ta_resize_nearest_s8(const ta_resize_params *p, const int8_t *input, int8_t *output) {
  const int32_t C = p->channels;
  int32_t b, y, x;
  for (b = 0; b < p->batches; ++b) {
    const int8_t *ib = input + (size_t)b * p->in_h * p->in_w * C;
    for (y = 0; y < p->out_h; ++y) {
      const int32_t iy = nearest(y, p->in_h, p->out_h, p->align_corners, p->half_pixel_centers);
      for (x = 0; x < p->out_w; ++x) {
        const int32_t ix = nearest(x, p->in_w, p->out_w, p->align_corners, p->half_pixel_centers);
        memcpy(output, ib + ((size_t)iy * p->in_w + ix) * C, (size_t)C);
        output += C;
      }
    }
  }
}
