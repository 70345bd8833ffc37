/* kite_status.c - status codes, per-thread error detail, dtype facts. */
#include <stdarg.h>
#include <stdio.h>

#include "kite_internal.h"

#define KITE_ERR_LEN 512

static _Thread_local char kite_err[KITE_ERR_LEN];

const char *kite_status_str(kite_status s)
{
  switch (s) {
  case KITE_OK: return "KITE_OK";
  case KITE_ERR_INVALID_ARG: return "KITE_ERR_INVALID_ARG";
  case KITE_ERR_UNSUPPORTED: return "KITE_ERR_UNSUPPORTED";
  case KITE_ERR_CUDA: return "KITE_ERR_CUDA";
  case KITE_ERR_NO_KERNEL: return "KITE_ERR_NO_KERNEL";
  case KITE_ERR_INTERNAL: return "KITE_ERR_INTERNAL";
  }
  return "KITE_ERR_UNKNOWN_STATUS";
}

const char *kite_last_error(void)
{
  return kite_err;
}

kite_status kite__fail(kite_status s, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(kite_err, sizeof kite_err, fmt, ap);
  va_end(ap);
  return s;
}

int kite__dtype_size(kite_dtype d)
{
  switch (d) {
  case KITE_BF16: case KITE_F16: return 2;
  case KITE_F32: return 4;
  case KITE_E4M3: return 1;
  }
  return 0;
}

const char *kite__dtype_name(kite_dtype d)
{
  switch (d) {
  case KITE_BF16: return "bf16";
  case KITE_F16: return "f16";
  case KITE_F32: return "f32";
  case KITE_E4M3: return "e4m3";
  }
  return "?";
}

kite_status kite__check_row_dtype(kite_dtype d)
{
  if (kite__dtype_size(d) == 0)
    return kite__fail(KITE_ERR_INVALID_ARG, "dtype %d is not a kite_dtype", (int)d);
  if (d == KITE_E4M3)
    return kite__fail(KITE_ERR_UNSUPPORTED, "row ops take bf16, f16 or f32, not e4m3");
  return KITE_OK;
}
