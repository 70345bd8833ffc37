/* test_gen.c - Check tests for kite-gen (gen/).  Run from the repository
 * root: the fixtures are tests/fixtures/gen/<case>/, their expected outputs
 * tests/fixtures/gen/expected/<case>/. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>
#include "kg.h"
#include "kt_check.h"

#define FIX "tests/fixtures/gen/"
#define OLD_TIME 1000000000  /* an mtime no run of the tests can produce */

/* ---- helpers ------------------------------------------------------- */

/* The bytes of path, NUL-terminated (malloc'd), or NULL. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  char *s;
  long n;
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  rewind(f);
  s = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(fread(s, 1, (size_t)n, f), n);
  s[n] = '\0';
  fclose(f);
  return s;
}

static void spit(const char *path, const char *s) {
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  fputs(s, f);
  fclose(f);
}

/* dst = a/b, checked to fit in cap bytes. */
static void join(char *dst, size_t cap, const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  ck_assert_uint_le(n + m + 2, cap);
  memcpy(dst, a, n);
  dst[n] = '/';
  memcpy(dst + n + 1, b, m + 1);
}

/* Declares char var[] holding a/b, for paths that must live long. */
#define PATH(var, a, b) \
  char var[512];        \
  join(var, sizeof var, a, b)

/* a/b in one of a few static buffers, for paths used at once. */
static const char *cat(const char *a, const char *b) {
  static char buf[8][512];
  static int i;
  char tmp[512], *s = buf[i++ % 8];
  join(tmp, sizeof tmp, a, b);
  memcpy(s, tmp, sizeof tmp);
  return s;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static time_t mtime(const char *path) {
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  return st.st_mtime;
}

static void set_old(const char *path) {
  struct utimbuf t = {OLD_TIME, OLD_TIME};
  ck_assert_int_eq(utime(path, &t), 0);
}

/* A fresh empty directory; "<it>/out" is where runs write. */
static char *tmpdir(void) {
  char tmpl[] = "/tmp/kg_test.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(tmpl));
  return strdup(tmpl);
}

static int rm_one(const char *p, const struct stat *st, int flag,
                  struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(p);
}

static void rm_rf(char *dir) {
  nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  free(dir);
}

static int nfiles_seen;
static int count_one(const char *p, const struct stat *st, int flag,
                     struct FTW *ftw) {
  (void)p, (void)st, (void)ftw;
  nfiles_seen += flag == FTW_F;
  return 0;
}

static int nfiles(const char *dir) {
  nfiles_seen = 0;
  nftw(dir, count_one, 16, FTW_PHYS);
  return nfiles_seen;
}

/* ---- running kite-gen with stdout and stderr captured -------------- */

typedef struct run {
  int rc;
  char *out, *err;
} run;

static int cap_begin(int fd, int *saved) {
  char tmpl[] = "/tmp/kg_cap.XXXXXX";
  int t = mkstemp(tmpl);
  ck_assert_int_ge(t, 0);
  unlink(tmpl);
  fflush(NULL);
  *saved = dup(fd);
  dup2(t, fd);
  return t;
}

static char *cap_end(int fd, int saved, int t) {
  off_t n;
  char *s;
  fflush(NULL);
  dup2(saved, fd);
  close(saved);
  n = lseek(t, 0, SEEK_END);
  s = malloc((size_t)n + 1);
  ck_assert_int_eq(pread(t, s, (size_t)n, 0), n);
  s[n] = '\0';
  close(t);
  return s;
}

static run run_opts(const kg_opts *o) {
  run r;
  int so, se, to = cap_begin(1, &so), te = cap_begin(2, &se);
  r.rc = kg_exec(o);
  r.err = cap_end(2, se, te);
  r.out = cap_end(1, so, to);
  return r;
}

/* kg_run with argv "kite-gen", the given args..., NULL. */
static run run_args(const char *first, ...) {
  char *argv[32];
  int argc = 0, so, se, to, te;
  const char *a;
  va_list ap;
  run r;
  argv[argc++] = "kite-gen";
  va_start(ap, first);
  for (a = first; a && argc < 31; a = va_arg(ap, const char *))
    argv[argc++] = (char *)a;
  va_end(ap);
  argv[argc] = NULL;
  to = cap_begin(1, &so);
  te = cap_begin(2, &se);
  r.rc = kg_run(argc, argv);
  r.err = cap_end(2, se, te);
  r.out = cap_end(1, so, to);
  return r;
}

static run gen(const char *fixture, const char *out) {
  return run_args("-t", fixture, "-o", out, NULL);
}

static void run_free(run r) {
  free(r.out);
  free(r.err);
}

/* Every file listed matches its copy under expected/<case>/, and out has
 * nothing else. */
static void check_golden(const char *out, const char *kase,
                         const char *const *files) {
  char exp[256];
  int i;
  snprintf(exp, sizeof exp, FIX "expected/%s", kase);
  for (i = 0; files[i]; i++) {
    char *want = slurp(cat(exp, files[i])), *got = slurp(cat(out, files[i]));
    ck_assert_msg(want != NULL, "missing golden %s", files[i]);
    ck_assert_msg(got != NULL, "not generated: %s", files[i]);
    ck_assert_str_eq(got, want);
    free(want);
    free(got);
  }
  ck_assert_int_eq(nfiles(out), i);
}

static const char *const basic_files[] = {
  "alpha/alpha_f16_t256.cu", "alpha/alpha_bf16_t256.cu",
  "alpha/alpha_bf16_t128.cu", "beta/beta_b1.cu", "beta/beta_b2.cu",
  "manifest.tsv", "kite_table.c", NULL
};

/* ---- the template compiler, directly ------------------------------- */

static int compile_cb(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  kg_tpl_compile(L, s, n, "t.tpl");
  return 1;
}

/* The Lua code for template src, or the error message (malloc'd). */
static char *compile(const char *src, int *ok) {
  lua_State *L = luaL_newstate();
  char *s;
  lua_pushcfunction(L, compile_cb);
  lua_pushstring(L, src);
  *ok = lua_pcall(L, 1, 1, 0) == LUA_OK;
  s = strdup(lua_tostring(L, -1));
  lua_close(L);
  return s;
}

START_TEST(test_compile_line_for_line) {
  int ok;
  char *code = compile("a \"q\"\n  @ x = 1\n${y} $${z}\n\n@ end", &ok);
  ck_assert(ok);
  ck_assert_str_eq(code,
                   "local _ENV = ...; __T(1, \"a \\\"q\\\"\\010\")\n"
                   " x = 1\n"
                   "__T(3, __s((y), \"y\"), \" ${z}\\010\")\n"
                   "__T(4, \"\\010\")\n"
                   " end\n");
  free(code);
}
END_TEST

START_TEST(test_compile_expr_scanning) {
  int ok;
  char *code = compile("${f({a = \"}\"})}${[=[}]]=]}|\r\n", &ok);
  ck_assert(ok);
  ck_assert_str_eq(code,
                   "local _ENV = ...; __T(1, __s((f({a = \"}\"})), "
                   "\"f({a = \\\"}\\\"})\"), __s(([=[}]]=]), \"[=[}]]=]\"), "
                   "\"|\\010\")\n");
  free(code);
}
END_TEST

START_TEST(test_compile_errors) {
  static const char *const bad[][2] = {
    {"ok\n${x", "t.tpl:2: unterminated ${"},
    {"${ }", "t.tpl:1: empty ${}"},
    {"\n\n${\"}", "t.tpl:3: unterminated string in ${...}"},
    {"${x -- c}", "t.tpl:1: comments are not allowed in ${...}"},
    {"${[[x}", "t.tpl:1: unterminated long string in ${...}"},
  };
  size_t i;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int ok;
    char *msg = compile(bad[i][0], &ok);
    ck_assert(!ok);
    ck_assert_str_eq(msg, bad[i][1]);
    free(msg);
  }
}
END_TEST

