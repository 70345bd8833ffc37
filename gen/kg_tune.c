/* kg_tune.c - the tuned rules: bench/tuned/<gpu>.tsv (written by
 * `kite-bench --tune`) read, checked against the generated variants, and
 * turned into the rules kite_table.c carries; and bench/tuned/<gpu>.times.tsv
 * (every variant's time at each tuned shape, `kite-bench [gemm] --tune
 * --times`) turned into the cost models of the variants with output tiles
 * (gemm; kg_fit.c); the other lines are checked and kept for the record.
 *
 * The file: lines starting with '#' and empty lines are skipped; the first
 * other line is the header kg_tune_header; then one line per measured shape,
 * tab-separated in the header's order.  time_us is a number, or "failed"
 * when the variant could not run there (kept for the record, not a rule).
 * Any malformed line stops kite-gen with "FILE:LINE: message" before
 * anything is written. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kg.h"

#define KG_TUNE_FIELDS 13
const char kg_tune_header[] = "op\tdtype\tdtype_out\tm\tn\tk\tvariant\ttime_us\t"
                              "runner_up\trunner_up_us\tdevice\tdate\tcommit";

typedef struct kg_line {
  const char *path;
  int no, nf;                       /* line number, fields it must have */
  const char *const *names;         /* the fields' names */
  const char *header;               /* the header line, checked first */
  char *next;                       /* the text after this line (NULL: none) */
  char *f[KG_TUNE_FIELDS];
} kg_line;

static const char *const kg_field_names[KG_TUNE_FIELDS] = {
  "op", "dtype", "dtype_out", "m", "n", "k", "variant", "time_us",
  "runner_up", "runner_up_us", "device", "date", "commit"
};

#define KG_TIMES_FIELDS 9
const char kg_times_header[] = "op\tdtype\tdtype_out\tm\tn\tk\tvariant\ttime_us\tsms";
static const char *const kg_times_names[KG_TIMES_FIELDS] = {
  "op", "dtype", "dtype_out", "m", "n", "k", "variant", "time_us", "sms"
};

static int kg_lerror(lua_State *L, const kg_line *ln, const char *msg) {
  return luaL_error(L, "%s:%d: %s", ln->path, ln->no, msg);
}

/* Splits line s (modified in place) into its fields; 0 when the count is wrong. */
static int kg_split(char *s, kg_line *ln) {
  int n = 0;
  for (;;) {
    char *tab = strchr(s, '\t');
    if (n == ln->nf) return 0;
    ln->f[n++] = s;
    if (tab == NULL) break;
    *tab = '\0';
    s = tab + 1;
  }
  return n == ln->nf;
}

/* Reads path for kg_line_next into a writable copy that the Lua state owns
   (pushed, the file's string under it), so a raise leaks nothing. */
static void kg_line_open(lua_State *L, kg_line *ln, const char *path, const char *header, int nf,
                         const char *const *names) {
  if (!kg_readfile(L, path)) lua_error(L);
  ln->next = lua_newuserdatauv(L, lua_rawlen(L, -1) + 1, 0);
  memcpy(ln->next, lua_tostring(L, -2), lua_rawlen(L, -2) + 1);
  ln->path = path;
  ln->header = header;
  ln->nf = nf;
  ln->names = names;
  ln->no = 0;
}

/* The file's next data line split into ln->f; 0 at its end.  Blank lines and
   '#' comments are skipped; the first other line must be the header. */
static int kg_line_next(lua_State *L, kg_line *ln) {
  char *s;
  while ((s = ln->next) != NULL) {
    ln->no++;
    if ((ln->next = strchr(s, '\n')) != NULL) *ln->next++ = '\0';
    if (*s == '\0' || *s == '#') continue;
    if (ln->header != NULL) {
      if (strcmp(s, ln->header) != 0)
        luaL_error(L, "%s:%d: the first line that is not a comment must be the header (%s; tabs)", ln->path,
                   ln->no, luaL_gsub(L, ln->header, "\t", ", "));
      ln->header = NULL;
      continue;
    }
    if (!kg_split(s, ln)) luaL_error(L, "%s:%d: a line has %d tab-separated fields", ln->path, ln->no, ln->nf);
    return 1;
  }
  return 0;
}

