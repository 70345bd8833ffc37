# Session 36, any GPU, on branch wip/s36-stack: wip/s35-tree (row reductions as butterflies) plus
# the cluster waits' suspend hint (mbarrier.try_wait ..., 1 ms: the phase's completion wakes the
# warp in place of ~49 retries an exchange).
#   bash bench/lab/s36_stack.sh ab      smoke, then the A/B against main's kite-bench (carried as
#                                       .abbranch/oldbench.tar.xz): every bf16 variant of every row
#                                       op at the N, S36_ROUNDS rounds alternating
#   bash bench/lab/s36_stack.sh tests   smoke, then every row variant by name (S36_GLOBS, default
#                                       all; the widest clusters first), until S36_END
# The smoke: the dispatched rows of the cluster ops at 64 K / 256 K, old and new, 30 s each; a
# new run cut there (a wait that does not wake) stops the call.
# Carry [".deps", ".prebuilt", ".abbranch"]; .prebuilt from this branch's full build.  A warm
# machine's build/ (another commit's) is removed first, so that the carried objects are used.
export KITE_COMMIT=${KITE_COMMIT:-s36-stack}
source .deps/env.sh 2>/dev/null
END=${S36_END:-540}
OPS=rmsnorm,softmax,cross_entropy,layernorm,softmax_bwd,cross_entropy_bwd,rmsnorm_bwd,layernorm_bwd   # kite-bench's ops (not rmsnorm_res: its first A/B ran nothing)
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
[ -f build/.stack ] || rm -rf build
bash bench/device_run.sh build > $OUT/build.log 2>&1
echo "build rc=$? ($SECONDS s)"; grep -E "prebuilt|build:" $OUT/build.log; touch build/.stack
tar xJf .abbranch/oldbench.tar.xz -C /tmp
for b in old new; do
  bin=build/kite-bench; [ $b = old ] && bin=/tmp/kite-bench-old
  timeout 30 $bin --op layernorm,layernorm_bwd,softmax,rmsnorm_bwd --n 65536,262144 > $OUT/smoke.$b.txt 2>&1
  rc=$?; echo "smoke $b rc=$rc ($SECONDS s)"
done
echo "op N old_us new_us"
paste -d' ' <(grep -E "^(layernorm|softmax|rmsnorm)" $OUT/smoke.old.txt | awk '{print $1, $4, $(NF-3)}') \
      <(grep -E "^(layernorm|softmax|rmsnorm)" $OUT/smoke.new.txt | awk '{print $(NF-3)}')
[ $rc = 0 ] || { echo "new kite-bench cut or failed: stop"; tail -5 $OUT/smoke.new.txt; exit 0; }
case ${1:-ab} in
  ab)
    AB_ROUNDS=${S36_ROUNDS:-3} AB_STOP=$(( END - SECONDS - 130 )) AB_OLD=/tmp/kite-bench-old \
      bash bench/lab/ab_run.sh $OUT $OPS '*' 1024,4096,16384,65536,131072,262144 ;;
  tests)
    KITE_BYNAME=${S36_GLOBS:-'rmsnorm_* softmax_* cross_entropy_* layernorm_*'} KITE_CALL_S=$(( END - SECONDS - 10 )) \
      bash bench/device_run.sh byname > $OUT/byname.log 2>&1
    grep -A4 "tested by name" $OUT/summary.txt; grep -E "(Failure|Error)" $OUT/byname_tests.log | cut -c1-300 | head -5
    cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log ;;
esac
