#!/usr/bin/env bash
# Session k, device call 9: racecheck of the tiles' kernels (call 8's racecheck ran out of time
# on the whole GpuClusterLabels suite): the boxes with ghost layers (2D-4D, three tile shapes)
# and the replicas labelled together (1D-4D), final code (394f26f).
set -uo pipefail
export SIM_REQUIRE_GPU=1
L=/tmp/logs9; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
timeout 320 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuClusterLabels*Boxes*:*GpuClusterLabels*Replicas*' > $L/racecheck.log 2>&1
echo "racecheck rc=$? $((SECONDS-T0))s $(grep -E '^\[  (PASSED|FAILED) |RACECHECK SUMMARY' $L/racecheck.log | tr '\n' ' ')" > $L/steps.txt
cp $L/steps.txt $L/racecheck.log $OUT/
