/*
 * Host-side weight packing into the TA_PACKED_S16 formats the SIMD paths read (see the
 * "Packed weights" section of tinyarena_kernels.h). Plain C, usable by a generator at build
 * time or by tests; nothing here runs on the target.
 */
#include "tinyarena_kernels.h"
#include "ta_simd.h"

size_t ta_pack_gemm_weights_s16_bytes(int32_t n, int32_t k) {
  return (size_t)n * (size_t)((k + 3) & ~3) * sizeof(int16_t);
}

void ta_pack_gemm_weights_s16(const int8_t *w, int32_t n, int32_t k, int32_t weights_offset, int16_t *packed) {
  const int32_t kq = (k + 3) & ~3;
  int32_t c, t, ch;
  int16_t *d = packed;
  for (c = 0; c < n; c += 2) {
    const int32_t channels = c + 1 < n ? 2 : 1;
    for (t = 0; t < kq / 2; ++t) {
      const int32_t k0 = ta_gemm_pair_k0(t); /* word t holds k values k0 and k0 + 2 */
      for (ch = 0; ch < channels; ++ch) {
        const int8_t *row = w + (size_t)(c + ch) * k;
        *d++ = (int16_t)(k0 < k ? row[k0] + weights_offset : 0);
        *d++ = (int16_t)(k0 + 2 < k ? row[k0 + 2] + weights_offset : 0);
      }
    }
  }
}

size_t ta_pack_dw_weights_s16_bytes(int32_t out_c, int32_t kernel_h, int32_t kernel_w) {
  return (size_t)out_c * (size_t)kernel_h * (size_t)((kernel_w + 1) & ~1) * sizeof(int16_t);
}

void ta_pack_dw_weights_s16(const int8_t *w, int32_t out_c, int32_t kernel_h, int32_t kernel_w, int16_t *packed) {
  const int32_t kwp = (kernel_w + 1) & ~1;
  int32_t c, y, x;
  int16_t *d = packed;
  for (c = 0; c < out_c; ++c)
    for (y = 0; y < kernel_h; ++y)
      for (x = 0; x < kwp; ++x) *d++ = (int16_t)(x < kernel_w ? 2 * w[(y * kernel_w + x) * out_c + c] : 0);
}

int ta_kernels_simd_enabled(void) { return TA_SIMD; }
