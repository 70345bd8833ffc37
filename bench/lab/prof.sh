#!/usr/bin/env bash
# Device: SASS and ncu of the template's one-warp rows beside the lab's (kite built already).
export PATH="$PATH:/usr/local/cuda/bin"
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o /tmp/rowlab bench/lab/rowlab.cu || exit 1
for v in softmax_bf16_reg_t32_r8_n4_v16_c0_p1 cross_entropy_bf16_reg_t32_r8_n4_v16_c0_p1; do
  cuobjdump --dump-sass build/obj/${v%%_bf16*}/$v.o > "$OUT/sass_$v.txt" 2>&1
done
cuobjdump --dump-sass /tmp/rowlab > /tmp/lab.sass 2>&1
awk '/Function : .*labILi1ELi32ELi8ELi4ELi0E/,/\.L_x_[0-9]+:$/' /tmp/lab.sass | head -3
csplit -s -z -f /tmp/labfn /tmp/lab.sass '/Function :/' '{*}'
for f in /tmp/labfn*; do
  case "$(head -1 $f)" in *labILi1ELi32ELi8ELi4ELi0E*) cp $f "$OUT/sass_lab_softmax.txt";; *labILi2ELi32ELi8ELi4ELi0E*) cp $f "$OUT/sass_lab_xent.txt";; esac
done
S="--section SchedulerStats --section WarpStateStats --section InstructionStats --section Occupancy --section LaunchStats --section SpeedOfLight"
timeout 120 ncu $S -k regex:softmax_fwd -c 1 build/kite-bench --op softmax --n 1024 --quick > "$OUT/ncu_kite_sm.txt" 2>&1
timeout 120 ncu $S -k regex:lab -c 2 /tmp/rowlab 1 1024 > "$OUT/ncu_lab_sm.txt" 2>&1
for f in "$OUT"/ncu_*.txt; do echo "== $f"; grep -E "Duration|Registers Per|Achieved Occupancy|Issued Warp|No Eligible|Executed Ipc A|Warp Cycles Per Issued|Block Limit Reg|Theoretical Occ|DRAM Throughput|Stall" "$f" | head -30; done
