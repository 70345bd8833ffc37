#!/usr/bin/env python3
"""The A/B of two kite-bench builds over any number of rounds (session 34; ab_median.sh takes the
middle of three): DIR/ab.old.R.txt and DIR/ab.new.R.txt (`kite-bench --variants` outputs), per N and
variant the median of the rounds, old and new (us), new / old; per N the geomean of new / old over the
variants and the dispatched ('=') row.  `ab_rounds.py DIR [all]`: all adds a line per variant."""
import sys, glob, re, statistics, math, collections
d = sys.argv[1]
t = collections.defaultdict(list)
for f in glob.glob(d + "/ab.*.txt"):
    b = f.split("/")[-1].split(".")[1]
    for l in open(f):
        p = l.split()
        if len(p) < 7 or p[0] != "layernorm" or not p[3].isdigit(): continue
        if p[4] == "=": v, us = "=" + p[5], p[6]
        elif p[4] == "*": v, us = p[5], p[6]
        else: v, us = p[4], p[5]
        t[(int(p[3]), v, b)].append(float(us))
rows = collections.defaultdict(list)
for (n, v, b) in sorted(t):
    if b != "new" or (n, v, "old") not in t: continue
    o, w = statistics.median(t[(n, v, "old")]), statistics.median(t[(n, v, "new")])
    rows[n].append((v, o, w, w / o, len(t[(n, v, "new")])))
for n in sorted(rows):
    g = math.exp(sum(math.log(r[3]) for r in rows[n] if not r[0].startswith("=")) / max(1, sum(1 for r in rows[n] if not r[0].startswith("="))))
    disp = [r for r in rows[n] if r[0].startswith("=")]
    print(f"N {n:7d}: {len(rows[n]) - len(disp):3d} variants, geomean new/old {g:.4f}; dispatched " +
          "; ".join(f"{r[0][1:].replace('layernorm_','')} old {r[1]:.1f} new {r[2]:.1f} {r[3]:.3f} ({r[4]} rounds)" for r in disp))
if len(sys.argv) > 2:
    for n in sorted(rows):
        for r in rows[n]: print(n, *r)
