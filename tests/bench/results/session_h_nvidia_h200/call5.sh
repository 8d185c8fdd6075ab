#!/usr/bin/env bash
# Session h, device call 5 (final walker kernel: one round of decisions per change of bin):
# sim bench of the walkers alone first; then, side by side, gpu_test (all), the multicanonical
# and CLI tests with SIM_REQUIRE_GPU=1, memcheck and racecheck of the walker tests, and the q = 10
# first-order study at L = 16 ... 64 (4096 walkers, 100000 production sweeps).
set -uo pipefail
export SIM_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
L=/tmp/logs5; mkdir -p $L /tmp/b $L/fo; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD; R=$PWD
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; } > $L/machine.txt 2>&1
for spec in "potts|16 16|--q 10|16384" "potts|64 64|--q 10|16384" "potts|64 64|--q 10|4096" "potts|64 64|--q 10|1024" "ising|16 16||16384" "ising|64 64||16384"; do
  IFS='|' read model dims extra walkers <<< "$spec"
  timeout 60 $B/sim bench --kernel multicanonical --model $model $extra --dims $dims --walkers $walkers --repeats 7 >> $L/bench_muca.txt 2>&1
done
echo "bench done $((SECONDS-T0)) s" >> $L/steps.txt
export OMP_NUM_THREADS=4
fo() { python3 tests/bench/potts_first_order.py $L/fo --sim $B/sim --walkers 4096 --measurements 500 --measure-every 200 --thermalization 5000 --max-sweeps 400000 "$@"; }
( fo --sizes 64 --budget 420 > $L/fo_64.txt 2>&1 ) &
( fo --sizes 16,24,32,48 --budget 200 > $L/fo_small.txt 2>&1 ) &
( step muca_gpu 200 $B/gpu_test --gtest_filter='GpuMulticanonical.*' --gtest_brief=1
  step memcheck_walkers 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuMulticanonical.*Walkers*' --gtest_brief=1
  step racecheck_walkers 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuMulticanonical.PottsWalkers*:GpuMulticanonical.IsingWalkers*' --gtest_brief=1
  step multicanonical_test 120 $B/multicanonical_test --gtest_brief=1 ) &
( sleep 2; step gpu_test 380 $B/gpu_test --gtest_brief=1 ) &
( sleep 4; step cli_test 300 $B/cli_test --gtest_brief=1 ) &
wait
python3 tests/bench/potts_first_order.py $L/fo --fit-only > $L/fo_fit.txt 2>&1
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $L/bench_muca.txt $L/machine.txt $L/fo_fit.txt $OUT/ 2>/dev/null
rm -f $L/fo/*.h5 $L/fo/*.checkpoint; tar czf $OUT/logs5.tgz -C /tmp logs5
