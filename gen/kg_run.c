/* kg_run.c - the program: options, the protected main, reporting. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kg.h"

static const char kg_usage_text[] =
  "usage: kite-gen [-t TEMPLATES_DIR] [-o OUT_DIR] [--only GLOB] [--list] "
  "[[--gpu NAME] [--tuned FILE] [--times FILE]]... [--check-model] [-q]\n"
  "  -t DIR       templates root (default: templates)\n"
  "  -o DIR       output root (default: out)\n"
  "  --only GLOB  keep only variants whose name matches GLOB (fnmatch)\n"
  "  --list       print name<TAB>op for each variant, write nothing\n"
  "  --gpu NAME   start the measured set of GPU NAME ([a-z0-9_]+): the\n"
  "               runtime uses it on a device whose name holds NAME (case\n"
  "               aside), and the first set on any other; up to 16 sets\n"
  "  --tuned FILE the set's measured rules (bench/tuned/<gpu>.tsv)\n"
  "  --times FILE the set's measured times (bench/tuned/<gpu>.times.tsv):\n"
  "               gemm cost models fitted per variant, row spans\n"
  "  --check-model with --times: each gemm problem left out in turn, the\n"
  "               models fitted without it pick there; print how that pick\n"
  "               ran against the problem's best (a GPU-free check of the\n"
  "               model), write nothing\n"
  "  -q           no summary line\n";

void kg_opts_init(kg_opts *o) {
  memset(o, 0, sizeof *o);
  o->tpl_dir = "templates";
  o->out_dir = "out";
  o->insn_limit = KG_INSN_LIMIT;
  o->mem_limit = KG_MEM_LIMIT;
}

/* Replaces the variants array at index v by the ones --only keeps. */
static void kg_only(lua_State *L, int v) {
  const char *glob = kg_ctx_of(L)->o.only;
  lua_Integer i, n = (lua_Integer)lua_rawlen(L, v);
  if (glob == NULL) return;
  lua_newtable(L);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, v, i);
    lua_getfield(L, -1, "name");
    if (fnmatch(glob, lua_tostring(L, -1), 0) == 0) {
      lua_pop(L, 1);
      kg_append(L, -2);
    } else lua_pop(L, 2);
  }
  lua_replace(L, v);
}

static void kg_list(lua_State *L, int v) {
  lua_Integer i, n = (lua_Integer)lua_rawlen(L, v);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, v, i);
    lua_getfield(L, -1, "name");
    lua_getfield(L, -2, "op");
    printf("%s\t%s\n", lua_tostring(L, -2), lua_tostring(L, -1));
    lua_pop(L, 3);
  }
  fflush(stdout);
}

/* Pops a path and its data and appends {path=, data=} to files. */
static void kg_addfile(lua_State *L, int files) {
  lua_createtable(L, 0, 2);
  lua_insert(L, -3);
  lua_setfield(L, -3, "data");
  lua_setfield(L, -2, "path");
  kg_append(L, files);
}

/* Everything in memory first: one error and nothing is written. */
static void kg_generate(lua_State *L, int v, int sets) {
  const char *out = kg_ctx_of(L)->o.out_dir;
  lua_Integer i, n = (lua_Integer)lua_rawlen(L, v);
  int files, rec;
  lua_newtable(L);
  files = lua_gettop(L);
  for (i = 1; i <= n; i++) {
    rec = (lua_rawgeti(L, v, i), lua_gettop(L));
    lua_getfield(L, rec, "op");
    lua_getfield(L, rec, "name");
    lua_pushfstring(L, "%s/%s/%s.cu", out, lua_tostring(L, -2),
                    lua_tostring(L, -1));
    kg_tpl_expand(L, rec);
    kg_write_cu(L, rec, -1);
    lua_remove(L, -2);
    kg_addfile(L, files);
    lua_settop(L, files);
  }
  lua_pushfstring(L, "%s/manifest.tsv", out);
  kg_write_manifest(L, v);
  kg_addfile(L, files);
  lua_pushfstring(L, "%s/kite_table.c", out);
  kg_write_table(L, v, sets);
  kg_addfile(L, files);
  kg_write_files(L, files);
  lua_pop(L, 1);
}

/* Pushes the measured sets: per --gpu (one unnamed set without any), its
 * {gpu=, rules=, models=, spans=} from its files, checked against the
 * variants array at v. */
static void kg_sets_load(lua_State *L, int v) {
  const kg_opts *o = &kg_ctx_of(L)->o;
  static const kg_gpu none = { "", NULL, NULL };
  int i, n = o->ngpus > 0 ? o->ngpus : 1;
  lua_createtable(L, n, 0);
  for (i = 0; i < n; i++) {
    const kg_gpu *g = o->ngpus > 0 ? &o->gpus[i] : &none;
    lua_createtable(L, 0, 4);
    lua_pushstring(L, g->name);
    lua_setfield(L, -2, "gpu");
    kg_tune_load(L, v, g->tuned);
    lua_setfield(L, -2, "rules");
    kg_times_load(L, v, g->times);   /* models, spans */
    lua_setfield(L, -3, "spans");
    lua_setfield(L, -2, "models");
    lua_rawseti(L, -2, i + 1);
  }
}