static int tostr_cb(lua_State *L) {
  const char *s = kg_tostr(L, 1);
  lua_pushstring(L, s ? s : "(none)");
  return 1;
}

static const char *tostr(lua_State *L, const char *expr) {
  lua_pushcfunction(L, tostr_cb);
  ck_assert_int_eq(luaL_dostring(L, expr), 0);
  lua_call(L, 1, 1);
  return lua_tostring(L, -1);
}

START_TEST(test_tostr) {
  lua_State *L = luaL_newstate();
  ck_assert_str_eq(tostr(L, "return 42"), "42");
  ck_assert_str_eq(tostr(L, "return -7.0"), "-7");
  ck_assert_str_eq(tostr(L, "return 2^53"), "9007199254740992");
  ck_assert_str_eq(tostr(L, "return 0.75"), "0.75");
  ck_assert_str_eq(tostr(L, "return 1/3"), "0.33333333333333331");
  ck_assert_str_eq(tostr(L, "return 'bf16'"), "bf16");
  ck_assert_str_eq(tostr(L, "return false"), "false");
  ck_assert_str_eq(tostr(L, "return nil"), "(none)");
  ck_assert_str_eq(tostr(L, "return {}"), "(none)");
  lua_close(L);
}
END_TEST

/* ---- whole runs ---------------------------------------------------- */

START_TEST(test_basic_golden) {
  char *d = tmpdir();
  PATH(out, d, "out");
  run r = gen(FIX "basic", out);
  ck_assert_msg(r.rc == 0, "%s", r.err);
  ck_assert_str_eq(r.err, "kite-gen: 5 variants, 7 written, 0 unchanged, "
                          "0 removed\n");
  check_golden(out, "basic", basic_files);
  run_free(r);
  rm_rf(d);
}
END_TEST

START_TEST(test_interp_golden) {
  static const char *const files[] = {"interp/interp_bf16_3.cu",
                                      "manifest.tsv", "kite_table.c", NULL};
  char *d = tmpdir(), *cu;
  PATH(out, d, "out");
  run r = gen(FIX "interp", out);
  ck_assert_msg(r.rc == 0, "%s", r.err);
  check_golden(out, "interp", files);
  /* the points the golden file makes, spelled out */
  cu = slurp(cat(out, files[0]));
  KT_ASSERT_HAS(cu, "int=3 neg=-3 float_int=3 float=0.75 "
                    "tiny=0.10000000000000001 "
                    "big=9007199254740992 "
                    "huge=9.2233720368547758e+18\n");
  KT_ASSERT_HAS(cu, "str=s3 bool=true false=false\n");
  KT_ASSERT_HAS(cu, "nested=3 braces=}{ quote=\"} long=} "
                    "level=]]}\n");
  KT_ASSERT_HAS(cu, "escape=${NOT_INTERPOLATED} then 3\n");
  KT_ASSERT_HAS(cu, "#line 8 \"" FIX "interp/interp/"
                    "interp.cu.tpl\"\nodd 1\n#line 10 ");
  KT_ASSERT_HAS(cu, "twice=6 len=3 concat=1,2,3 fmt=003\n");
  KT_ASSERT_HAS(cu, "line1\nline2\n#line 18 ");
  KT_ASSERT_HAS(cu, "lib=42\n");
  KT_ASSERT_HAS(cu, "  (x) * 2 + \\\n  0\n#line 27 ");
  KT_ASSERT_HAS(cu, "pairs: 1=y 2.5=z 3=x a=2 b=1 c=3\n");
  KT_ASSERT_HAS(cu, "without a newline 3\n");
  free(cu);
  run_free(r);
  rm_rf(d);
}
END_TEST

START_TEST(test_sandbox) {
  static const char *const files[] = {"sandbox/sandbox_1.cu",
                                      "sandbox/sandbox_2.cu", "manifest.tsv",
                                      "kite_table.c", NULL};
  char *d = tmpdir(), *cu;
  PATH(out, d, "out");
  run r;
  unlink("/tmp/kite-gen-pwned");
  r = gen(FIX "sandbox", out);
  ck_assert_msg(r.rc == 0, "%s", r.err);
  check_golden(out, "sandbox", files);
  ck_assert(!exists("/tmp/kite-gen-pwned"));
  KT_ASSERT_HAS(r.err, "print goes to stderr from sandbox_1\n");
  cu = slurp(cat(out, files[1]));  /* the second run saw no leaks */
  KT_ASSERT_HAS(cu, "globals: os=nil io=nil debug=nil "
                    "package=nil coroutine=nil\n");
  KT_ASSERT_HAS(cu, "dump=nil method_dump=nil\n");
  KT_ASSERT_HAS(cu, "module 'os' not found");
  KT_ASSERT_HAS(cu, "module name '../x' not allowed");
  KT_ASSERT_HAS(cu, "attempt to load a binary chunk");
  KT_ASSERT_HAS(cu, "random: nil nil floor=2\n");
  KT_ASSERT_HAS(cu, "string.leak=nil LEAK=nil _G.LEAK=nil");
  free(cu);
  run_free(r);
  rm_rf(d);
}
END_TEST

START_TEST(test_list_order_writes_nothing) {
  char *d = tmpdir();
  PATH(out, d, "out");
  run r = run_args("-t", FIX "basic", "-o", out, "--list", NULL);
  ck_assert_int_eq(r.rc, 0);
  /* axes sorted (dtype, threads), last fastest, f16/128 pruned by valid */
  ck_assert_str_eq(r.out, "alpha_f16_t256\talpha\n"
                          "alpha_bf16_t256\talpha\n"
                          "alpha_bf16_t128\talpha\n"
                          "beta_b1\tbeta\n"
                          "beta_b2\tbeta\n");
  ck_assert_str_eq(r.err, "");
  ck_assert(!exists(out));
  run_free(r);
  rm_rf(d);
}
END_TEST

START_TEST(test_only) {
  char *d = tmpdir(), *s;
  PATH(out, d, "out");
  run r = run_args("-q", "--only", "alpha_bf16_*", "-t", FIX "basic", "-o",
                   out, NULL);
  ck_assert_int_eq(r.rc, 0);
  ck_assert_str_eq(r.err, "");
  ck_assert(exists(cat(out, "alpha/alpha_bf16_t256.cu")));
  ck_assert(exists(cat(out, "alpha/alpha_bf16_t128.cu")));
  ck_assert(!exists(cat(out, "alpha/alpha_f16_t256.cu")));
  ck_assert(!exists(cat(out, "beta")));
  ck_assert_int_eq(nfiles(out), 4);
  s = slurp(cat(out, "manifest.tsv"));
  ck_assert_str_eq(s, "name\top\tdtype\tdtype_out\tn_min\tn_max\talign\trank\ttile_m\t"
                      "tile_n\teff\tcost_k\tparams\n"
                      "alpha_bf16_t256\talpha\tbf16\tbf16\t1\t2048\t16\t0\t0\t0\t1000\t0\t"
                      "dtype=bf16 threads=256\n"
                      "alpha_bf16_t128\talpha\tbf16\tbf16\t1\t1024\t16\t0\t0\t0\t1000\t0\t"
                      "dtype=bf16 threads=128\n");
  free(s);
  s = slurp(cat(out, "kite_table.c"));
  KT_ASSERT_HAS(s, "kite_variants_len = 2;\n");
  ck_assert_ptr_null(strstr(s, "beta"));
  free(s);
  run_free(r);
  r = run_args("--only=beta_b2", "--list", "-t", FIX "basic", NULL);
  ck_assert_str_eq(r.out, "beta_b2\tbeta\n");
  run_free(r);
  rm_rf(d);
}
END_TEST