/* Field i as an integer >= lo. */
static long long kg_lint(lua_State *L, const kg_line *ln, int i, long long lo) {
  char *end;
  long long x;
  errno = 0;
  x = strtoll(ln->f[i], &end, 10);
  if (errno != 0 || end == ln->f[i] || *end != '\0' || x < lo)
    luaL_error(L, "%s:%d: %s must be an integer >= %d, not '%s'", ln->path,
               ln->no, ln->names[i], (int)lo, ln->f[i]);
  return x;
}

/* Field i as a positive time in microseconds; -1 for "failed" when allowed. */
static double kg_ltime(lua_State *L, const kg_line *ln, int i, int failed_ok) {
  char *end;
  double x;
  if (failed_ok && strcmp(ln->f[i], "failed") == 0) return -1;
  errno = 0;
  x = strtod(ln->f[i], &end);
  if (errno != 0 || end == ln->f[i] || *end != '\0' || !(x > 0) || !isfinite(x))
    luaL_error(L, "%s:%d: %s must be a positive number of microseconds%s, "
               "not '%s'", ln->path, ln->no, ln->names[i],
               failed_ok ? " or 'failed'" : "", ln->f[i]);
  return x;
}

/* Checks that variant record at v is of the line's op and dtypes. */
static void kg_match(lua_State *L, const kg_line *ln, int v, int field) {
  static const char *const keys[3] = { "op", "dtype", "dtype_out" };
  int i;
  for (i = 0; i < 3; i++) {
    lua_getfield(L, v, keys[i]);
    if (strcmp(lua_tostring(L, -1), ln->f[i]) != 0)
      luaL_error(L, "%s:%d: %s %s has %s %s, the line says %s", ln->path,
                 ln->no, ln->names[field], ln->f[field], keys[i],
                 lua_tostring(L, -1), ln->f[i]);
    lua_pop(L, 1);
  }
}

/* The line's op (an identifier) and dtypes (known ones), checked. */
static void kg_check_head(lua_State *L, const kg_line *ln) {
  if (!kg_isident(ln->f[0])) kg_lerror(L, ln, "op must be an identifier");
  if (!kg_dtype_enum(ln->f[1]) || !kg_dtype_enum(ln->f[2]))
    kg_lerror(L, ln, "dtype and dtype_out must be bf16, f16, f32 or e4m3");
}

/* Pushes the record of the line's variant (field 6), checked against the
 * line's op and dtypes, and returns its stack index; 0 (nothing pushed)
 * for a variant --only left out. */
static int kg_line_variant(lua_State *L, const kg_line *ln, int byname) {
  int v = (lua_getfield(L, byname, ln->f[6]), lua_gettop(L));
  if (lua_isnil(L, v)) {
    if (kg_ctx_of(L)->o.only) { lua_pop(L, 1); return 0; }
    luaL_error(L, "%s:%d: no generated variant is named '%s'", ln->path,
               ln->no, ln->f[6]);
  }
  kg_match(L, ln, v, 6);
  return v;
}

/* The line's bucket key, pushed: the same shape of the same op and dtypes
 * twice would make the lookup ambiguous. */
static void kg_pushkey(lua_State *L, const kg_line *ln) {
  lua_pushfstring(L, "%s %s %s %s %s %s", ln->f[0], ln->f[1], ln->f[2],
                  ln->f[3], ln->f[4], ln->f[5]);
}

/* Checks one data line; appends its rule to rules unless it records a
 * failure or names a variant --only left out. */
static void kg_tune_line(lua_State *L, kg_line *ln, int byname, int seen,
                         int rules) {
  long long m, n, k;
  double t;
  int v;
  kg_check_head(L, ln);
  k = kg_lint(L, ln, 5, 0);
  m = kg_lint(L, ln, 3, 1);
  n = kg_lint(L, ln, 4, 1);
  t = kg_ltime(L, ln, 7, 1);
  if (strcmp(ln->f[8], "-") != 0) kg_ltime(L, ln, 9, 1);
  if (!*ln->f[10] || !*ln->f[11] || !*ln->f[12])
    kg_lerror(L, ln, "device, date and commit must not be empty");
  if ((v = kg_line_variant(L, ln, byname)) == 0) return;
  if (t < 0) { lua_pop(L, 1); return; }
  kg_pushkey(L, ln);
  if (lua_getfield(L, seen, lua_tostring(L, -1)) != LUA_TNIL)
    luaL_error(L, "%s:%d: a second rule for %s (the first is line %d)",
               ln->path, ln->no, lua_tostring(L, -2),
               (int)lua_tointeger(L, -1));
  lua_pop(L, 1);
  lua_pushinteger(L, ln->no);
  lua_setfield(L, seen, lua_tostring(L, -2));
  lua_pop(L, 1);
  lua_createtable(L, 0, 8);
  lua_getfield(L, v, "index");
  lua_setfield(L, -2, "variant");
  lua_pushstring(L, ln->f[0]);
  lua_setfield(L, -2, "op");
  lua_pushfstring(L, "{\"%s\", %s, %s, %s, %s, %s, ", ln->f[0],
                  kg_dtype_enum(ln->f[1]), kg_dtype_enum(ln->f[2]), ln->f[3],
                  ln->f[4], ln->f[5]);
  lua_setfield(L, -2, "head");
  {
    char buf[96];
    snprintf(buf, sizeof buf, "%.6ff, %.6ff, %.6ff, ", log2((double)m),
             log2((double)n), k > 0 ? log2((double)k) : 0.0);
    lua_pushstring(L, buf);
    lua_setfield(L, -2, "logs");
    snprintf(buf, sizeof buf, "%.3ff", t);
    lua_pushstring(L, buf);
    lua_setfield(L, -2, "time");
  }
  kg_append(L, rules);
  lua_pop(L, 1);
}

