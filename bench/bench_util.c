/* bench_util.c - helpers shared by kite-bench's benchmarks (bench_util.h). */
#define _POSIX_C_SOURCE 200809L   /* popen */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

#define DEFAULT_L2 ((size_t)50 << 20)   /* H200's; used when the device reports none */

/* ---- errors ---------------------------------------------------------------- */

void die(const char *fmt, ...)
{
  va_list ap;
  fflush(stdout);
  fputs("kite-bench: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(1);
}

void *xmalloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  if (!p) die("out of host memory (%zu bytes)", n);
  return p;
}

/* ---- arguments and element types ------------------------------------------- */

int parse_dtype(const char *s, kite_dtype *d)
{
  if (strcmp(s, "bf16") == 0) *d = KITE_BF16;
  else if (strcmp(s, "f16") == 0 || strcmp(s, "fp16") == 0) *d = KITE_F16;
  else if (strcmp(s, "f32") == 0 || strcmp(s, "fp32") == 0) *d = KITE_F32;
  else if (strcmp(s, "e4m3") == 0) *d = KITE_E4M3;
  else return 0;
  return 1;
}

const char *dtype_name(kite_dtype d)
{
  switch (d) {
  case KITE_BF16: return "bf16";
  case KITE_F16: return "f16";
  case KITE_F32: return "f32";
  case KITE_E4M3: return "e4m3";
  }
  return "?";
}

int dtype_size(kite_dtype d)
{
  return d == KITE_F32 ? 4 : d == KITE_E4M3 ? 1 : 2;
}

int64_t parse_count(const char *s, const char *what)
{
  char *end;
  errno = 0;
  if (strncmp(s, "2^", 2) == 0) {
    long k = strtol(s + 2, &end, 10);
    if (errno || end == s + 2 || *end || k < 0 || k > 62) die("bad %s '%s' (want 2^k, k in 0..62)", what, s);
    return (int64_t)1 << k;
  }
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v <= 0) die("bad %s '%s' (want a positive number or 2^k)", what, s);
  return (int64_t)v;
}

int parse_int(const char *s, const char *what, int lo, int hi)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) die("bad %s '%s' (want %d..%d)", what, s, lo, hi);
  return (int)v;
}

const char *need_arg(int argc, char **argv, int *i)
{
  if (*i + 1 >= argc) die("%s needs a value", argv[*i]);
  return argv[++*i];
}

static int ident_char(char c)
{
  return isalnum((unsigned char)c) || c == '_';
}

int has_word(const char *text, const char *name)
{
  size_t n = strlen(name);
  for (const char *p = strstr(text, name); p; p = strstr(p + 1, name))
    if ((p == text || !ident_char(p[-1])) && !ident_char(p[n])) return 1;
  return 0;
}

/* ---- random inputs and host conversions ------------------------------------ */

uint64_t xorshift(uint64_t *s)
{
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

double log_uniform(uint64_t *s, double lo, double hi)
{
  return exp2(lo + (hi - lo) * (double)(xorshift(s) >> 11) / 9007199254740992.0);   /* 53 bits / 2^53 */
}

static uint16_t f32_to_bf16(float f)
{
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);   /* round to nearest even; inputs are finite */
  return (uint16_t)(u >> 16);
}

static uint16_t f32_to_f16(float f)
{
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000u, mant = u & 0x7fffffu;
  int32_t exp = (int32_t)((u >> 23) & 0xffu) - 127 + 15;
  if (exp <= 0) return (uint16_t)sign;            /* below f16's normal range: signed zero */
  if (exp >= 31) return (uint16_t)(sign | 0x7c00u);
  uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13), rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;   /* a carry rounds into the exponent */
  return (uint16_t)h;
}

void fill_random(void *dst, size_t n, kite_dtype d, float lo, float hi, uint64_t seed)
{
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 0x1234567ULL;
  if (s == 0) s = 1;
  const float scale = (hi - lo) / 16777216.0f;
  for (size_t i = 0; i < n; i += 2) {
    uint64_t r = xorshift(&s);
    float v[2] = { lo + (float)(r >> 40) * scale, lo + (float)((r >> 16) & 0xffffffu) * scale };
    for (size_t k = 0; k < 2 && i + k < n; k++) {
      if (d == KITE_F32) ((float *)dst)[i + k] = v[k];
      else if (d == KITE_F16) ((uint16_t *)dst)[i + k] = f32_to_f16(v[k]);
      else ((uint16_t *)dst)[i + k] = f32_to_bf16(v[k]);
    }
  }
}