START_TEST(test_deterministic) {
  char *d = tmpdir();
  PATH(a, d, "a");
  PATH(b, d, "b");
  run r1 = gen(FIX "basic", a), r2 = gen(FIX "basic", b);
  int i;
  ck_assert_int_eq(r1.rc, 0);
  ck_assert_int_eq(r2.rc, 0);
  for (i = 0; basic_files[i]; i++) {
    char *x = slurp(cat(a, basic_files[i])), *y = slurp(cat(b, basic_files[i]));
    ck_assert_str_eq(x, y);
    free(x);
    free(y);
  }
  run_free(r1);
  run_free(r2);
  rm_rf(d);
}
END_TEST

START_TEST(test_write_if_changed) {
  char *d = tmpdir(), *s;
  PATH(out, d, "out");
  PATH(one, out, "beta/beta_b1.cu");
  run r = gen(FIX "basic", out);
  int i;
  ck_assert_int_eq(r.rc, 0);
  run_free(r);
  for (i = 0; basic_files[i]; i++) set_old(cat(out, basic_files[i]));
  r = gen(FIX "basic", out);
  ck_assert_str_eq(r.err, "kite-gen: 5 variants, 0 written, 7 unchanged, "
                          "0 removed\n");
  for (i = 0; basic_files[i]; i++)
    ck_assert_int_eq(mtime(cat(out, basic_files[i])), OLD_TIME);
  run_free(r);
  spit(one, "edited by hand\n");
  r = gen(FIX "basic", out);
  ck_assert_str_eq(r.err, "kite-gen: 5 variants, 1 written, 6 unchanged, "
                          "0 removed\n");
  s = slurp(one);
  KT_ASSERT_HAS(s, "// beta block=1");
  ck_assert_int_ne(mtime(one), OLD_TIME);
  ck_assert_int_eq(nfiles(out), 7);  /* no temp files left */
  free(s);
  run_free(r);
  rm_rf(d);
}
END_TEST

START_TEST(test_stale_removed) {
  char *d = tmpdir();
  PATH(out, d, "out");
  run r = gen(FIX "basic", out);
  ck_assert_int_eq(r.rc, 0);
  run_free(r);
  spit(cat(out, "alpha/old_variant.cu"), "// stale\n");
  spit(cat(out, "alpha/notes.txt"), "not ours\n");
  ck_assert_int_eq(mkdir(cat(out, "gone"), 0777), 0);
  spit(cat(out, "gone/x.cu"), "// stale\n");
  r = gen(FIX "basic", out);
  ck_assert_str_eq(r.err, "kite-gen: 5 variants, 0 written, 7 unchanged, "
                          "2 removed\n");
  ck_assert(!exists(cat(out, "alpha/old_variant.cu")));
  ck_assert(exists(cat(out, "alpha/notes.txt")));
  ck_assert(!exists(cat(out, "gone")));
  run_free(r);
  /* with --only, the other variants are stale too; beta/ goes away */
  r = run_args("--only", "beta_b1", "-t", FIX "basic", "-o", out, NULL);
  ck_assert_int_eq(r.rc, 0);
  KT_ASSERT_HAS(r.err, "4 removed");
  ck_assert(exists(cat(out, "beta/beta_b1.cu")));
  ck_assert(!exists(cat(out, "beta/beta_b2.cu")));
  ck_assert(exists(cat(out, "alpha/notes.txt")));
  run_free(r);
  rm_rf(d);
}
END_TEST

/* include(): one file under out/include/ for every variant that asks, an
 * #include line in each variant, rewritten and pruned like the variants. */
START_TEST(test_include_shared_once) {
  char *d = tmpdir(), *s;
  PATH(out, d, "out");
  run r = gen(FIX "include", out);
  ck_assert_int_eq(r.rc, 0);
  ck_assert_str_eq(r.err, "kite-gen: 2 variants, 6 written, 0 unchanged, "
                          "0 removed\n");
  s = slurp(cat(out, "include/helpers_twice.cuh"));
  ck_assert_str_eq(s, "// Generated by kite-gen: the text of "
                      "include(\"helpers_twice.cuh\"), shared by the variants. Do not edit.\n"
                      "__device__ int twice(int x) { return 2 * x; }\n");
  free(s);
  s = slurp(cat(out, "shr/shr_b1.cu"));
  KT_ASSERT_HAS(s, "// shr block=1\n#include \"../include/helpers_twice.cuh\"\n"
                   "int shr_1 = 1;\n");
  ck_assert_ptr_null(strstr(s, "twice(int x)"));
  ck_assert_ptr_null(strstr(s, "helpers_two.cuh"));
  free(s);
  s = slurp(cat(out, "shr/shr_b2.cu"));
  KT_ASSERT_HAS(s, "#include \"../include/helpers_two.cuh\"\n");
  free(s);
  run_free(r);
  spit(cat(out, "include/stale.cuh"), "// stale\n");
  r = gen(FIX "include", out);
  ck_assert_str_eq(r.err, "kite-gen: 2 variants, 0 written, 6 unchanged, "
                          "1 removed\n");
  ck_assert(!exists(cat(out, "include/stale.cuh")));
  run_free(r);
  /* a text no variant kept asks for goes too */
  r = run_args("--only", "shr_b1", "-t", FIX "include", "-o", out, NULL);
  ck_assert_int_eq(r.rc, 0);
  ck_assert(exists(cat(out, "include/helpers_twice.cuh")));
  ck_assert(!exists(cat(out, "include/helpers_two.cuh")));
  run_free(r);
  rm_rf(d);
}
END_TEST

START_TEST(test_failure_writes_nothing) {
  char *d = tmpdir(), *before[8];
  PATH(out, d, "out");
  run r = gen(FIX "basic", out);
  int i;
  run_free(r);
  for (i = 0; basic_files[i]; i++) {
    set_old(cat(out, basic_files[i]));
    before[i] = slurp(cat(out, basic_files[i]));
  }
  spit(cat(out, "alpha/stale.cu"), "// would be removed by a good run\n");
  r = gen(FIX "err_late", out);  /* op a is fine, op b fails expanding */
  ck_assert_int_eq(r.rc, 1);
  KT_ASSERT_HAS(r.err, FIX "err_late/b/x.cu.tpl:2: late "
                       "failure\n");
  for (i = 0; basic_files[i]; i++) {
    char *now = slurp(cat(out, basic_files[i]));
    ck_assert_str_eq(now, before[i]);
    ck_assert_int_eq(mtime(cat(out, basic_files[i])), OLD_TIME);
    free(now);
    free(before[i]);
  }
  ck_assert(exists(cat(out, "alpha/stale.cu")));
  ck_assert(!exists(cat(out, "a")));
  ck_assert_int_eq(nfiles(out), 8);
  run_free(r);
  r = gen(FIX "err_late", cat(d, "fresh"));
  ck_assert_int_eq(r.rc, 1);
  ck_assert(!exists(cat(d, "fresh")));
  run_free(r);
  rm_rf(d);
}
END_TEST

