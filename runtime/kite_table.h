/* kite_table.h - the dispatch table that kite-gen writes into out/kite_table.c.
 *
 * One row per generated variant.  The runtime reads it to pick a variant for a
 * problem; kite-gen is the only writer.  Plain C so that a vendored tree needs
 * nothing but a C compiler and nvcc. */
#ifndef KITE_TABLE_H
#define KITE_TABLE_H

#include <stdint.h>
#include <cuda_runtime_api.h>
#include "kite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every generated launcher has this signature; args points at the op's
 * argument struct (struct kite_row_args for the row ops). */
typedef cudaError_t (*kite_launch_fn)(const void *args, cudaStream_t stream);

struct kite_variant {
  const char *name;      /* unique, [A-Za-z0-9_]+, also the .cu file name   */
  const char *op;        /* template folder name: "rmsnorm", "softmax", ... */
  kite_dtype dtype;      /* element type the variant reads (A, B for gemm)  */
  kite_dtype dtype_out;  /* element type it writes (C for gemm)             */
  int64_t n_min, n_max;  /* row length range the variant handles            */
  int32_t align;         /* bytes every pointer and row stride must divide
                            (gemm: A, B, lda, ldb; C needs only its element) */
  int32_t rank;          /* heuristic preference among fits; lower first    */
  int32_t tile_m, tile_n;   /* output tile of a gemm variant; 0 for row ops */
  int32_t eff;           /* gemm: per-mille throughput the heuristic assumes */
  int32_t cost_k;        /* gemm: a tile's work outside its k-loop, in K    */
  kite_launch_fn launch;
};

/* A tuned rule, from bench/tuned/<gpu>.tsv through kite-gen: at the problem
 * shape m x n x k the variant kite_variants[variant] ran fastest of all that
 * were timed.  Row ops have k = 0 and are keyed by n alone (m is the row
 * count they were timed at); gemm rules by all three. */
struct kite_rule {
  const char *op;
  kite_dtype dtype, dtype_out;
  int64_t m, n, k;
  float lm, ln, lk;      /* log2 of m, n, k (0 for k = 0), for the lookup   */
  int32_t variant;       /* index into kite_variants                        */
  float time_us;         /* its measured median                             */
};

/* A measured cost model of a gemm variant, fitted by kite-gen (gen/kg_fit.c)
 * to bench/tuned/<gpu>.times.tsv: a launch takes about
 *     launch_us + waves * (K + k_extra) * us_per_k microseconds,
 *     waves = ceil(ceil(M / tile_m) * ceil(N / tile_n) / SMs),
 * times ragged where A, B or their row strides are not 128-byte aligned. */
struct kite_gemm_model {
  int32_t variant;       /* index into kite_variants                        */
  float launch_us, us_per_k, k_extra, ragged;
  int32_t points;        /* measured shapes it was fitted to                */
};

/* A run of row lengths over which kite-gen's measured model (gen/kg_span.c,
 * every row variant's tuned times interpolated in log2 N) predicts one
 * variant fastest for op and dtype; the variant takes every N in it. */
struct kite_row_span {
  const char *op;
  kite_dtype dtype;
  int64_t n_lo, n_hi;    /* inclusive */
  int32_t variant;       /* index into kite_variants                        */
};

/* One GPU's measured dispatch (bench/tuned/<gpu>.tsv and .times.tsv): the
 * runtime uses the first set whose gpu the device's name holds, case aside
 * ("h100" in "NVIDIA H100 80GB HBM3"), else the first set, the default. */
struct kite_gpu_table {
  const char *gpu;       /* [a-z0-9_]+, or "" for a set made without a name */
  const struct kite_rule *rules;
  int32_t rules_len;
  const struct kite_gemm_model *models;
  int32_t models_len;
  const struct kite_row_span *spans;
  int32_t spans_len;
};

extern const struct kite_variant kite_variants[];
extern const int32_t kite_variants_len;
extern const struct kite_gpu_table kite_gpu_tables[];   /* at least one set */
extern const int32_t kite_gpu_tables_len;

#ifdef __cplusplus
}
#endif
#endif
