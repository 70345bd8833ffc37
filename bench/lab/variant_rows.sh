# Sourced by session 37's lab scripts: kite-bench --variants output, read.
# variant_rows FILE...: one line per timed row, "op N mark variant time_us ratio"
#   (mark: '*' the dispatched variant's own row, '=' the dispatch through the API, '-' any other).
# variant_top K < ROWS: each op and N's dispatched row, then its K fastest rows.
variant_rows() {
  cat "$@" | awk '$4 ~ /^[0-9]+$/ && NF >= 9 {
    if ($5 == "*" || $5 == "=") print $1, $4, $5, $6, $7, $10; else print $1, $4, "-", $5, $6, $9 }'
}
variant_top() {
  local rows; rows=$(cat)
  awk '$3 == "*"' <<<"$rows"
  awk '$3 != "="' <<<"$rows" | sort -k1,1 -k2n -k5n |
    awk -v k="$1" '{ g = $1 " " $2; if (n[g]++ < k) printf "%-18s %7s %s %-50s %8s %s\n", $1, $2, $3, $4, $5, $6 }'
}