START_TEST(test_no_variants) {
  static const char *const files[] = {"manifest.tsv", "kite_table.c", NULL};
  char *d = tmpdir(), *s;
  PATH(out, d, "out");
  run r = gen(FIX "empty", out);
  ck_assert_int_eq(r.rc, 0);
  check_golden(out, "empty", files);
  s = slurp(cat(out, "kite_table.c"));
  ck_assert_str_eq(s, "/* Generated by kite-gen. Do not edit. */\n"
                      "#include \"kite_table.h\"\n"
                      "\n"
                      "const struct kite_variant kite_variants[] = {\n"
                      "  {0},  /* no variants */\n"
                      "};\n"
                      "const int32_t kite_variants_len = 0;\n"
                      "\n"
                      "/* ---- set 0: the measured dispatch of GPU (unnamed) ---- */\n"
                      "\n"
                      "/* op, dtype, dtype_out, m, n, k, log2 m, n, k, variant, time_us */\n"
                      "static const struct kite_rule kite_rules_0[] = {\n"
                      "  {0},  /* no tuned rules: the heuristics pick */\n"
                      "};\n"
                      "\n"
                      "/* variant, launch_us, us_per_k, k_extra, ragged, points (kg_fit.c) */\n"
                      "static const struct kite_gemm_model kite_gemm_models_0[] = {\n"
                      "  {0},  /* no measured gemm models: the templates' figures */\n"
                      "};\n"
                      "\n"
                      "/* op, dtype, n_lo, n_hi, variant (kg_span.c) */\n"
                      "static const struct kite_row_span kite_row_spans_0[] = {\n"
                      "  {0},  /* no measured row spans: the rules and the heuristic pick */\n"
                      "};\n"
                      "\n"
                      "/* gpu, rules, models, spans: the runtime takes the first set whose gpu the device's name\n"
                      "   holds (case aside), else the first (runtime/kite_dispatch.c) */\n"
                      "const struct kite_gpu_table kite_gpu_tables[] = {\n"
                      "  {\"\", kite_rules_0, 0, kite_gemm_models_0, 0, kite_row_spans_0, 0},\n"
                      "};\n"
                      "const int32_t kite_gpu_tables_len = 1;\n");
  free(s);
  run_free(r);
  rm_rf(d);
}
END_TEST

/* Each broken fixture fails with exit 1, writes nothing, and its message
 * starts with the file (and line) at fault. */
static const char *const errors[][2] = {
  {"err_syntax", "err_syntax/bad/x.cu.tpl:4: unexpected symbol near '='"},
  {"err_runtime", "err_runtime/bad/x.cu.tpl:5: attempt to perform "
                  "arithmetic on a nil value"},
  {"err_nil", "err_nil/bad/x.cu.tpl:3: ${missing_var} is nil"},
  {"err_table", "err_table/bad/x.cu.tpl:2: ${P} is a table"},
  {"err_unterminated", "err_unterminated/bad/x.cu.tpl:2: unterminated ${"},
  {"err_lib", "err_lib/lib/bad.lua:3: attempt to index a nil value"},
  {"err_space", "err_space/bad/space.lua:7: no good point"},
  {"err_axis", "err_axis/bad/space.lua: axes.threads must be a non-empty "
               "array"},
  {"err_dup", "err_dup/b/space.lua: duplicate variant name 'same_1' (also "
              "made by " FIX "err_dup/a/space.lua)"},
  {"err_badname", "err_badname/bad/space.lua: variant name 'bad-1' must "
                  "match [A-Za-z0-9_]+"},
  {"err_dtype", "err_dtype/bad/space.lua: dtype (p.dtype or meta(p).dtype) "
                "must be one of bf16, f16, f32, e4m3 (variant bad_int8)"},
  {"err_dtype_out", "err_dtype_out/bad/space.lua: meta(p).dtype_out must be "
                    "one of bf16, f16, f32, e4m3 (variant bad_bf16_int8)"},
  {"err_eff", "err_eff/bad/space.lua: meta(p).eff must be an integer in "
              "[1, 1000] (variant bad_0)"},
  {"err_step", "err_step/bad/space.lua: meta(p).n_step must be an integer in "
               "[1, 2147483647] (variant bad_0)"},
  {"err_field", "err_field/bad/space.lua: the returned table has unknown "
                "field 'vaild'"},
  {"err_opname", "err_opname/bad/space.lua: op is 'good' but the folder is "
                 "'bad'"},
  {"err_namefn", "err_namefn/bad/space.lua (name):1: ${nope} is nil"},
  {"err_memory", "err_memory/bad/x.cu.tpl: not enough memory"},
  {"err_runaway", "err_runaway/bad/x.cu.tpl:2: instruction limit exceeded"},
  {"err_runaway_pcall", "err_runaway_pcall/bad/x.cu.tpl:2: instruction "
                        "limit exceeded"},
  {"err_include_clash", "err_include_clash/bad/x.cu.tpl:2: include same.cuh: "
                        "another text under this name"},
  {"err_include_name", "err_include_name/bad/x.cu.tpl:3: include ../escape.cuh: "
                       "want a name like x_y.cuh"},
};

START_TEST(test_errors) {
  char *d = tmpdir();
  PATH(out, d, "out");
  char fix[256], want[512];
  run r;
  snprintf(fix, sizeof fix, FIX "%s", errors[_i][0]);
  snprintf(want, sizeof want, FIX "%s", errors[_i][1]);
  r = gen(fix, out);
  ck_assert_int_eq(r.rc, 1);
  ck_assert_msg(strncmp(r.err, want, strlen(want)) == 0,
                "stderr:\n%s\nwant it to start with:\n%s", r.err, want);
  ck_assert(!exists(out));
  run_free(r);
  rm_rf(d);
}
END_TEST

/* Lua cuts chunk names past LUA_IDSIZE to "...tail"; messages must still
 * start with the whole path. */
START_TEST(test_long_paths) {
  char *d = tmpdir(), *space = slurp(FIX "err_runtime/bad/space.lua");
  char *tpl = slurp(FIX "err_runtime/bad/x.cu.tpl"), want[1024];
  PATH(top, d, "a_directory_name_long_enough_to_pass_lua_idsize");
  PATH(root, top, "templates");
  PATH(op, root, "bad");
  run r;
  ck_assert_int_eq(mkdir(top, 0777), 0);
  ck_assert_int_eq(mkdir(root, 0777), 0);
  ck_assert_int_eq(mkdir(op, 0777), 0);
  spit(cat(op, "space.lua"), space);
  spit(cat(op, "x.cu.tpl"), tpl);
  r = gen(root, cat(d, "out"));
  ck_assert_int_eq(r.rc, 1);
  snprintf(want, sizeof want, "%s/x.cu.tpl:5: attempt to perform", op);
  ck_assert_msg(strncmp(r.err, want, strlen(want)) == 0, "%s", r.err);
  run_free(r);
  spit(cat(op, "x.cu.tpl"), "ok\n@ local x = = 1\n");
  r = gen(root, cat(d, "out"));
  snprintf(want, sizeof want, "%s/x.cu.tpl:2: unexpected symbol", op);
  ck_assert_msg(strncmp(r.err, want, strlen(want)) == 0, "%s", r.err);
  run_free(r);
  free(space);
  free(tpl);
  rm_rf(d);
}
END_TEST

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec / 1e9;
}

START_TEST(test_insn_limit_api) {
  kg_opts o;
  double t0;
  run r;
  kg_opts_init(&o);
  o.tpl_dir = FIX "err_runaway";
  o.out_dir = "/nonexistent/never/written";
  o.insn_limit = 100000;
  t0 = now();
  r = run_opts(&o);
  ck_assert_double_lt(now() - t0, 0.5);
  ck_assert_int_eq(r.rc, 1);
  KT_ASSERT_HAS(r.err, "x.cu.tpl:2: instruction limit "
                       "exceeded\n");
  run_free(r);
  o.tpl_dir = FIX "err_runaway_pcall";
  r = run_opts(&o);
  ck_assert_int_eq(r.rc, 1);
  KT_ASSERT_HAS(r.err, "instruction limit exceeded");
  run_free(r);
}
END_TEST

START_TEST(test_default_insn_limit_bounded) {
  double t0 = now();
  run r = gen(FIX "err_runaway", "/nonexistent/never/written");
  ck_assert_int_eq(r.rc, 1);
  ck_assert_double_lt(now() - t0, 20.0);
  run_free(r);
}
END_TEST

