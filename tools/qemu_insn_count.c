/* tinyarena's guest instruction counter: a QEMU TCG plugin (plugin API v1, QEMU 7.2).
 *
 * Every translated instruction gets an inline 64-bit add, so the count is exact
 * (a block that leaves early counts only what ran) and the same on every run.
 * Debian ships QEMU with plugin support but without qemu-plugin.h, so the few
 * entry points used are declared here from the documented API.
 *
 * Build: gcc -shared -fPIC -O2 -fvisibility=hidden -o libinsn_count.so qemu_insn_count.c
 * Run:   qemu-system-arm ... -plugin ./libinsn_count.so[,lo=0xADDR,hi=0xADDR] -d plugin -kernel app.elf
 *        (`-d plugin` routes the plugin's output to stderr, or to the file given by -D)
 * Prints at exit: "insns: N", and with a range "insns_in_range[0xLO,0xHI): N"
 * (instructions whose address lies in [lo, hi), e.g. one function from `nm -S`).
 * `mark=ADDR` (up to 4 of them) records the count of all instructions executed before each
 * execution of the instruction at ADDR (e.g. a function's entry); printed at exit in execution
 * order as "mark 0xADDR: N" lines, after "marks: M" (M = how many; at most 1<<20 are kept).
 * `mode=insn` is accepted and ignored: counting is always per instruction. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn, enum qemu_plugin_op op,
                                                void *counter, uint64_t increment);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t index);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, void *), void *userdata);
void qemu_plugin_outs(const char *text);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static struct {
  uint64_t all, in_range;
  uint64_t lo, hi; /* hi == 0: no range asked for */
} counter;

enum { kMaxMarkAddresses = 4, kMaxMarks = 1 << 20 };
static struct {
  uint64_t addresses[kMaxMarkAddresses];
  int n_addresses;
  uint64_t *counts, *which; /* kMaxMarks each: the count at a mark and its address */
  size_t n;
} marks;

/* Runs before the marked instruction's own inline add: the count excludes it. */
static void on_mark(unsigned int vcpu_index, void *address) {
  (void)vcpu_index;
  if (marks.n == kMaxMarks) return;
  marks.counts[marks.n] = counter.all;
  marks.which[marks.n++] = (uint64_t)(uintptr_t)address;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *block) {
  (void)id;
  for (size_t i = 0; i < qemu_plugin_tb_n_insns(block); ++i) {
    struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(block, i);
    qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &counter.all, 1);
    const uint64_t pc = qemu_plugin_insn_vaddr(insn);
    for (int m = 0; m < marks.n_addresses; ++m)
      if (pc == marks.addresses[m])
        qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)pc);
    if (counter.hi != 0 && pc >= counter.lo && pc < counter.hi)
      qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &counter.in_range, 1);
  }
}

static void report_counts(qemu_plugin_id_t id, void *userdata) {
  (void)id, (void)userdata;
  char line[96];
  snprintf(line, sizeof line, "insns: %" PRIu64 "\n", counter.all);
  qemu_plugin_outs(line);
  if (marks.n_addresses > 0) {
    snprintf(line, sizeof line, "marks: %zu\n", marks.n);
    qemu_plugin_outs(line);
    for (size_t i = 0; i < marks.n; ++i) {
      snprintf(line, sizeof line, "mark 0x%" PRIx64 ": %" PRIu64 "\n", marks.which[i], marks.counts[i]);
      qemu_plugin_outs(line);
    }
  }
  if (counter.hi == 0) return;
  snprintf(line, sizeof line, "insns_in_range[0x%" PRIx64 ",0x%" PRIx64 "): %" PRIu64 "\n", counter.lo, counter.hi,
           counter.in_range);
  qemu_plugin_outs(line);
}

/* Parses "lo=ADDR" / "hi=ADDR" (any base strtoull takes); 0 on an unknown argument. */
static int parse_argument(const char *arg) {
  if (strcmp(arg, "mode=insn") == 0) return 1;
  if (strncmp(arg, "mark=", 5) == 0) {
    if (marks.n_addresses == kMaxMarkAddresses) return 0;
    char *end = NULL;
    marks.addresses[marks.n_addresses++] = strtoull(arg + 5, &end, 0);
    return end != arg + 5 && *end == '\0';
  }
  uint64_t *slot = strncmp(arg, "lo=", 3) == 0 ? &counter.lo : strncmp(arg, "hi=", 3) == 0 ? &counter.hi : NULL;
  if (slot == NULL) return 0;
  char *end = NULL;
  *slot = strtoull(arg + 3, &end, 0);
  return end != arg + 3 && *end == '\0';
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                                               int argc, char **argv) {
  (void)info;
  for (int i = 0; i < argc; ++i)
    if (!parse_argument(argv[i])) {
      fprintf(stderr, "qemu_insn_count: bad argument '%s' (takes lo=ADDR, hi=ADDR, mark=ADDR, mode=insn)\n", argv[i]);
      return -1;
    }
  if (marks.n_addresses > 0) {
    marks.counts = calloc(kMaxMarks, sizeof *marks.counts);
    marks.which = calloc(kMaxMarks, sizeof *marks.which);
    if (marks.counts == NULL || marks.which == NULL) return -1;
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, report_counts, NULL);
  return 0;
}
