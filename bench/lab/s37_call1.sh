# Session 37, call 1, whichever GPU comes (name no kind; carry [".deps", ".prebuilt"]):
#  any GPU: bench/lab/s37_maxtime.c, every launch of the dispatched cluster rows timed alone (the
#           suspend hint's missed-wake-up check, NOTES Next (session 37) 5), a few seconds;
#  H200:    then bench/lab/s35_call1.sh (layernorm by name, the retune) in the time left;
#  H100:    nothing more (the merged kernels passed there in session 36).
# S37_END (default 560 s) bounds it.
export KITE_COMMIT=${KITE_COMMIT:-s37}
source .deps/env.sh 2>/dev/null
END=${S37_END:-560}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
bash bench/device_run.sh build > $OUT/build0.log 2>&1; echo "build rc=$? ($SECONDS s)"
cc -O2 -std=c11 -I runtime -I/usr/local/cuda/include bench/lab/s37_maxtime.c build/libkite.a \
  -L/usr/local/cuda/lib64 -lcudart -lstdc++ -lm -lpthread -o build/s37_maxtime &&
  timeout 60 build/s37_maxtime 500 | tee $OUT/maxtime.txt
echo "maxtime rc=$? ($SECONDS s)"
echo "$G" | grep -q H200 || exit 0
S35_END=$(( END - SECONDS )) exec bash bench/lab/s35_call1.sh