START_TEST(test_mem_limit_api) {
  kg_opts o;
  run r;
  kg_opts_init(&o);
  o.tpl_dir = FIX "err_memory_loop";
  o.out_dir = "/nonexistent/never/written";
  o.mem_limit = (size_t)16 << 20;
  r = run_opts(&o);
  ck_assert_int_eq(r.rc, 1);
  ck_assert_msg(strstr(r.err, "err_memory_loop/bad/x.cu.tpl: not enough "
                              "memory (limit 16 MiB)") != NULL, "%s", r.err);
  run_free(r);
}
END_TEST

START_TEST(test_usage) {
  run r = run_args("--bogus", NULL);
  ck_assert_int_eq(r.rc, 2);
  KT_ASSERT_HAS(r.err, "--bogus: unknown argument\nusage:");
  run_free(r);
  r = run_args("-t", NULL);
  ck_assert_int_eq(r.rc, 2);
  KT_ASSERT_HAS(r.err, "-t: needs a value");
  run_free(r);
  r = run_args("extra", NULL);
  ck_assert_int_eq(r.rc, 2);
  run_free(r);
  r = run_args("-h", NULL);
  ck_assert_int_eq(r.rc, 0);
  KT_ASSERT_HAS(r.out, "usage: kite-gen");
  run_free(r);
  r = run_args("-t", "no/such/dir", "--list", NULL);
  ck_assert_int_eq(r.rc, 1);
  ck_assert_str_eq(r.err, "no/such/dir: No such file or directory\n");
  run_free(r);
  r = run_args("-t", FIX "basic/", "--list", NULL);  /* trailing slash */
  ck_assert_int_eq(r.rc, 0);
  run_free(r);
}
END_TEST

/* ---- tuned rules (--tuned) ------------------------------------------ */

#define TH "op\tdtype\tdtype_out\tm\tn\tk\tvariant\ttime_us\trunner_up\t" \
           "runner_up_us\tdevice\tdate\tcommit\n"
#define TL(rest) rest "\tH200\t2026-12-03\tabc1234\n"

/* A good file: comments skipped, a failed variant kept out, each rule
 * with its variant's table index and the log2 of its shape. */
START_TEST(test_tuned_rules) {
  char *d = tmpdir(), *s;
  PATH(out, d, "out");
  PATH(tsv, d, "h200.tsv");
  run r;
  spit(tsv, "# measured by kite-bench --tune\n\n" TH
       TL("alpha\tbf16\tbf16\t4096\t1024\t0\talpha_bf16_t128\t12.5\t"
          "alpha_bf16_t256\t13")
       TL("alpha\tbf16\tbf16\t64\t2048\t0\talpha_bf16_t256\tfailed\t-\t-")
       TL("beta\tf32\tbf16\t256\t512\t64\tbeta_b2\t3.25\t-\t-"));
  r = run_args("-t", FIX "basic", "-o", out, "--tuned", tsv, NULL);
  ck_assert_msg(r.rc == 0, "%s", r.err);
  s = slurp(cat(out, "kite_table.c"));
  KT_ASSERT_HAS(s,
    "  {\"alpha\", KITE_BF16, KITE_BF16, 4096, 1024, 0, 12.000000f, "
    "10.000000f, 0.000000f, 2, 12.500f},\n"
    "  {\"beta\", KITE_F32, KITE_BF16, 256, 512, 64, 8.000000f, 9.000000f, "
    "6.000000f, 4, 3.250f},\n};\n");
  KT_ASSERT_HAS(s, "  {\"\", kite_rules_0, 2, kite_gemm_models_0, 0, kite_row_spans_0, 0},\n};\n");
  free(s);
  run_free(r);
  rm_rf(d);
}
END_TEST

/* --gpu starts a set per GPU: each gets its own rules, in the order given
 * (the runtime's default first), and kite_gpu_tables names them. */
START_TEST(test_gpu_sets) {
  char *d = tmpdir(), *s;
  PATH(out, d, "out");
  PATH(h200, d, "h200.tsv");
  PATH(h100, d, "h100.tsv");
  run r;
  spit(h200, TH TL("alpha\tbf16\tbf16\t4096\t1024\t0\talpha_bf16_t128\t12.5\t-\t-"));
  spit(h100, TH TL("alpha\tbf16\tbf16\t4096\t1024\t0\talpha_bf16_t256\t14\t-\t-")
             TL("alpha\tbf16\tbf16\t4096\t2048\t0\talpha_bf16_t256\t20\t-\t-"));
  r = run_args("-t", FIX "basic", "-o", out, "--gpu", "h200", "--tuned", h200, "--gpu", "h100", "--tuned", h100,
               NULL);
  ck_assert_msg(r.rc == 0, "%s", r.err);
  s = slurp(cat(out, "kite_table.c"));
  ck_assert_msg(strstr(s, "/* ---- set 0: the measured dispatch of GPU h200 ---- */\n") != NULL, "%s", s);
  ck_assert_msg(strstr(s, "static const struct kite_rule kite_rules_0[] = {\n"
                          "  {\"alpha\", KITE_BF16, KITE_BF16, 4096, 1024, 0, 12.000000f, 10.000000f, 0.000000f, 2, "
                          "12.500f},\n};\n") != NULL, "%s", s);
  ck_assert_msg(strstr(s, "static const struct kite_rule kite_rules_1[] = {\n"
                          "  {\"alpha\", KITE_BF16, KITE_BF16, 4096, 1024, 0, 12.000000f, 10.000000f, 0.000000f, 1, "
                          "14.000f},\n") != NULL, "%s", s);
  ck_assert_msg(strstr(s, "const struct kite_gpu_table kite_gpu_tables[] = {\n"
                          "  {\"h200\", kite_rules_0, 1, kite_gemm_models_0, 0, kite_row_spans_0, 0},\n"
                          "  {\"h100\", kite_rules_1, 2, kite_gemm_models_1, 0, kite_row_spans_1, 0},\n"
                          "};\nconst int32_t kite_gpu_tables_len = 2;\n") != NULL, "%s", s);
  free(s);
  run_free(r);
  rm_rf(d);
}
END_TEST

/* Bad --gpu use is a usage error (exit 2) that writes nothing. */
static const char *const gpu_usage_errors[][5] = {
  {"--gpu", "H100", NULL, NULL, "--gpu: a GPU name is lower-case letters, digits and '_'"},
  {"--gpu", "h100", "--gpu", "h100", "--gpu: a second set of one GPU"},
  {"--tuned", "a.tsv", "--tuned", "b.tsv", "--tuned: given twice for one GPU"},
  {"--gpu", "", NULL, NULL, "--gpu: needs a name"},
  {"--gpu", NULL, NULL, NULL, "--gpu: needs a value"},
};

START_TEST(test_gpu_usage) {
  const char *const *e = gpu_usage_errors[_i];
  char *d = tmpdir();
  PATH(out, d, "out");
  run r = run_args("-t", FIX "basic", "-o", out, e[0], e[1], e[2], e[3], NULL);
  ck_assert_int_eq(r.rc, 2);
  ck_assert_msg(strstr(r.err, e[4]) != NULL, "%s", r.err);
  ck_assert(!exists(out));
  run_free(r);
  rm_rf(d);
}
END_TEST

