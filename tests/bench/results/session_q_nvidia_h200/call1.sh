#!/usr/bin/env bash
# Session q, device call 1: the bonds of four sites from one Philox block (QuadBondNumbers; a new
# chain). cluster_bench of the new code beside session p's (its final commit, 9f1a92a, built the
# same way) in the same job, critical starts; sim bench as session p call 7; compute-sanitizer of
# the cluster tests and of Swendsen-Wang runs of sim; then the Swendsen-Wang dynamics of the new
# chain at beta_c, L = 16 ... 4096 (tests/bench/cluster_dynamics.py).
set -uo pipefail
L=/tmp/logs1; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; R=$PWD
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $B/sim --version; } > $L/machine.txt 2>&1
for b in cluster_bench_old cluster_bench; do
  timeout 150 $B/$b --repeats 20 --filter "critical tiles" --json $L/$b.json > $L/$b.txt 2>&1; echo "$b rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
done
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
bench ms3d_512 --model ising --kernel "metropolis multispin" --dims 512 512 512 --cpu-dims 32 32 32
bench wolff2d_8192 --model ising --kernel wolff --dims 8192 8192
bench swpotts3_8192 --model potts --q 3 --kernel swendsen_wang --dims 8192 8192
bench swon3f_256 --model on --n 3 --precision float --kernel swendsen_wang --dims 256 256 256
bench swphi4f_256 --model phi4 --precision float --kernel swendsen_wang --dims 256 256 256
echo "bench done $((SECONDS-T0)) s" >> $L/steps.txt
export SIM_REQUIRE_GPU=1 SIM_EXE=$B/sim SIM_SOURCE_DIR=$R
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
cd $R
( step memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuClusterLabels*:GpuClusterChain*' --gtest_brief=1
  step racecheck 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuClusterLabels.ReplicasAre*:GpuClusterLabels.EngineBonds*:GpuClusterLabels.SweptTiles*:GpuClusterLabels.AlignedGrids*:GpuClusterChain*Ising2d_128_sw*:GpuClusterChain*aligned*' --gtest_brief=1
  step synccheck 120 compute-sanitizer --tool synccheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuClusterLabels.EngineBonds*' --gtest_brief=1
  cd /tmp/w
  step racecheck_sim2d 60 compute-sanitizer --tool racecheck --error-exitcode 1 $B/sim $R/inputs/ising2d_sw.toml --set run.thermalization=2 --set run.measurements=3 --set output.path=/tmp/w/rc2.h5
  step memcheck_sim2d 60 compute-sanitizer --tool memcheck --error-exitcode 1 $B/sim $R/inputs/ising2d_sw.toml --set run.thermalization=2 --set run.measurements=3 --set output.path=/tmp/w/mc2.h5
  step racecheck_sim3d 60 compute-sanitizer --tool racecheck --error-exitcode 1 $B/sim $R/inputs/ising2d_sw.toml --set 'lattice.dims=[64,64,64]' --set model.beta=0.2216544 --set model.h=0.01 --set run.thermalization=2 --set run.measurements=3 --set output.path=/tmp/w/rc3.h5
  step memcheck_sim3d 60 compute-sanitizer --tool memcheck --error-exitcode 1 $B/sim $R/inputs/ising2d_sw.toml --set 'lattice.dims=[64,64,64]' --set model.beta=0.2216544 --set model.h=0.01 --set run.thermalization=2 --set run.measurements=3 --set output.path=/tmp/w/mc3.h5 ) &
# The dynamics of the new chain (a new seed): every size but the largest with the script's
# defaults, then L = 4096 with 2 replicas of 1000 guessed tau_int.
( D=/tmp/dyn; mkdir -p $D; cd $R
  timeout 260 python3 tests/bench/cluster_dynamics.py $D --sim $B/sim --backend cuda --algorithms swendsen_wang --sizes swendsen_wang=16,32,64,128,256,512,1024,2048 --seed 2031 --budget 230 > $L/dynamics_a.txt 2>&1
  echo "dynamics a rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
  timeout 200 python3 tests/bench/cluster_dynamics.py $D --sim $B/sim --backend cuda --algorithms swendsen_wang --sizes swendsen_wang=4096 --replicas swendsen_wang=2 --taus-per-run swendsen_wang=1000 --seed 2039 --budget 170 > $L/dynamics_b.txt 2>&1
  echo "dynamics b rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
  mkdir -p $OUT/dyn; cp $D/*.h5 $D/*.json $D/*.toml $OUT/dyn/ 2>/dev/null ) &
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; cd /tmp && tar czf $OUT/logs1.tgz -C /tmp logs1
cat $OUT/steps.txt; grep -E "critical tiles (32x128|8x16x32) @512( fused @256)?$|critical tiles (32x128|8x16x32) @512 " $L/cluster_bench_old.txt $L/cluster_bench.txt | cut -c1-160
