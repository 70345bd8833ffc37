/* kg_span.c - the row ops' measured spans: from every row variant's tuned
 * times (bench/tuned/<gpu>.times.tsv), for each op and dtype, the runs of
 * row lengths over which one variant is predicted fastest.
 *
 * A variant's work comes in steps of n_step elements (its meta): a row of
 * N costs about what one of pad(N) = N rounded up to a multiple of n_step
 * does.  So its cost per padded element, measured at the tuned lengths, is
 * interpolated linearly in log2 N (flat beyond them), and a row of N is
 * predicted to cost that times pad(N); at a tuned length the measured
 * fastest wins.  The cost is compared at every tuned N, at every variant's
 * n_min, n_max + 1 and first KG_SPAN_PADS step boundaries, and
 * KG_SPAN_STEPS times per octave between; a span's variant accepts every N
 * in it.  Rows just past a chunk are where the nearest tuned point's
 * choice goes wrong (sessions 6 and 7, bench/NOTES.md): a variant that
 * then runs a nearly empty chunk is charged for it.
 *
 * A tune may time a shape's fastest few again at more rows (kite-bench
 * --tune --confirm): a variant's time per row can differ by a quarter
 * between the tune's rows and the many more a training batch has (session
 * 43).  Such a variant has two points at one n; there the more rows decide
 * the order among the variants confirmed, each their cost scaled so that
 * the fastest of them costs what the fastest of them did at the fewer
 * rows.  The confirmed winner is then the fastest at n, and every cost at
 * n stays in the unit of the other variants' points. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kg.h"

#define KG_SPAN_STEPS 16
#define KG_SPAN_OCTAVES 31   /* row lengths up to 2^31 */
#define KG_SPAN_PADS 32      /* step boundaries sampled per variant */

/* One variant of the group being spanned. */
typedef struct kg_rvar {
  const char *op, *dtype, *name;   /* owned by the variant records */
  long long n_min, n_max, n_step;
  int first, count;                /* its points: p[first .. first + count) */
} kg_rvar;

static int kg_point_cmp(const void *a, const void *b) {
  const kg_rpoint *x = a, *y = b;
  if (x->variant != y->variant) return x->variant < y->variant ? -1 : 1;
  if (x->n != y->n) return (x->n > y->n) - (x->n < y->n);
  return (x->m > y->m) - (x->m < y->m);
}

static int kg_ll_cmp(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return (x > y) - (x < y);
}

/* n rounded up to a multiple of v's step. */
static double kg_span_pad(const kg_rvar *v, long long n) {
  return (double)((n + v->n_step - 1) / v->n_step) * (double)v->n_step;
}

/* Variant v's predicted time for a row of n (in the points' unit, per
   element of the tuned rows' M*N). */
static double kg_span_cost(const kg_rvar *v, const kg_rpoint *p, long long n) {
  const kg_rpoint *q = p + v->first;
  double x = log2((double)n), c = q[v->count - 1].cost;
  int i;
  if (x <= q[0].ln) c = q[0].cost;
  else
    for (i = 1; i < v->count; i++)
      if (x <= q[i].ln) {
        c = q[i - 1].cost + (q[i].cost - q[i - 1].cost) * (x - q[i - 1].ln) / (q[i].ln - q[i - 1].ln);
        break;
      }
  return c * kg_span_pad(v, n);
}

/* The lengths at which group g (the variants of one op and dtype) is
   compared, sorted, unique, in [1, top]; their count. */