/* The rules at index rules regrouped, pushed: op by op in the order each op
 * first appears, each op's rules in file order (the runtime indexes each
 * op's run of rules, as it does its variants). */
static void kg_group_by_op(lua_State *L, int rules) {
  lua_Integer i, j, n = (lua_Integer)lua_rawlen(L, rules);
  int out, done;
  lua_createtable(L, (int)n, 0);
  out = lua_gettop(L);
  lua_newtable(L);
  done = lua_gettop(L);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, rules, i);
    lua_getfield(L, -1, "op");
    if (lua_getfield(L, done, lua_tostring(L, -1)) == LUA_TNIL) {
      lua_pushboolean(L, 1);
      lua_setfield(L, done, lua_tostring(L, -3));
      for (j = i; j <= n; j++) {
        lua_rawgeti(L, rules, j);
        lua_getfield(L, -1, "op");
        if (strcmp(lua_tostring(L, -1), lua_tostring(L, -4)) == 0) {
          lua_pop(L, 1);
          lua_rawseti(L, out, (lua_Integer)lua_rawlen(L, out) + 1);
        } else {
          lua_pop(L, 2);
        }
      }
    }
    lua_pop(L, 3);
  }
  lua_pop(L, 1);
}

/* name -> variant record (with its 0-based table index), pushed. */
static void kg_byname(lua_State *L, int variants) {
  lua_Integer i, n = (lua_Integer)lua_rawlen(L, variants);
  lua_createtable(L, 0, (int)n);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, variants, i);
    lua_pushinteger(L, i - 1);
    lua_setfield(L, -2, "index");
    lua_getfield(L, -1, "name");
    lua_insert(L, -2);
    lua_settable(L, -3);
  }
}

void kg_tune_load(lua_State *L, int variants, const char *path) {
  kg_line ln;
  int byname, seen, rules;
  variants = lua_absindex(L, variants);
  lua_newtable(L);
  rules = lua_gettop(L);
  if (path == NULL) return;
  kg_line_open(L, &ln, path, kg_tune_header, KG_TUNE_FIELDS, kg_field_names);
  kg_byname(L, variants);
  byname = lua_gettop(L);
  lua_newtable(L);
  seen = lua_gettop(L);
  while (kg_line_next(L, &ln)) kg_tune_line(L, &ln, byname, seen, rules);
  kg_group_by_op(L, rules);
  lua_replace(L, rules);
  lua_settop(L, rules);
}

/* ---- the times: gemm models and row spans ------------------------- */

/* The points of the times file, by variant: what the fit and the spans read. */
typedef struct kg_times {
  int n;                /* gemm points read */
  int *variant;         /* point i's variant (table index) */
  int *shape;           /* point i's problem (dtypes, m, n, k), numbered from 0 */
  int nshapes, shapes;  /* problems seen; the stack index of their table (key -> number) */
  int *align;           /* point i's variant's alignment */
  int *best, *work;     /* problem s's fastest point; scratch of the fit */
  kg_sample *p;          /* point i */
  int nr;               /* row-op points read */
  kg_rpoint *rp;
} kg_times;

