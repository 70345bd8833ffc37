/* kite_device.c - what the runtime needs to know of a device: its name (which
   measured set it dispatches through), its SM count (grid sizes) and whether
   it runs sm_90a code.  One cudaGetDeviceProperties per device fills a record
   that is kept for the process's life. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "kite_internal.h"

#define KITE_MAX_DEVICES 64

static struct kite_device kite_devices[KITE_MAX_DEVICES];
/* 1 once kite_devices[i] is filled: released after the fill, acquired before a read. */
static _Atomic int kite_device_known[KITE_MAX_DEVICES];
static pthread_mutex_t kite_device_lock = PTHREAD_MUTEX_INITIALIZER;
/* A device past KITE_MAX_DEVICES is asked each time, into the caller's thread's record. */
static _Thread_local struct kite_device kite_device_spare;

static cudaError_t kite_device_fill(struct kite_device *d, int id)
{
  struct cudaDeviceProp p;
  const cudaError_t e = cudaGetDeviceProperties(&p, id);
  if (e != cudaSuccess) return e;
  if (p.multiProcessorCount < 1) return cudaErrorInvalidDevice;
  d->id = id;
  d->sms = p.multiProcessorCount;
  d->major = p.major;
  d->minor = p.minor;
  snprintf(d->name, sizeof d->name, "%s", p.name);
  d->table = kite__table_for_device(d->name);
  return cudaSuccess;
}

cudaError_t kite__device(const struct kite_device **out)
{
  int id;
  cudaError_t e = cudaGetDevice(&id);
  if (e != cudaSuccess) return e;
  if (id < 0 || id >= KITE_MAX_DEVICES) {
    e = kite_device_fill(&kite_device_spare, id);
    if (e == cudaSuccess) *out = &kite_device_spare;
    return e;
  }
  if (!atomic_load_explicit(&kite_device_known[id], memory_order_acquire)) {
    pthread_mutex_lock(&kite_device_lock);
    if (!atomic_load_explicit(&kite_device_known[id], memory_order_relaxed) &&
        (e = kite_device_fill(&kite_devices[id], id)) == cudaSuccess)
      atomic_store_explicit(&kite_device_known[id], 1, memory_order_release);
    pthread_mutex_unlock(&kite_device_lock);
    if (e != cudaSuccess) return e;
  }
  *out = &kite_devices[id];
  return cudaSuccess;
}
