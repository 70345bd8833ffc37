"""confirm_sim.sh's two steps: `times K TMP ROOT` prints the times file, `picks K TMP ROOT` the picks."""
import collections
import re
import sys

OPS = ("layernorm_bwd", "rmsnorm_bwd")
NS = (1024, 4096, 16384, 65536, 131072, 262144)


def at_2_28(root):
    """(op, N) -> variant -> the branch's time at 2^28 (ab_all.txt: op N variant old new ratio rounds)."""
    ab = collections.defaultdict(dict)
    for line in open(f"{root}/bench/lab/s43/bwd/ab_all.txt"):
        f = line.split()
        if not f[2].startswith("="):   # '=': the dispatched entry point
            ab[(f[0], int(f[1]))][f[2]] = float(f[4])
    return ab


def times(k, tmp, root):
    ab = at_2_28(root)
    out = [l for l in open(f"{root}/bench/tuned/h100.times.tsv").read().splitlines()
           if not any(l.startswith(op + "\tbf16\t") for op in OPS)]
    for op in OPS:
        rows = [l for l in open(f"{tmp}/t.{op}.bf16.times.tsv").read().splitlines()[1:] if l and l[0] != "#"]
        out += rows
        by = collections.defaultdict(list)
        for r in rows:
            f = r.split("\t")
            by[int(f[4])].append((float(f[7]), f[6]))
        for n in NS:
            m, m26 = (1 << 28) // n, max((1 << 26) // n, 1024)
            if m <= m26:
                continue
            for _, v in sorted(by[n])[:k]:
                out.append(f"{op}\tbf16\tbf16\t{m}\t{n}\t0\t{v}\t{ab[(op, n)][v]:.3f}\t132")
    print("\n".join(out))


def picks(k, tmp, root):
    ab = at_2_28(root)
    table = open(f"{tmp}/out/kite_table.c").read().split("kite_row_spans_0[]")[1].split("};")[0]
    spans = re.findall(r'\{"(\w+)", KITE_BF16, (\d+), (\d+), \d+\},  /\* (\S+) \*/', table)
    lost = 0
    for op in OPS:
        for n in NS:
            v = next(s[3] for s in spans if s[0] == op and int(s[1]) <= n <= int(s[2]))
            best = min(ab[(op, n)].items(), key=lambda x: x[1])
            r = ab[(op, n)][v] / best[1]
            lost += r > 1.001
            print(f"{op:14s} {n:7d} {v:50s} {r:.3f} of the best at 2^28")
    print(f"K={k}: {lost} of {len(OPS) * len(NS)} points slower than the best at 2^28")


if __name__ == "__main__":
    {"times": times, "picks": picks}[sys.argv[1]](int(sys.argv[2]), sys.argv[3], sys.argv[4])
