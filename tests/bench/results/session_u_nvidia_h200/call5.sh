#!/usr/bin/env bash
# Session u, device call 5: the session's final code (sm_90, Release build of the working tree:
# the move kernel keeping each thread's parts and spins in registers, one barrier, 8 blocks an
# SM, Swendsen-Wang's coins from blocks of 128 labels). cluster_bench; sim bench; the whole GPU
# suite with SIM_REQUIRE_GPU=1; compute-sanitizer memcheck, racecheck and synccheck of the
# cluster tests and of Swendsen-Wang runs of sim.
set -uo pipefail
L=/tmp/logs5; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; R=$PWD
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $B/sim --version; } > $L/machine.txt 2>&1
timeout 150 $B/cluster_bench --repeats 20 --filter "critical tiles" --json $L/cluster_bench.json > $L/cluster_bench.txt 2>&1; echo "cluster_bench rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
export OMP_NUM_THREADS=8
mkdir -p /tmp/w && cd /tmp/w
bench() { local name=$1; shift
  timeout 120 $B/sim bench --repeats 5 --json $L/json/$name.json "$@" >> $L/bench.txt 2>&1
  echo "$name rc=$? $(grep -o '"site_updates_per_ns": [0-9.]*' $L/json/$name.json | head -1)" >> $L/steps.txt; }
for round in 1 2; do
  bench sw2d_4096_$round --model ising --kernel swendsen_wang --dims 4096 4096
  bench ms2d_4096_$round --model ising --kernel "metropolis multispin" --dims 4096 4096 --cpu-dims 256 256
done
bench sw2d_8192 --model ising --kernel swendsen_wang --dims 8192 8192
bench swms2d_8192 --model ising --kernel "swendsen_wang multispin" --dims 8192 8192
bench sw3d_256 --model ising --kernel swendsen_wang --dims 256 256 256
bench wolff2d_4096 --model ising --kernel wolff --dims 4096 4096
bench swpotts3_8192 --model potts --q 3 --kernel swendsen_wang --dims 8192 8192
bench swon3f_256 --model on --n 3 --precision float --kernel swendsen_wang --dims 256 256 256
bench swphi4f_256 --model phi4 --precision float --kernel swendsen_wang --dims 256 256 256
echo "bench done $((SECONDS-T0)) s" >> $L/steps.txt
export SIM_REQUIRE_GPU=1 SIM_EXE=$B/sim SIM_SOURCE_DIR=$R
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
cd $R
( step gpu_test 360 $B/gpu_test --gtest_brief=1 ) &
( sleep 2; step cli_test 360 $B/cli_test --gtest_brief=1 ) &
( sleep 4; step memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuClusterLabels*:GpuClusterChain*' --gtest_brief=1
  step racecheck 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuClusterLabels.ReplicasAre*:GpuClusterLabels.EngineBonds*:GpuClusterLabels.SweptTiles*:GpuClusterLabels.AlignedGrids*:GpuClusterChain*Ising2d_128_sw*:GpuClusterChain*aligned*' --gtest_brief=1
  step synccheck 120 compute-sanitizer --tool synccheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuClusterLabels.EngineBonds*' --gtest_brief=1
  cd /tmp/w
  step memcheck_sim2d 60 compute-sanitizer --tool memcheck --error-exitcode 1 $B/sim $R/inputs/ising2d_sw.toml --set run.thermalization=2 --set run.measurements=3 --set output.path=/tmp/w/mc2.h5
  step racecheck_sim2d 60 compute-sanitizer --tool racecheck --error-exitcode 1 $B/sim $R/inputs/ising2d_sw.toml --set run.thermalization=2 --set run.measurements=3 --set output.path=/tmp/w/rc2.h5
  step memcheck_sim3d 60 compute-sanitizer --tool memcheck --error-exitcode 1 $B/sim $R/inputs/ising2d_sw.toml --set 'lattice.dims=[64,64,64]' --set model.beta=0.2216544 --set run.thermalization=2 --set run.measurements=3 --set output.path=/tmp/w/mc3.h5
  step memcheck_sim3dh 60 compute-sanitizer --tool memcheck --error-exitcode 1 $B/sim $R/inputs/ising2d_sw.toml --set 'lattice.dims=[64,64,64]' --set model.beta=0.2216544 --set model.h=0.01 --set run.thermalization=2 --set run.measurements=3 --set output.path=/tmp/w/mc3h.h5
  step racecheck_sim3d 60 compute-sanitizer --tool racecheck --error-exitcode 1 $B/sim $R/inputs/ising2d_sw.toml --set 'lattice.dims=[64,64,64]' --set model.beta=0.2216544 --set run.thermalization=2 --set run.measurements=3 --set output.path=/tmp/w/rc3.h5 ) &
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; cd /tmp && tar czf $OUT/logs5.tgz --exclude='*.ncu-rep' -C /tmp logs5
cat $OUT/steps.txt; grep -E "critical tiles (32x128|8x16x32) @256( fused @256)?  " $L/cluster_bench.txt | cut -c1-150
