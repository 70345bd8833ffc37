# Session 30, whichever GPU comes, on main's tree; carry [".deps", ".prebuilt", ".abbranch"].
# .abbranch/bins.tar.xz: wip/s30-loadrow's kite-bench, test_gpu and test_norm, built off the GPU machine
# (the register-mode load_row loads whole chunks without a test per access for every op, as
# rmsnorm's and layernorm's x rows did; lane_fold; layernorm's CTA count computed once).
# S30_END (default 560, seconds from the start) bounds it.  Most valuable part first.
#  1. The 18 layernorm variants whose grid changed in 17b524e5, by name (main's build).
#  2. H200: s29_call1.sh --retune-only (layernorm at every N, rmsnorm against torch.compile,
#     softmax / cross_entropy from 24 K, softmax_bwd from 4 K).
#     Other GPUs: main against the branch in the same call: the dispatched variants of the ops
#     whose code changed, bf16, 1 K / 4 K / 16 K, three rounds in turn (median); then the
#     branch's changed variants tested by name with its own test binaries.
export KITE_COMMIT=${KITE_COMMIT:-s30}
source .deps/env.sh 2>/dev/null
END=${S30_END:-560}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
globs=; for d in bf16 f16 f32; do for t in 128 256 512; do globs="$globs layernorm_${d}_reg_t${t}_r1_n[24]_v16_c0_p1"; done; done
KITE_BYNAME="$globs" KITE_CALL_S=150 bash bench/device_run.sh byname > $OUT/byname.log 2>&1
echo "byname rc=$? ($SECONDS s)"; grep -E "prebuilt" $OUT/byname.log; grep -A4 "tested by name" $OUT/summary.txt
if ! grep -q " 0 failures, 0 errors" $OUT/summary.txt; then echo "a test failed: stop"; exit 0; fi
if echo "$G" | grep -q H200; then
  S29_END=$(( END - SECONDS )) exec bash bench/lab/s29_call1.sh --retune-only   # it packs the logs
fi
B=/tmp/abb; mkdir -p $B/t
python3 -c 'import lzma, tarfile, sys; tarfile.open(fileobj=lzma.open(sys.argv[1])).extractall(sys.argv[2])' \
  .abbranch/bins.tar.xz $B; ls $B
OPS=softmax,softmax_bwd,cross_entropy,cross_entropy_bwd,rmsnorm_bwd,layernorm,layernorm_bwd
for r in 1 2 3; do
  for L in main branch; do
    b=build/kite-bench; [ $L = branch ] && b=$B/kite-bench
    left=$(( END - 250 - SECONDS )); [ $left -gt 20 ] || break 2
    timeout $left $b --op $OPS --n 1024,4096,16384 --reps 100 | sed "s/^/$L r$r /"
  done
done > $OUT/ab.txt
echo "a/b done ($SECONDS s)"
python3 - $OUT/ab.txt <<'PY'
import sys, statistics as st, collections as co
t = co.defaultdict(list)
for l in open(sys.argv[1]):
    w = l.split()   # L round op dtype M N [mark] variant time_us TB/s copy_TB/s ratio
    if len(w) < 10 or not w[5].isdigit() or "FAILED" in l: continue
    t[(w[2], int(w[5]), w[0])].append((float(w[-4]), w[-5]))
for (op, n, L), x in sorted(t.items()):
    a = t.get((op, n, "main"))
    if L != "branch" or not a: continue
    bm, am = st.median(u for u, _ in x), st.median(u for u, _ in a)
    print(f"{op:18s} {n:7d} {x[0][1]:44s} main {am:8.1f} branch {bm:8.1f} us  branch/main {bm/am:6.4f}  rounds {len(a)}/{len(x)}")
PY
# The branch's changed variants (every op's register rows but rmsnorm's, every layernorm variant),
# each in its own process, 16 at a time, until END.
awk -F'\t' 'NR > 1 && $2 != "gemm" { print $1, $2 }' out/manifest.tsv |
  awk '($1 ~ /_reg_/ && $2 != "rmsnorm") || $2 == "layernorm" {
         print $1, ($2 ~ /^(rmsnorm_bwd|layernorm_bwd|rmsnorm_res|layernorm)$/ ? "test_norm" : "test_gpu") }' > $B/list
export B BN_END=$(( $(date +%s) + END - SECONDS - 15 ))
xargs -P 16 -L 1 sh -c 'left=$(( BN_END - $(date +%s) )); [ $left -gt 5 ] || exit 0
    CK_RUN_CASE=variants KITE_TEST_ONLY="$0" timeout $left $B/$1 > $B/t/$0.log 2>&1' < $B/list
cat $B/t/*.log > $OUT/branch_tests.log
echo "---- branch tested by name: $(ls $B/t | wc -l) of $(wc -l < $B/list) variants ($SECONDS s)"
grep -E "^[0-9]+%: Checks" $OUT/branch_tests.log | awk '{ c += $3; f += $5; e += $7 } END { printf "%d checks, %d failures, %d errors\n", c, f, e }'
echo "processes done: $(grep -cE '^[0-9]+%: Checks' $OUT/branch_tests.log)"
grep -E ":[EF]:|crashed" $OUT/branch_tests.log | cut -c1-300 | head -8
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
