/*
 * Cortex-M test harness for the tinyarena kernels, run under QEMU (each core's board) with
 * semihosting; it also builds for the host.
 *
 *   harness selftest            random conv / depthwise / in-place depthwise / FC cases; the DSP
 *                               path (packed weights, real SMLAD/SXTB16) must equal the portable
 *                               path byte for byte. Prints "N passed, M failed"; exit status = M.
 *                               Also prints "simd: S" (TA_KERNELS_SIMD: which path the packed
 *                               weights select on this core) and "outputs: H", a hash of every
 *                               case's output on that path: the cases are the same on every core,
 *                               so H is the same on every core whose kernels are right.
 *   harness bench NAME PATH R   set up layer NAME and run its kernel R times on PATH (dsp|plain);
 *                               conv1x1 / conv3x3 / fc on int8 weights, conv1x1_s16 /
 *                               conv3x3_s16 / fc_s16 on int16 ones; conv3x3c3 / conv1x1c8 vww's
 *                               first two conv layers (small K).
 *                               NAME dw:K:S:C:H[:ip] is a K x K stride S depthwise layer on an
 *                               H x H x C input (SAME padding, all of int8 as range), :ip in place.
 *                               Instruction counts of R=2 minus R=1 (QEMU insn plugin) give the
 *                               exact cost of one kernel call.
 * The portable path is the same code the host tests check against TFLite's reference kernels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tinyarena_kernels.h"

/* ------------------------------------------------------------------ tiny helpers */
static uint32_t rng_state = 0x12345678u;
static uint32_t rnd(void) {
  uint32_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return rng_state = x;
}
static int32_t rint_(int32_t lo, int32_t hi) { return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1)); }
/* n random integers, the k-th in [1, hi[k]], drawn in order: a call's arguments have no evaluation
 * order, so drawing them there would give other cases with another compiler (host vs Arm). */
static void draw(int32_t *v, const int32_t *hi, int n) {
  int k;
  for (k = 0; k < n; ++k) v[k] = rint_(1, hi[k]);
}

static uint8_t arena[3u << 20] __attribute__((aligned(8)));
static size_t arena_used;
static void *alloc(size_t n) {
  void *p = arena + arena_used;
  arena_used += (n + 7) & ~(size_t)7;
  if (arena_used > sizeof(arena)) {
    printf("arena exhausted\n");
    exit(99);
  }
  return p;
}
static int8_t *rand_i8(size_t n) {
  int8_t *p = alloc(n);
  size_t i;
  for (i = 0; i < n; ++i) p[i] = (int8_t)rnd();
  return p;
}
static int32_t *rand_i32(size_t n, int32_t lo, int32_t hi) {
  int32_t *p = alloc(n * 4);
  size_t i;
  for (i = 0; i < n; ++i) p[i] = rint_(lo, hi);
  return p;
}
static void quant(int32_t n, int32_t **mult, int32_t **shift) {
  *mult = rand_i32((size_t)n, 1 << 30, 0x7FFFFFFF);
  *shift = rand_i32((size_t)n, -11, 0);
}
static void act(int32_t *lo, int32_t *hi) {
  *lo = rint_(-128, 0);
  *hi = rint_(*lo, 127);
}
static int pad_for(int32_t in, int32_t k, int32_t s, int32_t d, int32_t *out, int32_t *before) {
  const int32_t eff = (k - 1) * d + 1;
  int32_t total;
  *out = (in + s - 1) / s; /* SAME */
  total = (*out - 1) * s + eff - in;
  *before = total > 0 ? total / 2 : 0;
  return total > 0 ? total - *before : 0;
}

/* ------------------------------------------------------------------ random cases */
static void make_conv(ta_conv_params *p, int32_t h, int32_t w, int32_t c, int32_t oc, int32_t k, int32_t s,
                      int32_t d) {
  memset(p, 0, sizeof(*p));
  p->in_h = h, p->in_w = w, p->in_c = c, p->out_c = oc;
  p->kernel_h = p->kernel_w = k, p->stride_h = p->stride_w = s, p->dilation_h = p->dilation_w = d;
  p->pad_bottom = pad_for(h, k, s, d, &p->out_h, &p->pad_top);
  p->pad_right = pad_for(w, k, s, d, &p->out_w, &p->pad_left);
  p->input_offset = rint_(-127, 128), p->output_offset = rint_(-128, 127);
  act(&p->act_min, &p->act_max);
  p->weights = rand_i8((size_t)oc * k * k * c);
  p->bias = rand_i32((size_t)oc, -20000, 20000);
  quant(oc, (int32_t **)&p->out_mult, (int32_t **)&p->out_shift);
}