/* Each bad file fails with exit 1 and "FILE:LINE: message", writing nothing. */
static const char *const tune_errors[][2] = {
  {"op\tdtype\n", ":1: the first line that is not a comment must be the header"},
  {"# c\n" TH "alpha\tbf16\tbf16\t1\t2\t0\n", ":3: a line has 13 tab-separated fields"},
  {TH TL("alpha\tint8\tbf16\t1\t2\t0\talpha_bf16_t128\t1\t-\t-"), ":2: dtype and dtype_out must be"},
  {TH TL("alpha\tbf16\tbf16\t0\t2\t0\talpha_bf16_t128\t1\t-\t-"), ":2: m must be an integer >= 1, not '0'"},
  {TH TL("alpha\tbf16\tbf16\t1\t2x\t0\talpha_bf16_t128\t1\t-\t-"), ":2: n must be an integer >= 1, not '2x'"},
  {TH TL("alpha\tbf16\tbf16\t1\t2\t-1\talpha_bf16_t128\t1\t-\t-"), ":2: k must be an integer >= 0, not '-1'"},
  {TH TL("alpha\tbf16\tbf16\t1\t2\t0\talpha_bf16_t128\tfast\t-\t-"),
   ":2: time_us must be a positive number of microseconds or 'failed', not 'fast'"},
  {TH TL("alpha\tbf16\tbf16\t1\t2\t0\tnope\t1\t-\t-"), ":2: no generated variant is named 'nope'"},
  {TH TL("alpha\tf16\tf16\t1\t2\t0\talpha_bf16_t128\t1\t-\t-"),
   ":2: variant alpha_bf16_t128 has dtype bf16, the line says f16"},
  {TH TL("alpha\tbf16\tbf16\t1\t2\t0\talpha_bf16_t128\t1\t-\t-")
      TL("alpha\tbf16\tbf16\t1\t2\t0\talpha_bf16_t256\t2\t-\t-"),
   ":3: a second rule for alpha bf16 bf16 1 2 0 (the first is line 2)"},
};

/* kite-gen given FLAG and a file of text bad[0] fails with exit 1 and
   "FILE" bad[1] on stderr, writing nothing. */
static void check_bad_input(const char *flag, const char *const bad[2]) {
  char *d = tmpdir();
  PATH(out, d, "out");
  PATH(file, d, "bad.tsv");
  char want[512];
  spit(file, bad[0]);
  snprintf(want, sizeof want, "%s%s", file, bad[1]);
  run r = run_args("-t", FIX "basic", "-o", out, flag, file, NULL);
  ck_assert_int_eq(r.rc, 1);
  ck_assert_msg(strncmp(r.err, want, strlen(want)) == 0,
                "stderr:\n%s\nwant it to start with:\n%s", r.err, want);
  ck_assert(!exists(out));
  run_free(r);
  rm_rf(d);
}

START_TEST(test_tuned_errors) { check_bad_input("--tuned", tune_errors[_i]); }
END_TEST

/* ---- gemm times (--times) and the fitted model (kg_fit.c) --------------- */

#define XH "op\tdtype\tdtype_out\tm\tn\tk\tvariant\ttime_us\tsms\n"

/* Exact times of the model launch 2 + waves * (K + 64) * 0.01 come back as
 * that model, and two ragged points at 1.3x and 1.1x it as its ragged
 * factor (their geomean) without moving the rest; a variant with too few
 * aligned points gets none. */
START_TEST(test_fit_exact) {
  static const double ks[8] = {64, 128, 512, 1024, 4096, 300, 1000, 72};
  kg_sample p[8];
  kg_model m;
  int i;
  for (i = 0; i < 8; i++) {
    p[i].waves = 1 + i % 3;
    p[i].k = ks[i];
    p[i].t = (2 + p[i].waves * (ks[i] + 64) * 0.01) * (i == 6 ? 1.3 : i == 7 ? 1.1 : 1);
    p[i].ragged = i >= 6;
  }
  ck_assert_int_eq(kg_fit_variant(p, 6, &m), 1);
  ck_assert_double_eq_tol(m.launch_us, 2, 1e-9);
  ck_assert_double_eq_tol(m.us_per_k, 0.01, 1e-12);
  ck_assert_double_eq(m.k_extra, 64);
  ck_assert_double_eq(m.ragged, 1);
  ck_assert_int_eq(m.points, 6);
  ck_assert_int_eq(kg_fit_variant(p, 8, &m), 1);
  ck_assert_double_eq_tol(m.launch_us, 2, 1e-9);
  ck_assert_double_eq_tol(m.us_per_k, 0.01, 1e-12);
  ck_assert_double_eq(m.k_extra, 64);
  ck_assert_double_eq_tol(m.ragged, sqrt(1.3 * 1.1), 1e-12);
  ck_assert_double_eq_tol(kg_fit_predict(&m, &p[7]), p[7].t * sqrt(1.3 / 1.1), 1e-9);
  ck_assert_int_eq(m.points, 8);
  ck_assert_int_eq(kg_fit_variant(p, KG_FIT_MIN - 1, &m), 0);
  ck_assert_int_eq(kg_fit_variant(p + 5, 3, &m), 0);   /* one aligned point */
  ck_assert_double_eq(kg_fit_waves(129, 8, 64, 8, 4), 1);   /* 3 tiles on 4 SMs */
  ck_assert_double_eq(kg_fit_waves(257, 9, 64, 8, 4), 3);   /* 5 x 2 tiles */
}
END_TEST

/* Leave-one-out: variant 1 runs 0.9x variant 0's per-K cost everywhere but
 * at problem 5, where it ran 3x its own model and variant 0 was fastest.
 * Without problem 5 variant 0 wins nothing, so has no model, and variant 1,
 * fitted without it, is the pick there.  Variant 2 (2-byte alignment) runs
 * twice variant 0's time, never fastest, but keeps its model: it is the
 * fastest of those that take unaligned problems. */
START_TEST(test_fit_loo) {
  static const double ks[6] = {64, 128, 512, 1024, 4096, 300};
  kg_sample p[18], scratch[18];
  int variant[18], shape[18], align[18], best[6], work[6], i, pick;
  kg_points pt = {p, variant, shape, align, best, work, 18, 6};
  kg_model m;
  for (i = 0; i < 18; i++) {
    const int v = i / 6, s = i % 6;
    variant[i] = v, shape[i] = s, align[i] = v == 2 ? 2 : 16;
    p[i].ragged = 0;
    p[i].waves = 1 + s % 3;
    p[i].k = ks[s];
    p[i].t = v == 1 ? 1 + p[i].waves * (ks[s] + 64) * 0.009 : (2 + p[i].waves * (ks[s] + 64) * 0.01) * (v + 1);
  }
  p[11].t *= 3;
  kg_fit_best(&pt);
  ck_assert_int_eq(best[5], 5);
  ck_assert_int_eq(best[0], 6);
  ck_assert(kg_fit_wins(&pt, 0, -1));
  ck_assert(!kg_fit_wins(&pt, 0, 5));
  ck_assert(kg_fit_wins(&pt, 2, -1));
  ck_assert_int_eq(kg_fit_model(&pt, 0, 5, scratch, &m), 0);
  ck_assert_int_eq(kg_fit_model(&pt, 0, -1, scratch, &m), 1);
  ck_assert_double_eq_tol(kg_fit_loo(&pt, 5, scratch, &pick), p[11].t / p[5].t, 1e-12);
  ck_assert_int_eq(pick, 11);
  ck_assert_double_eq(kg_fit_loo(&pt, 7, scratch, &pick), 0);   /* no such problem */
  ck_assert_int_eq(pick, -1);
}
END_TEST

/* A times file through kite-gen: beta_b1's model in the table (index 3),
 * its ragged factor from the one problem whose rows (300 f32) are not whole
 * 128-byte lines, timed 1.25x; nothing for beta_b2 (two points) or alpha (a
 * row op: no output tiles). */
