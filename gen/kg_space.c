/* kg_space.c - ops and their spaces: find the ops, run each space.lua,
 * check what it returns, enumerate its points and make one record per
 * variant kept.
 *
 * space.lua returns a table with exactly these fields:
 *   op        string, the folder's name
 *   template  file name under the op folder ("rmsnorm.cu.tpl")
 *   axes      name -> non-empty array of numbers or strings (no blanks);
 *             names are Lua names, not starting with "__", and upper-cased
 *             they must not clash with each other or VARIANT, OP, P, _G,
 *             _ENV
 *   valid     optional function(p) -> keep? (a second result is ignored)
 *   name      "x_${dtype}_t${threads}" (the axes are the variables, then
 *             space.lua's globals) or function(p) -> string; the result
 *             must match ^[A-Za-z0-9_]+$ and be unique across all ops
 *   meta      function(p) -> {n_min=, n_max=, align=, rank=, tile_m=,
 *             tile_n=, eff=, cost_k=, dtype=, dtype_out=}: integers
 *             0 <= n_min <= n_max, 1 <= align < 2^31, rank an int32
 *             (default 0), tile_m and tile_n (the output tile of a
 *             gemm-like op) in [0, 2^31) (default 0), eff (per-mille
 *             throughput the gemm heuristic assumes) in [1, 1000]
 *             (default 1000), cost_k (the K-equivalent of a tile's work
 *             outside its k-loop) in [0, 2^31) (default 0), n_step (the
 *             row lengths its work comes in: a row of N costs about what
 *             one of N rounded up to a multiple of n_step does; read by
 *             the measured spans, kg_span.c) in [1, 2^31) (default 1);
 *             dtype (default
 *             p.dtype) and dtype_out (default dtype) one of bf16, f16, f32,
 *             e4m3; no other fields
 * Points: axes sorted by name, the last varying fastest, values in array
 * order; p is a fresh table {axis = value} for every call.
 *
 * A space record (a Lua table) holds: op, path (of space.lua), tplpath,
 * axes (axis names, sorted), vals (private copies of the value arrays, in
 * the same order), valid, name, namepat (name is a compiled pattern), meta,
 * env (space.lua's environment).  A variant record holds: name, op, dtype,
 * dtype_out, n_min, n_max, align, rank, tile_m, tile_n, eff, cost_k, n_step, params ("a=1 b=x"), pt (its point),
 * space. */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include "kg.h"

typedef struct kg_sp {
  const char *op, *path;  /* op name, "<templates>/<op>/space.lua" */
  const char *vname;      /* variant being made, for messages */
  int rec;                /* stack index of the space record */
  int names, vals;        /* stack indices of rec.axes and rec.vals */
  int naxes;
  int len[KG_MAX_AXES];   /* values per axis */
} kg_sp;

static void kg_sperror(lua_State *L, const kg_sp *sp, const char *fmt, ...) {
  va_list ap;
  lua_pushfstring(L, "%s: ", sp->path);
  va_start(ap, fmt);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  lua_concat(L, 2);
  lua_error(L);
}

static const struct kg_dtype {
  const char *name, *kite;   /* the templates' name, the kite_dtype constant */
  int size;                  /* bytes per element */
} kg_dtypes[] = {
  {"bf16", "KITE_BF16", 2}, {"f16", "KITE_F16", 2}, {"f32", "KITE_F32", 4},
  {"e4m3", "KITE_E4M3", 1}, {NULL, NULL, 0}
};

static const struct kg_dtype *kg_dtype_find(const char *dtype) {
  int i;
  for (i = 0; kg_dtypes[i].name; i++)
    if (strcmp(dtype, kg_dtypes[i].name) == 0) return &kg_dtypes[i];
  return NULL;
}

int kg_dtype_size(const char *dtype) {
  const struct kg_dtype *d = kg_dtype_find(dtype);
  return d ? d->size : 0;
}

/* The kite_dtype constant for dtype, or NULL if it has none. */
const char *kg_dtype_enum(const char *dtype) {
  const struct kg_dtype *d = kg_dtype_find(dtype);
  return d ? d->kite : NULL;
}

/* Pushes the sorted names of the ops: folders of the templates dir, other
 * than lib, that hold a space.lua. */
