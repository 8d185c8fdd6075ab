#!/usr/bin/env bash
# Session h, device call 1: multicanonical walkers of O(n) and phi^4 (binned energies) on the
# GPU: gpu_test (all), multicanonical/cli/tempering/annealing/cluster_exact tests with
# SIM_REQUIRE_GPU=1, memcheck and racecheck of the multicanonical GPU tests, sim bench of the
# walkers of every model, and the phi^4 example with 16384 walkers on the GPU.
set -uo pipefail
export SIM_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
L=/tmp/logs1; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD; R=$PWD
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; } > $L/machine.txt 2>&1
export OMP_NUM_THREADS=4
( step gpu_test 330 $B/gpu_test --gtest_brief=1 ) &
( sleep 2; step multicanonical_test 200 $B/multicanonical_test --gtest_brief=1
  step memcheck_muca 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuMulticanonical.*Walkers*' --gtest_brief=1
  step racecheck_muca 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuMulticanonical.Phi4Walkers*:GpuMulticanonical.IsingWalkers*' --gtest_brief=1 ) &
( sleep 4; step cli_test 300 $B/cli_test --gtest_brief=1 ) &
( sleep 6; step tempering_test 120 $B/tempering_test --gtest_brief=1
  step annealing_test 120 $B/annealing_test --gtest_brief=1
  step cluster_exact_test 200 $B/cluster_exact_test --gtest_brief=1 ) &
( sleep 8; mkdir -p /tmp/w && cd /tmp/w
  for spec in "ising|16 16|" "potts|16 16|--q 10" "on|16 16|--n 3 --precision float" "on|16 16|--n 3 --precision double" "phi4|8 8 8|--precision float" "phi4|8 8 8|--precision double"; do
    IFS='|' read model dims extra <<< "$spec"
    name="muca_${model}_${extra//[ -]/}"
    step bench_$name 60 $B/sim bench --kernel multicanonical --model $model $extra --dims $dims --walkers 16384 --repeats 5
    cat $L/bench_$name.log >> $L/bench_muca.txt
  done
  s=$SECONDS; timeout 150 $B/sim $R/inputs/phi4_muca.toml --backend cuda --set multicanonical.walkers=16384 --set run.measurements=60 -o $L/phi4_muca_gpu.h5 --force > $L/phi4_muca_gpu.log 2>&1; echo "phi4_muca_gpu rc=$? $((SECONDS-s))s" >> $L/steps.txt ) &
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $L/bench_muca.txt $L/machine.txt $OUT/ 2>/dev/null; cp $L/phi4_muca_gpu.h5 $OUT/ 2>/dev/null
tar czf $OUT/logs1.tgz -C /tmp logs1 --exclude='*.h5'