START_TEST(test_times_models) {
  static const int mnk[6][3] = {{64, 8, 64}, {128, 8, 128}, {512, 64, 512},
                                {64, 64, 1024}, {1024, 8, 4096}, {256, 16, 300}};
  char *d = tmpdir(), *s, line[256], body[4096] = "# fake\n" XH;
  PATH(out, d, "out");
  PATH(times, d, "h200.times.tsv");
  run r;
  int i;
  for (i = 0; i < 6; i++) {   /* beta_b1: 64 x 8 tiles, 4 SMs */
    double w = kg_fit_waves(mnk[i][0], mnk[i][1], 64, 8, 4);
    snprintf(line, sizeof line, "beta\tf32\tbf16\t%d\t%d\t%d\tbeta_b1\t%.6f\t4\n", mnk[i][0], mnk[i][1],
             mnk[i][2], (2 + w * (mnk[i][2] + 64) * 0.01) * (mnk[i][2] == 300 ? 1.25 : 1));
    strcat(body, line);
  }
  strcat(body, "beta\tf32\tbf16\t64\t8\t64\tbeta_b2\t5\t4\nbeta\tf32\tbf16\t64\t8\t128\tbeta_b2\t6\t4\n");
  for (i = 0; i < 6; i++) {   /* a row op's times: checked, kept, no model */
    snprintf(line, sizeof line, "alpha\tbf16\tbf16\t%d\t%d\t0\talpha_bf16_t128\t%d\t4\n", 1 << i, 64 << i, 1 + i);
    strcat(body, line);
  }
  spit(times, body);
  r = run_args("-t", FIX "basic", "-o", out, "--times", times, NULL);
  ck_assert_msg(r.rc == 0, "%s", r.err);
  s = slurp(cat(out, "kite_table.c"));
  ck_assert_msg(strstr(s, "static const struct kite_gemm_model kite_gemm_models_0[] = {\n"
                          "  {3, 2.0000f, 0.010000f, 64.000f, 1.250f, 6},  /* beta_b1: rms log error 0.000 */\n"
                          "};\n") != NULL, "%s", s);
  free(s);
  run_free(r);
  rm_rf(d);
}
END_TEST

/* --check-model prints a line per gemm problem and the summary, writes
 * nothing, and refuses to run without --times. */
START_TEST(test_check_model_cli) {
  static const int mnk[6][3] = {{64, 8, 64}, {128, 8, 128}, {512, 64, 512},
                                {64, 64, 1024}, {1024, 8, 4096}, {256, 16, 300}};
  char *d = tmpdir(), line[256], body[4096] = XH;
  PATH(out, d, "out");
  PATH(times, d, "h200.times.tsv");
  run r;
  int i;
  for (i = 0; i < 6; i++) {
    double w = kg_fit_waves(mnk[i][0], mnk[i][1], 64, 8, 4);
    snprintf(line, sizeof line, "beta\tf32\tbf16\t%d\t%d\t%d\tbeta_b1\t%.6f\t4\n", mnk[i][0], mnk[i][1],
             mnk[i][2], 2 + w * (mnk[i][2] + 64) * 0.01);
    strcat(body, line);
  }
  spit(times, body);
  r = run_args("-t", FIX "basic", "-o", out, "--times", times, "--check-model", NULL);
  ck_assert_msg(r.rc == 0, "%s", r.err);
  ck_assert_msg(strstr(r.out, "f32 bf16 256 16 300\t1.0000\tbeta_b1\tbeta_b1\n") != NULL, "%s", r.out);
  ck_assert_msg(strstr(r.out, "6 problems, geomean 1.0000, worst 1.0000\n") != NULL, "%s", r.out);
  ck_assert(!exists(out));
  run_free(r);
  r = run_args("-t", FIX "basic", "-o", out, "--check-model", NULL);
  ck_assert_int_eq(r.rc, 2);
  ck_assert_msg(strstr(r.err, "--check-model: needs --times FILE") != NULL, "%s", r.err);
  run_free(r);
  rm_rf(d);
}
END_TEST

/* Row-op times become spans: alpha_bf16_t256 costs 1, 2, 2, 1 us per element
 * at N = 64, 256, 1024, 2048 and alpha_bf16_t128 2, 1, 1 up to its n_max
 * 1024.  Interpolated in log2 N they tie at N = 128 (the first variant
 * wins), t128 leads from the next sample, 2^(113/16) ~ 134, to its n_max;
 * t256 alone takes the rest.  f16 has no times: no spans. */
START_TEST(test_times_spans) {
  static const int ns[4] = {64, 256, 1024, 2048};
  static const double c256[4] = {1, 2, 2, 1}, c128[3] = {2, 1, 1};
  char *d = tmpdir(), *s, line[256], body[4096] = XH;
  PATH(out, d, "out");
  PATH(times, d, "h200.times.tsv");
  run r;
  int i;
  for (i = 0; i < 4; i++) {
    snprintf(line, sizeof line, "alpha\tbf16\tbf16\t1\t%d\t0\talpha_bf16_t256\t%g\t4\n", ns[i], c256[i] * ns[i]);
    strcat(body, line);
    if (i == 3) break;
    snprintf(line, sizeof line, "alpha\tbf16\tbf16\t1\t%d\t0\talpha_bf16_t128\t%g\t4\n", ns[i], c128[i] * ns[i]);
    strcat(body, line);
  }
  spit(times, body);
  r = run_args("-t", FIX "basic", "-o", out, "--times", times, NULL);
  ck_assert_msg(r.rc == 0, "%s", r.err);
  s = slurp(cat(out, "kite_table.c"));
  ck_assert_msg(strstr(s, "static const struct kite_row_span kite_row_spans_0[] = {\n"
                          "  {\"alpha\", KITE_BF16, 1, 133, 1},  /* alpha_bf16_t256 */\n"
                          "  {\"alpha\", KITE_BF16, 134, 1024, 2},  /* alpha_bf16_t128 */\n"
                          "  {\"alpha\", KITE_BF16, 1025, 2048, 1},  /* alpha_bf16_t256 */\n"
                          "};\n") != NULL, "%s", s);
  free(s);
  run_free(r);
  rm_rf(d);
}
END_TEST

/* Confirmed points (kite-bench --tune --confirm): at 1 row alpha_bf16_t128
 * costs 1 us per element at N = 64, 256 and 1024, t256 costs 2; at 4 rows
 * and N = 256 both were timed again, t256 at 2 and t128 at 3 per element.
 * The 4 rows decide N = 256, scaled by 1 / 2 (the fastest confirmed there
 * cost 1 at 1 row): t256 1, t128 1.5.  Interpolated in log2 N, t256 leads
 * from 2^(22/3) ~ 161 (sampled at 2^(118/16) ~ 166) to 2^(26/3) ~ 406
 * (sampled at 2^(139/16) ~ 412), t128 elsewhere up to its n_max.  Unscaled
 * the edges would be 128 and 512; without the 4 rows t128 would take 1-1024. */
