/* kite_internal.h - what the runtime's modules share; not installed. */
#ifndef KITE_INTERNAL_H
#define KITE_INTERNAL_H

#include "kite.h"
#include "kite_table.h"

/* Records the calling thread's failure detail (printf-style) and returns s. */
kite_status kite__fail(kite_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Bytes of a dtype's element, 0 for an unknown dtype. */
int kite__dtype_size(kite_dtype d);
const char *kite__dtype_name(kite_dtype d);

/* KITE_OK if dtype is one the row ops take; else records why. */
kite_status kite__check_row_dtype(kite_dtype d);

/* The largest power of two (at most cap, itself one) dividing every address and byte stride given. */
int32_t kite__align_upto(int32_t cap, const void *const *ptrs, int nptrs, const int64_t *strides, int nstrides);
/* kite__align_upto at most 16: all the row ops' variants ask. */
int32_t kite__align_of(const void *const *ptrs, int nptrs, const int64_t *strides, int nstrides);

/* What the runtime knows of a device, asked of CUDA once (kite_device.c). */
struct kite_device {
  int id;            /* the CUDA device number */
  int sms;           /* multiprocessors */
  int major, minor;  /* compute capability: kite's kernels need 9.0 (sm_90a) */
  int32_t table;     /* index of its measured set in kite_gpu_tables (kite__table_for_device) */
  char name[256];    /* cudaDeviceProp's name, "NVIDIA H100 80GB HBM3" */
};

/* Points *d at the current device's record, filled by one
   cudaGetDeviceProperties the first time the device is asked for and kept
   (thread-safe; past device 63 it is asked each time, into a record of the
   calling thread's).  Returns CUDA's error, *d untouched, when there is no
   usable device. */
cudaError_t kite__device(const struct kite_device **d);

/* The environment variable that names the measured set to use on any device
   ("h100"), over the device's own. */
#define KITE_GPU_ENV "KITE_GPU"

/* How kite__table chose the current set. */
enum kite_table_how {
  KITE_TABLE_DEVICE,       /* the set the device's name holds, else the default */
  KITE_TABLE_ENV,          /* KITE_GPU named it */
  KITE_TABLE_ENV_UNKNOWN,  /* KITE_GPU named no set: the default */
  KITE_TABLE_NO_DEVICE,    /* no current device: the default */
  KITE_TABLE_FORCED        /* kite__table_force */
};

/* The measured set of the current device (kite_gpu_tables): the one
   kite__table_force set, else the one KITE_GPU names, else the first set
   whose gpu the device's name holds (case aside; kite__device's table),
   else the first set.  *how (when how is not NULL) says which. */
const struct kite_gpu_table *kite__table(enum kite_table_how *how);
/* The index of the set named name (case aside); -1 if none is. */
int32_t kite__table_named(const char *name);
/* The index of the set for a device named name (its first match, else 0). */
int32_t kite__table_for_device(const char *name);
/* Makes kite__table return set i in every thread from now on (tests); a
   negative i (or one out of range) goes back to choosing. */
void kite__table_force(int32_t i);
/* kite_explain's words on set t chosen as how said, into buf. */
void kite__table_note(const struct kite_gpu_table *t, enum kite_table_how how, char *buf, size_t len);
/* Appends " [that note]" to the text in buf (of len bytes), as room allows. */
void kite__explain_table(const struct kite_gpu_table *t, enum kite_table_how how, char *buf, size_t len);

/* Why kite__pick chose its variant: the measured span, else the tuned rule,
   else neither (the heuristic), in the measured set table (chosen as how
   says). */
struct kite_row_why {
  const struct kite_row_span *span;
  const struct kite_rule *rule;
  const struct kite_gpu_table *table;
  enum kite_table_how how;
};
/* The variant for op and dtype for a row of n elements whose pointers and
   strides are `align`-byte aligned: the measured span holding n if its
   variant takes the problem, else the tuned rule nearest n whose variant
   does, else the heuristic (lowest rank, then smallest n_max); NULL if none
   fits.  *why (when why is not NULL) says which decided. */
const struct kite_variant *kite__pick(const char *op, kite_dtype dtype, int64_t n, int32_t align,
                                      struct kite_row_why *why);
/* The span of spans[0..nspans) for op and dtype holding n; NULL if none. */
const struct kite_row_span *kite__span_find(const struct kite_row_span *spans, int32_t nspans, const char *op,
                                            kite_dtype dtype, int64_t n);
/* [*lo, *hi): the rows of kite_variants holding op's variants (empty if it
   has none); the whole table if the index could not be built. */
void kite__op_range(const char *op, int32_t *lo, int32_t *hi);
/* The same for set t's rules: [*lo, *hi) of t->rules holds op's tuned rules. */
void kite__rule_range(const struct kite_gpu_table *t, const char *op, int32_t *lo, int32_t *hi);
/* The same for set t's spans. */
void kite__span_range(const struct kite_gpu_table *t, const char *op, int32_t *lo, int32_t *hi);
/* The heuristic alone over tab[0..ntab). */
const struct kite_variant *kite__row_heuristic(const struct kite_variant *tab, int32_t ntab, const char *op,
                                               kite_dtype dtype, int64_t n, int32_t align);
/* Whether variant v can run a problem; ctx is the caller's description of it. */
typedef int (*kite_fits_fn)(const struct kite_variant *v, const void *ctx);
/* log2 of a size as the rules store it (0 for sizes below 1). */
float kite__log2(int64_t x);
/* The rule of rules[0..nrules) for op, dtype and dtype_out nearest the shape
   in log2 space (n alone for rules with k = 0; m, n and k otherwise) whose
   variant, an index into tab[0..ntab), fits; the first such rule on ties;
   NULL if none. */
const struct kite_rule *kite__rule_pick(const struct kite_rule *rules, int32_t nrules,
                                        const struct kite_variant *tab, int32_t ntab, const char *op,
                                        kite_dtype dtype, kite_dtype dtype_out, int64_t M, int64_t N,
                                        int64_t K, kite_fits_fn fits, const void *ctx);
/* What a row variant needs of a problem: kite_fits_fn's ctx for row ops. */
struct kite_row_fit {
  kite_dtype dtype;
  int64_t n;
  int32_t align;
};
int kite__row_fits(const struct kite_variant *v, const void *ctx);

/* The byte span [span[0], span[1]) that rows rows of n elements of es bytes,
   ld elements apart, cover from p (rows >= 1; the caller checked overflow). */
void kite__span(const void *p, int64_t rows, int64_t n, int64_t ld, int es, uintptr_t span[2]);

/* 1 if two spans from kite__span share a byte. */
int kite__spans_overlap(const uintptr_t a[2], const uintptr_t b[2]);

/* 1 if rows rows of n elements of es bytes, ld elements apart, span fewer
   than 2^63 bytes (rows >= 1, ld >= n >= 1). */
int kite__fits_memory(int64_t rows, int64_t n, int64_t ld, int es);

/* 1 if p (NULL counts as aligned) is not a multiple of bytes. */
int kite__misaligned(const void *p, int bytes);

/* The gemm heuristic over tab[0..n): among variants of op "gemm" reading ab,
   writing c and needing an alignment that divides align, the least estimated
   time on sms SMs (see kite_gemm.c); NULL if none fits. */
const struct kite_variant *kite__gemm_pick(const struct kite_variant *tab, int32_t n, kite_dtype ab,
                                           kite_dtype c, int64_t M, int64_t N, int64_t K,
                                           int32_t align, int sms);
/* What a gemm variant needs of a problem: kite_fits_fn's ctx for gemm. */
struct kite_gemm_fit {
  kite_dtype ab, c;
  int32_t align;
};
int kite__gemm_fits(const struct kite_variant *v, const void *ctx);
/* The model of models[0..nmodels) whose variant (an index into tab[0..ntab))
   fits the problem and is predicted fastest on sms SMs (*us gets the
   prediction); the first on ties; NULL if none. */
const struct kite_gemm_model *kite__gemm_model_pick(const struct kite_gemm_model *models, int32_t nmodels,
                                                    const struct kite_variant *tab, int32_t ntab, kite_dtype ab,
                                                    kite_dtype c, int64_t M, int64_t N, int64_t K, int32_t align,
                                                    int sms, double *us);
/* The tuned gemm rule of the current set (kite__table) that decides for a
   problem: the nearest (kite__rule_pick) when it lies within reach of the
   problem in every dimension; NULL if none. */
const struct kite_rule *kite__gemm_rule(kite_dtype ab, kite_dtype c, int64_t M, int64_t N, int64_t K,
                                        int32_t align);

/* kite_gemm's variant for a problem on sms SMs (the one kite_explain names,
   for any alignment): remembered per thread for the next call's problem. */
const struct kite_variant *kite__gemm_choice(kite_dtype ab, kite_dtype c, int64_t M, int64_t N, int64_t K,
                                             int32_t align, int sms);

/* kite_explain for op "gemm" (C of the same dtype as A and B). */
kite_status kite__gemm_explain(kite_dtype dtype, int64_t M, int64_t N, int64_t K, char *buf, size_t len);

/* kite_run_variant's two halves: v's args checked as its op checks them, then launched. */
kite_status kite__row_run_variant(const struct kite_variant *v, const kite_row_args *a, cudaStream_t stream);
kite_status kite__gemm_run_variant(const struct kite_variant *v, const kite_gemm_args *a,
                                   cudaStream_t stream);

/* The table row named name, or NULL. */
const struct kite_variant *kite__find(const char *name);

/* Checks that the current device can run sm_90a code, then launches v. */
kite_status kite__launch(const struct kite_variant *v, const void *args, cudaStream_t stream);

/* Number of kernel launches this process made through kite (tests use it to
   check that invalid calls launch nothing). */
uint64_t kite__launch_count(void);

#endif
