/* kite_launch.h - what generated launchers call back into the runtime for:
 * cached device facts and TMA tensor maps.  Internal to kite (the double
 * underscore), but a vendored tree compiles it like the rest of runtime/. */
#ifndef KITE_LAUNCH_H
#define KITE_LAUNCH_H

#include <stdint.h>
#include <cuda_runtime_api.h>
#include "kite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of SMs of the current device, cached per device (thread-safe). */
cudaError_t kite__device_sms(int *sms);

/* Fills map (a CUtensorMap: 128 bytes, 64-byte aligned) for a row-major
 * matrix of rows x cols elements of dtype with a row stride of ld elements,
 * read in boxes of box_rows x box_cols elements, swizzled by swizzle_bytes
 * (0, 32, 64 or 128), out-of-bounds elements read as zero.  base must be
 * 16-byte aligned and ld * element size a multiple of 16.  Encoded through
 * the driver's cuTensorMapEncodeTiled, reached with
 * cudaGetDriverEntryPointByVersion (nothing links libcuda), and cached per
 * (base, rows, cols, ld, box, swizzle, dtype) in a bounded, locked cache.
 * Returns cudaErrorInvalidValue for arguments the driver refuses. */
cudaError_t kite__tmap_2d(void *map, kite_dtype dtype, const void *base, int64_t rows, int64_t cols,
                          int64_t ld, int32_t box_rows, int32_t box_cols, int32_t swizzle_bytes);

#ifdef __cplusplus
}
#endif
#endif