/* The number of line ln's problem (dtypes, m, n, k), a new one if unseen. */
static int kg_times_shape(lua_State *L, const kg_line *ln, kg_times *tm) {
  int id;
  lua_pushfstring(L, "%s %s %s %s %s", ln->f[1], ln->f[2], ln->f[3], ln->f[4], ln->f[5]);
  lua_pushvalue(L, -1);
  if (lua_rawget(L, tm->shapes) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushinteger(L, tm->nshapes);
    lua_rawset(L, tm->shapes);
    id = tm->nshapes++;
  } else {
    id = (int)lua_tointeger(L, -1);
    lua_pop(L, 2);
  }
  return id;
}

/* Checks one data line and adds its point; a variant --only left out is skipped. */
static void kg_times_line(lua_State *L, kg_line *ln, int byname, int seen, kg_times *tm) {
  long long m, n, k, sms, tile_m, tile_n;
  double t;
  int v;
  kg_check_head(L, ln);
  m = kg_lint(L, ln, 3, 1);
  n = kg_lint(L, ln, 4, 1);
  k = kg_lint(L, ln, 5, 0);
  t = kg_ltime(L, ln, 7, 0);
  sms = kg_lint(L, ln, 8, 1);
  if ((v = kg_line_variant(L, ln, byname)) == 0) return;
  tile_m = (lua_getfield(L, v, "tile_m"), lua_tointeger(L, -1));
  tile_n = (lua_getfield(L, v, "tile_n"), lua_tointeger(L, -1));
  lua_pushfstring(L, "%s %s %s %s", ln->f[6], ln->f[3], ln->f[4], ln->f[5]);
  if (lua_getfield(L, seen, lua_tostring(L, -1)) != LUA_TNIL)
    luaL_error(L, "%s:%d: a second time for %s (the first is line %d)", ln->path, ln->no,
               lua_tostring(L, -2), (int)lua_tointeger(L, -1));
  lua_pushinteger(L, ln->no);
  lua_setfield(L, seen, lua_tostring(L, -3));
  if (tile_m > 0 && tile_n > 0 && k < 1)
    luaL_error(L, "%s:%d: k must be >= 1 for %s (a variant with output tiles)", ln->path, ln->no, ln->f[6]);
  lua_getfield(L, v, "index");
  if (tile_m < 1 || tile_n < 1) {   /* a row op's time: a point of its spans */
    tm->rp[tm->nr].variant = (int)lua_tointeger(L, -1);
    tm->rp[tm->nr].n = n;
    tm->rp[tm->nr].m = m;
    tm->rp[tm->nr].cost = t / (double)m;
    tm->nr++;
    lua_settop(L, v - 1);
    return;
  }
  tm->variant[tm->n] = (int)lua_tointeger(L, -1);
  tm->shape[tm->n] = kg_times_shape(L, ln, tm);
  tm->align[tm->n] = (int)(lua_getfield(L, v, "align"), lua_tointeger(L, -1));
  lua_pop(L, 1);
  tm->p[tm->n].waves = kg_fit_waves(m, n, tile_m, tile_n, sms);
  tm->p[tm->n].k = (double)k;
  tm->p[tm->n].t = t;
  tm->p[tm->n].ragged = k * kg_dtype_size(ln->f[1]) % KG_FIT_LINE != 0;   /* the tune's rows are K long */
  tm->n++;
  lua_settop(L, v - 1);
}

/* Reads o.times into tm (arrays owned by userdata left on the stack). */
static void kg_times_read(lua_State *L, const char *path, int variants, kg_times *tm) {
  kg_line ln;
  const char *c;
  int byname, seen, cap = 1;
  kg_line_open(L, &ln, path, kg_times_header, KG_TIMES_FIELDS, kg_times_names);
  for (c = ln.next; *c; c++) cap += *c == '\n';
  tm->n = tm->nr = 0;
  tm->variant = lua_newuserdatauv(L, (size_t)cap * sizeof *tm->variant, 0);
  tm->shape = lua_newuserdatauv(L, (size_t)cap * sizeof *tm->shape, 0);
  tm->best = lua_newuserdatauv(L, (size_t)cap * sizeof *tm->best, 0);
  tm->work = lua_newuserdatauv(L, (size_t)cap * sizeof *tm->work, 0);
  tm->align = lua_newuserdatauv(L, (size_t)cap * sizeof *tm->align, 0);
  lua_newtable(L);
  tm->shapes = lua_gettop(L);
  tm->nshapes = 0;
  tm->p = lua_newuserdatauv(L, (size_t)cap * sizeof *tm->p, 0);
  tm->rp = lua_newuserdatauv(L, (size_t)cap * sizeof *tm->rp, 0);
  kg_byname(L, variants);
  byname = lua_gettop(L);
  lua_newtable(L);
  seen = lua_gettop(L);
  while (kg_line_next(L, &ln)) kg_times_line(L, &ln, byname, seen, tm);
  lua_pop(L, 2);
}

