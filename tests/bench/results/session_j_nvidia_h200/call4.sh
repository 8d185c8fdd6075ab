#!/usr/bin/env bash
# Session j, device call 4 (issue 20): Nsight Compute of the continuous models' update kernels
# after the runs of sites (the same sections as speed2_nvidia_h100/after/ncu_*.txt: one colour of
# 128^3, float), for their instructions per update, issue slots, occupancy and stalls.
set -uo pipefail
L=/tmp/logs4; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $B/sim --version; } > $L/machine.txt 2>&1
cd /tmp && mkdir -p w && cd w
for spec in "phi4f_metropolis|phi4|--precision float|metropolis" "phi4f_overrelaxation|phi4|--precision float|overrelaxation" "on3f_metropolis|on|--n 3 --precision float|metropolis" "on3f_overrelaxation|on|--n 3 --precision float|overrelaxation"; do
  IFS='|' read name model extra k <<< "$spec"
  timeout 120 ncu --clock-control none --kernel-name-base demangled -k regex:UpdateColour --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section InstructionStats --section WarpStateStats --section SchedulerStats \
    --metrics smsp__inst_executed.sum,smsp__thread_inst_executed.sum \
    $B/sim bench --model $model $extra --dims 128 128 128 --kernel $k --repeats 1 > $L/ncu_$name.txt 2>&1
  echo "ncu $name rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
done
cp $L/* $OUT/ 2>/dev/null
