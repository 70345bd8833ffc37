/* kite_gemm.c - GEMM entry point.  Arguments are checked now; the wgmma
   template family that serves it is the GEMM issue's work, so until it is
   generated every valid call reports KITE_ERR_NO_KERNEL. */
#include "kite_internal.h"

kite_status kite_gemm(kite_dtype ab, kite_dtype c, int64_t M, int64_t N, int64_t K, float alpha,
                      const void *A, int64_t lda, const void *B, int64_t ldb, float beta,
                      void *C, int64_t ldc, cudaStream_t stream)
{
  (void)alpha; (void)beta; (void)stream;
  if (kite__dtype_size(ab) == 0 || kite__dtype_size(c) == 0)
    return kite__fail(KITE_ERR_INVALID_ARG, "gemm: unknown dtype");
  if (M < 0 || N < 0 || K < 0)
    return kite__fail(KITE_ERR_INVALID_ARG, "gemm: M, N, K must not be negative");
  if (M == 0 || N == 0 || K == 0) return KITE_OK;
  if (!A || !B || !C) return kite__fail(KITE_ERR_INVALID_ARG, "gemm: A, B and C must not be NULL");
  if (lda < K || ldb < K || ldc < N)
    return kite__fail(KITE_ERR_INVALID_ARG, "gemm: lda, ldb must be >= K and ldc >= N");
  if ((ab != KITE_BF16 && ab != KITE_F16) || c == KITE_E4M3)
    return kite__fail(KITE_ERR_UNSUPPORTED, "gemm: A/B must be bf16 or f16, C bf16, f16 or f32");
  return kite__fail(KITE_ERR_NO_KERNEL, "gemm: no gemm variants are generated yet");
}
