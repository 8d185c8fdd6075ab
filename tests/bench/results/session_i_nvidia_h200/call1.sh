#!/usr/bin/env bash
# Session i, device call 1: the multi-spin kernel's runs of words (LATTICA_PACKED_RUN = 1, 2, 4,
# 8 words per thread) against NVIDIA's cuIsingModel in one job; then the GPU chain tests of the
# packed kernel with SIM_REQUIRE_GPU=1 and memcheck of them.
set -uo pipefail
export SIM_REQUIRE_GPU=1
L=/tmp/logs1; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD
P=.gpu/peer
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; nproc; } > $L/machine.txt 2>&1
bench() { local name=$1; shift; timeout 120 $B/sim bench --model ising --repeats 5 --cpu-dims 256 256 --json $L/$name.json "$@" >> $L/bench.txt 2>&1; echo "$name rc=$? $((SECONDS-T0))s" >> $L/steps.txt; }
peer() { timeout 100 $P/cuIsing $PEER_ARGS > $L/peer_$1.txt 2>&1; echo "peer_$1 rc=$? $(grep -o 'spins/ns: [0-9.]*' $L/peer_$1.txt)" >> $L/steps.txt; }
PEER_ARGS=$(cat $P/run_args.txt 2>/dev/null || echo "-x 65536 -y 65536 -n 3000 -p 1000 -a 1.0 -g 1")
for round in 1 2; do
  peer $round
  for r in 1 4 2 8; do LATTICA_PACKED_RUN=$r bench ms2d_65536_run${r}_$round --kernel "metropolis multispin" --dims 65536 65536; done
done
for r in 1 4 8; do LATTICA_PACKED_RUN=$r bench hb2d_65536_run$r --kernel "heatbath multispin" --dims 65536 65536; done
for r in 1 4 8; do LATTICA_PACKED_RUN=$r bench ms3d_512_run$r --kernel "metropolis multispin" --dims 512 512 512; done
peer 3
echo "bench done $((SECONDS-T0)) s" >> $L/steps.txt
# q = 10 at L = 64 (issue 21): 1024 walkers, 500 x 5000 production sweeps over several jobs;
# this job's share stops with a checkpoint that the next job resumes (.gpu/fo64).
mkdir -p $L/fo; cp .gpu/fo64/* $L/fo/ 2>/dev/null; RESUME=; ls $L/fo/*.checkpoint > /dev/null 2>&1 && RESUME=--resume
WT=$((555 - (SECONDS - T0))); WALL=$(printf '00:%02d:%02d' $((WT / 60)) $((WT % 60)))
( OMP_NUM_THREADS=4 PYTHONUNBUFFERED=1 /usr/bin/env python3 tests/bench/potts_first_order.py $L/fo --sim $B/sim --sizes 64 --walkers 1024 --measurements 500 --measure-every 5000 --thermalization 20000 --max-sweeps 400000 --budget 3000 --walltime $WALL $RESUME > $L/fo_64.txt 2>&1; echo "fo64 rc=$? walltime $WALL $RESUME $((SECONDS-T0))s" >> $L/steps.txt ) &
step chain_gpu 240 $B/gpu_test --gtest_filter='*GpuChain*:*ultispin*:*Packed*:*ulti_spin*' --gtest_brief=1
step memcheck_chain 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuChain*Ising2d*' --gtest_brief=1
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
mkdir -p $OUT/fo64; cp $L/fo/*.checkpoint $L/fo/*.log $L/fo/*.json $L/fo/*.txt $OUT/fo64/ 2>/dev/null; cp $L/fo_64.txt $OUT/
cp $L/steps.txt $L/bench.txt $L/machine.txt $OUT/ 2>/dev/null
rm -f $L/fo/*.checkpoint $L/fo/*.h5; tar czf $OUT/logs1.tgz -C /tmp logs1
