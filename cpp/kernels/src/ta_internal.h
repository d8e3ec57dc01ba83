/*
 * Internal: small helpers the kernel sources share (not part of the library's API).
 */
#ifndef TA_INTERNAL_H
#define TA_INTERNAL_H

/* `value`, or `fallback` when it is 0: a stride left 0 in a params struct means dense. */
#define TA_OR_DEFAULT(value, fallback) ((value) != 0 ? (value) : (fallback))

/* Out of line: keeps a caller's stack frame (and the SIMD paths' high-water) small, or a hot
 * loop in registers of its own. */
#if defined(__GNUC__)
#define TA_NOINLINE __attribute__((noinline))
#else
#define TA_NOINLINE
#endif

/* Inlined even where the compiler would not: a small loop called per pixel and tap, whose call
 * would cost as much as its work on layers of few channels. */
#if defined(__GNUC__)
#define TA_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define TA_ALWAYS_INLINE inline
#endif

#endif /* TA_INTERNAL_H */