/* p's per-channel records for its packed_doubled, as the generator passes them (the SIMD paths
 * need them). */
static void set_conv_records(ta_conv_params *p) {
  int32_t *records = alloc((size_t)p->out_c * TA_CONV_RQ_WORDS * sizeof(int32_t));
  ta_conv_s8_rq_records(p, records);
  p->rq_records = records;
}

/* p's packed weights, doubled (p->packed_doubled set) when `doubled` and the bound allow it, and
 * its records. */
static const int16_t *pack_conv(ta_conv_params *p, int doubled) {
  int16_t *w = alloc(ta_pack_gemm_weights_s16_bytes(p->out_c, p->kernel_h * p->kernel_w * p->in_c));
  p->packed_doubled = doubled && ta_conv_s8_can_double(p);
  ta_conv_s8_pack_weights(p, w);
  set_conv_records(p);
  return w;
}

/* p's int8 weights in the TA_PACKED_S8 layout, p->packed_doubled and the records set as pack_conv
 * sets them; in a Helium build, as the generator passes them there: the TA_PACKED_MVE layout and
 * ta_conv_s8_mve_records' records (never doubled). */
static const int8_t *pack_conv_s8(ta_conv_params *p, int doubled) {
  const int32_t k = p->kernel_h * p->kernel_w * p->in_c;
#if TA_KERNELS_HELIUM
  int8_t *w = alloc(ta_conv_s8_pack_weights_mve_bytes(p->out_c, k));
  int32_t *records = alloc(ta_conv_s8_mve_records_words(p->out_c) * sizeof(int32_t));
  (void)doubled;
  p->packed_doubled = 0;
  ta_conv_s8_pack_weights_mve(p, w);
  ta_conv_s8_mve_records(p, records);
  p->rq_records = records;
#else
  int8_t *w = alloc(ta_conv_s8_pack_weights_s8_bytes(p->out_c, k));
  p->packed_doubled = doubled && ta_conv_s8_can_double(p);
  ta_conv_s8_pack_weights_s8(p, w);
  set_conv_records(p);
#endif
  return w;
}

static void make_dw(ta_dwconv_params *p, int32_t h, int32_t w, int32_t c, int32_t dm, int32_t k, int32_t s,
                    int32_t d) {
  memset(p, 0, sizeof(*p));
  p->in_h = h, p->in_w = w, p->in_c = c, p->depth_multiplier = dm;
  p->kernel_h = p->kernel_w = k, p->stride_h = p->stride_w = s, p->dilation_h = p->dilation_w = d;
  p->pad_bottom = pad_for(h, k, s, d, &p->out_h, &p->pad_top);
  p->pad_right = pad_for(w, k, s, d, &p->out_w, &p->pad_left);
  p->input_offset = rint_(-127, 128), p->output_offset = rint_(-128, 127);
  act(&p->act_min, &p->act_max);
  p->weights = rand_i8((size_t)k * k * c * dm);
  p->bias = rand_i32((size_t)c * dm, -20000, 20000);
  quant(c * dm, (int32_t **)&p->out_mult, (int32_t **)&p->out_shift);
}

/* VALID padding: none, the outputs whose window lies inside the input (in >= the kernel's extent). */
static void make_valid(ta_dwconv_params *p) {
  p->pad_top = p->pad_bottom = p->pad_left = p->pad_right = 0;
  p->out_h = (p->in_h - (p->kernel_h - 1) * p->dilation_h - 1) / p->stride_h + 1;
  p->out_w = (p->in_w - (p->kernel_w - 1) * p->dilation_w - 1) / p->stride_w + 1;
}

