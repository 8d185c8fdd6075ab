#!/usr/bin/env bash
# Session l, device call 1 (issue 20): where the continuous models' update instructions go.
# Nsight Compute source counters (SASS, executed instructions per line) of the O(3) float
# Metropolis and over-relaxation kernels and the phi^4 float Metropolis kernel, one colour of
# 128^3, with the code of c7be450 (the session k bundle).
set -uo pipefail
L=/tmp/logs1; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $B/sim --version; which ncu cuobjdump nvdisasm; } > $L/machine.txt 2>&1
cd /tmp && mkdir -p w && cd w
for spec in "on3f_metropolis|on|--n 3 --precision float|metropolis" "on3f_overrelaxation|on|--n 3 --precision float|overrelaxation" "phi4f_metropolis|phi4|--precision float|metropolis"; do
  IFS='|' read name model extra k <<< "$spec"
  timeout 150 ncu --kernel-name-base demangled --set full --import-source yes --clock-control none -k regex:UpdateColour --launch-skip 2 --launch-count 1 -o rep_$name \
    $B/sim bench --model $model $extra --dims 128 128 128 --kernel $k --repeats 1 > $L/ncu_$name.log 2>&1
  echo "ncu $name rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
  ncu -i rep_$name.ncu-rep --page source --csv --print-source sass > $L/sass_$name.csv 2>&1
  ncu -i rep_$name.ncu-rep --page details > $L/details_$name.txt 2>&1
done
cd /tmp && tar czf $OUT/logs1.tgz -C /tmp logs1
