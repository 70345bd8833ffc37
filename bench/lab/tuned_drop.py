#!/usr/bin/env python3
"""A tune pair without some variants:  bench/lab/tuned_drop.py IN OUT GLOB...

IN.tsv / IN.times.tsv (kite-bench --tune / --times) to OUT.tsv / OUT.times.tsv with the variants whose
names match a GLOB left out of the times, and each shape's best and runner-up picked again from the
times left (the first of equal times wins, as the tune's own pick does).  For a tune whose run measured
a variant that has changed since: the rest of the tune stays usable (session 33: the wide x16 rows).
Each pick line keeps IN's device, date and commit columns, and is written as kite-bench's tune_line
writes it: runner-up "-" when one variant is left, no line when none is, failed lines kept as they are.
With no GLOB matching, OUT equals IN (checked on session 33's layernorm tunes).
"""
import fnmatch
import sys


def rows(path):
    with open(path) as f:
        return [l.rstrip("\n") for l in f if l.strip()]


def keep(variant, globs):
    return not any(fnmatch.fnmatchcase(variant, g) for g in globs)


def shapes(times):
    """{(op, dtype, dtype_out, m, n, k): [(time, variant, time as written), ...]} in the file's order."""
    by = {}
    for l in times:
        f = l.split("\t")
        if f[0] == "op":
            continue
        by.setdefault(tuple(f[:6]), []).append((float(f[7]), f[6], f[7]))
    return by


def repick(tuned, by):
    out = []
    for l in tuned:
        f = l.split("\t")
        if l.startswith("#") or f[0] == "op" or f[7] == "failed":
            out.append(l)
            continue
        ts = sorted(by.get(tuple(f[:6]), []), key=lambda t: t[0])   # stable: the first of equal times first
        if not ts:
            continue
        best, second = ts[0], ts[1] if len(ts) > 1 else (0.0, "-", "-")
        out.append("\t".join(f[:6] + [best[1], best[2], second[1], second[2]] + f[10:]))
    return out


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    src, dst, globs = argv[1], argv[2], argv[3:]
    times = [l for l in rows(src + ".times.tsv") if l.startswith("op\t") or keep(l.split("\t")[6], globs)]
    tuned = repick(rows(src + ".tsv"), shapes(times))
    for path, lines in ((dst + ".times.tsv", times), (dst + ".tsv", tuned)):
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
