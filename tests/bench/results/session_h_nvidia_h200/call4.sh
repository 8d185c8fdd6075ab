#!/usr/bin/env bash
# Session h, device call 4: the warp walkers alone on the GPU: sim bench of Potts q = 10 and
# Ising walkers at several counts, and Nsight Compute of one sweep launch at 64^2, 4096 walkers.
set -uo pipefail
L=/tmp/logs4; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
for spec in "potts|16 16|--q 10|16384" "potts|64 64|--q 10|16384" "potts|64 64|--q 10|4096" "potts|64 64|--q 10|1024" "ising|16 16||16384" "on|16 16|--n 3 --precision float|16384" "phi4|8 8 8|--precision float|16384"; do
  IFS='|' read model dims extra walkers <<< "$spec"
  timeout 60 $B/sim bench --kernel multicanonical --model $model $extra --dims $dims --walkers $walkers --repeats 7 >> $L/bench_muca.txt 2>&1
done
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 200 $ncu --kernel-name-base demangled -k regex:MucaSweep --launch-skip 1 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis $B/sim bench --kernel multicanonical --model potts --q 10 --dims 64 64 --walkers 4096 --repeats 1 > $L/ncu_muca_64_4096.txt 2>&1
echo "total $((SECONDS-T0)) s" >> $L/bench_muca.txt
cp $L/bench_muca.txt $L/ncu_muca_64_4096.txt $OUT/
