#!/usr/bin/env bash
# Session j, device call 7 (issue 20): the final code, float scalar fields in runs of 8 sites:
# sim bench of phi^4 float at 256^3 and of its tempered ensemble rows, then the whole GPU suite
# (gpu_test, cli_test) with SIM_REQUIRE_GPU=1, memcheck and racecheck of the chains.
set -uo pipefail
export SIM_REQUIRE_GPU=1
L=/tmp/logs7; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD; R=$PWD
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $B/sim --version; } > $L/machine.txt 2>&1
export OMP_NUM_THREADS=8
cd /tmp && mkdir -p w && cd w
for round in 1 2; do
  for k in metropolis overrelaxation; do
    timeout 60 $B/sim bench --model phi4 --precision float --dims 256 256 256 --kernel $k --repeats 5 --json $L/json/phi4f_${k}_$round.json >> $L/bench.txt 2>&1
    echo "phi4f $k $round: $(grep -o '"site_updates_per_ns": [0-9.]*' $L/json/phi4f_${k}_$round.json)" >> $L/steps.txt
  done
done
for k in "metropolis replicas" "metropolis tempering without exchanges" "metropolis tempering every 10"; do
  timeout 60 $B/sim bench --model phi4 --precision float --dims 64 64 64 --kernel "$k" --repeats 7 --json $L/json/ens_phi4_${k// /_}.json >> $L/bench.txt 2>&1
  echo "phi4f 64^3 x 64 $k: $(grep -o '"seconds_per_sweep": [0-9.e-]*' $L/json/ens_phi4_${k// /_}.json)" >> $L/steps.txt
done
echo "bench done $((SECONDS-T0)) s" >> $L/steps.txt
cd $R
( step gpu_test 420 $B/gpu_test --gtest_brief=1 ) &
( sleep 2; step cli_test 400 $B/cli_test --gtest_brief=1 ) &
( sleep 4; step memcheck 300 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuContinuous*:*GpuBox*:*GpuTempering*:*GpuChain*Ising2d*' --gtest_brief=1
  step racecheck 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuContinuous*Phi4*:*GpuTempering*Potts*' --gtest_brief=1 ) &
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
rm -rf $L/json/*_2.json
cp $L/steps.txt $L/machine.txt $L/bench.txt $OUT/
tail -3 $L/gpu_test.log > $OUT/gpu_test_summary.txt; tail -3 $L/cli_test.log > $OUT/cli_test_summary.txt
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $L/memcheck.log $L/racecheck.log > $OUT/sanitizers.txt
