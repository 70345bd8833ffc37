#!/usr/bin/env bash
# Device run of the row-op lab: the lab kernels, then what torch.compile generates.
export PATH="$PATH:/usr/local/cuda/bin"
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o /tmp/rowlab bench/lab/rowlab.cu || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
/tmp/rowlab | tee "$OUT/rowlab.txt"
timeout 200 python3 bench/lab/inductor.py > "$OUT/inductor.txt" 2>&1; echo "inductor rc=$?"
timeout 150 ncu -c 60 --section LaunchStats --section Occupancy -k regex:triton python3 bench/lab/inductor.py > "$OUT/ncu_inductor.txt" 2>&1; echo "ncu rc=$?"
grep -E "triton_|Grid Size|Block Size|Registers Per|Achieved Occupancy|Theoretical Occupancy" "$OUT/ncu_inductor.txt" | head -80
