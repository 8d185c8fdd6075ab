#!/usr/bin/env bash
# Session o, device call 6: the final code after the review (the queues' slots from one constant,
# kSitesPerUnionSlot; the same arithmetic). The whole GPU suite with SIM_REQUIRE_GPU=1, and
# racecheck and memcheck of the tiles' tests, all at once.
set -uo pipefail
L=/tmp/logs6; mkdir -p $L /tmp/b /tmp/w; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; R=$PWD
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $B/sim --version; } > $L/machine.txt 2>&1
export SIM_REQUIRE_GPU=1 SIM_EXE=$B/sim SIM_SOURCE_DIR=$R OMP_NUM_THREADS=4
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
( step gpu_test 250 $B/gpu_test --gtest_brief=1 ) &
( sleep 2; step cli_test 250 $B/cli_test --gtest_brief=1 ) &
( sleep 4; step racecheck 120 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuClusterLabels.ReplicasAre*:GpuClusterLabels.EngineBonds*:GpuClusterLabels.SweptTiles*' --gtest_brief=1
  step memcheck 120 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuClusterLabels.EngineBonds*:GpuClusterLabels.SweptTiles*' --gtest_brief=1 ) &
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; cd /tmp && tar czf $OUT/logs6.tgz -C /tmp logs6
cat $OUT/steps.txt
