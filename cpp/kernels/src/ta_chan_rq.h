/*
 * Internal to the portable conv and depthwise paths (conv.c, depthwise.c): an output channel's
 * requantization, prepared once per channel and applied per output; ta_sat8 serves elementwise.c too.
 */
#ifndef TA_CHAN_RQ_H
#define TA_CHAN_RQ_H

#include "tinyarena_requantize.h"
#include "ta_internal.h"

/* x saturated to the int8 range: one SSAT on cores that have it (ARMv6 on, the M3 too), else the
 * compare form. */
#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
#include <arm_acle.h>
static TA_ALWAYS_INLINE int32_t ta_sat8(int32_t x) { return __ssat(x, 8); }
#else
static TA_ALWAYS_INLINE int32_t ta_sat8(int32_t x) { return ta_clamp32(x, -128, 127); }
#endif

/* The requantization: ta_rq4 (AND, ORR,
 * ADD, SMLAL, ASR, then the clamp) where its range allows, else ta_requant_acc, out of line. */
typedef struct ta_chan_rq {
  ta_rq4 q;
  int32_t m, shift, oo, lo, hi;
  int32_t sat; /* ta_rq4 and an activation range of all of int8: one SSAT clamps */
} ta_chan_rq;

static inline ta_chan_rq ta_chan_rq_prep(int32_t m, int32_t shift, int32_t oo, int32_t lo, int32_t hi) {
  ta_chan_rq r;
  r.q = ta_rq4_prep(m, shift, oo);
  r.m = m, r.shift = shift, r.oo = oo, r.lo = lo, r.hi = hi;
  r.sat = r.q.rs >= 0 && lo <= -128 && hi >= 127;
  return r;
}

TA_NOINLINE static int8_t ta_chan_rq_general(const ta_chan_rq *r, int32_t acc) {
  return ta_requant_acc(acc, r->m, r->shift, r->oo, r->lo, r->hi);
}

static TA_ALWAYS_INLINE int8_t ta_chan_rq_apply(const ta_chan_rq *r, int32_t acc) {
  return r->q.rs >= 0 ? (int8_t)ta_clamp32(ta_rq4_apply(r->q, acc), r->lo, r->hi) : ta_chan_rq_general(r, acc);
}

#endif /* TA_CHAN_RQ_H */
