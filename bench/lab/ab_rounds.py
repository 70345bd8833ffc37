#!/usr/bin/env python3
"""The A/B of two kite-bench builds over any number of rounds (session 34; ab_median.sh takes the
middle of three):  bench/lab/ab_rounds.py OP DIR [all]

DIR/ab.old.R.txt and DIR/ab.new.R.txt are `kite-bench --variants` outputs, one per round R.  Per N:
the geomean of new / old over OP's variants (each the median of its rounds), and the dispatched ('=')
row's medians, old and new (us), and new / old.  `all` adds a line per variant and N:
N variant old new new/old rounds ('=' before the dispatched row's variant)."""
import collections
import glob
import math
import statistics
import sys


def times(op, d):
    """{(N, variant, 'old' | 'new'): [us, ...]} from the rounds' lines of op ('*' lines count as their variant)."""
    t = collections.defaultdict(list)
    for path in glob.glob(d + "/ab.*.txt"):
        build = path.split("/")[-1].split(".")[1]
        for line in open(path):
            f = line.split()
            if len(f) < 7 or f[0] != op or not f[3].isdigit():
                continue
            v, us = ("=" + f[5], f[6]) if f[4] == "=" else (f[5], f[6]) if f[4] == "*" else (f[4], f[5])
            t[(int(f[3]), v, build)].append(float(us))
    return t


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    op, t = argv[1], times(argv[1], argv[2])
    rows = collections.defaultdict(list)   # N: [(variant, old, new, new / old, rounds)]
    for (n, v, build) in sorted(t):
        if build == "new" and (n, v, "old") in t:
            o, w = statistics.median(t[(n, v, "old")]), statistics.median(t[(n, v, "new")])
            rows[n].append((v, o, w, w / o, len(t[(n, v, "new")])))
    for n, rs in sorted(rows.items()):
        var = [r[3] for r in rs if not r[0].startswith("=")]
        g = math.exp(sum(map(math.log, var)) / len(var)) if var else float("nan")
        disp = "; ".join(f"{r[0][1:]} old {r[1]:.1f} new {r[2]:.1f} {r[3]:.3f} ({r[4]} rounds)"
                         for r in rs if r[0].startswith("="))
        print(f"N {n:7d}: {len(var):3d} variants, geomean new/old {g:.4f}; dispatched {disp}")
    if len(argv) > 3 and argv[3] == "all":
        for n, rs in sorted(rows.items()):
            for r in rs:
                print(n, *r)


if __name__ == "__main__":
    main(sys.argv)
