#!/usr/bin/env python3
"""Executed-instruction and stall-sample counts of one kernel launch, from ncu's source page as CSV
(`ncu --import R.ncu-rep --page source --csv --print-source sass`; bench/lab/s35_call1.sh):
    bench/lab/sass_counts.py FILE.csv ELEMS [TOP]
Per opcode: warp instructions executed, thread instructions per element (x32 / ELEMS, every lane
counted), stall samples; then the TOP SASS lines by stall samples, with their share."""
import collections
import csv
import sys


def lines(path):
    """[(index, executed, samples, sass)] of the file's SASS lines."""
    rows = list(csv.reader(open(path)))
    hdr = rows[1]
    ie, src = hdr.index("Instructions Executed"), hdr.index("Source")
    sp = hdr.index("Warp Stall Sampling (All Samples)")
    out = []
    for k, r in enumerate(rows[2:]):
        try:
            out.append((k, int(r[ie]), int(r[sp] or 0), r[src].strip()))
        except (ValueError, IndexError):
            pass
    return out


def opcode(sass):
    f = sass.split()
    op = f[1] if f[0].startswith("@") else f[0]
    return op.split(".")[0]


def main(argv):
    path, elems, top = argv[1], float(argv[2]), int(argv[3]) if len(argv) > 3 else 12
    ls = lines(path)
    n, s = collections.Counter(), collections.Counter()
    for _, e, smp, sass in ls:
        n[opcode(sass)] += e
        s[opcode(sass)] += smp
    tot, tsmp = sum(n.values()), sum(s.values())
    print(f"{path}: {tot} warp instructions, {tot * 32 / elems:.2f} a element; {tsmp} stall samples")
    for op, e in n.most_common(20):
        print(f"  {op:10s} {e:11d} {e * 32 / elems:6.2f}  samples {s[op]:6d} ({100 * s[op] / tsmp:4.1f}%)")
    print("lines by stall samples:")
    for k, e, smp, sass in sorted(ls, key=lambda x: -x[2])[:top]:
        print(f"  {k:5d} {e:9d} {smp:6d} ({100 * smp / tsmp:4.1f}%)  {sass}")


if __name__ == "__main__":
    main(sys.argv)
