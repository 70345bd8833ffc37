/* kg.h - kite-gen: the template compiler that turns templates/<op>/ trees
 * into out/<op>/<variant>.cu, out/manifest.tsv and out/kite_table.c.
 *
 * Errors are carried one way everywhere: as Lua errors.  The whole run is one
 * protected call (kg_exec), every helper raises with lua_error/luaL_error and
 * every resource that could outlive a raise (a DIR) is owned by a userdata
 * with a __gc.  Messages start with the file they are about. */
#ifndef KG_H
#define KG_H

#include <stddef.h>
#include "lua.h"
#include "lauxlib.h"

#define KG_INSN_LIMIT 200000000LL      /* VM instructions per sandboxed call */
#define KG_MEM_LIMIT ((size_t)512 << 20)  /* bytes for the whole Lua state  */
#define KG_MAX_AXES 32
#define KG_MAX_POINTS 1000000L         /* points per space, before valid() */

/* ---- the program (kg_run.c) ---------------------------------------- */

#define KG_MAX_GPUS 16               /* measured sets in one table */

/* One GPU's measured files: kite_table.c gets a set of rules, gemm models
   and row spans from them, which the runtime uses on a device whose name
   holds the set's name. */
typedef struct kg_gpu {
  const char *name;       /* "h200" (--gpu), or "" for a set no --gpu named */
  const char *tuned;      /* bench/tuned/<gpu>.tsv to read rules from, or NULL */
  const char *times;      /* bench/tuned/<gpu>.times.tsv to fit gemm models to, or NULL */
} kg_gpu;

typedef struct kg_opts {
  const char *tpl_dir;    /* templates root                 ("templates") */
  const char *out_dir;    /* output root                          ("out") */
  const char *only;       /* fnmatch glob on variant names, or NULL       */
  kg_gpu gpus[KG_MAX_GPUS];  /* the measured sets, the runtime's default first */
  int ngpus;
  int list;               /* print name<TAB>op, write nothing             */
  int check_model;        /* print the gemm model's leave-one-out check, write nothing */
  int quiet;              /* no summary line                              */
  long long insn_limit;   /* VM instructions per sandboxed call           */
  size_t mem_limit;       /* bytes for the whole Lua state                */
} kg_opts;

void kg_opts_init(kg_opts *o);
int kg_exec(const kg_opts *o);       /* 0 ok, 1 error (told on stderr) */
int kg_run(int argc, char **argv);   /* the CLI: 0 ok, 1 error, 2 usage */

/* ---- one run's state; the allocator's ud (kg_sandbox.c) ------------ */

typedef struct kg_ctx {
  kg_opts o;              /* tpl_dir and out_dir without trailing '/'     */
  long long insn_left;    /* budget left in the current sandboxed call    */
  int insn_step;          /* count-hook period                            */
  int tripped;            /* instruction limit hit: pcall must not catch  */
  size_t mem_used;
  int nvariants, written, unchanged, removed;
} kg_ctx;

kg_ctx *kg_ctx_of(lua_State *L);
lua_State *kg_sb_open(kg_ctx *c);    /* NULL if out of memory */
void kg_sb_init(lua_State *L);       /* libraries and env prototype */
void kg_sb_newenv(lua_State *L);     /* pushes a fresh sandbox environment */
void kg_sb_load(lua_State *L, const char *src, size_t len, const char *path);
void kg_sb_loadfile(lua_State *L, const char *path);  /* pushes the chunk */
void kg_sb_call(lua_State *L, int nargs, int nres, const char *where);

/* ---- templates (kg_tpl.c) ------------------------------------------ */

void kg_tpl_compile(lua_State *L, const char *src, size_t n,
                    const char *path);
void kg_tpl_namecode(lua_State *L, const char *pat, const char *path);
void kg_tpl_expand(lua_State *L, int v);   /* pushes the variant's body */
int kg_tpl_s(lua_State *L);                /* the __s interpolation fn */
/* include(name, text): text shared by the variants, out/KG_INCDIR/<name>;
   the texts wait in the registry's KG_INCLUDES table (name -> text). */
#define KG_INCDIR "include"
#define KG_INCLUDES "kg.includes"
int kg_tpl_include(lua_State *L);
const char *kg_tostr(lua_State *L, int idx);

/* ---- spaces (kg_space.c) ------------------------------------------- */

void kg_space_discover(lua_State *L);
void kg_space_load(lua_State *L, const char *op, int variants, int seen);
const char *kg_dtype_enum(const char *dtype);
/* Bytes per element of dtype, 0 if it has none. */
int kg_dtype_size(const char *dtype);

/* ---- outputs (kg_write.c) ------------------------------------------ */

void kg_write_cu(lua_State *L, int v, int body);
void kg_write_manifest(lua_State *L, int variants);
/* Pushes kite_table.c: the variants, then one measured set per record of
   the array at sets ({gpu=, rules=, models=, spans=}). */
