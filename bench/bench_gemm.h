/* bench_gemm.h - `kite-bench gemm`: kite_gemm against cuBLASLt (bench_gemm.c). */
#ifndef KITE_BENCH_GEMM_H
#define KITE_BENCH_GEMM_H

/* argv[0] is "gemm"; returns the process's exit status. */
int cmd_gemm(int argc, char **argv);

#endif
