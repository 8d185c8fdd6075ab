#!/usr/bin/env bash
# Session j, device call 3 (issue 21): q = 10 Potts at L = 64 with the multicanonical weights
# refined after Wang-Landau (multicanonical.refine_iterations: each walker's own histogram,
# Berg's accumulated recursion), 1024 walkers, then the first-order analysis of the run.
set -uo pipefail
L=/tmp/logs3; mkdir -p $L/fo /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; nproc; $B/sim --version; } > $L/machine.txt 2>&1
WT=$((560 - (SECONDS - T0))); WALL=$(printf '00:%02d:%02d' $((WT / 60)) $((WT % 60)))
OMP_NUM_THREADS=8 PYTHONUNBUFFERED=1 /usr/bin/env python3 tests/bench/potts_first_order.py $L/fo --sim $B/sim \
  --sizes 64 --walkers 1024 --measurements 560 --measure-every 2500 --thermalization 20000 \
  --max-sweeps 400000 --refine-iterations 6 --refine-sweeps 100000 --budget 590 --walltime $WALL \
  > $L/fo_64.txt 2>&1
echo "fo64 rc=$? walltime $WALL $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $L/machine.txt $L/fo_64.txt $OUT/ 2>/dev/null
rm -f $L/fo/*.h5 $L/fo/*.checkpoint
tar czf $OUT/logs3.tgz -C /tmp logs3
