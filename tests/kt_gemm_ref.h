/* kt_gemm_ref.h - device-side helpers of test_gemm (tests/kt_gemm_ref.cu).
 *
 * The GEMM shapes under test reach 4097 x 4095 x 4104: data made, the
 * reference computed and the result compared on the host would cost seconds
 * per call, and every variant runs every shape.  So all of it stays on the
 * device:
 *
 *   kt_dev_fill        fills an allocation: random values inside a matrix,
 *                      poison (0xFF bytes, NaN in bf16/f16/f32) elsewhere
 *   kt_dev_changed     counts elements that differ from what kt_dev_fill wrote
 *   kt_dev_gemm_ref    P = A * B^T in float64, from the device buffers
 *   kt_dev_gemm_err    C against alpha * P + beta * C0: norms, worst element
 *   kt_dev_diff_bytes  counts bytes that differ between two buffers
 *
 * The values depend only on (seed, row, column), never on the layout, so one
 * reference serves every layout, variant and C dtype of a shape.  The checks
 * synchronise the device and return the CUDA status of the whole sequence. */
#ifndef KT_GEMM_REF_H
#define KT_GEMM_REF_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#include "kite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A matrix inside its allocation: element [r][c] is at off + r * ld + c.
   The allocation holds len elements (what follows the last row is a guard). */
typedef struct kt_mat {
  kite_dtype dt;
  int64_t rows, cols, ld, off, len;
} kt_mat;

/* Element counts; first is the lowest index counted (or -1). */
typedef struct kt_count {
  unsigned long long n;
  long long first;
} kt_count;

/* What kt_dev_gemm_err found over the M x N tile of C.
   want = alpha * P + beta * C0, err = C - want, both in float64. */
typedef struct kt_gemm_err {
  double err2, want2;       /* sums of squares over the finite elements */
  unsigned long long nonfinite;
  long long first_nonfinite;   /* r * N + c, or -1 */
  double worst;             /* max |err| / (max(|want|, scale) + atol); 0 unless scale > 0 */
  long long worst_at;       /* r * N + c of it, or -1 */
  double worst_got, worst_want;
} kt_gemm_err;

/* Random values uniform in [-1, 1] rounded to m->dt inside the matrix, from
   seed; 0xFF bytes in every other element.  seed 0: poison everywhere. */
cudaError_t kt_dev_fill(const kt_mat *m, void *base, uint64_t seed);

/* Counts the elements of the allocation whose bytes differ from what
   kt_dev_fill(m, base, seed) wrote; with outside_only, only those outside
   the matrix (its padding, the guard, what comes before it). */
cudaError_t kt_dev_changed(const kt_mat *m, const void *base, uint64_t seed, int outside_only,
                           kt_count *out);

/* ref[r * N + c] = sum_k A[r][k] * B[c][k] in float64 (exact products). */
cudaError_t kt_dev_gemm_ref(kite_dtype ab, int64_t M, int64_t N, int64_t K, const void *A, int64_t lda,
                            const void *B, int64_t ldb, double *ref);

/* Compares the tile of C (matrix c in allocation base) with alpha * ref +
   beta * C0, C0 being what kt_dev_fill(c, ., seed0) put there (seed0 0: no
   C0 term).  With scale > 0 it also finds the worst element relative to
   max(|want|, scale) + atol. */
cudaError_t kt_dev_gemm_err(const kt_mat *c, const void *base, const double *ref, double alpha, double beta,
                            uint64_t seed0, double scale, double atol, kt_gemm_err *out);

/* Counts the bytes where a and b differ. */
cudaError_t kt_dev_diff_bytes(const void *a, const void *b, size_t bytes, kt_count *out);

#ifdef __cplusplus
}
#endif
#endif
