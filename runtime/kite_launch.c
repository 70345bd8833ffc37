/* kite_launch.c - what generated launchers ask of the runtime: the SM count
   (kite_device.c's record) and TMA tensor maps (cached here), so that a
   launch costs little host time.
   <cuda.h> is included for its types only: the one driver function used is
   reached through the runtime, so nothing links libcuda. */
#include <cuda.h>
#include <pthread.h>
#include <string.h>

#include "kite_internal.h"
#include "kite_launch.h"

#define KITE_TMAP_CACHE 64

/* ---- SM count --------------------------------------------------------------- */

/* The current device's SM count, from its kite__device record. */
cudaError_t kite__device_sms(int *sms)
{
  const struct kite_device *d;
  if (!sms) return cudaErrorInvalidValue;
  const cudaError_t e = kite__device(&d);
  if (e == cudaSuccess) *sms = d->sms;
  return e;
}

/* ---- the driver's encoder, found once ------------------------------------------ */

typedef CUresult (*kite_encode_fn)(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                                   void *base, const cuuint64_t *dim, const cuuint64_t *strides,
                                   const cuuint32_t *box, const cuuint32_t *estrides,
                                   CUtensorMapInterleave il, CUtensorMapSwizzle swz,
                                   CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob);

static pthread_once_t kite_encode_once = PTHREAD_ONCE_INIT;
static kite_encode_fn kite_encode;          /* written once, read after pthread_once */
static cudaError_t kite_encode_err;

static void kite_encode_find(void)
{
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                   cudaEnableDefault, &q);
#else
  cudaError_t e = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &q);
#endif
  if (e == cudaSuccess && (q != cudaDriverEntryPointSuccess || !fn)) e = cudaErrorSymbolNotFound;
  kite_encode_err = e;
  kite_encode = e == cudaSuccess ? (kite_encode_fn)fn : NULL;
}

/* ---- argument checks ----------------------------------------------------------- */

/* What a tensor map is made of: the cache key and the encoder's input. */
struct kite_tmap_key {
  const void *base;
  int64_t rows, cols, ld;
  int32_t box_rows, box_cols, swizzle, dtype, device;
};

/* The driver's element type of d, or -1. */
static int kite_tmap_type(kite_dtype d)
{
  switch (d) {
  case KITE_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case KITE_F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case KITE_F32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case KITE_E4M3: return CU_TENSOR_MAP_DATA_TYPE_UINT8;   /* TMA only moves the bytes */
  }
  return -1;
}

