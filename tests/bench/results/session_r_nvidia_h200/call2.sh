#!/usr/bin/env bash
# Session r, device call 2: compute-sanitizer on the same build as call 1 (commit f0cdb53's code):
# memcheck, racecheck and synccheck of the cluster tests and of Swendsen-Wang runs of sim, as in
# session q's call 2.
set -uo pipefail
L=/tmp/logs2; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; R=$PWD
export SIM_REQUIRE_GPU=1 SIM_EXE=$B/sim SIM_SOURCE_DIR=$R
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
$B/sim --version > $L/machine.txt 2>&1
step memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuClusterLabels*:GpuClusterChain*' --gtest_brief=1
step racecheck 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuClusterLabels.ReplicasAre*:GpuClusterLabels.EngineBonds*:GpuClusterLabels.SweptTiles*:GpuClusterLabels.AlignedGrids*:GpuClusterChain*Ising2d_128_sw*:GpuClusterChain*aligned*' --gtest_brief=1
step synccheck 120 compute-sanitizer --tool synccheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuClusterLabels.EngineBonds*' --gtest_brief=1
mkdir -p /tmp/w && cd /tmp/w
step racecheck_sim2d 60 compute-sanitizer --tool racecheck --error-exitcode 1 $B/sim $R/inputs/ising2d_sw.toml --set run.thermalization=2 --set run.measurements=3 --set output.path=/tmp/w/rc2.h5
step memcheck_sim2d 60 compute-sanitizer --tool memcheck --error-exitcode 1 $B/sim $R/inputs/ising2d_sw.toml --set run.thermalization=2 --set run.measurements=3 --set output.path=/tmp/w/mc2.h5
step racecheck_sim3d 60 compute-sanitizer --tool racecheck --error-exitcode 1 $B/sim $R/inputs/ising2d_sw.toml --set 'lattice.dims=[64,64,64]' --set model.beta=0.2216544 --set model.h=0.01 --set run.thermalization=2 --set run.measurements=3 --set output.path=/tmp/w/rc3.h5
step memcheck_sim3d 60 compute-sanitizer --tool memcheck --error-exitcode 1 $B/sim $R/inputs/ising2d_sw.toml --set 'lattice.dims=[64,64,64]' --set model.beta=0.2216544 --set model.h=0.01 --set run.thermalization=2 --set run.measurements=3 --set output.path=/tmp/w/mc3.h5
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; cd /tmp && tar czf $OUT/logs2.tgz -C /tmp logs2
cat $OUT/steps.txt