static const int16_t *pack_dw(const ta_dwconv_params *p) {
  const int32_t oc = p->in_c * p->depth_multiplier;
  int16_t *w = alloc(ta_pack_dw_weights_s16_bytes(oc, p->kernel_h, p->kernel_w));
  ta_pack_dw_weights_s16(p->weights, oc, p->kernel_h, p->kernel_w, w);
  return w;
}

static void make_fc(ta_fc_params *p, int32_t b, int32_t k, int32_t n) {
  memset(p, 0, sizeof(*p));
  p->batches = b, p->in_depth = k, p->out_depth = n;
  p->input_offset = rint_(-127, 128), p->output_offset = rint_(-128, 127);
  p->per_channel = (int32_t)(rnd() & 1);
  act(&p->act_min, &p->act_max);
  p->weights = rand_i8((size_t)n * k);
  p->bias = rand_i32((size_t)n, -20000, 20000);
  quant(n, (int32_t **)&p->out_mult, (int32_t **)&p->out_shift);
}

static const int16_t *pack_fc(const ta_fc_params *p) {
  int16_t *w = alloc(ta_pack_gemm_weights_s16_bytes(p->out_depth, p->in_depth));
  ta_pack_gemm_weights_s16(p->weights, p->out_depth, p->in_depth, p->weights_offset, w);
  return w;
}

static int failures, passes;
static uint32_t outputs_hash = 2166136261u; /* FNV-1a over the checked outputs `a` */
static void check(const char *what, int i, const int8_t *a, const int8_t *b, size_t n) {
  size_t k;
  for (k = 0; k < n; ++k) outputs_hash = (outputs_hash ^ (uint8_t)a[k]) * 16777619u;
  if (memcmp(a, b, n) != 0) {
    size_t j = 0;
    while (a[j] == b[j]) ++j;
    printf("FAIL %s case %d: byte %u: dsp %d plain %d\n", what, i, (unsigned)j, a[j], b[j]);
    ++failures;
  } else {
    ++passes;
  }
}

/* One depthwise case: DSP on packed weights vs portable, also in two row stripes; DSP on int8
 * weights (simd_int8_weights) the same, and in place where valid. */
static void dw_case(ta_dwconv_params *pp, int i) {
  ta_dwconv_params p = *pp;
  int8_t *x, *o1, *o2;
  void *scratch;
  size_t n;
  x = rand_i8((size_t)p.in_h * p.in_w * p.in_c);
  n = (size_t)p.out_h * p.out_w * p.in_c * p.depth_multiplier;
  o1 = alloc(n), o2 = alloc(n);
  scratch = alloc(ta_depthwise_conv_s8_inplace_scratch_bytes(&p));
  ta_depthwise_conv_s8(&p, x, o2, 0, p.out_h, scratch);
  p.packed_weights = pack_dw(&p);
  ta_depthwise_conv_s8(&p, x, o1, 0, p.out_h, scratch);
  check("depthwise", i, o1, o2, n);
  memset(o1, 0, n); /* the same rows in two stripes */
  ta_depthwise_conv_s8(&p, x, o1, 0, p.out_h / 2, scratch);
  ta_depthwise_conv_s8(&p, x, o1, p.out_h / 2, p.out_h, scratch);
  check("depthwise_stripes", i, o1, o2, n);
  p.packed_weights = NULL, p.simd_int8_weights = 1;
  memset(o1, 0, n);
  ta_depthwise_conv_s8(&p, x, o1, 0, p.out_h, scratch);
  check("depthwise_int8", i, o1, o2, n);
  memset(o1, 0, n);
  ta_depthwise_conv_s8(&p, x, o1, 0, p.out_h / 2, scratch);
  ta_depthwise_conv_s8(&p, x, o1, p.out_h / 2, p.out_h, scratch);
  check("depthwise_int8_stripes", i, o1, o2, n);
  if (p.depth_multiplier == 1 && p.out_h * p.out_w <= p.in_h * p.in_w) {
    int8_t *buf = alloc((size_t)p.in_h * p.in_w * p.in_c);
    memcpy(buf, x, (size_t)p.in_h * p.in_w * p.in_c);
    ta_depthwise_conv_s8_inplace(&p, buf, scratch);
    check("depthwise_inplace", i, buf, o2, n);
  }
}