/* The driver's swizzle mode for a swizzle span of bytes, or -1. */
static int kite_tmap_swizzle(int32_t bytes)
{
  switch (bytes) {
  case 0: return CU_TENSOR_MAP_SWIZZLE_NONE;
  case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
  case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
  case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  return -1;
}

/* 1 if the driver would take k (its documented limits), so that a bad
   request is refused here, the same way with or without a driver. */
static int kite_tmap_valid(const struct kite_tmap_key *k)
{
  const int64_t es = kite__dtype_size((kite_dtype)k->dtype), dim_max = (int64_t)1 << 32;
  if (kite_tmap_type((kite_dtype)k->dtype) < 0 || kite_tmap_swizzle(k->swizzle) < 0) return 0;
  if (!k->base || (uintptr_t)k->base % 16 != 0) return 0;
  if (k->rows < 1 || k->cols < 1 || k->rows > dim_max || k->cols > dim_max) return 0;
  if (k->ld < k->cols || k->ld >= ((int64_t)1 << 40) / es || k->ld * es % 16 != 0) return 0;
  if (k->box_rows < 1 || k->box_rows > 256 || k->box_cols < 1 || k->box_cols > 256) return 0;
  if (k->box_cols * es % 16 != 0) return 0;
  return k->swizzle == 0 || k->box_cols * es <= k->swizzle;
}

/* ---- the cache ------------------------------------------------------------------ */

/* A map is a pure function of its key, so an entry never goes stale (memory
   freed and reallocated at the same address gets the same map).  Least
   recently used entries are replaced; used == 0 marks an empty slot. */
struct kite_tmap_entry {
  CUtensorMap map;
  struct kite_tmap_key key;
  uint64_t used;
};

static pthread_mutex_t kite_tmap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kite_tmap_entry kite_tmaps[KITE_TMAP_CACHE];
static uint64_t kite_tmap_tick;

static int kite_tmap_same(const struct kite_tmap_key *a, const struct kite_tmap_key *b)
{
  return a->base == b->base && a->rows == b->rows && a->cols == b->cols && a->ld == b->ld &&
         a->box_rows == b->box_rows && a->box_cols == b->box_cols && a->swizzle == b->swizzle &&
         a->dtype == b->dtype && a->device == b->device;
}

/* The entry holding k, or else (with *hit = 0) the least recently used one.
   Called with the lock held. */
static struct kite_tmap_entry *kite_tmap_slot(const struct kite_tmap_key *k, int *hit)
{
  struct kite_tmap_entry *old = &kite_tmaps[0];
  for (int i = 0; i < KITE_TMAP_CACHE; i++) {
    struct kite_tmap_entry *e = &kite_tmaps[i];
    if (e->used && kite_tmap_same(&e->key, k)) {
      *hit = 1;
      return e;
    }
    if (e->used < old->used) old = e;
  }
  *hit = 0;
  return old;
}

/* ---- encoding ------------------------------------------------------------------- */

static cudaError_t kite_tmap_encode(const struct kite_tmap_key *k, CUtensorMap *map)
{
  const CUtensorMapDataType type = (CUtensorMapDataType)kite_tmap_type((kite_dtype)k->dtype);
  const CUtensorMapSwizzle swz = (CUtensorMapSwizzle)kite_tmap_swizzle(k->swizzle);
  const cuuint64_t dim[2] = { (cuuint64_t)k->cols, (cuuint64_t)k->rows };
  const cuuint64_t stride[1] = { (cuuint64_t)(k->ld * kite__dtype_size((kite_dtype)k->dtype)) };
  const cuuint32_t box[2] = { (cuuint32_t)k->box_cols, (cuuint32_t)k->box_rows }, one[2] = { 1, 1 };
  pthread_once(&kite_encode_once, kite_encode_find);
  if (!kite_encode) return kite_encode_err;
  CUresult r = kite_encode(map, type, 2, (void *)k->base, dim, stride, box, one,
                           CU_TENSOR_MAP_INTERLEAVE_NONE, swz, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t kite__tmap_2d(void *map, kite_dtype dtype, const void *base, int64_t rows, int64_t cols,
                          int64_t ld, int32_t box_rows, int32_t box_cols, int32_t swizzle_bytes)
{
  struct kite_tmap_key k = { base, rows, cols, ld, box_rows, box_cols, swizzle_bytes, (int32_t)dtype, 0 };
  if (!map || !kite_tmap_valid(&k)) return cudaErrorInvalidValue;
  cudaError_t e = cudaGetDevice(&k.device);
  if (e != cudaSuccess) return e;
  /* A miss encodes under the lock: one encode per key however many threads
     miss at once, and the driver's encoder is never entered concurrently. */
  int hit;
  pthread_mutex_lock(&kite_tmap_lock);
  struct kite_tmap_entry *slot = kite_tmap_slot(&k, &hit);
  if (!hit) {
    CUtensorMap fresh;
    memset(&fresh, 0, sizeof fresh);   /* every byte defined, whatever the driver leaves */
    /* the driver's encoder needs a current context, which a thread that
       has made no runtime call yet lacks (measured: "invalid argument" in
       fresh threads); cudaSetDevice makes the device's primary one current */
    e = cudaSetDevice(k.device);
    if (e == cudaSuccess) e = kite_tmap_encode(&k, &fresh);
    if (e == cudaSuccess) {
      slot->map = fresh;
      slot->key = k;
    }
  }
  if (e == cudaSuccess) {
    slot->used = ++kite_tmap_tick;
    memcpy(map, &slot->map, sizeof slot->map);
  }
  pthread_mutex_unlock(&kite_tmap_lock);
  return e;
}