void kg_write_table(lua_State *L, int variants, int sets);
void kg_write_files(lua_State *L, int files);

/* ---- tuned rules (kg_tune.c) --------------------------------------- */

extern const char kg_tune_header[];
/* Pushes the rules of the tuned file at path (an empty array for NULL),
   each checked against the variants array; raises "FILE:LINE: message" on
   a bad line. */
void kg_tune_load(lua_State *L, int variants, const char *path);
/* Pushes the gemm cost models fitted to the times file at path (an empty
   array for NULL): per variant with enough points, its kite_gemm_models row, in table
   order; then the row ops' spans (kg_spans_push) from the same file; raises
   "FILE:LINE: message" on a bad line. */
void kg_times_load(lua_State *L, int variants, const char *path);

/* ---- the row ops' measured spans (kg_span.c) ----------------------- */

typedef struct kg_rpoint {
  int variant;            /* table index */
  long long n, m;         /* the row length it ran at, and the rows */
  double cost;            /* measured time per row (us); kg_span.c makes it per padded element */
  double ln;              /* log2 n, set by kg_span.c */
} kg_rpoint;

/* Pushes the kite_row_spans rows predicted from the points p[0..np) (sorted
   here): per op and dtype, the runs of N one variant is fastest for. */
void kg_spans_push(lua_State *L, int variants, kg_rpoint *p, int np);

/* ---- the gemm cost model (kg_fit.c) -------------------------------- */

#define KG_FIT_MIN 4      /* points a variant needs for a model */

typedef struct kg_sample {
  double waves, k, t;     /* waves of output tiles, K, measured time (us) */
  int ragged;             /* A and B rows not 128-byte aligned (KG_FIT_LINE) */
} kg_sample;

/* TMA fetches rows in lines of this many bytes: rows (K elements here) that
   are not whole lines cost every variant more, and some far more. */
#define KG_FIT_LINE 128

typedef struct kg_model {
  double launch_us, us_per_k, k_extra, rms_log;  /* rms_log: the fit's log error */
  double ragged;          /* its time's factor on ragged problems (1: none measured) */
  int points;
} kg_model;

/* ceil(ceil(m / tile_m) * ceil(n / tile_n) / sms) */
double kg_fit_waves(long long m, long long n, long long tile_m, long long tile_n, long long sms);
/* Fits the model to the aligned points of p[0..n), then the ragged factor to
   the others (geomean of time over prediction); 0 (m untouched) when fewer
   than KG_FIT_MIN points are aligned. */
int kg_fit_variant(const kg_sample *p, int n, kg_model *m);

/* What m predicts for the problem of p (its waves, K and raggedness), in us. */
double kg_fit_predict(const kg_model *m, const kg_sample *p);

/* The gemm points of a times file, by variant and problem. */
typedef struct kg_points {
  const kg_sample *p;     /* point i */
  const int *variant;     /* point i's variant */
  const int *shape;       /* point i's problem (dtypes, m, n, k), 0 .. nshapes - 1 */
  const int *align;       /* point i's variant's alignment (bytes) */
  int *best;              /* problem s's fastest point (kg_fit_best) */
  int *work;              /* nshapes ints for kg_fit_wins */
  int n, nshapes;
} kg_points;

/* Sets pt->best. */
void kg_fit_best(kg_points *pt);
/* Whether variant v is the fastest at some problem other than skip (-1: any
   problem) among the variants no stricter in alignment (the tuned problems
   are aligned: a fallback for unaligned ones competes with its kind).  Only
   such variants get a model: one that never wins can only be a wrong pick. */
int kg_fit_wins(const kg_points *pt, int v, int skip);
/* Variant v's model fitted to its points off problem skip (-1: all), into m;
   0 when it has too few points or wins no problem but skip. */
int kg_fit_model(const kg_points *pt, int v, int skip, kg_sample *scratch, kg_model *m);
/* Leave-one-out at problem s: each variant timed at s is fitted without s
   and predicts s; *pick is the point of the least prediction.  Returns
   t(pick) / t(fastest at s), or 0 when no variant has a model without s. */
double kg_fit_loo(const kg_points *pt, int s, kg_sample *scratch, int *pick);

/* ---- helpers (kg_util.c) ------------------------------------------- */

int kg_readfile(lua_State *L, const char *path);
int kg_listdir(lua_State *L, const char *path);
int kg_isdir(const char *path);
int kg_isfile(const char *path);
void kg_copy(lua_State *L, int t);
void kg_sorted(lua_State *L);
int kg_keys(lua_State *L, int t);
int kg_isident(const char *s);
int kg_isname(const char *s);
const char *kg_pushupper(lua_State *L, const char *s);
int kg_append(lua_State *L, int t);

#endif
