/* Test-only, linked into the test's shared object by ckernels.build_library:
 * - ta_test_simd_enabled: 1 when the kernel library compiled with the same flags runs its
 *   SIMD-structured paths (TA_KERNELS_SIMD of the public header, which the kernels' TA_SIMD
 *   follows), else 0;
 * - ta_test_struct_bytes: sizeof of a parameter struct of the header by name (0 if unknown),
 *   against which the ctypes mirrors in ckernels.py are checked. */
#include <string.h>

#include "tinyarena_kernels.h"

int ta_test_simd_enabled(void) { return TA_KERNELS_SIMD; }

#define TA_STRUCT_BYTES(type) {#type, sizeof(type)}

size_t ta_test_struct_bytes(const char *name) {
  static const struct {
    const char *name;
    size_t bytes;
  } structs[] = {
      TA_STRUCT_BYTES(ta_conv_params),      TA_STRUCT_BYTES(ta_dwconv_params),
      TA_STRUCT_BYTES(ta_fc_params),        TA_STRUCT_BYTES(ta_pool_params),
      TA_STRUCT_BYTES(ta_binary_params),    TA_STRUCT_BYTES(ta_softmax_params),
      TA_STRUCT_BYTES(ta_requant_params),   TA_STRUCT_BYTES(ta_hard_swish_params),
      TA_STRUCT_BYTES(ta_mean_params),      TA_STRUCT_BYTES(ta_pad_params),
      TA_STRUCT_BYTES(ta_concat_params),    TA_STRUCT_BYTES(ta_split_params),
      TA_STRUCT_BYTES(ta_transpose_params), TA_STRUCT_BYTES(ta_slice_params),
      TA_STRUCT_BYTES(ta_resize_params),
  };
  size_t i;
  for (i = 0; i < sizeof structs / sizeof structs[0]; ++i)
    if (strcmp(structs[i].name, name) == 0) return structs[i].bytes;
  return 0;
}
