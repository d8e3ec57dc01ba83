/*
 * CONV_2D, the channel loops of layers with doubled weights (packed_doubled) in Cortex-M DSP
 * assembly (conv_simd.c picks them): per channel pair one block -- bias loads, the MAC loop
 * (TA_MAC_2X2_STEP, conv_simd.h) and per output ADD, SMMLAR, ASR, SSAT, STRB. Built only on a
 * core with the DSP extension in an optimised build (TA_CONV_ASM_LOOPS); elsewhere conv_simd.c
 * runs the same loop in C. Invariant: the bytes equal the C loop's.
 */
#include "tinyarena_kernels.h"
#include "ta_internal.h"
#include "ta_simd.h"
#include "conv_simd.h"

#if TA_CONV_ASM_LOOPS
/* One output: ta_rqd with m in w0, c in w1 and r - 1 in x0 ((y >> (r - 1)) >> 1 is y >> r), SSAT, STRB. */
#define TA_RQD_STEP(X, STORE)                        \
  "add %[x1], %[w1], %[" X "], asr #31\n\t"         \
  "smmlar %[x1], %[" X "], %[w0], %[x1]\n\t"        \
  "asr %[x1], %[x1], %[x0]\n\t"                    \
  "ssat %[x1], #8, %[x1], asr #1\n\t"              \
  "strb %[x1], " STORE "\n\t"

/* A channel's m, c (w0, w1) from its record (conv_ch) at ch + OFFSET, r - 1 (c's trailing zeros) in x0. */
#define TA_RECORD(OFFSET)                            \
  "ldrd %[w0], %[w1], [%[ch], #" OFFSET "]\n\t"     \
  "rbit %[x0], %[w1]\n\t"                          \
  "clz %[x0], %[x0]\n\t"

/* gemm_2px_fast for doubled accumulators (packed_doubled): two pixels, every channel with the
 * ta_rqd form (the output offset always folded in), an even number of channels and a
 * full int8 range. Per channel pair on a DSP core one assembly block: bias loads, the MAC loop
 * (STEPS per CMP/BNE, as mac_2x2), per channel its record (TA_RECORD) and per output ADD,
 * SMMLAR, ASR, SSAT, STRB; the outputs of
 * pixel 1 are stored at o0 + d1 through a register holding d1 - 1 (o0 post-incremented). The
 * _skip variants (layers with constant pairs) store a constant pair's c >> 1 and step over its
 * (zero) weights instead: TEST branches to CONSTANT_PAIR, placed after the loop. */
#define TA_SKIP_TEST "cmp %[a00], #0x80000000\n\tbeq 3f\n\t"
#define TA_SKIP_PAIR                                                                                       \
  "b 6f\n\t"                                                                                                \
  "3:\n\t"                                                                                                  \
  "ldr %[x1], [%[ch], #4]\n\t"                                                                              \
  "asr %[x1], %[x1], #1\n\t"                                                                                \
  "strb %[x1], [%[o0]], #1\n\t"                                                                             \
  "ldr %[a00], %[d1m1]\n\t"                                                                                 \
  "strb %[x1], [%[o0], %[a00]]\n\t"                                                                         \
  "ldr %[x1], [%[ch], #16]\n\t"                                                                             \
  "asr %[x1], %[x1], #1\n\t"                                                                                \
  "strb %[x1], [%[o0]], #1\n\t"                                                                             \
  "strb %[x1], [%[o0], %[a00]]\n\t"                                                                         \
  "ldr %[x1], %[pair_bytes]\n\t"                                                                            \
  "add %[wp], %[wp], %[x1]\n\t"                                                                             \
  "b 5b\n\t"                                                                                                \
  "6:\n\t"
#define TA_GEMM_DOUBLED(NAME, STEPS, TEST, CONSTANT_PAIR)                                                       \
  void NAME(const ta_conv_params *p, const ta_i32a *col, int32_t nwords, const conv_ch *ch,                 \
                               int8_t *o0, int8_t *o1) {                                                       \
    const ta_i32a *wp = (const ta_i32a *)p->packed_weights, *const col_end = col + 2 * nwords;                 \
    const conv_ch *const end = ch + p->out_c;                                                                   \
    const int32_t d1m1 = (int32_t)(o1 - o0) - 1, pair_bytes = 8 * nwords;                                      \
    int32_t a00, a01, a10, a11, w0, w1, x0, x1;                                                                \
    const ta_i32a *xp;                                                                                          \
    (void)pair_bytes;                                                                                           \
    __asm__ volatile("1:\n\t"                                                                                   \
                     "ldr %[a00], [%[ch], #8]\n\t" TEST                                                         \
                     "ldr %[a10], [%[ch], #20]\n\t"                                                             \
                     "mov %[a01], %[a00]\n\t"                                                                   \
                     "mov %[a11], %[a10]\n\t"                                                                   \
                     "ldr %[xp], %[col]\n\t"                                                                    \
                     "2:\n\t" STEPS "cmp %[xp], %[xe]\n\tbne 2b\n\t"                                           \
                     TA_RECORD("0") TA_RQD_STEP("a00", "[%[o0]], #1")                                          \
                     "ldr %[a00], %[d1m1]\n\t" TA_RQD_STEP("a01", "[%[o0], %[a00]]")                             \
                     TA_RECORD("12") TA_RQD_STEP("a10", "[%[o0]], #1")                                         \
                     TA_RQD_STEP("a11", "[%[o0], %[a00]]")                                                       \
                     "5:\n\t"                                                                                   \
                     "adds %[ch], %[ch], #24\n\t"                                                               \
                     "cmp %[ch], %[end]\n\t"                                                                    \
                     "bne 1b\n\t" CONSTANT_PAIR                                                                 \
                     : [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), [wp] "+r"(wp),    \
                       [xp] "=&r"(xp), [ch] "+r"(ch), [o0] "+r"(o0), [w0] "=&r"(w0), [w1] "=&r"(w1),             \
                       [x0] "=&r"(x0), [x1] "=&r"(x1)                                                           \
                     : [xe] "r"(col_end), [col] "m"(col), [d1m1] "m"(d1m1), [end] "r"(end),                    \
                       [pair_bytes] "m"(pair_bytes)                                                             \
                     : "cc", "memory");                                                                        \
  }
#define TA_STEPS8 TA_MAC_2X2_STEP TA_MAC_2X2_STEP TA_MAC_2X2_STEP TA_MAC_2X2_STEP
TA_GEMM_DOUBLED(ta_conv_gemm_2px_doubled8, TA_STEPS8, "", "")
TA_GEMM_DOUBLED(ta_conv_gemm_2px_doubled4, TA_MAC_2X2_STEP TA_MAC_2X2_STEP, "", "")
TA_GEMM_DOUBLED(ta_conv_gemm_2px_doubled8_skip, TA_STEPS8, TA_SKIP_TEST, TA_SKIP_PAIR)
TA_GEMM_DOUBLED(ta_conv_gemm_2px_doubled4_skip, TA_MAC_2X2_STEP TA_MAC_2X2_STEP, TA_SKIP_TEST, TA_SKIP_PAIR)
#undef TA_GEMM_DOUBLED
#else
/* Nothing here without the assembly; ISO C wants a declaration in every translation unit. */
typedef int ta_conv_asm_not_compiled;
#endif
