/* kite.h - Hopper GPU kernels generated from templates, callable from C.
 *
 * Every function validates its arguments before anything is launched and
 * returns a kite_status; on failure kite_last_error() says why.  Sizes and
 * strides are int64_t element counts; row strides are in elements.  Work is
 * enqueued on the given stream and not synchronised. */
#ifndef KITE_H
#define KITE_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kite_status {
  KITE_OK = 0,
  KITE_ERR_INVALID_ARG,  /* a null pointer, a bad size, stride or alignment */
  KITE_ERR_UNSUPPORTED,  /* valid, but not something kite does (dtype, ...)  */
  KITE_ERR_CUDA,         /* the CUDA runtime reported an error               */
  KITE_ERR_NO_KERNEL,    /* no generated variant fits this problem           */
  KITE_ERR_INTERNAL
} kite_status;

typedef enum kite_dtype { KITE_BF16 = 0, KITE_F16 = 1, KITE_F32 = 2, KITE_E4M3 = 3 } kite_dtype;

/* The name of a status code, e.g. "KITE_ERR_INVALID_ARG". */
const char *kite_status_str(kite_status s);

/* Detail of the calling thread's last failure ("" if none yet).  The text
 * stays valid until the thread's next kite call. */
const char *kite_last_error(void);

/* C[M,N] = alpha * A[M,K] * B[N,K]^T + beta * C.  Row-major; lda/ldb/ldc are row strides in elements.
   ab: type of A and B (bf16 or f16); c: type of C (bf16, f16 or f32); accumulation in f32.
   M, N or K of 0 is a no-op; above 2^31-1 is KITE_ERR_UNSUPPORTED.  C must not overlap A or B
   (A and B may overlap).  Pointers need their element alignment; 16-byte-aligned A, B, lda and
   ldb (in bytes) allow the TMA kernels. */
kite_status kite_gemm(kite_dtype ab, kite_dtype c, int64_t M, int64_t N, int64_t K, float alpha,
                      const void *A, int64_t lda, const void *B, int64_t ldb, float beta,
                      void *C, int64_t ldc, cudaStream_t stream);

/* y = x * rsqrt(mean(x^2) + eps) * w, row by row.  w has N elements of dtype; rstd (M floats) may
   be NULL.  Computed in f32. */
kite_status kite_rmsnorm_fwd(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                             const void *w, float eps, void *y, int64_t ldy, float *rstd,
                             cudaStream_t stream);

/* rmsnorm over a residual stream: h = x + residual, rounded to dtype, is written to h when h is not
   NULL, and y = h * rsqrt(mean(h^2) + eps) * (w + w_offset), row by row (w_offset 1: Gemma's 1 + w).
   residual NULL: h = x (h must be NULL then).  rstd (M floats) may be NULL.  h may be x or residual
   itself (same pointer and stride), y may be x itself; otherwise x, residual, h and y must not overlap.
   Computed in f32. */
kite_status kite_rmsnorm_fwd_residual(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                                      const void *residual, int64_t ldres, const void *w, float w_offset,
                                      float eps, void *y, int64_t ldy, void *h, int64_t ldh, float *rstd,
                                      cudaStream_t stream);

/* y = (x - mean) * rsqrt(var + eps) * w + b row by row, the variance about the mean (biased, as
   torch's).  w and b have N elements of dtype; b may be NULL (no bias).  mean and rstd (M floats
   each) may be NULL.  y may be x itself.  Computed in f32. */
kite_status kite_layernorm_fwd(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                               const void *w, const void *b, float eps, void *y, int64_t ldy, float *mean,
                               float *rstd, cudaStream_t stream);

/* y = softmax(x) along each row, computed in f32. */
kite_status kite_softmax_fwd(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                             void *y, int64_t ldy, cudaStream_t stream);

/* loss[i] = logsumexp(x[i,:]) - x[i, target[i]]; 0 where target[i] == ignore_index. lse may be NULL.
   A target outside [0, N) that is not ignore_index gives a NaN loss for that row. */
kite_status kite_cross_entropy_fwd(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                                   const int64_t *target, int64_t ignore_index, float *loss,
                                   float *lse, cudaStream_t stream);

