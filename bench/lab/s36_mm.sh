# Session 36, any GPU, on branch wip/s36-mmasum: wip/s36-stack (row reductions as butterflies,
# the cluster waits' suspend hint) plus layernorm's sum of a resident row on the tensor cores and
# layernorm_bwd's xh in one FMA (16-bit data), rmsnorm's sum of squares on the tensor cores.
#   bash bench/lab/s36_mm.sh ab      smoke, then A/B against main's kite-bench (every bf16 variant
#                                    of every row op at the N, S36_ROUNDS rounds), then
#                                    layernorm, layernorm_bwd and rmsnorm against wip/s36-stack's
#                                    kite-bench in the time left
#   bash bench/lab/s36_mm.sh tests   smoke, then every row variant by name (S36_GLOBS) until S36_END
# The smoke: kite-bench of main, of the stack and of this branch on the dispatched rows of four ops
# at 64 K / 256 K, 30 s each; a run of this branch's cut there (a wait that does not wake) stops it.
# Carry [".deps", ".prebuilt", ".abbranch"]: .prebuilt from this branch's full build, .abbranch
# holding oldbench.tar.xz: main's kite-bench as kite-bench-old and wip/s36-stack's as
# kite-bench-stack, both stripped, in one xz -9e (the tree sent is capped at 64 MiB).  A warm machine's build/ of another commit is removed
# first, so that the carried objects are used.
export KITE_COMMIT=${KITE_COMMIT:-s36-mmasum}
source .deps/env.sh 2>/dev/null
END=${S36_END:-540}
OPS=rmsnorm,softmax,cross_entropy,layernorm,rmsnorm_res,softmax_bwd,cross_entropy_bwd,rmsnorm_bwd,layernorm_bwd
NS=1024,4096,16384,65536,131072,262144
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
[ "$(cat build/.branch 2>/dev/null)" = "$KITE_COMMIT" ] || rm -rf build
bash bench/device_run.sh build > $OUT/build.log 2>&1
echo "build rc=$? ($SECONDS s)"; grep -E "prebuilt|build:" $OUT/build.log; echo "$KITE_COMMIT" > build/.branch
tar xJf .abbranch/oldbench.tar.xz -C /tmp
for b in old stack new; do
  bin=build/kite-bench; [ $b != new ] && bin=/tmp/kite-bench-$b
  timeout 30 $bin --op layernorm,layernorm_bwd,softmax,rmsnorm_bwd --n 65536,262144 > $OUT/smoke.$b.txt 2>&1
  rc=$?; echo "smoke $b rc=$rc ($SECONDS s)"
done
echo "op N main_us stack_us new_us"
paste -d' ' <(grep -E "^(layernorm|softmax|rmsnorm)" $OUT/smoke.old.txt | awk '{print $1, $4, $(NF-3)}') \
      <(grep -E "^(layernorm|softmax|rmsnorm)" $OUT/smoke.stack.txt | awk '{print $(NF-3)}') \
      <(grep -E "^(layernorm|softmax|rmsnorm)" $OUT/smoke.new.txt | awk '{print $(NF-3)}')
[ $rc = 0 ] || { echo "this branch's kite-bench cut or failed: stop"; tail -5 $OUT/smoke.new.txt; exit 0; }
case ${1:-ab} in
  ab)
    AB_ROUNDS=${S36_ROUNDS:-3} AB_STOP=$(( END - SECONDS - 200 )) \
      bash bench/lab/ab_run.sh $OUT $OPS '*' $NS
    mkdir -p $OUT/vs_stack
    AB_ROUNDS=${S36_ROUNDS:-3} AB_STOP=$(( END - SECONDS - 30 )) AB_OLD=/tmp/kite-bench-stack \
      bash bench/lab/ab_run.sh $OUT/vs_stack layernorm,layernorm_bwd,rmsnorm '*' $NS ;;
  tests)
    KITE_BYNAME=${S36_GLOBS:-'rmsnorm_* softmax_* cross_entropy_* layernorm_*'} KITE_CALL_S=$(( END - SECONDS - 10 )) \
      bash bench/device_run.sh byname > $OUT/byname.log 2>&1
    grep -A4 "tested by name" $OUT/summary.txt; grep -E "(Failure|Error)" $OUT/byname_tests.log | cut -c1-300 | head -5
    cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log ;;
esac
