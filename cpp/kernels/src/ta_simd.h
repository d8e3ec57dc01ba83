/*
 * Internal: the few 2x16-bit SIMD operations the fast paths use.
 *
 * - On a core with the DSP extension (__ARM_FEATURE_DSP: Cortex-M4/M7/M33/M55) they map to ACLE
 *   intrinsics from <arm_acle.h> (no CMSIS).
 * - With TA_SIMD_EMULATE they are plain C with the same results, so the SIMD-structured code
 *   (packing, pairing, loop order) is tested bit-exact on the host.
 * - Otherwise (or with TA_NO_SIMD) TA_SIMD is 0 and only the portable kernels are compiled.
 */
#ifndef TA_SIMD_H
#define TA_SIMD_H

#include <stdint.h>
#include <string.h>

#include "tinyarena_kernels.h"

#if TA_KERNELS_SIMD && !defined(TA_SIMD_EMULATE)
#include <arm_acle.h>
#define TA_SIMD 1
#define TA_SIMD_NATIVE 1
static inline __attribute__((always_inline)) int32_t ta_smlad(int32_t a, int32_t b, int32_t acc) {
  return __smlad(a, b, acc);
}
/* (sign-extended bytes 0 and 2, bytes 1 and 3) of a word. */
static inline __attribute__((always_inline)) int32_t ta_sxtb16(int32_t x) { return __sxtb16(x); }
static inline __attribute__((always_inline)) int32_t ta_sxtb16_ror8(int32_t x) { 
  return __sxtb16((int32_t)(((uint32_t)x >> 8) | ((uint32_t)x << 24)));
}
static inline __attribute__((always_inline)) int32_t ta_sadd16(int32_t a, int32_t b) { return __sadd16(a, b); }
/* acc + lo(a)*lo(b) / hi(a)*lo(b) / lo(a)*hi(b) + hi(a)*lo(b) (SMLABB, SMLATB, SMLADX). */
static inline __attribute__((always_inline)) int32_t ta_smlabb(int32_t a, int32_t b, int32_t acc) {
  return __smlabb(a, b, acc);
}
static inline __attribute__((always_inline)) int32_t ta_smlatb(int32_t a, int32_t b, int32_t acc) {
  return __smlatb(a, b, acc);
}
static inline __attribute__((always_inline)) int32_t ta_smladx(int32_t a, int32_t b, int32_t acc) {
  return __smladx(a, b, acc);
}
/* acc + hi(a)*hi(b) (SMLATT). */
static inline __attribute__((always_inline)) int32_t ta_smlatt(int32_t a, int32_t b, int32_t acc) {
  return __smlatt(a, b, acc);
}
/* a + ta_sxtb16(x) / a + ta_sxtb16_ror8(x), lane by lane (SXTAB16, one instruction each). */
static inline __attribute__((always_inline)) int32_t ta_sxtab16(int32_t a, int32_t x) { return __sxtab16(a, x); }
static inline __attribute__((always_inline)) int32_t ta_sxtab16_ror8(int32_t a, int32_t x) {
  int32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(x));
  return r;
}
/* x saturated to [-128, 127] (SSAT #8). */
static inline __attribute__((always_inline)) int32_t ta_ssat8(int32_t x) { return __ssat(x, 8); }
#elif TA_KERNELS_SIMD
#define TA_SIMD 1
#define TA_SIMD_NATIVE 0
static inline int32_t ta_lo16(int32_t x) { return (int32_t)(int16_t)(uint16_t)((uint32_t)x & 0xFFFFu); }
static inline int32_t ta_hi16(int32_t x) { return (int32_t)(int16_t)(uint16_t)((uint32_t)x >> 16); }
static inline int32_t ta_pack16(int32_t lo, int32_t hi) {
  return (int32_t)(((uint32_t)lo & 0xFFFFu) | ((uint32_t)hi << 16));
}
static inline int32_t ta_smlad(int32_t a, int32_t b, int32_t acc) {
  uint32_t r = (uint32_t)acc + (uint32_t)(ta_lo16(a) * ta_lo16(b)) + (uint32_t)(ta_hi16(a) * ta_hi16(b));
  return (int32_t)r;
}
static inline int32_t ta_sxtb16(int32_t x) {
  uint32_t u = (uint32_t)x;
  return ta_pack16((int8_t)(u & 0xFF), (int8_t)((u >> 16) & 0xFF));
}
static inline int32_t ta_sxtb16_ror8(int32_t x) {
  uint32_t u = (uint32_t)x;
  return ta_pack16((int8_t)((u >> 8) & 0xFF), (int8_t)((u >> 24) & 0xFF));
}
static inline int32_t ta_sadd16(int32_t a, int32_t b) {
  return ta_pack16(ta_lo16(a) + ta_lo16(b), ta_hi16(a) + ta_hi16(b));
}
static inline int32_t ta_smlabb(int32_t a, int32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)(ta_lo16(a) * ta_lo16(b)));
}
static inline int32_t ta_smlatb(int32_t a, int32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)(ta_hi16(a) * ta_lo16(b)));
}
static inline int32_t ta_smladx(int32_t a, int32_t b, int32_t acc) {
  return ta_smlad(a, ta_pack16(ta_hi16(b), ta_lo16(b)), acc);
}
static inline int32_t ta_smlatt(int32_t a, int32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)(ta_hi16(a) * ta_hi16(b)));
}
static inline int32_t ta_sxtab16(int32_t a, int32_t x) { return ta_sadd16(a, ta_sxtb16(x)); }
static inline int32_t ta_sxtab16_ror8(int32_t a, int32_t x) { return ta_sadd16(a, ta_sxtb16_ror8(x)); }
static inline int32_t ta_ssat8(int32_t x) { return x < -128 ? -128 : (x > 127 ? 127 : x); }
#else
#define TA_SIMD 0
#define TA_SIMD_NATIVE 0
#endif

/* A 32-bit type that may alias int16/int8 data (SIMD words read from int16 buffers). Buffers
 * read through it (column buffers, packed weights) must be 4-byte aligned. */
#if defined(__GNUC__)
typedef int32_t __attribute__((may_alias)) ta_i32a;
#else
typedef int32_t ta_i32a;
#endif

/* Unaligned-safe 32-bit load/store (one LDR/STR on Cortex-M4, which allows unaligned LDR). */
static inline int32_t ta_read32(const void *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline void ta_write32(void *p, int32_t v) { memcpy(p, &v, 4); }

/* Pack two int16 values into one SIMD word (lo first in memory on little-endian). */
static inline int32_t ta_pair16(int32_t lo, int32_t hi) {
  return (int32_t)(((uint32_t)lo & 0xFFFFu) | ((uint32_t)hi << 16));
}

/* TA_PACKED_S16 GEMM order: K is padded to a multiple of 4 and each group of 4 values
 * (k0..k3) forms the SIMD words (k0, k2) and (k1, k3) -- exactly what SXTB16 and SXTB16 ROR 8 give
 * for 4 loaded bytes, so inputs widen without repacking. Word t holds k values
 * ta_gemm_pair_k0(t) and that + 2; value k sits in word ta_gemm_word(k), half ta_gemm_half(k). */
static inline int32_t ta_gemm_pair_k0(int32_t t) { return ((t >> 1) << 2) + (t & 1); }
static inline int32_t ta_gemm_word(int32_t k) { return ((k >> 2) << 1) + (k & 1); }
static inline int32_t ta_gemm_half(int32_t k) { return (k >> 1) & 1; }

#endif /* TA_SIMD_H */
