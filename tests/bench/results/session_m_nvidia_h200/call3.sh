#!/usr/bin/env bash
# Session m, device call 3 (issue 20): the CPU multi-spin Ising kernels on the H200 host's 16
# cores (sim bench --scaling strong --backend cpu, 1 and 16 OpenMP threads, 2D 2048^2 and
# 8192^2, 3D 256^3, Metropolis and heat bath), three runs each, the final code of call 2.
set -uo pipefail
L=/tmp/logs3; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
{ lscpu | grep -E "^CPU\(s\)|Model name|Thread|Socket|L3"; $B/sim --version; } > $L/machine.txt 2>&1
mkdir -p /tmp/w && cd /tmp/w
for round in 1 2 3; do
  for t in 1 16; do
    for spec in "2d2048|--dims 2048 2048" "2d8192|--dims 8192 8192" "3d256|--dims 256 256 256"; do
      IFS='|' read name dims <<< "$spec"
      for k in metropolis heatbath; do
        OMP_NUM_THREADS=$t OMP_PROC_BIND=close timeout 120 $B/sim bench --scaling strong --backend cpu --model ising --kernel "$k multispin" $dims --json $L/json/${name}_${k}_t${t}_$round.json > $L/${name}_${k}_t${t}_$round.txt 2>&1
        echo "$name $k threads=$t round=$round rc=$? $(grep -E '^ +1 ' $L/${name}_${k}_t${t}_$round.txt | awk '{print $(NF-2)}')" >> $L/steps.txt
      done
    done
  done
done
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; cd /tmp && tar czf $OUT/logs3.tgz -C /tmp logs3
