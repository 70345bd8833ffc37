#!/usr/bin/env python3
"""One GPU's table files from partial tunes:  bench/lab/tuned_merge.py OUT FALLBACK MEASURED...

Each argument names a pair PREFIX.tsv / PREFIX.times.tsv (kite-bench --tune FILE / --times FILE).
OUT.tsv and OUT.times.tsv get every (op, dtype) group of the MEASURED pairs (a later pair's group
replacing an earlier one's) and the FALLBACK pair's lines of every other group (gemm among them), each
line keeping its device column.  Session 26 made bench/tuned/h100.* from a cut-off H100 tune and
bench/tuned/h200.*.  To finish it: tune the missing groups on an H100 (kite-bench --tune F.tsv
--times F.times.tsv --op ... --dtype ...), then
    bench/lab/tuned_merge.py bench/tuned/h100 bench/tuned/h200 bench/tuned/h100 F
(each group's lines then come together, so kite_rules may list them in another order: the same picks;
checked: from the cut-off tune and h200.* it rebuilds the committed h100 table byte for byte)
"""
import sys

MARK = "# the fallback's lines for every group not measured above"


def split(text):
    """(comments, header, rows) of a tune file: make gen wants the header first of the non-comments."""
    lines = [l for l in text.splitlines() if l]
    head = [l for l in lines if l.startswith("op\t")]
    return ([l for l in lines if l.startswith("#")], head[0] if head else None,
            [l for l in lines if not l.startswith("#") and not l.startswith("op\t")])


def group(row):
    f = row.split("\t")
    return f[0], f[1]


def merge(fallback, measured):
    """The merged file's text and its measured groups; inputs are texts."""
    got, notes = {}, []
    for text in measured:
        notes_m, _, rows = split(text)
        for c in notes_m:   # each note once (an earlier merge's among them)
            if c not in notes and c != MARK:
                notes.append(c)
        by = {}
        for r in rows:
            by.setdefault(group(r), []).append(r)
        got.update(by)
    _, header, _ = split(fallback)
    out = notes + [header]
    for g in got:   # in the order the groups came (the tune's): kite_rules keep it
        out += got[g]
    out.append(MARK)
    for line in fallback.splitlines():   # in place, with the fallback's own comments (the gemm tune's)
        if line.startswith("#") and (line in notes or line == MARK):
            continue
        if line and not line.startswith("op\t") and (line.startswith("#") or group(line) not in got):
            out.append(line)
    return "\n".join(out) + "\n", list(got)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, fallback, measured = sys.argv[1], sys.argv[2], sys.argv[3:]
    texts = {ext: (open(fallback + ext).read(), [open(m + ext).read() for m in measured])
             for ext in (".tsv", ".times.tsv")}   # all read before OUT (maybe an input) is written
    for ext, (fb, ms) in texts.items():
        text, groups = merge(fb, ms)
        with open(out + ext, "w") as f:
            f.write(text)
    print("%s: %d measured groups: %s" % (out, len(groups), ", ".join("%s %s" % g for g in groups)))
    # a tune cut off inside a group leaves it short of row lengths: say so (it is merged all the same)
    fb_ns, ms_ns = {}, {}
    fb, ms = texts[".tsv"]
    for text, ns in [(fb, fb_ns)] + [(t, ms_ns) for t in ms]:
        for r in split(text)[2]:
            ns.setdefault(group(r), set()).add(r.split("\t")[4])
    for g in groups:
        n = len(ms_ns.get(g, ()))
        if g in fb_ns and n < len(fb_ns[g]):
            print("warning: %s %s measured at %d row lengths, the fallback at %d" % (g + (n, len(fb_ns[g]))))


if __name__ == "__main__":
    main()
