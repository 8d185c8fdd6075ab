#!/usr/bin/env bash
# Session y, device call 1: longer 2D Ising Metropolis (multi-spin kernel) runs at beta_c, L = 512
# (32 replicas) and 1024 (16 replicas), with new seeds, so that the fits of tau_int behind issue
# 19's L = 4096 gain rest on more than session q's runs (their tau_int at these sizes had 15 %
# errors, which dominate the gain's error). The runs' files come back for the analysis here.
set -uo pipefail
L=/tmp/logs; mkdir -p $L; T0=$SECONDS
rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin D=/tmp/dyn
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $B/sim --version; } > $L/machine.txt 2>&1
timeout 120 python3 tests/bench/cluster_dynamics.py $D --sim $B/sim --backend cuda --algorithms metropolis \
  --sizes metropolis=512 --replicas metropolis=32 --sweeps metropolis=3000000 --seed 3026 --budget 110 > $L/dynamics_512.txt 2>&1
echo "dynamics 512 rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
timeout $((585 - SECONDS + T0)) python3 tests/bench/cluster_dynamics.py $D --sim $B/sim --backend cuda --algorithms metropolis \
  --sizes metropolis=1024 --replicas metropolis=16 --sweeps metropolis=15000000 --thermalization metropolis=1200000 \
  --seed 3027 --budget $((540 - SECONDS + T0)) > $L/dynamics_1024.txt 2>&1
echo "dynamics 1024 rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
cp $D/*.h5 $D/rates_2d.json $OUT/ 2>/dev/null; cd /tmp && tar czf $OUT/logs.tgz logs dyn/*.txt dyn/*.json 2>/dev/null
cat $L/steps.txt; tail -5 $L/dynamics_*.txt