/* dx = y * (dy - sum(y * dy)) along each row: the gradient of softmax from its output y and the
   incoming gradient dy, computed in f32.  dx may be dy or y itself (same pointer and stride), but
   must not overlap either otherwise. */
kite_status kite_softmax_bwd(kite_dtype dtype, int64_t M, int64_t N, const void *y, int64_t ldy,
                             const void *dy, int64_t lddy, void *dx, int64_t lddx, cudaStream_t stream);

/* dx = (softmax(x) - onehot(target)) * dloss, row by row: the gradient of cross-entropy's loss.  lse
   (M floats) is the forward's; dloss (M floats) may be NULL (1 for every row).  Rows whose target is
   ignore_index get 0; a target outside [0, N) gives NaN.  dx may be x itself (same pointer and
   stride), but must not overlap it otherwise.  Computed in f32. */
kite_status kite_cross_entropy_bwd(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                                   const int64_t *target, int64_t ignore_index, const float *lse,
                                   const float *dloss, void *dx, int64_t lddx, cudaStream_t stream);

/* The gradients of rmsnorm: with xh = x * rstd and g = dy * (w + w_offset),
   dx = rstd * (g - xh * mean(xh * g)) row by row, and dw = the sum over rows of dy * xh (N floats).
   rstd (M floats) is the forward's; w_offset is 0, or 1 for Gemma's (1 + w) weights.  dw may be NULL
   (not computed); else workspace holds kite_rmsnorm_bwd_workspace() bytes (16-byte aligned): each
   CTA sums its rows into a partial row there, and the partial rows are added in a fixed order, so dw
   is the same bytes on every run (no atomics).  dx may be x or dy itself (same pointer and stride),
   but must not overlap either otherwise.  Computed in f32. */
kite_status kite_rmsnorm_bwd(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                             const void *w, float w_offset, const float *rstd, const void *dy, int64_t lddy,
                             void *dx, int64_t lddx, float *dw, void *workspace, size_t workspace_bytes,
                             cudaStream_t stream);

/* Bytes of workspace kite_rmsnorm_bwd needs for dw at M rows of N on the current device (0 for an
   empty problem), into *bytes. */
kite_status kite_rmsnorm_bwd_workspace(int64_t M, int64_t N, size_t *bytes);

/* The gradients of layernorm: with xh = (x - mean) * rstd and g = dy * w,
   dx = rstd * (g - mean(g) - xh * mean(xh * g)) row by row, dw = the sum over rows of dy * xh and
   db = the sum over rows of dy (N floats each).  mean and rstd (M floats each) are the forward's.
   dw and db may each be NULL (not computed); when either is given, workspace holds
   kite_layernorm_bwd_workspace() bytes (16-byte aligned), and both are summed as rmsnorm_bwd sums
   dw: the same bytes on every run.  dx may be x or dy itself (same pointer and stride), but must not
   overlap either otherwise.  Computed in f32. */
kite_status kite_layernorm_bwd(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                               const void *w, const float *mean, const float *rstd, const void *dy,
                               int64_t lddy, void *dx, int64_t lddx, float *dw, float *db, void *workspace,
                               size_t workspace_bytes, cudaStream_t stream);

/* Bytes of workspace kite_layernorm_bwd needs for dw and db at M rows of N on the current device (0
   for an empty problem), into *bytes. */
kite_status kite_layernorm_bwd_workspace(int64_t M, int64_t N, size_t *bytes);

/* The variant kite would launch for this problem, and why (tuned rule or heuristic); no launch.
   op is "rmsnorm", "rmsnorm_res", "layernorm", "softmax", "cross_entropy", "softmax_bwd", "cross_entropy_bwd",
   "rmsnorm_bwd", "layernorm_bwd" (row ops: M rows of N, K ignored) or "gemm"
   (dtype is that of A, B and C alike).  Row ops' pointers and strides are taken as 16-byte aligned;
   gemm's A and B as dense (lda = ldb = K) at 128-byte-aligned addresses, as cudaMalloc returns them.
   Measured choices come from the current device's set of the table (one per GPU tuned: the set whose
   name the device's name holds, else the default; the environment variable KITE_GPU=<name>, e.g.
   h100, picks one for every device), the same set the ops use; the text ends with it, e.g.
   "[table h100 (device NVIDIA H100 80GB HBM3)]".
   Writes a one-line text into buf (truncated to len). */
