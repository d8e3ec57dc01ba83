/*
 * Host-side weight packing into the TA_PACKED_S16 formats the SIMD paths read (see the
 * "Packed weights" section of tinyarena_kernels.h). Plain C, usable by a generator at build
 * time or by tests; nothing here runs on the target.
 */
#include "tinyarena_kernels.h"
#include "ta_simd.h"
#include "depthwise_simd.h"

size_t ta_pack_gemm_weights_s16_bytes(int32_t n, int32_t k) {
  return (size_t)n * (size_t)((k + 3) & ~3) * sizeof(int16_t);
}

/* What a conv channel's weights are multiplied by in its packed form: 2 in a doubled layer, 0 for
 * its constant channels (ta_conv_s8_rq_records gives them a constant record), else 1. */
static int32_t conv_weight_scale(const ta_conv_params *p, int32_t oc) {
  int32_t value;
  if (!p || !p->packed_doubled) return 1;
  return ta_conv_s8_constant_channel(p, oc, &value) ? 0 : 2;
}

/* The GEMM packing of w + weights_offset, each conv channel times conv_weight_scale(conv, n). */
static void pack_gemm(const int8_t *w, int32_t n, int32_t k, int32_t weights_offset, const ta_conv_params *conv,
                      int16_t *packed) {
  const int32_t kq = (k + 3) & ~3;
  int32_t c, t, ch;
  int16_t *d = packed;
  for (c = 0; c < n; c += 2) {
    const int32_t channels = c + 1 < n ? 2 : 1;
    const int32_t scale[2] = {conv_weight_scale(conv, c), channels > 1 ? conv_weight_scale(conv, c + 1) : 0};
    for (t = 0; t < kq / 2; ++t) {
      const int32_t k0 = ta_gemm_pair_k0(t); /* word t holds k values k0 and k0 + 2 */
      for (ch = 0; ch < channels; ++ch) {
        const int8_t *row = w + (size_t)(c + ch) * k;
        *d++ = (int16_t)(k0 < k ? (row[k0] + weights_offset) * scale[ch] : 0);
        *d++ = (int16_t)(k0 + 2 < k ? (row[k0 + 2] + weights_offset) * scale[ch] : 0);
      }
    }
  }
}

void ta_pack_gemm_weights_s16(const int8_t *w, int32_t n, int32_t k, int32_t weights_offset, int16_t *packed) {
  pack_gemm(w, n, k, weights_offset, NULL, packed);
}

int ta_conv_s8_can_double(const ta_conv_params *p) {
  const int32_t k = p->kernel_h * p->kernel_w * p->in_c;
  int32_t oc, i, value;
  for (oc = 0; oc < p->out_c; ++oc) {
    const int32_t m = p->out_mult[oc], shift = p->out_shift[oc];
    const int8_t *const w = p->weights + (size_t)oc * k;
    int64_t bound = p->bias ? p->bias[oc] : 0; /* |undoubled accumulator| <= |bias| + 255 * sum |w| */
    if (ta_conv_s8_constant_channel(p, oc, &value)) continue; /* packed as zeros */
    bound = bound < 0 ? -bound : bound;
    for (i = 0; i < k; ++i) bound += 255 * (w[i] < 0 ? -w[i] : w[i]);
    if (bound >= ((int64_t)1 << 30) || m <= (1 << 30) || shift > -1 || shift < -31) return 0;
  }
  return 1;
}

void ta_conv_s8_pack_weights(const ta_conv_params *p, int16_t *packed) {
  pack_gemm(p->weights, p->out_c, p->kernel_h * p->kernel_w * p->in_c, 0, p, packed);
}

size_t ta_conv_s8_pack_weights_s8_bytes(int32_t n, int32_t k) {
  return (size_t)((n + 1) & ~1) * (size_t)((k + 3) & ~3);
}

void ta_conv_s8_pack_weights_s8(const ta_conv_params *p, int8_t *packed) {
  const int32_t n = p->out_c, k = p->kernel_h * p->kernel_w * p->in_c, kq = (k + 3) & ~3;
  int32_t c, t, ch, h;
  int8_t *d = packed;
  for (c = 0; c < n; c += 2) {
    const int32_t live[2] = {conv_weight_scale(p, c) != 0, c + 1 < n && conv_weight_scale(p, c + 1) != 0};
    for (t = 0; t < kq / 2; ++t)
      for (h = 0; h < 2; ++h) { /* k0 (SXTB16's low half), then k0 + 2 */
        const int32_t kk = ta_gemm_pair_k0(t) + 2 * h;
        for (ch = 0; ch < 2; ++ch) *d++ = (int8_t)(live[ch] && kk < k ? p->weights[(size_t)(c + ch) * k + kk] : 0);
      }
  }
}

size_t ta_pack_dw_weights_s16_bytes(int32_t out_c, int32_t kernel_h, int32_t kernel_w) {
  return (size_t)out_c * (size_t)kernel_h * (size_t)((kernel_w + 1) & ~1) * sizeof(int16_t);
}

void ta_pack_dw_weights_s16(const int8_t *w, int32_t out_c, int32_t kernel_h, int32_t kernel_w, int16_t *packed) {
  const int32_t words = kernel_h * (((kernel_w + 1) & ~1) >> 1);
  int32_t c;
  for (c = 0; c < out_c; ++c) ta_dw_pack_channel(w, out_c, c, kernel_h, kernel_w, packed + (size_t)c * words * 2);
}
