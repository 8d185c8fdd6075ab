#!/usr/bin/env bash
# Session y: longer 2D Ising Metropolis (multi-spin kernel) runs at beta_c, L = 512 (32 replicas)
# and 1024 (16 replicas), with new seeds, so that the fits of tau_int behind issue 19's L = 4096
# gain rest on more than session q's runs (their tau_int at these sizes had 15 % errors, which
# dominate the gain's error). One device call:  bash metropolis_runs.sh SEED  (from the repo root,
# carrying .gpu); cluster_dynamics.py seeds the L = 512 run from SEED and the L = 1024 run from
# SEED + 1. Call 1 ran it with 3026, call 2 with 4026 (each from a copy of this script, which
# differed only in the seed; call 2's machine was still warm from call 1, so its steps.txt also
# has call 1's lines). The L = 512 file comes back; the L = 1024 one is too large for the device
# tool, so its analysis is the on-device dynamics_2d.json in logs.tgz.
set -uo pipefail
seed=${1:?usage: metropolis_runs.sh SEED}
L=/tmp/logs D=/tmp/dyn; rm -rf $L $D; mkdir -p $L; T0=$SECONDS
rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $B/sim --version; } > $L/machine.txt 2>&1
timeout 120 python3 tests/bench/cluster_dynamics.py $D --sim $B/sim --backend cuda --algorithms metropolis \
  --sizes metropolis=512 --replicas metropolis=32 --sweeps metropolis=3000000 --seed $seed --budget 110 > $L/dynamics_512.txt 2>&1
echo "dynamics 512 rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
timeout $((585 - SECONDS + T0)) python3 tests/bench/cluster_dynamics.py $D --sim $B/sim --backend cuda --algorithms metropolis \
  --sizes metropolis=1024 --replicas metropolis=16 --sweeps metropolis=15000000 --thermalization metropolis=1200000 \
  --seed $((seed + 1)) --budget $((540 - SECONDS + T0)) > $L/dynamics_1024.txt 2>&1
echo "dynamics 1024 rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
cp $D/*L512.h5 $D/rates_2d.json $OUT/ 2>/dev/null; cd /tmp && tar czf $OUT/logs.tgz logs dyn/*.txt dyn/*.json 2>/dev/null
cat $L/steps.txt; tail -n 5 $L/dynamics_*.txt
