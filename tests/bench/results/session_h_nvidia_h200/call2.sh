#!/usr/bin/env bash
# Session h, device call 2: Ising/Potts multicanonical walkers a warp each (checkerboard order):
# gpu_test (all) and the multicanonical tests with SIM_REQUIRE_GPU=1, memcheck and racecheck of
# the walker tests, sim bench of the walkers (Potts q = 10 at 16^2 and 64^2, Ising 16^2), and a
# pilot Wang-Landau of q = 10 at L = 64 with 4096 walkers (stops by walltime with a checkpoint).
set -uo pipefail
export SIM_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
L=/tmp/logs2; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD; R=$PWD
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; } > $L/machine.txt 2>&1
export OMP_NUM_THREADS=4
( step muca_gpu 200 $B/gpu_test --gtest_filter='GpuMulticanonical.*' --gtest_brief=1
  step memcheck_walkers 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuMulticanonical.*Walkers*' --gtest_brief=1
  step racecheck_walkers 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuMulticanonical.PottsWalkers*:GpuMulticanonical.IsingWalkers*' --gtest_brief=1
  for spec in "potts|16 16|--q 10|16384" "potts|64 64|--q 10|16384" "potts|64 64|--q 10|4096" "ising|16 16||16384"; do
    IFS='|' read model dims extra walkers <<< "$spec"
    name="muca_${model}_${dims// /x}_${walkers}"
    step bench_$name 60 $B/sim bench --kernel multicanonical --model $model $extra --dims $dims --walkers $walkers --repeats 5
    cat $L/bench_$name.log >> $L/bench_muca.txt
  done
  mkdir -p /tmp/w && cd /tmp/w
  s=$SECONDS; timeout 260 $B/sim $R/inputs/potts10_muca.toml --backend cuda --set 'lattice.dims=[64,64]' --set multicanonical.walkers=4096 --set 'multicanonical.window=[-1.85,-0.8]' --set multicanonical.max_sweeps=2000000 --set run.walltime=\"00:03:40\" --set run.measurements=400 --set run.measure_every=50 --set run.thermalization=2000 -o $L/potts10_L64.h5 --force > $L/potts10_L64.log 2>&1; echo "potts10_L64 rc=$? $((SECONDS-s))s" >> $L/steps.txt
  ls -la $L >> $L/steps.txt ) &
( sleep 3; step cli_test 300 $B/cli_test --gtest_brief=1
  step multicanonical_test 120 $B/multicanonical_test --gtest_brief=1 ) &
( sleep 6; step gpu_test 330 $B/gpu_test --gtest_brief=1 ) &
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $L/bench_muca.txt $L/machine.txt $L/potts10_L64.log $OUT/ 2>/dev/null
cp $L/potts10_L64.h5.checkpoint $OUT/ 2>/dev/null
tar czf $OUT/logs2.tgz --exclude='*.h5' --exclude='*.checkpoint' -C /tmp logs2
