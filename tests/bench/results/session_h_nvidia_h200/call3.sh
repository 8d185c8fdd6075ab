#!/usr/bin/env bash
# Session h, device call 3: the warp walkers with the bin's thresholds held in the lanes: the
# GPU multicanonical tests, sim bench of the walkers, and the q = 10 first-order study
# (tests/bench/potts_first_order.py) at L = 16 ... 64 with 4096 walkers: L = 64 in one process,
# the smaller sizes in another, side by side on the GPU; then the fits over all sizes.
set -uo pipefail
export SIM_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
L=/tmp/logs3; mkdir -p $L /tmp/b $L/fo; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD; R=$PWD
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; python3 -c 'import h5py, numpy; print("h5py", h5py.__version__, "numpy", numpy.__version__)'; } > $L/machine.txt 2>&1
export OMP_NUM_THREADS=4
fo() { python3 tests/bench/potts_first_order.py $L/fo --sim $B/sim --walkers 4096 --measurements 500 --measure-every 100 --thermalization 5000 --max-sweeps 400000 "$@"; }
( fo --sizes 64 --budget 470 > $L/fo_64.txt 2>&1 ) &
( fo --sizes 16,24,32,48 --budget 200 > $L/fo_small.txt 2>&1 ) &
( step muca_gpu 200 $B/gpu_test --gtest_filter='GpuMulticanonical.*' --gtest_brief=1
  for spec in "potts|16 16|--q 10|16384" "potts|64 64|--q 10|16384" "potts|64 64|--q 10|4096" "ising|16 16||16384"; do
    IFS='|' read model dims extra walkers <<< "$spec"
    step bench_${model}_${dims// /x}_${walkers} 60 $B/sim bench --kernel multicanonical --model $model $extra --dims $dims --walkers $walkers --repeats 5
    cat $L/bench_${model}_${dims// /x}_${walkers}.log >> $L/bench_muca.txt
  done ) &
wait
python3 tests/bench/potts_first_order.py $L/fo --fit-only > $L/fo_fit.txt 2>&1
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $L/bench_muca.txt $L/machine.txt $L/fo_fit.txt $OUT/ 2>/dev/null
rm -f $L/fo/*.h5 $L/fo/*.checkpoint; tar czf $OUT/logs3.tgz -C /tmp logs3