/* The model row of variant vi (record at v), pushed; nothing when it has too few points
   or is the fastest at no tuned problem (kg_fit_model). */
static int kg_model_row(lua_State *L, const kg_points *pt, int vi, int v, kg_sample *scratch) {
  kg_model m;
  char buf[256];
  if (!kg_fit_model(pt, vi, -1, scratch, &m)) return 0;
  lua_getfield(L, v, "name");
  snprintf(buf, sizeof buf, "  {%d, %#.5gf, %#.5gf, %#.5gf, %#.4gf, %d},  /* %s: rms log error %.3f */\n", vi,
           m.launch_us, m.us_per_k, m.k_extra, m.ragged, m.points, lua_tostring(L, -1), m.rms_log);
  lua_pop(L, 1);
  lua_pushstring(L, buf);
  return 1;
}

/* Variant vi's name, pushed. */
static const char *kg_variant_name(lua_State *L, int variants, int vi) {
  lua_rawgeti(L, variants, (lua_Integer)vi + 1);
  lua_getfield(L, -1, "name");
  lua_replace(L, -2);
  return lua_tostring(L, -1);
}

/* --check-model: each gemm problem of the times file left out in turn, the
   models fitted without it pick a variant there; one line per problem
   (t(pick) / t(best), both variants) and their geomean and worst, on stdout. */
static void kg_model_check(lua_State *L, const kg_times *tm, const kg_points *pt, int variants,
                           kg_sample *scratch) {
  double logsum = 0, worst = 0;
  int s, pick, counted = 0, names;
  lua_newtable(L);   /* problem number -> its key */
  names = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, tm->shapes)) {
    lua_pushvalue(L, -2);
    lua_rawseti(L, names, lua_tointeger(L, -2) + 1);
    lua_pop(L, 1);
  }
  for (s = 0; s < tm->nshapes; s++) {
    const double r = kg_fit_loo(pt, s, scratch, &pick);
    if (r <= 0) continue;
    lua_rawgeti(L, names, s + 1);
    printf("%s\t%.4f", lua_tostring(L, -1), r);
    printf("\t%s", kg_variant_name(L, variants, tm->variant[pick]));
    printf("\t%s\n", kg_variant_name(L, variants, tm->variant[tm->best[s]]));
    lua_pop(L, 3);
    logsum += log(r);
    worst = r > worst ? r : worst;
    counted++;
  }
  printf("kite-gen: gemm model left out one problem at a time: %d problems, geomean %.4f, worst %.4f\n", counted,
         counted ? exp(logsum / counted) : 0.0, worst);
  lua_pop(L, 1);
}

void kg_times_load(lua_State *L, int variants, const char *path) {
  kg_times tm;
  kg_points pt;
  kg_sample *scratch;
  lua_Integer i, nv;
  int models;
  variants = lua_absindex(L, variants);
  lua_newtable(L);
  models = lua_gettop(L);
  if (path == NULL) {
    lua_newtable(L);   /* no spans either */
    return;
  }
  kg_times_read(L, path, variants, &tm);
  pt.p = tm.p, pt.variant = tm.variant, pt.shape = tm.shape, pt.align = tm.align;
  pt.best = tm.best, pt.work = tm.work;
  pt.n = tm.n, pt.nshapes = tm.nshapes;
  kg_fit_best(&pt);
  scratch = lua_newuserdatauv(L, (size_t)(tm.n + 1) * sizeof *scratch, 0);
  if (kg_ctx_of(L)->o.check_model) kg_model_check(L, &tm, &pt, variants, scratch);
  nv = (lua_Integer)lua_rawlen(L, variants);
  for (i = 1; i <= nv; i++) {
    lua_rawgeti(L, variants, i);
    if (kg_model_row(L, &pt, (int)(i - 1), lua_gettop(L), scratch)) {
      lua_rawseti(L, models, (lua_Integer)lua_rawlen(L, models) + 1);
    }
    lua_pop(L, 1);
  }
  kg_spans_push(L, variants, tm.rp, tm.nr);
  lua_replace(L, models + 1);   /* over the file's text, which kg_times_read left there */
  lua_settop(L, models + 1);
}
