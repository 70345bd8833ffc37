/* kg_fit.c - the measured gemm cost model, fitted to one variant's times:
 *
 *     t = (launch_us + waves * (K + k_extra) * us_per_k) * (ragged problem ? ragged : 1)
 *     waves = ceil(ceil(M / tile_m) * ceil(N / tile_n) / sms)
 *
 * A ragged problem's rows of A and B are not whole 128-byte lines (K * size
 * % KG_FIT_LINE): every TMA row then spans one line more, and tiles of few
 * rows lose most (H200: 1.1x for 128x256 tiles, 1.4x for 64x256, on held-out
 * shapes).  The base model is fitted to the aligned points alone, the factor
 * to the ragged ones.
 *
 * A launch costs launch_us; then each wave of output tiles runs the k-loop
 * (K) and what the tile does outside it (k_extra, in units of K).  k_extra
 * is searched on a grid (KG_FIT_K_STEP up to KG_FIT_K_MAX); for each value
 * launch_us and us_per_k come from least squares in relative error (weights
 * 1/t^2), launch_us held at 0 where it would be negative; the k_extra whose
 * fit has the least squared log error wins.  The arithmetic is in a fixed
 * order, so the same file gives the same bytes. */
#include <limits.h>
#include <math.h>
#include "kg.h"

#define KG_FIT_K_STEP 8
#define KG_FIT_K_MAX 2048

double kg_fit_waves(long long m, long long n, long long tile_m, long long tile_n, long long sms) {
  long long tiles = ((m + tile_m - 1) / tile_m) * ((n + tile_n - 1) / tile_n);
  return (double)((tiles + sms - 1) / sms);
}

/* launch and per-K cost for one k_extra; returns the squared log error. */
static double kg_fit_at(const kg_sample *p, int n, double kx, double *a, double *b) {
  double sw = 0, sx = 0, sxx = 0, st = 0, sxt = 0, err = 0, det;
  int i;
  for (i = 0; i < n; i++) {
    double x = p[i].waves * (p[i].k + kx), w = 1.0 / (p[i].t * p[i].t);
    if (p[i].ragged) continue;
    sw += w; sx += w * x; sxx += w * x * x; st += w * p[i].t; sxt += w * x * p[i].t;
  }
  det = sw * sxx - sx * sx;
  *a = det > 0 ? (sxx * st - sx * sxt) / det : 0;
  *b = det > 0 ? (sw * sxt - sx * st) / det : 0;
  if (*a < 0 || *b <= 0) {
    *a = 0;
    *b = sxt / sxx;
  }
  for (i = 0; i < n; i++) {
    double e = log((*a + *b * p[i].waves * (p[i].k + kx)) / p[i].t);
    if (!p[i].ragged) err += e * e;
  }
  return err;
}

/* m's time for p as if its rows were whole lines. */
static double kg_fit_base(const kg_model *m, const kg_sample *p) {
  return m->launch_us + p->waves * (p->k + m->k_extra) * m->us_per_k;
}

double kg_fit_predict(const kg_model *m, const kg_sample *p) {
  return kg_fit_base(m, p) * (p->ragged ? m->ragged : 1.0);
}

/* The ragged factor: the geomean of time over the base prediction at the
   ragged points (1 without any). */
static double kg_fit_ragged(const kg_sample *p, int n, const kg_model *m) {
  double logsum = 0;
  int i, count = 0;
  for (i = 0; i < n; i++)
    if (p[i].ragged) {
      logsum += log(p[i].t / kg_fit_base(m, &p[i]));
      count++;
    }
  return count ? exp(logsum / count) : 1.0;
}

int kg_fit_variant(const kg_sample *p, int n, kg_model *m) {
  int kx, i, aligned = 0;
  double best = -1;
  for (i = 0; i < n; i++) aligned += !p[i].ragged;
  if (aligned < KG_FIT_MIN) return 0;
  for (kx = 0; kx <= KG_FIT_K_MAX; kx += KG_FIT_K_STEP) {
    double a, b, err = kg_fit_at(p, n, kx, &a, &b);
    if (b > 0 && (best < 0 || err < best)) {
      best = err;
      m->launch_us = a;
      m->us_per_k = b;
      m->k_extra = kx;
    }
  }
  m->points = n;
  m->rms_log = best >= 0 ? sqrt(best / aligned) : 0;
  m->ragged = best >= 0 ? kg_fit_ragged(p, n, m) : 1.0;
  return best >= 0;
}

/* Each problem's fastest point among variants of alignment <= align, into
   out (-1 where none); the first of equal times wins. */
static void kg_fit_fastest(const kg_points *pt, int align, int *out) {
  int i;
  for (i = 0; i < pt->nshapes; i++) out[i] = -1;
  for (i = 0; i < pt->n; i++) {
    int *b = &out[pt->shape[i]];
    if (pt->align[i] <= align && (*b < 0 || pt->p[i].t < pt->p[*b].t)) *b = i;
  }
}

void kg_fit_best(kg_points *pt) { kg_fit_fastest(pt, INT_MAX, pt->best); }

int kg_fit_wins(const kg_points *pt, int v, int skip) {
  int i, s, align = -1;
  for (i = 0; i < pt->n && align < 0; i++)
    if (pt->variant[i] == v) align = pt->align[i];
  kg_fit_fastest(pt, align, pt->work);
  for (s = 0; s < pt->nshapes; s++)
    if (s != skip && pt->work[s] >= 0 && pt->variant[pt->work[s]] == v) return 1;
  return 0;
}

int kg_fit_model(const kg_points *pt, int v, int skip, kg_sample *scratch, kg_model *m) {
  int i, k = 0;
  if (!kg_fit_wins(pt, v, skip)) return 0;
  for (i = 0; i < pt->n; i++)
    if (pt->variant[i] == v && pt->shape[i] != skip) scratch[k++] = pt->p[i];
  return kg_fit_variant(scratch, k, m);
}

double kg_fit_loo(const kg_points *pt, int s, kg_sample *scratch, int *pick) {
  double pred = 0;
  int i;
  *pick = -1;
  if (s < 0 || s >= pt->nshapes) return 0;
  for (i = 0; i < pt->n; i++) {
    kg_model m;
    double t;
    if (pt->shape[i] != s || !kg_fit_model(pt, pt->variant[i], s, scratch, &m)) continue;
    t = kg_fit_predict(&m, &pt->p[i]);
    if (*pick < 0 || t < pred) *pick = i, pred = t;
  }
  return *pick < 0 ? 0 : pt->p[*pick].t / pt->p[pt->best[s]].t;
}
