#!/usr/bin/env bash
# Session i, device call 2: the multi-spin kernel's variants (runs of 1, 2, 4 words per thread,
# each word's blocks drawn in its own loop, or one loop over the run: LATTICA_PACKED_MERGED)
# against cuIsingModel in one job, Nsight Compute of runs of 1 and 4; then the q = 10 L = 64
# multicanonical run resumed from call 1's checkpoint and extended to 700 measurements.
set -uo pipefail
L=/tmp/logs2; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; P=.gpu/peer
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; nproc; } > $L/machine.txt 2>&1
bench() { local name=$1; shift; timeout 120 $B/sim bench --model ising --repeats 5 --cpu-dims 256 256 --json $L/$name.json "$@" >> $L/bench.txt 2>&1; echo "$name rc=$? $(grep -o '"site_updates_per_ns": [0-9.]*' $L/$name.json) $((SECONDS-T0))s" >> $L/steps.txt; }
peer() { timeout 100 $P/cuIsing -x 65536 -y 65536 -n 3000 -p 1000 -a 1.0 -g 1 > $L/peer_$1.txt 2>&1; echo "peer_$1 rc=$? $(grep -o 'spins/ns: [0-9.]*' $L/peer_$1.txt)" >> $L/steps.txt; }
for round in 1 2; do
  peer $round
  for r in 1 2 4; do LATTICA_PACKED_RUN=$r bench ms2d_65536_word_run${r}_$round --kernel "metropolis multispin" --dims 65536 65536; done
done
LATTICA_PACKED_MERGED=1 LATTICA_PACKED_RUN=4 bench ms2d_65536_merged_run4 --kernel "metropolis multispin" --dims 65536 65536
for r in 1 2 4; do LATTICA_PACKED_RUN=$r bench hb2d_65536_word_run$r --kernel "heatbath multispin" --dims 65536 65536; done
for r in 1 4; do LATTICA_PACKED_RUN=$r bench ms3d_512_word_run$r --kernel "metropolis multispin" --dims 512 512 512; done
peer 3
echo "bench done $((SECONDS-T0)) s" >> $L/steps.txt
mkdir -p $L/fo; cp .gpu/fo64/* $L/fo/
( OMP_NUM_THREADS=4 PYTHONUNBUFFERED=1 python3 tests/bench/potts_first_order.py $L/fo --sim $B/sim --sizes 64 --walkers 1024 --measurements 700 --measure-every 5000 --thermalization 20000 --max-sweeps 400000 --budget 3000 --walltime 00:07:40 --resume > $L/fo_64.txt 2>&1; echo "fo64 rc=$? $((SECONDS-T0))s" >> $L/steps.txt ) &
for r in 1 4; do
  LATTICA_PACKED_RUN=$r timeout 150 ncu --kernel-name-base demangled --kernel-name regex:PackedIsingRunUpdate --launch-skip 6 --launch-count 1 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section InstructionStats --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
    $B/sim bench --model ising --kernel "metropolis multispin" --dims 16384 16384 --repeats 1 --cpu-dims 64 64 > $L/ncu_ms2d_word_run$r.txt 2>&1
  echo "ncu run$r rc=$? $((SECONDS-T0))s" >> $L/steps.txt
done
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
mkdir -p $OUT/fo64; cp $L/fo/*.checkpoint $L/fo/*.log $L/fo/*.json $L/fo/*.txt $OUT/fo64/ 2>/dev/null
cp $L/steps.txt $L/bench.txt $L/machine.txt $L/fo_64.txt $L/ncu_*.txt $L/peer_*.txt $OUT/ 2>/dev/null
rm -f $L/fo/*.checkpoint $L/fo/*.h5; tar czf $OUT/logs2.tgz -C /tmp logs2
