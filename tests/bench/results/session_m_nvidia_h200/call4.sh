#!/usr/bin/env bash
# Session m, device call 4: the review's simplifications (the 32-bit divisors built only for the
# axes decompose divides by, UpdateRun used without its wrapper): the whole GPU suite with
# SIM_REQUIRE_GPU=1 (gpu_test, cli_test) and compute-sanitizer (memcheck, racecheck), after a
# short sim bench of the O(3), phi^4 and byte kernels (nothing there should move).
set -uo pipefail
L=/tmp/logs4; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; R=$PWD
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $B/sim --version; } > $L/machine.txt 2>&1
export OMP_NUM_THREADS=8
mkdir -p /tmp/w && cd /tmp/w
bench() { local name=$1; shift
  timeout 120 $B/sim bench --repeats 5 --json $L/json/$name.json "$@" >> $L/bench.txt 2>&1
  echo "$name rc=$? $(grep -o '"site_updates_per_ns": [0-9.]*' $L/json/$name.json | head -1)" >> $L/steps.txt; }
for k in metropolis overrelaxation; do
  bench on3f_$k --model on --n 3 --precision float --dims 256 256 256 --kernel $k --cpu-dims 32 32 32
  bench phi4f_$k --model phi4 --precision float --dims 256 256 256 --kernel $k --cpu-dims 32 32 32
done
bench potts3 --model potts --q 3 --kernel metropolis --dims 4096 4096 --cpu-dims 256 256
export SIM_REQUIRE_GPU=1 SIM_EXE=$B/sim SIM_SOURCE_DIR=$R
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
cd $R
( step gpu_test 330 $B/gpu_test --gtest_brief=1 ) &
( sleep 2; step cli_test 330 $B/cli_test --gtest_brief=1 ) &
( sleep 4; step memcheck 180 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuSiteUpdate*:GpuContinuous*:GpuChain*Ising2d_256*:GpuBox*:GpuMulticanonical*On*' --gtest_brief=1
  step racecheck 100 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuSiteUpdate*:GpuBox*' --gtest_brief=1 ) &
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; cd /tmp && tar czf $OUT/logs4.tgz -C /tmp logs4
