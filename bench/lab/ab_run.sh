# The A/B of two kite-bench builds in one device call (sessions 31-36), the one loop the lab scripts
# share:  bash bench/lab/ab_run.sh DIR OPS ONLY NS
# This tree's build/kite-bench against /tmp/kite-bench-old (copied from AB_OLD when that is given,
# else unpacked from the carried .abbranch/oldbench.tar.xz): `--variants --only ONLY --op OPS --n NS`,
# AB_ROUNDS rounds (default 3) alternating old, new, each run under AB_TIMEOUT s (default 120), a run
# started only within AB_STOP s of this script's start (default: no bound).  Leaves in DIR:
# ab_summary.txt (per op, bench/lab/ab_rounds.py: geomean new / old per N, the dispatched row),
# ab_all.txt (per op, variant and N) and ab_raw.tgz (the rounds).  ONLY '-': the dispatched rows
# alone (kite-bench without --variants; ab_rounds.py counts each as a variant).
set -u
dir=$1 ops=$2 only=$3 ns=$4
sel=(--variants --only "$only"); [ "$only" = - ] && sel=()
if [ -n "${AB_OLD:-}" ]; then cp "$AB_OLD" /tmp/kite-bench-old; else tar xJf .abbranch/oldbench.tar.xz -C /tmp; fi
mkdir -p "$dir/ab"
for r in $(seq "${AB_ROUNDS:-3}"); do
  for b in old new; do
    [ "$SECONDS" -le "${AB_STOP:-999999}" ] || break 2
    bin=build/kite-bench; [ $b = old ] && bin=/tmp/kite-bench-old
    timeout "${AB_TIMEOUT:-120}" $bin "${sel[@]}" --op "$ops" --n "$ns" > "$dir/ab/ab.$b.$r.txt" 2>&1
  done
done
echo "A/B done: $(ls "$dir"/ab/ab.new.*.txt 2>/dev/null | wc -l) rounds ($SECONDS s)"
for op in ${ops//,/ }; do echo "== $op"; python3 bench/lab/ab_rounds.py $op "$dir/ab"; done | tee "$dir/ab_summary.txt"
for op in ${ops//,/ }; do python3 bench/lab/ab_rounds.py $op "$dir/ab" all | grep -v "^N " | sed "s/^/$op /"; done > "$dir/ab_all.txt"
(cd "$dir" && tar czf ab_raw.tgz ab && rm -rf ab)
