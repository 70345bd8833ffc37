# The A/B table of two kite-bench builds timed in one call (session 31): OP's rows of
# DIR/ab.old.R.txt and DIR/ab.new.R.txt (`kite-bench --variants` outputs, one per round R), per N
# and variant the median of the rounds (the middle of three, the higher of two), old and new (µs),
# and new / old.  The dispatched '=' lines are left out; '*' lines count as their variant's.
#   bash bench/lab/ab_median.sh OP DIR
op=$1 dir=$2
for b in old new; do
  cat "$dir"/ab.$b.?.txt | awk -v b=$b -v op="$op" '$1 == op && $4 ~ /^[0-9]+$/ && $5 != "=" {
    if ($5 == "*") print b, $4, $6, $7; else print b, $4, $5, $6 }'
done | sort -k3,3 -k2n -k1,1 -k4n | awk '{ k = $1 " " $2 " " $3; v[k] = v[k] " " $4 }
  END { for (k in v) { split(substr(v[k], 2), a, " "); print k, a[2] } }' | sort -k2n -k3,3 -k1,1 |
  # "new" sorts first in each pair
  awk '{ if ($3 == pv && $2 == pn) printf "%7s %-46s old %7.1f new %7.1f  %.3f\n", $2, $3, $4, po, po / $4
         pv = $3; pn = $2; po = $4 }'