kite_status kite_explain(const char *op, kite_dtype dtype, int64_t M, int64_t N, int64_t K,
                         char *buf, size_t len);

/* ---- Variants: what was generated, and running one by name ------------- */

/* The arguments of every row op, as the generated launchers take them.
   Fields an op does not use are ignored (leave them zero). */
typedef struct kite_row_args {
  int64_t M, N;
  const void *x;  int64_t ldx;
  void *y;        int64_t ldy;     /* rmsnorm, softmax */
  const void *w;  float eps;       /* rmsnorm */
  float *rstd;                     /* rmsnorm, optional */
  const int64_t *target;           /* cross_entropy */
  int64_t ignore_index;            /* cross_entropy */
  float *loss;                     /* cross_entropy */
  float *lse;                      /* cross_entropy, optional */
  const void *dy; int64_t lddy;    /* backward ops: the incoming gradient (softmax_bwd: x is the
                                      forward's output y, and y receives dx) */
  const float *dloss;              /* cross_entropy_bwd, optional: each row's loss gradient (lse,
                                      target, ignore_index as in the forward; y receives dx) */
  float w_offset;                  /* rmsnorm, rmsnorm_res, rmsnorm_bwd: the weight is w + w_offset */
  const void *res; int64_t ldres;  /* rmsnorm_res: the residual added to x */
  void *h; int64_t ldh;            /* rmsnorm_res, optional: x + res as stored */
  const void *b;                   /* layernorm, optional: the bias (N elements) */
  float *mean;                     /* layernorm, optional: each row's mean (rstd: its 1/sqrt(var + eps)) */
  float *dw;                       /* rmsnorm_bwd, layernorm_bwd, optional: w's gradient, N floats
                                      (rstd and mean are the forward's, dy the incoming gradient,
                                      y receives dx) */
  float *db;                       /* layernorm_bwd, optional: b's gradient, N floats */
  float *partials; int64_t parts;  /* with dw or db: room for `parts` CTAs' partial rows (one per
                                      sum the op makes: rmsnorm_bwd 1, layernorm_bwd 2) of N
                                      floats, rounded up to 4 */
} kite_row_args;

/* The arguments of a GEMM launcher: C = alpha * A * B^T + beta * C, each
   matrix row-major with its row stride in elements; the element types are
   the variant's (kite_variant_info.dtype for A and B, .dtype_out for C). */
typedef struct kite_gemm_args {
  int64_t M, N, K;
  float alpha, beta;
  const void *A;  int64_t lda;     /* M x K */
  const void *B;  int64_t ldb;     /* N x K */
  void *C;        int64_t ldc;     /* M x N */
} kite_gemm_args;

/* What a generated variant is and which problems it accepts. */
typedef struct kite_variant_info {
  const char *name, *op;
  kite_dtype dtype;      /* element type it reads (A and B for gemm) */
  kite_dtype dtype_out;  /* element type it writes (C for gemm) */
  int64_t n_min, n_max;  /* row length (N) range; not used for gemm */
  int32_t align;         /* bytes every pointer and row stride must be a multiple of
                            (for gemm: A, B, lda, ldb; C needs its element size) */
  int32_t rank;          /* dispatch preference among variants that fit; lower first */
  int32_t tile_m, tile_n;   /* the output tile of a gemm variant (0 for row ops) */
  int32_t eff;           /* gemm: per-mille throughput the dispatch heuristic assumes */
  int32_t cost_k;        /* gemm: a tile's work outside its k-loop (epilogue), in units of K */
} kite_variant_info;

/* Number of variants in the generated table. */
int32_t kite_variant_count(void);

/* Fills *info for variant i, 0 <= i < kite_variant_count(). */
kite_status kite_variant_get(int32_t i, kite_variant_info *info);

/* Runs the named variant, bypassing dispatch but not validation.  args
   points at a kite_row_args for a row-op variant, a kite_gemm_args for a gemm
   variant (op "gemm"; A, B of its dtype, C of its dtype_out).  The arguments
   are checked as the op's own entry point checks them; a problem outside the
   variant's N range (row ops) or alignment gives KITE_ERR_UNSUPPORTED.  For
   tests, benchmarks and tuning. */
kite_status kite_run_variant(const char *name, const void *args, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