static int kg_pmain(lua_State *L) {
  kg_ctx *c = kg_ctx_of(L);
  lua_Integer i, n;
  luaL_checkstack(L, 64, "kite-gen");  /* the helpers nest deep */
  kg_sb_init(L);
  kg_space_discover(L);  /* 1: op names */
  lua_newtable(L);       /* 2: variants */
  lua_newtable(L);       /* 3: variant name -> space.lua, across ops */
  n = (lua_Integer)lua_rawlen(L, 1);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, i);
    kg_space_load(L, lua_tostring(L, -1), 2, 3);
    lua_pop(L, 1);
  }
  kg_only(L, 2);
  c->nvariants = (int)lua_rawlen(L, 2);
  kg_sets_load(L, 2);    /* 4: the measured sets */
  if (c->o.check_model) return 0;   /* kg_times_load printed it */
  if (c->o.list) kg_list(L, 2);
  else kg_generate(L, 2, 4);
  return 0;
}

/* A copy of dir without trailing slashes ("out/" and "out" are one dir). */
static char *kg_trim(const char *dir) {
  size_t n = strlen(dir);
  char *s = malloc(n + 1);
  if (s == NULL) return NULL;
  memcpy(s, dir, n + 1);
  while (n > 1 && s[n - 1] == '/') s[--n] = '\0';
  return s;
}

int kg_exec(const kg_opts *o) {
  kg_ctx c;
  lua_State *L = NULL;
  char *tpl = kg_trim(o->tpl_dir), *out = kg_trim(o->out_dir);
  int st = LUA_ERRMEM;
  memset(&c, 0, sizeof c);
  c.o = *o;
  c.o.tpl_dir = tpl;
  c.o.out_dir = out;
  if (c.o.insn_limit <= 0) c.o.insn_limit = KG_INSN_LIMIT;
  if (c.o.mem_limit == 0) c.o.mem_limit = KG_MEM_LIMIT;
  if (tpl && out && (L = kg_sb_open(&c)) != NULL) {
    lua_pushcfunction(L, kg_pmain);
    st = lua_pcall(L, 0, 0, 0);
  }
  if (st != LUA_OK) {
    const char *msg = L ? lua_tostring(L, -1) : NULL;
    fprintf(stderr, "%s\n", msg ? msg : "kite-gen: not enough memory");
  } else if (!c.o.quiet && !c.o.list && !c.o.check_model)
    fprintf(stderr, "kite-gen: %d variants, %d written, %d unchanged, "
            "%d removed\n", c.nvariants, c.written, c.unchanged, c.removed);
  if (L) lua_close(L);
  free(tpl);
  free(out);
  return st == LUA_OK ? 0 : 1;
}

static int kg_usage(const char *arg, const char *why) {
  fprintf(stderr, "kite-gen: %s: %s\n%s", arg, why, kg_usage_text);
  return 2;
}

/* The set --tuned and --times fill: the last --gpu's, or an unnamed one. */
static kg_gpu *kg_cur_gpu(kg_opts *o) {
  if (o->ngpus == 0) o->gpus[o->ngpus++].name = "";
  return &o->gpus[o->ngpus - 1];
}

static const char **kg_optarg(kg_opts *o, const char *a) {
  if (strcmp(a, "-t") == 0) return &o->tpl_dir;
  if (strcmp(a, "-o") == 0) return &o->out_dir;
  if (strcmp(a, "--only") == 0) return &o->only;
  if (strcmp(a, "--tuned") == 0) return &kg_cur_gpu(o)->tuned;
  if (strcmp(a, "--times") == 0) return &kg_cur_gpu(o)->times;
  return NULL;
}

/* --gpu NAME: a new set; NULL when it is a good name, else why not. */
static const char *kg_add_gpu(kg_opts *o, const char *name) {
  int i;
  if (!*name) return "needs a name";
  for (i = 0; name[i]; i++)
    if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
      return "a GPU name is lower-case letters, digits and '_'";
  for (i = 0; i < o->ngpus; i++)
    if (strcmp(o->gpus[i].name, name) == 0) return "a second set of one GPU";
  if (o->ngpus == KG_MAX_GPUS) return "too many sets (16 at most)";
  o->gpus[o->ngpus++].name = name;
  return NULL;
}

/* Whether some set has a times file (--check-model reads them). */
static int kg_any_times(const kg_opts *o) {
  int i;
  for (i = 0; i < o->ngpus; i++)
    if (o->gpus[i].times) return 1;
  return 0;
}

/* Takes option a's value v; NULL when it may, else why not. */
static const char *kg_setopt(kg_opts *o, const char *a, const char *v) {
  const char **val;
  if (strcmp(a, "--gpu") == 0) return kg_add_gpu(o, v);
  if ((val = kg_optarg(o, a)) == NULL) return "unknown argument";
  if (*val != NULL && (strcmp(a, "--tuned") == 0 || strcmp(a, "--times") == 0))
    return "given twice for one GPU (--gpu NAME starts another)";
  *val = v;
  return NULL;
}

int kg_run(int argc, char **argv) {
  kg_opts o;
  const char *why;
  int i;
  kg_opts_init(&o);
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--list") == 0) o.list = 1;
    else if (strcmp(a, "--check-model") == 0) o.check_model = 1;
    else if (strcmp(a, "-q") == 0) o.quiet = 1;
    else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
      return fputs(kg_usage_text, stdout), 0;
    else if (strncmp(a, "--only=", 7) == 0) o.only = a + 7;
    else if (strcmp(a, "--gpu") != 0 && kg_optarg(&o, a) == NULL)
      return kg_usage(a, "unknown argument");
    else if (i + 1 == argc) return kg_usage(a, "needs a value");
    else if ((why = kg_setopt(&o, a, argv[++i])) != NULL) return kg_usage(a, why);
  }
  if (o.check_model && !kg_any_times(&o)) return kg_usage("--check-model", "needs --times FILE");
  return kg_exec(&o);
}
