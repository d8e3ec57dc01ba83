/* Test-only: 1 when the kernel library compiled with the same flags runs its SIMD-structured
 * paths (TA_KERNELS_SIMD of the public header, which the kernels' TA_SIMD follows), else 0.
 * ckernels.build_library links it into the test's shared object. */
#include "tinyarena_kernels.h"

int ta_test_simd_enabled(void) { return TA_KERNELS_SIMD; }
