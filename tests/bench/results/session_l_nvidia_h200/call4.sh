#!/usr/bin/env bash
# Session l, device call 4: gpu_test stopped on SIGFPE in call 3; find where (the test that ran
# last, and a backtrace where gdb exists), with the fixed tolerances of call 3's two failures.
set -uo pipefail
export SIM_REQUIRE_GPU=1
L=/tmp/logs4; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD
xz -dc .gpu3/gpu_test_new.xz > $B/gpu_test && chmod +x $B/gpu_test
which gdb > $L/machine.txt 2>&1
timeout 300 $B/gpu_test > $L/gpu_test.log 2>&1; echo "gpu_test rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
last=$(grep '^\[ RUN' $L/gpu_test.log | tail -1 | awk '{print $4}')
echo "last test: $last" >> $L/steps.txt
if which gdb > /dev/null 2>&1; then
  timeout 200 gdb -q -batch -ex run -ex bt --args $B/gpu_test --gtest_filter="$last" > $L/gdb.log 2>&1
fi
grep -E '^\[  (PASSED|FAILED|SKIPPED) |FAILED' $L/gpu_test.log | tail -20 >> $L/steps.txt
cp $L/steps.txt $OUT/; cd /tmp && tar czf $OUT/logs4.tgz -C /tmp logs4
