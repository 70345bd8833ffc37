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

/* The largest power of two (at most 16) dividing every address and byte stride given. */
int32_t kite__align_of(const void *const *ptrs, int nptrs, const int64_t *strides, int nstrides);

/* The heuristic pick among generated variants of op and dtype for a row of n
   elements whose pointers and strides are `align`-byte aligned; NULL if none. */
const struct kite_variant *kite__pick(const char *op, kite_dtype dtype, int64_t n, int32_t align);

/* The table row named name, or NULL. */
const struct kite_variant *kite__find(const char *name);

/* Checks that the current device can run sm_90a code, then launches v. */
kite_status kite__launch(const struct kite_variant *v, const void *args, cudaStream_t stream);

/* Number of kernel launches this process made through kite (tests use it to
   check that invalid calls launch nothing). */
uint64_t kite__launch_count(void);

#endif