void kg_space_discover(lua_State *L) {
  const char *dir = kg_ctx_of(L)->o.tpl_dir, *name, *path;
  lua_Integer i, n;
  if (!kg_listdir(L, dir)) lua_error(L);
  lua_newtable(L);
  n = (lua_Integer)lua_rawlen(L, -2);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, -2, i);
    name = lua_tostring(L, -1);
    path = lua_pushfstring(L, "%s/%s/space.lua", dir, name);
    if (strcmp(name, "lib") == 0 || name[0] == '.' || !kg_isfile(path)) {
      lua_pop(L, 2);
      continue;
    }
    lua_pop(L, 1);
    if (!kg_isname(name))
      luaL_error(L, "%s/%s: op folder names must match [A-Za-z0-9_]+", dir,
                 name);
    kg_append(L, -2);
  }
  lua_remove(L, -2);
}

/* ---- checking what space.lua returned ------------------------------ */

static const char *const kg_fields[] = {
  "op", "template", "axes", "valid", "name", "meta", NULL
};

static const char *const kg_metafields[] = {
  "n_min", "n_max", "align", "rank", "dtype", "dtype_out", "tile_m",
  "tile_n", "eff", "cost_k", "n_step", NULL
};

/* Refuses keys of table t not in list; what names the table. */
static void kg_known(lua_State *L, kg_sp *sp, int t, const char *const *list,
                     const char *what) {
  lua_Integer i, n;
  int j;
  if (kg_keys(L, t))
    kg_sperror(L, sp, "%s has keys that are not strings", what);
  n = (lua_Integer)lua_rawlen(L, -1);
  for (i = 1; i <= n; i++) {
    const char *k = (lua_rawgeti(L, -1, i), lua_tostring(L, -1));
    for (j = 0; list[j] && strcmp(k, list[j]) != 0; j++) {}
    if (list[j] == NULL)
      kg_sperror(L, sp, "%s has unknown field '%s'", what, k);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* Sets rec[field] = t[field] after checking its type; leaves it pushed. */
static int kg_field(lua_State *L, kg_sp *sp, int t, const char *field,
                    int type, int optional) {
  int ty = lua_getfield(L, t, field);
  if (ty != type && !(optional && ty == LUA_TNIL))
    kg_sperror(L, sp, "field '%s' must be a %s, not %s", field,
               lua_typename(L, type), lua_typename(L, ty));
  lua_pushvalue(L, -1);
  lua_setfield(L, sp->rec, field);
  return ty;
}

static void kg_space_template(lua_State *L, kg_sp *sp, int t) {
  const char *s;
  kg_field(L, sp, t, "op", LUA_TSTRING, 0);
  if (strcmp(lua_tostring(L, -1), sp->op) != 0)
    kg_sperror(L, sp, "op is '%s' but the folder is '%s'",
               lua_tostring(L, -1), sp->op);
  kg_field(L, sp, t, "template", LUA_TSTRING, 0);
  s = lua_tostring(L, -1);
  if (*s == '\0' || *s == '/' || strstr(s, "..") != NULL)
    kg_sperror(L, sp, "template '%s' must be a file under the op folder", s);
  lua_pushfstring(L, "%s/%s/%s", kg_ctx_of(L)->o.tpl_dir, sp->op, s);
  lua_setfield(L, sp->rec, "tplpath");
  lua_pop(L, 2);
}

/* name: a pattern ("x_${dtype}") compiled once, or a function. */
static void kg_space_namefn(lua_State *L, kg_sp *sp, int t) {
  size_t len;
  const char *code;
  int ty = lua_getfield(L, t, "name");
  if (ty == LUA_TSTRING) {
    kg_tpl_namecode(L, lua_tostring(L, -1), sp->path);
    code = lua_tolstring(L, -1, &len);
    lua_pushfstring(L, "=%s (name)", sp->path);
    if (luaL_loadbufferx(L, code, len, lua_tostring(L, -1), "t") != LUA_OK)
      lua_error(L);
    lua_pushnil(L);  /* the chunk declares its own _ENV */
    lua_setupvalue(L, -2, 1);
    lua_replace(L, -4);
    lua_pop(L, 2);
  } else if (ty != LUA_TFUNCTION)
    kg_sperror(L, sp, "field 'name' must be a string or a function, not %s",
               lua_typename(L, ty));
  lua_setfield(L, sp->rec, "name");
  lua_pushboolean(L, ty == LUA_TSTRING);
  lua_setfield(L, sp->rec, "namepat");
}

/* ---- axes ---------------------------------------------------------- */

static const char *const kg_globals[] = {"VARIANT", "OP", "P", "_ENV", "_G",
                                         NULL};

/* An axis name must work as a variable in ${} and, upper-cased, as a
 * template global that shadows nothing; ups maps upper -> axis name. */
static void kg_axisname(lua_State *L, kg_sp *sp, const char *name, int ups) {
  const char *up;
  int i;
  if (!kg_isident(name) || strncmp(name, "__", 2) == 0)
    kg_sperror(L, sp, "axis name '%s' must be a Lua name not starting "
               "with __", name);
  up = kg_pushupper(L, name);
  for (i = 0; kg_globals[i]; i++)
    if (strcmp(up, kg_globals[i]) == 0)
      kg_sperror(L, sp, "axis '%s' would hide the template global %s",
                 name, up);
  if (lua_getfield(L, ups, up) != LUA_TNIL)
    kg_sperror(L, sp, "axes '%s' and '%s' are both %s in templates",
               lua_tostring(L, -1), name, up);
  lua_pop(L, 1);
  lua_pushstring(L, name);
  lua_setfield(L, ups, up);
  lua_pop(L, 1);
}

/* Axis values are printed into names, comments and a TSV. */
static int kg_isvalue(const char *s, size_t n) {
  if (n == 0) return 0;
  for (; n > 0; s++, n--)
    if ((unsigned char)*s <= ' ' || *s == 127) return 0;
  return 1;
}

/* Pushes a private copy of the value array at arr (for axis name);
 * returns its length. */
static int kg_axisvals(lua_State *L, kg_sp *sp, const char *name, int arr) {
  int ty;
  lua_Integer i, n;
  size_t len;
  const char *s;
  n = lua_istable(L, arr) ? (lua_Integer)lua_rawlen(L, arr) : 0;
  if (n == 0 || n > KG_MAX_POINTS)
    kg_sperror(L, sp, "axes.%s must be a non-empty array", name);
  lua_createtable(L, (int)n, 0);
  for (i = 1; i <= n; i++) {
    ty = lua_rawgeti(L, arr, i);
    s = ty == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
    if (s && !kg_isvalue(s, len))
      kg_sperror(L, sp, "axes.%s[%I]: strings must be non-empty, without "
                 "blanks or control characters", name, i);
    if (ty != LUA_TSTRING && ty != LUA_TNUMBER)
      kg_sperror(L, sp, "axes.%s[%I] is %s; values must be numbers or "
                 "strings", name, i, lua_typename(L, ty));
    lua_rawseti(L, -2, i);
  }
  return (int)n;
}

static void kg_space_axes(lua_State *L, kg_sp *sp, int t) {
  int ax, ups, i;
  if (lua_getfield(L, t, "axes") != LUA_TTABLE)
    kg_sperror(L, sp, "field 'axes' must be a table, not %s",
               luaL_typename(L, -1));
  ax = lua_gettop(L);
  if (kg_keys(L, ax)) kg_sperror(L, sp, "axis names must be strings");
  sp->names = ax + 1;
  sp->naxes = (int)lua_rawlen(L, sp->names);
  if (sp->naxes > KG_MAX_AXES)
    kg_sperror(L, sp, "more than %d axes", KG_MAX_AXES);
  lua_newtable(L);
  sp->vals = ax + 2;
  lua_newtable(L);
  ups = ax + 3;
  for (i = 0; i < sp->naxes; i++) {
    lua_rawgeti(L, sp->names, i + 1);
    kg_axisname(L, sp, lua_tostring(L, -1), ups);
    lua_gettable(L, ax);
    lua_rawgeti(L, sp->names, i + 1);
    sp->len[i] = kg_axisvals(L, sp, lua_tostring(L, -1), lua_gettop(L) - 1);
    lua_rawseti(L, sp->vals, i + 1);
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  lua_pushvalue(L, sp->names);
  lua_setfield(L, sp->rec, "axes");
  lua_pushvalue(L, sp->vals);
  lua_setfield(L, sp->rec, "vals");
}

/* ---- variants ------------------------------------------------------ */

/* Calls rec[fn] with a fresh copy of point pt; leaves one result. */
static void kg_callp(lua_State *L, kg_sp *sp, const char *fn, int pt) {
  lua_getfield(L, sp->rec, fn);
  kg_copy(L, pt);
  kg_sb_call(L, 1, 1, sp->path);
}

/* Pushes the variant name of point pt, checked and unique across ops. */
static const char *kg_varname(lua_State *L, kg_sp *sp, int pt, int seen) {
  const char *name;
  lua_getfield(L, sp->rec, "namepat");
  if (!lua_toboolean(L, -1)) kg_callp(L, sp, "name", pt);
  else {  /* the pattern sees the axes, then space.lua's globals */
    lua_getfield(L, sp->rec, "name");
    kg_copy(L, pt);
    lua_createtable(L, 0, 1);
    lua_getfield(L, sp->rec, "env");
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    kg_sb_call(L, 1, 1, sp->path);
  }
  lua_remove(L, -2);
  if (lua_type(L, -1) != LUA_TSTRING)
    kg_sperror(L, sp, "name(p) must return a string, not %s",
               luaL_typename(L, -1));
  name = lua_tostring(L, -1);
  if (!kg_isname(name))
    kg_sperror(L, sp, "variant name '%s' must match [A-Za-z0-9_]+", name);
  if (lua_getfield(L, seen, name) != LUA_TNIL)
    kg_sperror(L, sp, "duplicate variant name '%s' (also made by %s)", name,
               lua_tostring(L, -1));
  lua_pop(L, 1);
  lua_pushstring(L, sp->path);
  lua_setfield(L, seen, name);
  return name;
}

/* Pushes "a=1 b=x": the point's values by axis name. */
static void kg_params(lua_State *L, kg_sp *sp, int pt) {
  luaL_Buffer b;
  int i;
  luaL_buffinit(L, &b);
  for (i = 1; i <= sp->naxes; i++) {
    if (i > 1) luaL_addchar(&b, ' ');
    lua_rawgeti(L, sp->names, i);
    lua_pushliteral(L, "=");
    lua_rawgeti(L, sp->names, i);
    lua_gettable(L, pt);
    kg_tostr(L, -1);
    lua_remove(L, -2);
    lua_concat(L, 3);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
}

static const struct {
  const char *field;
  int required;
  lua_Integer lo, hi, dflt;   /* dflt: the value when absent (not required) */
} kg_metaints[] = {
  {"n_min", 1, 0, LUA_MAXINTEGER, 0}, {"n_max", 1, 0, LUA_MAXINTEGER, 0},
  {"align", 1, 1, INT32_MAX, 0}, {"rank", 0, INT32_MIN, INT32_MAX, 0},
  {"tile_m", 0, 0, INT32_MAX, 0}, {"tile_n", 0, 0, INT32_MAX, 0},
  {"eff", 0, 1, 1000, 1000}, {"cost_k", 0, 0, INT32_MAX, 0},
  {"n_step", 0, 1, INT32_MAX, 1}, {NULL, 0, 0, 0, 0}
};

/* Copies the integers of meta table m into variant record v. */
static void kg_metaint(lua_State *L, kg_sp *sp, int m, int v) {
  int i, ok, ty;
  lua_Integer x;
  for (i = 0; kg_metaints[i].field; i++) {
    ty = lua_getfield(L, m, kg_metaints[i].field);
    ok = ty == LUA_TNIL && !kg_metaints[i].required;
    x = ty == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : kg_metaints[i].dflt;
    if (!ok || x < kg_metaints[i].lo || x > kg_metaints[i].hi)
      kg_sperror(L, sp, "meta(p).%s must be an integer in [%I, %I] "
                 "(variant %s)", kg_metaints[i].field, kg_metaints[i].lo,
                 kg_metaints[i].hi, sp->vname);
    lua_pushinteger(L, x);
    lua_setfield(L, v, kg_metaints[i].field);
    lua_pop(L, 1);
  }
}

static void kg_meta(lua_State *L, kg_sp *sp, int pt, int v) {
  int m;
  kg_callp(L, sp, "meta", pt);
  if (!lua_istable(L, -1))
    kg_sperror(L, sp, "meta(p) must return a table, not %s (variant %s)",
               luaL_typename(L, -1), sp->vname);
  m = lua_gettop(L);
  kg_known(L, sp, m, kg_metafields, "meta(p)");
  kg_metaint(L, sp, m, v);
  lua_getfield(L, v, "n_min");
  lua_getfield(L, v, "n_max");
  if (lua_compare(L, -1, -2, LUA_OPLT))
    kg_sperror(L, sp, "meta(p): n_max < n_min (variant %s)", sp->vname);
  lua_pop(L, 2);
  if (lua_getfield(L, m, "dtype") == LUA_TNIL) {
    lua_pop(L, 1);
    lua_getfield(L, pt, "dtype");
  }
  if (lua_type(L, -1) != LUA_TSTRING || !kg_dtype_enum(lua_tostring(L, -1)))
    kg_sperror(L, sp, "dtype (p.dtype or meta(p).dtype) must be one of "
               "bf16, f16, f32, e4m3 (variant %s)", sp->vname);
  lua_setfield(L, v, "dtype");
  if (lua_getfield(L, m, "dtype_out") == LUA_TNIL) {
    lua_pop(L, 1);
    lua_getfield(L, v, "dtype");
  }
  if (lua_type(L, -1) != LUA_TSTRING || !kg_dtype_enum(lua_tostring(L, -1)))
    kg_sperror(L, sp, "meta(p).dtype_out must be one of bf16, f16, f32, "
               "e4m3 (variant %s)", sp->vname);
  lua_setfield(L, v, "dtype_out");
  lua_pop(L, 1);
}

static void kg_variant(lua_State *L, kg_sp *sp, int pt, int variants,
                       int seen) {
  int v;
  lua_newtable(L);
  v = lua_gettop(L);
  sp->vname = kg_varname(L, sp, pt, seen);  /* stays on the stack */
  lua_pushvalue(L, -1);
  lua_setfield(L, v, "name");
  kg_params(L, sp, pt);
  lua_setfield(L, v, "params");
  kg_meta(L, sp, pt, v);
  lua_pushvalue(L, pt);
  lua_setfield(L, v, "pt");
  lua_pushstring(L, sp->op);
  lua_setfield(L, v, "op");
  lua_pushvalue(L, sp->rec);
  lua_setfield(L, v, "space");
  lua_pushvalue(L, v);
  kg_append(L, variants);
  lua_settop(L, v - 1);
}

/* Pushes the point at odometer idx: a fresh table axis -> value. */
static void kg_point(lua_State *L, kg_sp *sp, const int *idx) {
  int i;
  lua_createtable(L, 0, sp->naxes);
  for (i = 0; i < sp->naxes; i++) {
    lua_rawgeti(L, sp->names, i + 1);
    lua_rawgeti(L, sp->vals, i + 1);
    lua_rawgeti(L, -1, idx[i] + 1);
    lua_replace(L, -2);
    lua_rawset(L, -3);
  }
}

static int kg_keep(lua_State *L, kg_sp *sp, int pt) {
  int keep;
  if (lua_getfield(L, sp->rec, "valid") == LUA_TNIL) return lua_pop(L, 1), 1;
  lua_pop(L, 1);
  kg_callp(L, sp, "valid", pt);
  keep = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return keep;
}

/* The cartesian product of the axes (sorted by name), the last axis
 * varying fastest, values in array order. */
static void kg_enum(lua_State *L, kg_sp *sp, int variants, int seen) {
  int idx[KG_MAX_AXES] = {0}, i, pt;
  long k, total = 1;
  for (i = 0; i < sp->naxes; i++) {
    if (total > KG_MAX_POINTS / sp->len[i])
      kg_sperror(L, sp, "more than %d points", (int)KG_MAX_POINTS);
    total *= sp->len[i];
  }
  for (k = 0; k < total; k++) {
    kg_point(L, sp, idx);
    pt = lua_gettop(L);
    if (kg_keep(L, sp, pt)) kg_variant(L, sp, pt, variants, seen);
    lua_pop(L, 1);
    for (i = sp->naxes - 1; i >= 0 && ++idx[i] == sp->len[i]; i--) idx[i] = 0;
  }
}

/* Runs <templates>/<op>/space.lua and appends its variants to the array
 * at variants; seen maps every variant name so far to its space.lua. */
void kg_space_load(lua_State *L, const char *op, int variants, int seen) {
  kg_sp sp;
  int top = lua_gettop(L), t;
  variants = lua_absindex(L, variants);
  seen = lua_absindex(L, seen);
  memset(&sp, 0, sizeof sp);
  sp.op = op;
  sp.path = lua_pushfstring(L, "%s/%s/space.lua", kg_ctx_of(L)->o.tpl_dir, op);
  lua_newtable(L);
  sp.rec = lua_gettop(L);
  kg_sb_loadfile(L, sp.path);
  lua_getupvalue(L, -1, 1);
  lua_setfield(L, sp.rec, "env");
  kg_sb_call(L, 0, 1, sp.path);
  if (!lua_istable(L, -1))
    kg_sperror(L, &sp, "must return a table, not %s", luaL_typename(L, -1));
  t = lua_gettop(L);
  kg_known(L, &sp, t, kg_fields, "the returned table");
  kg_space_template(L, &sp, t);
  kg_space_namefn(L, &sp, t);
  kg_field(L, &sp, t, "valid", LUA_TFUNCTION, 1);
  kg_field(L, &sp, t, "meta", LUA_TFUNCTION, 0);
  lua_settop(L, t);
  kg_space_axes(L, &sp, t);
  kg_enum(L, &sp, variants, seen);
  lua_settop(L, top);
}
