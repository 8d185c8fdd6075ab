#!/usr/bin/env bash
# Session l, device call 5: the SIGFPE of call 4's GpuClusterLabels test, with a handler
# (LD_PRELOAD of a small library built outside the repository) that prints the faulting
# instruction, the backtrace and the process's maps, for addr2line against the unstripped build.
set -uo pipefail
export SIM_REQUIRE_GPU=1
L=/tmp/logs5; mkdir -p $L /tmp/b
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
xz -dc .gpu3/gpu_test_new.xz > $B/gpu_test && chmod +x $B/gpu_test
LD_PRELOAD=$PWD/.gpu3/fpe.so timeout 120 $B/gpu_test --gtest_filter='GpuClusterLabels.CanonicalRoots*' > $L/fpe.log 2>&1; echo "rc=$?" >> $L/fpe.log
cp $L/fpe.log $OUT/