static float bits_to_f32(uint32_t u)
{
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Exact: every f16 value, subnormals, infinities and NaNs included, is a float. */
static float f16_to_f32(uint16_t h)
{
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return bits_to_f32(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) return bits_to_f32(sign | ((exp + 127 - 15) << 23) | (mant << 13));
  float v = (float)mant * (1.0f / 16777216.0f);   /* subnormal: mant * 2^-24 */
  return sign ? -v : v;
}

float elem_to_f32(kite_dtype d, const void *base, size_t i)
{
  if (d == KITE_F32) return ((const float *)base)[i];
  uint16_t h = ((const uint16_t *)base)[i];
  if (d == KITE_F16) return f16_to_f32(h);
  return bits_to_f32((uint32_t)h << 16);
}

/* ---- device and timing -------------------------------------------------------- */

void bench_open_device(int device, struct bench_device *d)
{
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    die("no usable CUDA device (%s); kite-bench times kernels and needs an sm_90 GPU "
        "(H100/H200).  `--explain` and `--list` work without one.",
        e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
  if (device < 0 || device >= count) die("--device %d: only %d CUDA device(s) visible", device, count);
  CUDA_CHECK(cudaSetDevice(device));
  struct cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  snprintf(d->name, sizeof d->name, "%s", p.name);
  if (p.major != 9 || p.minor != 0)
    die("device %d (%s) is sm_%d%d; kite's kernels are built for sm_90a (H100/H200)", device, p.name,
        p.major, p.minor);
  d->l2 = p.l2CacheSize > 0 ? (size_t)p.l2CacheSize : DEFAULT_L2;
  if (p.l2CacheSize <= 0) fprintf(stderr, "kite-bench: warning: device reports no L2 size; assuming 50 MiB\n");
  d->sms = p.multiProcessorCount;
}

int cmp_float(const void *a, const void *b)
{
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

struct timing timing_of(float *ms, int n)
{
  struct timing t;
  qsort(ms, (size_t)n, sizeof *ms, cmp_float);
  double med = n % 2 ? ms[n / 2] : 0.5 * ((double)ms[n / 2 - 1] + (double)ms[n / 2]);
  t.median_us = med * 1e3;
  t.min_us = (double)ms[0] * 1e3;
  t.max_us = (double)ms[n - 1] * 1e3;
  return t;
}

void bench_tune_tail(const char *device, char *out, size_t len)
{
  char commit[64] = "", date[32];
  const char *env = getenv("KITE_COMMIT");
  FILE *p = env ? NULL : popen("git rev-parse --short HEAD 2>/dev/null", "r");
  if (env) snprintf(commit, sizeof commit, "%s", env);
  if (p) {
    if (!fgets(commit, sizeof commit, p)) commit[0] = '\0';
    commit[strcspn(commit, "\r\n")] = '\0';
    pclose(p);
  }
  if (!commit[0]) snprintf(commit, sizeof commit, "unknown");
  const time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
  char dev[256];
  snprintf(dev, sizeof dev, "%s", device);
  for (char *c = dev; *c; c++)
    if (*c == '\t' || *c == '\n') *c = ' ';   /* one field */
  snprintf(out, len, "%s\t%s\t%s", dev, date, commit);
}

void ranking_init(struct ranking *r, int cap)
{
  memset(r, 0, sizeof *r);
  r->cap = cap < 1 ? 1 : cap > RANKING_MAX ? RANKING_MAX : cap;
}

void ranking_add(struct ranking *r, const char *name, double us)
{
  r->seen++;
  if (r->n == r->cap && us >= r->us[r->n - 1]) return;
  int i = r->n < r->cap ? r->n++ : r->n - 1;   /* full: the slowest kept goes */
  for (; i > 0 && r->us[i - 1] > us; i--) {
    r->name[i] = r->name[i - 1];
    r->us[i] = r->us[i - 1];
  }
  r->name[i] = name;
  r->us[i] = us;
}

/* key's fields, the first six of both files' lines, each followed by a tab. */
static void key_fields(FILE *f, const struct tune_key *key)
{
  fprintf(f, "%s\t%s\t%s\t%lld\t%lld\t%lld\t", key->op, dtype_name(key->ab), dtype_name(key->c), (long long)key->m,
          (long long)key->n, (long long)key->k);
}

void tune_line(FILE *f, const struct tune_key *key, const struct ranking *r, const char *failed, const char *tail)
{
  if (!failed && r->n == 0) return;
  key_fields(f, key);
  if (failed) fprintf(f, "%s\tfailed\t-\t-\t%s\n", failed, tail);
  else if (r->n == 1) fprintf(f, "%s\t%.3f\t-\t-\t%s\n", r->name[0], r->us[0], tail);
  else fprintf(f, "%s\t%.3f\t%s\t%.3f\t%s\n", r->name[0], r->us[0], r->name[1], r->us[1], tail);
  fflush(f);
}

void times_line(FILE *f, const struct tune_key *key, const char *variant, double us, int sms)
{
  fputs("=\t", f);
  key_fields(f, key);
  fprintf(f, "%s\t%.3f\t%d\n", variant, us, sms);
}

/* ---- a tune's supervisor --------------------------------------------------------- */

#define TUNE_STALL_S 120          /* a child silent this long is hung: killed ($KITE_TUNE_STALL_S) */
#define TUNE_MAX_STARTS 64        /* children per tune at most */

/* One of the tune's files and the lines of the shape under way meant for it. */
struct tune_file {
  FILE *f;                        /* NULL: its lines are dropped */
  char *lines;
  size_t len, cap;
};

/* The parent's view of the child's report. */
struct tune_watch {
  struct tune_file out[2];        /* the tsv, and the aux file ("=" lines) */
  struct tune_run *run;
  int shape;                      /* the shape under way, -1 between shapes */
  char try_line[1024];            /* the failed line of the variant being tried, or "" */
  int ended, rc;                  /* @end seen, and its RC */
};

static void file_keep(struct tune_file *o, const char *line)
{
  size_t n = strlen(line);
  if (o->len + n + 2 > o->cap) {
    o->cap = (o->len + n + 2) * 2;
    o->lines = realloc(o->lines, o->cap);
    if (!o->lines) die("out of host memory");
  }
  memcpy(o->lines + o->len, line, n);
  o->len += n;
  o->lines[o->len++] = '\n';
}

/* The shape's lines to the files (commit), or dropped (commit = 0). */
static void watch_flush(struct tune_watch *w, int commit)
{
  for (int i = 0; i < 2; i++) {
    struct tune_file *o = &w->out[i];
    if (commit && o->f && o->len) {
      if (fwrite(o->lines, 1, o->len, o->f) != o->len) die("writing the tune's file failed");
      fflush(o->f);
    }
    o->len = 0;
  }
}

static void watch_line(struct tune_watch *w, const char *line)
{
  int k = 0;
  if (strncmp(line, "=\t", 2) == 0) {
    file_keep(&w->out[1], line + 2);
  } else if (line[0] != '@') {
    file_keep(&w->out[0], line);
  } else if (sscanf(line, "@shape\t%d", &k) == 1) {
    w->shape = k;
    watch_flush(w, 0);
    w->try_line[0] = '\0';
  } else if (strncmp(line, "@try\t", 5) == 0) {
    const char *t = strchr(line + 5, '\t');
    snprintf(w->try_line, sizeof w->try_line, "%s", t ? t + 1 : "");
  } else if (strncmp(line, "@time\t", 6) == 0) {
    w->try_line[0] = '\0';
  } else if (sscanf(line, "@done\t%d", &k) == 1) {
    watch_flush(w, 1);
    if (k < 0) w->run->header_done = 1;
    else w->run->from = k + 1;
    w->shape = -1;
    w->try_line[0] = '\0';
  } else if (sscanf(line, "@end\t%d", &k) == 1) {
    w->ended = 1;
    w->rc = k;
  }
}

/* Reads the child's lines until it closes the pipe or stalls; 0 on a stall. */
static int watch_child(struct tune_watch *w, int fd, int stall_s)
{
  char buf[8192];
  size_t have = 0;
  for (;;) {
    struct pollfd pfd = { fd, POLLIN, 0 };
    if (poll(&pfd, 1, stall_s * 1000) == 0) return 0;
    ssize_t got = read(fd, buf + have, sizeof buf - 1 - have);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return 1;
    have += (size_t)got;
    buf[have] = '\0';
    char *start = buf, *nl;
    while ((nl = strchr(start, '\n'))) {
      *nl = '\0';
      watch_line(w, start);
      start = nl + 1;
    }
    have -= (size_t)(start - buf);
    memmove(buf, start, have);
    if (have == sizeof buf - 1) die("a tune line longer than %zu bytes", sizeof buf);
  }
}

/* After a child died: the variant it was trying is failed and skipped from
   now on, else the shape it was in is; 0 when neither (no way forward). */
static int watch_recover(struct tune_watch *w, const char *why)
{
  struct tune_run *run = w->run;
  if (w->shape < 0) return 0;
  if (w->try_line[0]) {
    char variant[128] = "";
    sscanf(w->try_line, "%*[^\t]\t%*[^\t]\t%*[^\t]\t%*[^\t]\t%*[^\t]\t%*[^\t]\t%127[^\t]", variant);
    if (run->nskip == TUNE_MAX_SKIP || !variant[0]) return 0;
    printf("tune: %s while running %s (shape %d): recorded as failed, resuming without it\n", why, variant,
           w->shape);
    fprintf(w->out[0].f, "%s\n", w->try_line);
    run->skip[run->nskip].shape = w->shape;
    snprintf(run->skip[run->nskip++].variant, sizeof run->skip[0].variant, "%s", variant);
    run->from = w->shape;
  } else {
    printf("tune: %s in shape %d outside any one variant: shape skipped\n", why, w->shape);
    fprintf(w->out[0].f, "# shape %d of this tune skipped: %s outside any one variant\n", w->shape, why);
    run->from = w->shape + 1;
  }
  fflush(w->out[0].f);
  fflush(stdout);
  return 1;
}

/* One child: runs work, reports @end; the parent watches it. Returns 1 when
   the work ended, 0 when the child died (why says how). */
static int tune_child(struct tune_watch *w, tune_work_fn work, void *ctx, char *why, size_t len)
{
  int fds[2];
  if (pipe(fds) != 0) die("pipe: %s", strerror(errno));
  fflush(stdout);
  for (int i = 0; i < 2; i++)
    if (w->out[i].f) fflush(w->out[i].f);
  pid_t pid = fork();
  if (pid < 0) die("fork: %s", strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    w->run->out = fdopen(fds[1], "w");
    if (!w->run->out) _exit(1);
    int rc = work(w->run, ctx);
    fprintf(w->run->out, "@end\t%d\n", rc);
    fflush(w->run->out);
    fflush(stdout);
    _exit(0);
  }
  close(fds[1]);
  w->shape = -1;
  watch_flush(w, 0);
  w->try_line[0] = '\0';
  const char *env = getenv("KITE_TUNE_STALL_S");
  const int stall_s = env && atoi(env) > 0 ? atoi(env) : TUNE_STALL_S;
  const int alive = watch_child(w, fds[0], stall_s);
  if (!alive) kill(pid, SIGKILL);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!alive) snprintf(why, len, "no word for %d s (killed)", stall_s);
  else if (WIFSIGNALED(status)) snprintf(why, len, "signal %d", WTERMSIG(status));
  else snprintf(why, len, "exit %d", WEXITSTATUS(status));
  return alive && w->ended;
}

int tune_supervise(FILE *tsv, FILE *aux, tune_work_fn work, void *ctx)
{
  struct tune_run run;
  struct tune_watch w;
  memset(&run, 0, sizeof run);
  memset(&w, 0, sizeof w);
  w.out[0].f = tsv;
  w.out[1].f = aux;
  w.run = &run;
  int starts = 0, rc = -1;
  char why[128];
  for (;;) {
    if (tune_child(&w, work, ctx, why, sizeof why)) {
      rc = w.rc;
      break;
    }
    if (++starts == TUNE_MAX_STARTS || !watch_recover(&w, why)) {
      printf("tune: %s; stopping (%d children)\n", why, starts);
      break;
    }
  }
  free(w.out[0].lines);
  free(w.out[1].lines);
  return rc;
}

int tune_shape(struct tune_run *run, int k)
{
  if (k < run->from) return 0;
  fprintf(run->out, "@shape\t%d\n", k);
  fflush(run->out);
  return 1;
}

int tune_try(struct tune_run *run, int k, const struct tune_key *key, const char *variant, const char *tail)
{
  for (int i = 0; i < run->nskip; i++)
    if (run->skip[i].shape == k && strcmp(run->skip[i].variant, variant) == 0) return 0;
  fprintf(run->out, "@try\t%d\t", k);
  tune_line(run->out, key, NULL, variant, tail);
  return 1;
}

void tune_timing(struct tune_run *run, int k)
{
  fprintf(run->out, "@time\t%d\n", k);
  fflush(run->out);
}

void tune_done(struct tune_run *run, int k)
{
  if (k < 0) run->header_done = 1;   /* in this child too, not only in the next */
  fprintf(run->out, "@done\t%d\n", k);
  fflush(run->out);
}

void bench_dispatch_set(char *buf, size_t len)
{
  char text[2048] = "";
  const char *at;
  if (kite_explain("rmsnorm", KITE_BF16, 1, 1024, 0, text, sizeof text) != KITE_OK ||
      (at = strrchr(text, '[')) == NULL) {
    snprintf(buf, len, "unknown (%s)", kite_last_error());
    return;
  }
  snprintf(buf, len, "%.*s", (int)strcspn(at + 1, "]"), at + 1);
}

void bench_print_dispatch_set(void)
{
  char set[320];
  bench_dispatch_set(set, sizeof set);
  printf("# dispatch: %s\n", set);
}