static int kg_span_samples(const kg_rvar *rv, const int *g, int ng, const kg_rpoint *p, long long top,
                           long long *s) {
  int i, j, n = 0, u = 0;
  for (i = 0; i <= KG_SPAN_STEPS * KG_SPAN_OCTAVES; i++)
    s[n++] = llround(pow(2.0, (double)i / KG_SPAN_STEPS));
  for (i = 0; i < ng; i++) {
    const kg_rvar *v = &rv[g[i]];
    s[n++] = v->n_min;
    s[n++] = v->n_max + 1;
    for (j = 1; j <= KG_SPAN_PADS; j++) s[n++] = (long long)j * v->n_step + 1;
    for (j = 0; j < v->count; j++) s[n++] = p[v->first + j].n;
  }
  qsort(s, (size_t)n, sizeof *s, kg_ll_cmp);
  for (i = 0; i < n; i++)
    if (s[i] >= 1 && s[i] <= top && (u == 0 || s[i] != s[u - 1])) s[u++] = s[i];
  return u;
}

/* The fastest variant of g (an index into rv) accepting all of [lo, hi]; -1 for none. */
static int kg_span_best(const kg_rvar *rv, const int *g, int ng, const kg_rpoint *p, long long lo, long long hi) {
  double best_cost = 0;
  int i, best = -1;
  for (i = 0; i < ng; i++) {
    const kg_rvar *v = &rv[g[i]];
    double c;
    if (v->n_min > lo || v->n_max < hi) continue;
    c = kg_span_cost(v, p, lo);
    if (best < 0 || c < best_cost) {
      best = g[i];
      best_cost = c;
    }
  }
  return best;
}

/* Appends the spans of group g to the array at spans, adjacent runs of one variant merged. */
static void kg_span_group(lua_State *L, const kg_rvar *rv, const int *g, int ng, const kg_rpoint *p, int np,
                          int spans) {
  long long top = 0, *s, lo = 0;
  int i, ns, cur = -1;
  char buf[256];
  for (i = 0; i < ng; i++) top = rv[g[i]].n_max > top ? rv[g[i]].n_max : top;
  s = lua_newuserdatauv(L, (size_t)(KG_SPAN_STEPS * KG_SPAN_OCTAVES + 1 + (KG_SPAN_PADS + 2) * ng + np) * sizeof *s,
                        0);
  ns = kg_span_samples(rv, g, ng, p, top, s);
  for (i = 0; i <= ns; i++) {
    int best = i < ns ? kg_span_best(rv, g, ng, p, s[i], i + 1 < ns ? s[i + 1] - 1 : top) : -1;
    if (i < ns && best == cur) continue;
    if (cur >= 0) {
      snprintf(buf, sizeof buf, "  {\"%s\", %s, %lld, %lld, %d},  /* %s */\n", rv[cur].op,
               kg_dtype_enum(rv[cur].dtype), lo, i < ns ? s[i] - 1 : top, cur, rv[cur].name);
      lua_pushstring(L, buf);
      lua_rawseti(L, spans, (lua_Integer)lua_rawlen(L, spans) + 1);
    }
    cur = best;
    if (i < ns) lo = s[i];
  }
  lua_pop(L, 1);
}

/* The variant records' fields the spans need. */
static kg_rvar *kg_span_vars(lua_State *L, int variants, int nv) {
  kg_rvar *rv = lua_newuserdatauv(L, (size_t)(nv + 1) * sizeof *rv, 0);
  int i;
  for (i = 0; i < nv; i++) {
    lua_rawgeti(L, variants, i + 1);
    rv[i].op = (lua_getfield(L, -1, "op"), lua_tostring(L, -1));
    rv[i].dtype = (lua_getfield(L, -2, "dtype"), lua_tostring(L, -1));
    rv[i].name = (lua_getfield(L, -3, "name"), lua_tostring(L, -1));
    rv[i].n_min = (lua_getfield(L, -4, "n_min"), lua_tointeger(L, -1));
    rv[i].n_max = (lua_getfield(L, -5, "n_max"), lua_tointeger(L, -1));
    rv[i].n_step = (lua_getfield(L, -6, "n_step"), lua_tointeger(L, -1));
    lua_pop(L, 7);   /* the strings stay alive in the records */
  }
  return rv;
}