START_TEST(test_times_confirm) {
  const char *body = XH "alpha\tbf16\tbf16\t1\t64\t0\talpha_bf16_t256\t128\t4\n"
                        "alpha\tbf16\tbf16\t1\t256\t0\talpha_bf16_t256\t512\t4\n"
                        "alpha\tbf16\tbf16\t1\t1024\t0\talpha_bf16_t256\t2048\t4\n"
                        "alpha\tbf16\tbf16\t1\t64\t0\talpha_bf16_t128\t64\t4\n"
                        "alpha\tbf16\tbf16\t1\t256\t0\talpha_bf16_t128\t256\t4\n"
                        "alpha\tbf16\tbf16\t1\t1024\t0\talpha_bf16_t128\t1024\t4\n"
                        "alpha\tbf16\tbf16\t4\t256\t0\talpha_bf16_t256\t2048\t4\n"
                        "alpha\tbf16\tbf16\t4\t256\t0\talpha_bf16_t128\t3072\t4\n";
  char *d = tmpdir(), *s;
  PATH(out, d, "out");
  PATH(times, d, "h200.times.tsv");
  run r;
  spit(times, body);
  r = run_args("-t", FIX "basic", "-o", out, "--times", times, NULL);
  ck_assert_msg(r.rc == 0, "%s", r.err);
  s = slurp(cat(out, "kite_table.c"));
  ck_assert_msg(strstr(s, "static const struct kite_row_span kite_row_spans_0[] = {\n"
                          "  {\"alpha\", KITE_BF16, 1, 165, 2},  /* alpha_bf16_t128 */\n"
                          "  {\"alpha\", KITE_BF16, 166, 411, 1},  /* alpha_bf16_t256 */\n"
                          "  {\"alpha\", KITE_BF16, 412, 1024, 2},  /* alpha_bf16_t128 */\n"
                          "  {\"alpha\", KITE_BF16, 1025, 2048, 1},  /* alpha_bf16_t256 */\n"
                          "};\n") != NULL, "%s", s);
  free(s);
  run_free(r);
  rm_rf(d);
}
END_TEST

/* n_step: gamma_s1024 costs 1 us per padded element at N = 1024 and 2048,
 * gamma_s1 1.2 per element.  A row just past a step pays for the whole next
 * step, so s1 wins after each multiple of 1024 until 1.2 N passes the padded
 * length (853, 1707, 2560, 3413; found to within 1/16 octave), and s1024
 * from there to the multiple. */
START_TEST(test_times_steps) {
  const char *body = XH "gamma\tbf16\tbf16\t1\t1024\t0\tgamma_s1024\t1024\t4\n"
                        "gamma\tbf16\tbf16\t1\t2048\t0\tgamma_s1024\t2048\t4\n"
                        "gamma\tbf16\tbf16\t1\t1024\t0\tgamma_s1\t1228.8\t4\n"
                        "gamma\tbf16\tbf16\t1\t2048\t0\tgamma_s1\t2457.6\t4\n";
  char *d = tmpdir(), *s;
  PATH(out, d, "out");
  PATH(times, d, "h200.times.tsv");
  run r;
  spit(times, body);
  r = run_args("-t", FIX "steps", "-o", out, "--times", times, NULL);
  ck_assert_msg(r.rc == 0, "%s", r.err);
  s = slurp(cat(out, "kite_table.c"));
  ck_assert_msg(strstr(s, "static const struct kite_row_span kite_row_spans_0[] = {\n"
                          "  {\"gamma\", KITE_BF16, 1, 860, 0},  /* gamma_s1 */\n"
                          "  {\"gamma\", KITE_BF16, 861, 1024, 1},  /* gamma_s1024 */\n"
                          "  {\"gamma\", KITE_BF16, 1025, 1721, 0},  /* gamma_s1 */\n"
                          "  {\"gamma\", KITE_BF16, 1722, 2048, 1},  /* gamma_s1024 */\n"
                          "  {\"gamma\", KITE_BF16, 2049, 2655, 0},  /* gamma_s1 */\n"
                          "  {\"gamma\", KITE_BF16, 2656, 3072, 1},  /* gamma_s1024 */\n"
                          "  {\"gamma\", KITE_BF16, 3073, 3443, 0},  /* gamma_s1 */\n"
                          "  {\"gamma\", KITE_BF16, 3444, 4096, 1},  /* gamma_s1024 */\n"
                          "};\n") != NULL, "%s", s);
  free(s);
  run_free(r);
  rm_rf(d);
}
END_TEST

#define XL(rest) rest "\t4\n"
static const char *const times_errors[][2] = {
  {"op\tdtype\n", ":1: the first line that is not a comment must be the header"},
  {XH "beta\tf32\tbf16\t1\t2\t3\n", ":2: a line has 9 tab-separated fields"},
  {XH XL("beta\tf32\tbf16\t1\t2\t-1\tbeta_b1\t1"), ":2: k must be an integer >= 0, not '-1'"},
  {XH XL("beta\tf32\tbf16\t1\t2\t0\tbeta_b1\t1"), ":2: k must be >= 1 for beta_b1 (a variant with output tiles)"},
  {XH XL("beta\tf32\tbf16\t1\t2\t3\tbeta_b1\tfailed"),
   ":2: time_us must be a positive number of microseconds, not 'failed'"},
  {XH "beta\tf32\tbf16\t1\t2\t3\tbeta_b1\t1\t0\n", ":2: sms must be an integer >= 1, not '0'"},
  {XH XL("beta\tf32\tbf16\t1\t2\t3\tnope\t1"), ":2: no generated variant is named 'nope'"},
  {XH XL("beta\tbf16\tbf16\t1\t2\t3\tbeta_b1\t1"), ":2: variant beta_b1 has dtype f32, the line says bf16"},
  {XH XL("beta\tf32\tbf16\t1\t2\t3\tbeta_b1\t1") XL("beta\tf32\tbf16\t1\t2\t3\tbeta_b1\t2"),
   ":3: a second time for beta_b1 1 2 3 (the first is line 2)"},
};

/* Each bad times file fails with exit 1 and "FILE:LINE: message", writing nothing. */
START_TEST(test_times_errors) { check_bad_input("--times", times_errors[_i]); }
END_TEST

static Suite *gen_suite(void) {
  Suite *s = suite_create("kite-gen");
  TCase *tc = tcase_create("compiler");
  tcase_add_test(tc, test_compile_line_for_line);
  tcase_add_test(tc, test_compile_expr_scanning);
  tcase_add_test(tc, test_compile_errors);
  tcase_add_test(tc, test_tostr);
  suite_add_tcase(s, tc);
  tc = tcase_create("runs");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_basic_golden);
  tcase_add_test(tc, test_interp_golden);
  tcase_add_test(tc, test_sandbox);
  tcase_add_test(tc, test_list_order_writes_nothing);
  tcase_add_test(tc, test_only);
  tcase_add_test(tc, test_deterministic);
  tcase_add_test(tc, test_write_if_changed);
  tcase_add_test(tc, test_stale_removed);
  tcase_add_test(tc, test_include_shared_once);
  tcase_add_test(tc, test_failure_writes_nothing);
  tcase_add_test(tc, test_no_variants);
  tcase_add_test(tc, test_usage);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_set_timeout(tc, 30);
  tcase_add_loop_test(tc, test_errors, 0,
                      (int)(sizeof errors / sizeof errors[0]));
  tcase_add_test(tc, test_insn_limit_api);
  tcase_add_test(tc, test_default_insn_limit_bounded);
  tcase_add_test(tc, test_mem_limit_api);
  tcase_add_test(tc, test_long_paths);
  suite_add_tcase(s, tc);
  tc = tcase_create("tuned");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_tuned_rules);
  tcase_add_test(tc, test_gpu_sets);
  tcase_add_loop_test(tc, test_gpu_usage, 0, (int)(sizeof gpu_usage_errors / sizeof gpu_usage_errors[0]));
  tcase_add_loop_test(tc, test_tuned_errors, 0,
                      (int)(sizeof tune_errors / sizeof tune_errors[0]));
  tcase_add_test(tc, test_fit_exact);
  tcase_add_test(tc, test_times_models);
  tcase_add_test(tc, test_fit_loo);
  tcase_add_test(tc, test_check_model_cli);
  tcase_add_test(tc, test_times_spans);
  tcase_add_test(tc, test_times_confirm);
  tcase_add_test(tc, test_times_steps);
  tcase_add_loop_test(tc, test_times_errors, 0,
                      (int)(sizeof times_errors / sizeof times_errors[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(gen_suite());
  int failed;
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
