#!/usr/bin/env bash
# Session k, device call 10: CheckpointCli.KillNineAtRandomMomentsThenResume alone, 5 repeats
# (call 8 saw its cpu case fail once while the sanitizers and gpu_test loaded the machine).
L=/tmp/l10; mkdir -p $L /tmp/b; rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh; export SIM_EXE=/tmp/b/gpu/bin/sim SIM_SOURCE_DIR=$PWD SIM_REQUIRE_GPU=1; timeout 200 /tmp/b/gpu/bin/cli_test --gtest_filter='*KillNine*' --gtest_repeat=5 --gtest_brief=1 > $L/killnine.log 2>&1; echo "rc=$?"; cp $L/killnine.log $OUT/
