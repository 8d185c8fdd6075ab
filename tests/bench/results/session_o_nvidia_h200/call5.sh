#!/usr/bin/env bash
# Session o, device call 5: the final commit's gpu_test (call 4's code with comments changed and
# the new GpuClusterLabels.SweptTilesWhoseQueuesOfUnionsOverflow), SIM_REQUIRE_GPU=1: the cluster
# tests, then memcheck and racecheck of the new test.
set -uo pipefail
L=/tmp/logs5; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > $L/machine.txt 2>&1
export SIM_REQUIRE_GPU=1
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
step gpu_test_cluster 150 $B/gpu_test --gtest_filter='GpuCluster*' --gtest_brief=1
step memcheck_overflow 90 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuClusterLabels.SweptTiles*' --gtest_brief=1
step racecheck_overflow 90 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuClusterLabels.SweptTiles*' --gtest_brief=1
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; cd /tmp && tar czf $OUT/logs5.tgz -C /tmp logs5
cat $OUT/steps.txt; grep -E "^\[ +(OK|FAILED) " $L/gpu_test_cluster.log | head -30
