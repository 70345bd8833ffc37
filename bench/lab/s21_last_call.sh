# Session 21's last call (run as `bash bench/lab/s21_last_call.sh` from the repo root): tests and timings of ad98de8a's layernorm rows; on an H200 also the retune
export KITE_COMMIT=261adf6c
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
KITE_BYNAME='layernorm_bf16_reg_t512*_x* layernorm_f16_reg_t512*_x16 layernorm_f32_reg_t512*_x16 layernorm_bf16_reg_t512_r1_n4_v16_c0_p1 layernorm_bf16_reg_t32_r8_n4_v16_c0_p1 layernorm_bf16_bulk_t512_r1_n4_v16_c0_p2_x16' \
  KITE_CALL_S=100 bash bench/device_run.sh byname > $OUT/bn.log 2>&1; grep -A8 "tested by name" $OUT/bn.log
timeout 40 build/kite-bench --quick --variants --op layernorm --n 16384,65536,131072,262144 > $OUT/ln_variants.txt 2>&1
awk '$4 ~ /^[0-9]+$/' $OUT/ln_variants.txt | cut -c1-140 | head -40
if echo "$G" | grep -q H200; then
  KITE_TUNE_KEEP_S=40 KITE_VS_OPS=layernorm,layernorm_bwd KITE_OPS=layernorm,layernorm_bwd KITE_TUNE_FROM=24576 KITE_CALL_S=110 \
    bash bench/device_run.sh retune > $OUT/retune.log 2>&1; tail -24 $OUT/retune.log
else
  KITE_CALL_S=60 KITE_NCU_OP=layernorm KITE_NCU_LAUNCHES=6 bash bench/device_run.sh ncurow > $OUT/ncu.log 2>&1
  awk '/Duration/{d=$NF} /DRAM Throughput/{r=$NF} /^    Grid Size/{g=$NF} /Registers Per Thread/{print d, "us dram%", r, "grid", g, "regs", $NF}' $OUT/ncu.*.txt
fi
cd $OUT && tar czf logs.tgz *.log && rm -f *.log