/* Whether variants a and b are of one group (op and dtype). */
static int kg_span_same(const kg_rvar *rv, int a, int b) {
  return strcmp(rv[a].op, rv[b].op) == 0 && strcmp(rv[a].dtype, rv[b].dtype) == 0;
}

/* A variant's points at one n, p[lo .. hi], and the cost its first gets. */
typedef struct kg_prun {
  int lo, hi;
  double cost;
} kg_prun;

/* The confirmed points (p sorted): each variant's run of points at one n
   becomes its first, costed from its last, scaled as the header says; the
   points left, compacted, counted.  run: np / 2 + 1 of scratch. */
static int kg_span_confirm(const kg_rvar *rv, kg_rpoint *p, int np, kg_prun *run) {
  int i, j, k, left = 0, nr = 0;
  for (i = 0; i < np; i = j) {
    for (j = i + 1; j < np && p[j].variant == p[i].variant && p[j].n == p[i].n; j++) {}
    if (j - i < 2) continue;
    run[nr].lo = i;
    run[nr++].hi = j - 1;
  }
  for (k = 0; k < nr; k++) {
    const kg_rpoint *q = &p[run[k].lo];
    double min_lo = 0, min_hi = 0;
    for (i = 0; i < nr; i++) {
      const kg_rpoint *a = &p[run[i].lo], *b = &p[run[i].hi];
      if (a->n != q->n || !kg_span_same(rv, a->variant, q->variant)) continue;
      if (min_lo == 0 || a->cost < min_lo) min_lo = a->cost;
      if (min_hi == 0 || b->cost < min_hi) min_hi = b->cost;
    }
    run[k].cost = p[run[k].hi].cost * min_lo / min_hi;
  }
  for (k = 0; k < nr; k++) {
    p[run[k].lo].cost = run[k].cost;
    for (i = run[k].lo + 1; i <= run[k].hi; i++) p[i].variant = -1;
  }
  for (i = 0; i < np; i++)
    if (p[i].variant >= 0) p[left++] = p[i];
  return left;
}

/* Each variant's points placed (p sorted, confirmed), their time per row
   made per padded element. */
static void kg_span_place(kg_rvar *rv, int nv, kg_rpoint *p, int np) {
  int i, j = 0;
  for (i = 0; i < nv; i++) {
    rv[i].first = j;
    for (; j < np && p[j].variant == i; j++) {
      p[j].ln = log2((double)p[j].n);
      p[j].cost /= kg_span_pad(&rv[i], p[j].n);
    }
    rv[i].count = j - rv[i].first;
  }
}

void kg_spans_push(lua_State *L, int variants, kg_rpoint *p, int np) {
  int nv, i, j, ng, spans, *g;
  kg_rvar *rv;
  variants = lua_absindex(L, variants);
  nv = (int)lua_rawlen(L, variants);
  lua_newtable(L);
  spans = lua_gettop(L);
  qsort(p, (size_t)np, sizeof *p, kg_point_cmp);
  rv = kg_span_vars(L, variants, nv);
  np = kg_span_confirm(rv, p, np, lua_newuserdatauv(L, (size_t)(np / 2 + 1) * sizeof(kg_prun), 0));
  kg_span_place(rv, nv, p, np);
  g = lua_newuserdatauv(L, (size_t)(nv + 1) * sizeof *g, 0);
  for (i = 0; i < nv; i++) {   /* a group per op and dtype, at its first variant with points */
    if (rv[i].count == 0) continue;
    for (j = 0; j < i; j++)
      if (rv[j].count > 0 && kg_span_same(rv, j, i)) break;
    if (j < i) continue;
    for (ng = 0, j = i; j < nv; j++)
      if (rv[j].count > 0 && kg_span_same(rv, j, i)) g[ng++] = j;
    kg_span_group(L, rv, g, ng, p, np, spans);
  }
  lua_settop(L, spans);
}