static int selftest(void) {
  int i;
  for (i = 0; i < 100; ++i) {
    ta_conv_params p;
    int8_t *x, *o1, *o2;
    void *scratch;
    size_t n;
    static const int32_t hi[7] = {9, 9, 12, 9, 3, 2, 2};
    int32_t v[7];
    arena_used = 0;
    draw(v, hi, 7);
    make_conv(&p, v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
    x = rand_i8((size_t)p.in_h * p.in_w * p.in_c);
    n = (size_t)p.out_h * p.out_w * p.out_c;
    o1 = alloc(n), o2 = alloc(n);
    scratch = alloc(ta_conv_s8_scratch_bytes(&p));
    if (i & 2) p.act_min = -128, p.act_max = 127; /* the fast channel loops need all of int8 */
    if (i % 8 >= 4) { /* constant channels: dead (0, 1, a pair), or a bias the weights cannot move */
      ((int32_t *)p.out_mult)[0] = 0, ((int32_t *)p.out_mult)[p.out_c > 1] = 0;
      ((int32_t *)p.bias)[p.out_c - 1] = (i & 8 ? 1 : -1) * ((1 << 30) + 12345);
      ((int32_t *)p.out_shift)[p.out_c - 1] = -29;
    }
    ta_conv_s8(&p, x, o2, 0, p.out_h, scratch); /* portable: no packed weights */
    p.packed_weights = pack_conv(&p, i & 1);
    ta_conv_s8_packed16(&p, x, o1, 0, p.out_h, scratch);
    check("conv", i, o1, o2, n);
    p.packed_weights = NULL, p.packed_s8_weights = pack_conv_s8(&p, i & 1);
    ta_conv_s8(&p, x, o1, 0, p.out_h, scratch);
    check("conv_int8_weights", i, o1, o2, n);
  }
  for (i = 0; i < 100; ++i) {
    ta_dwconv_params p;
    static const int32_t hi[7] = {10, 10, 13, 2, 4, 2, 2};
    int32_t v[7];
    arena_used = 0;
    draw(v, hi, 7);
    make_dw(&p, v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
    if (i & 1) p.act_min = -128, p.act_max = 127; /* the assembly kernels' form */
    if (i % 5 == 0) { /* channel 0 outside the doubled-accumulator form: multiplier 2^30, or a bias
                       * too large for the doubled sum */
      if (i % 10 == 0) ((int32_t *)p.out_mult)[0] = 1 << 30;
      else ((int32_t *)p.bias)[0] = 1073500000;
    }
    dw_case(&p, i);
  }
  for (i = 0; i < 5; ++i) { /* the real models' non-square layers, full int8 range */
    ta_dwconv_params p;
    arena_used = 0;
    if (i == 0)
      make_dw(&p, 49, 40, 1, 8, 10, 2, 1), p.kernel_w = 8; /* micro_speech: 1 channel x 8, 10x8 */
    else if (i == 1 || i == 4)
      make_dw(&p, 24, 1, i == 1 ? 13 : 32, 1, 10, 1, 1), p.kernel_w = 1; /* str_ww: a 10x1 column kernel */
    else /* kws's narrow 25 x 5 maps (3x3 stride 1, run transposed), 64 and 13 channels */
      make_dw(&p, 25, 5, i == 2 ? 64 : 13, 1, 3, 1, 1);
    p.pad_right = pad_for(p.in_w, p.kernel_w, p.stride_w, 1, &p.out_w, &p.pad_left);
    if (i == 4) make_valid(&p); /* as str_ww has it: in place, Helium's channel-parallel path reads the buffer itself */
    p.act_min = -128, p.act_max = 127;
    dw_case(&p, 100 + i);
  }
  for (i = 0; i < 12; ++i) { /* 3x3 on small square maps, full int8 range (the assembly's row tails:
                               * 1-3 outputs after the blocks, at stride 2 a block of three) */
    ta_dwconv_params p;
    arena_used = 0;
    make_dw(&p, 5 + i, 5 + i, 4 + (i % 5), 1, 3, 1 + (i & 1), 1);
    p.act_min = -128, p.act_max = 127;
    dw_case(&p, 150 + i);
  }
  for (i = 0; i < 32; ++i) { /* 5x5 and 7x7, stride 1 and 2 (the four-output row kernels) */
    ta_dwconv_params p;
    static const int32_t hi[4] = {17, 17, 9, 2};
    int32_t v[4];
    arena_used = 0;
    draw(v, hi, 4);
    make_dw(&p, v[0], v[1], v[2], v[3], i & 2 ? 7 : 5, 1 + ((i >> 2) & 1), 1);
    if (i & 1) p.act_min = -128, p.act_max = 127;
    if (i % 8 == 5) ((int32_t *)p.out_shift)[0] = -26; /* the output offset after the shift */
    if (i % 8 == 3) ((int32_t *)p.bias)[0] = -1073500000; /* undoubled */
    dw_case(&p, 200 + i);
  }
  for (i = 0; i < 60; ++i) { /* 16-40 channels: Helium's channel-parallel path (16 channels a step;
                               * in place only for multiples of 16, every other case here) */
    ta_dwconv_params p;
    static const int32_t hi[6] = {9, 9, 25, 5, 2, 2};
    int32_t v[6];
    arena_used = 0;
    draw(v, hi, 6);
    make_dw(&p, v[0], v[1], i & 2 ? 16 * (1 + v[2] % 2) : 15 + v[2], 1, v[3], v[4], v[5]);
    if (i % 3 == 0 && p.in_h > (p.kernel_h - 1) * p.dilation_h && p.in_w > (p.kernel_w - 1) * p.dilation_w)
      make_valid(&p); /* VALID, in place: Helium's channel-parallel path without a window where no output reads a written pixel */
    if (i & 1) p.act_min = -128, p.act_max = 127;
    if (i % 8 == 5) ((int32_t *)p.out_shift)[3] = -26;
    dw_case(&p, 300 + i);
  }
  for (i = 0; i < 40; ++i) {
    ta_fc_params p;
    int8_t *x, *o1, *o2;
    void *scratch;
    size_t n;
    static const int32_t hi[3] = {3, 70, 21};
    int32_t v[3];
    arena_used = 0;
    draw(v, hi, 3);
    make_fc(&p, v[0], v[1], v[2]);
    x = rand_i8((size_t)p.batches * p.in_depth);
    n = (size_t)p.batches * p.out_depth;
    o1 = alloc(n), o2 = alloc(n);
    scratch = alloc(ta_fully_connected_s8_scratch_bytes(&p));
    ta_fully_connected_s8(&p, x, o2, scratch);
    p.packed_weights = pack_fc(&p);
    ta_fully_connected_s8(&p, x, o1, scratch);
    check("fully_connected", i, o1, o2, n);
    p.packed_weights = NULL, p.simd_int8_weights = p.weights_offset == 0;
    ta_fully_connected_s8(&p, x, o1, scratch);
    check("fully_connected_int8_weights", i, o1, o2, n);
  }
  printf("simd: %d\noutputs: %08lx\n", TA_KERNELS_SIMD, (unsigned long)outputs_hash);
  printf("qemu kernels: %d passed, %d failed\n", passes, failures);
  return failures;
}

/* ------------------------------------------------------------------ benchmarks */
static int bench(const char *name, int dsp, int repeat) {
  int r;
  arena_used = 0;
  if (!strncmp(name, "conv1x1", 7) || !strncmp(name, "conv3x3", 7)) { /* suffix _s16: int16 weights */
    ta_conv_params p;
    int8_t *x, *o;
    void *scratch;
    const int s16 = strstr(name, "_s16") != NULL;
    if (!strcmp(name, "conv3x3c3")) { /* vww's first two layers, full int8 range */
      make_conv(&p, 96, 96, 3, 8, 3, 2, 1), p.act_min = -128, p.act_max = 127;
    } else if (!strcmp(name, "conv1x1c8")) {
      make_conv(&p, 48, 48, 8, 16, 1, 1, 1), p.act_min = -128, p.act_max = 127;
    } else if (name[4] == '1')
      make_conv(&p, 24, 24, 32, 64, 1, 1, 1);
    else
      make_conv(&p, 16, 16, 16, 32, 3, 1, 1);
    x = rand_i8((size_t)p.in_h * p.in_w * p.in_c);
    o = alloc((size_t)p.out_h * p.out_w * p.out_c);
    scratch = alloc(ta_conv_s8_scratch_bytes(&p));
    if (dsp && s16) p.packed_weights = pack_conv(&p, 1);
    else if (dsp) p.packed_s8_weights = pack_conv_s8(&p, 1); /* the generator's default layout */
    printf("%s MACs %ld\n", name, (long)p.out_h * p.out_w * p.out_c * p.kernel_h * p.kernel_w * p.in_c);
    for (r = 0; r < repeat; ++r) (s16 ? ta_conv_s8_packed16 : ta_conv_s8)(&p, x, o, 0, p.out_h, scratch);
    return 0;
  }
  if (!strcmp(name, "dw3x3") || !strcmp(name, "dw3x3s2")) {
    ta_dwconv_params p;
    int8_t *x, *o;
    void *scratch;
    if (!strcmp(name, "dw3x3"))
      make_dw(&p, 24, 24, 64, 1, 3, 1, 1);
    else
      make_dw(&p, 48, 48, 32, 1, 3, 2, 1);
    p.act_min = -128, p.act_max = 127; /* as every depthwise layer of the real models */
    x = rand_i8((size_t)p.in_h * p.in_w * p.in_c);
    o = alloc((size_t)p.out_h * p.out_w * p.in_c);
    scratch = alloc(ta_depthwise_conv_s8_scratch_bytes(&p));
    if (dsp) p.packed_weights = pack_dw(&p);
    printf("%s MACs %ld\n", name, (long)p.out_h * p.out_w * p.in_c * p.kernel_h * p.kernel_w);
    for (r = 0; r < repeat; ++r) ta_depthwise_conv_s8(&p, x, o, 0, p.out_h, scratch);
    return 0;
  }
  if (!strncmp(name, "dw:", 3)) { /* dw:K:S:C:H[:ip]: K x K, stride S, C channels, H x H input, in place */
    ta_dwconv_params p;
    int8_t *x, *o;
    void *scratch;
    int k = 3, s = 1, c = 8, h = 16, ip = strstr(name, ":ip") != NULL;
    if (sscanf(name + 3, "%d:%d:%d:%d", &k, &s, &c, &h) != 4) return 2;
    make_dw(&p, h, h, c, 1, k, s, 1);
    p.act_min = -128, p.act_max = 127;
    for (r = 0; r < c; ++r) ((int32_t *)p.out_shift)[r] = rint_(-11, -1); /* as a trained layer's */
    x = rand_i8((size_t)p.in_h * p.in_w * p.in_c);
    o = alloc((size_t)p.out_h * p.out_w * p.in_c);
    scratch = alloc(ip ? ta_depthwise_conv_s8_inplace_scratch_bytes(&p) : ta_depthwise_conv_s8_scratch_bytes(&p));
    if (dsp) p.packed_weights = pack_dw(&p);
    printf("%s MACs %ld\n", name, (long)p.out_h * p.out_w * p.in_c * p.kernel_h * p.kernel_w);
    for (r = 0; r < repeat; ++r) {
      if (ip)
        ta_depthwise_conv_s8_inplace(&p, x, scratch);
      else
        ta_depthwise_conv_s8(&p, x, o, 0, p.out_h, scratch);
    }
    return 0;
  }
  if (!strcmp(name, "fc") || !strcmp(name, "fc_s16")) {
    ta_fc_params p;
    int8_t *x, *o;
    void *scratch;
    make_fc(&p, 1, 1024, 128);
    x = rand_i8((size_t)p.in_depth);
    o = alloc((size_t)p.out_depth);
    scratch = alloc(ta_fully_connected_s8_scratch_bytes(&p));
    if (dsp && name[2]) p.packed_weights = pack_fc(&p);
    else if (dsp) p.simd_int8_weights = 1; /* the generator's default layout */
    printf("%s MACs %ld\n", name, (long)p.in_depth * p.out_depth);
    for (r = 0; r < repeat; ++r) ta_fully_connected_s8(&p, x, o, scratch);
    return 0;
  }
  printf("unknown bench %s\n", name);
  return 2;
}

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "bench") && argc >= 5)
    return bench(argv[2], !strcmp(argv[3], "dsp"), atoi(argv[4]));
  return selftest() != 0;
}
