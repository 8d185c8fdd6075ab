#!/usr/bin/env bash
# Session m, device call 1 (issue 20): the O(n) site updates with the base pointers opaque to the
# compiler (call 7 of session l), the reciprocal square root in every renormalisation, the
# over-relaxation's scale and the heat bath's axis, and no additions of zero (sim), beside the
# same code with runs of 2 sites for O(2) and O(3) floats (sim_run2) and session l's binary
# f37d7e2 (sim_l), interleaved in one job; Nsight Compute source counters of the O(3) float
# kernels of sim and sim_run2 at 256^3; then sim's GPU suite with SIM_REQUIRE_GPU=1 (gpu_test,
# cli_test) and compute-sanitizer (memcheck, racecheck).
set -uo pipefail
L=/tmp/logs1; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; R=$PWD
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; for v in sim sim_run2 sim_l; do $B/$v --version; done; } > $L/machine.txt 2>&1
export OMP_NUM_THREADS=8
mkdir -p /tmp/w && cd /tmp/w
bench() { local exe=$1 name=$2; shift 2
  timeout 120 $B/$exe bench --repeats 5 --json $L/json/$name.json "$@" >> $L/bench.txt 2>&1
  echo "$name rc=$? $(grep -o '"site_updates_per_ns": [0-9.]*' $L/json/$name.json | head -1)" >> $L/steps.txt; }
for round in 1 2 3; do
  for v in sim sim_run2 sim_l; do
    for k in metropolis overrelaxation; do
      bench $v on3f_${k}_${v}_$round --model on --n 3 --precision float --dims 256 256 256 --kernel $k --cpu-dims 32 32 32
    done
    bench $v on2f_metropolis_${v}_$round --model on --n 2 --precision float --dims 256 256 256 --kernel metropolis --cpu-dims 32 32 32
    [ $v = sim_run2 ] && continue  # the rest are the same kernels as sim's
    [ $round != 1 ] && [ $v = sim_l ] && continue
    bench $v on3f_heatbath_${v}_$round --model on --n 3 --precision float --dims 256 256 256 --kernel heatbath --cpu-dims 32 32 32
    bench $v on3d_metropolis_${v}_$round --model on --n 3 --precision double --dims 256 256 256 --kernel metropolis --cpu-dims 32 32 32
    for k in metropolis overrelaxation; do
      bench $v phi4f_${k}_${v}_$round --model phi4 --precision float --dims 256 256 256 --kernel $k --cpu-dims 32 32 32
    done
    bench $v ising_byte_${v}_$round --model ising --kernel metropolis --dims 4096 4096 --cpu-dims 256 256
    bench $v potts3_${v}_$round --model potts --q 3 --kernel metropolis --dims 4096 4096 --cpu-dims 256 256
  done
done
echo "bench done $((SECONDS-T0)) s" >> $L/steps.txt
for v in sim sim_run2; do
  for k in metropolis overrelaxation; do
    name=on3f_${k}_$v
    timeout 100 ncu --kernel-name-base demangled --set full --import-source yes --clock-control none -k regex:UpdateColour --launch-skip 2 --launch-count 1 -o rep_$name \
      $B/$v bench --model on --n 3 --precision float --dims 256 256 256 --kernel $k --repeats 1 > $L/ncu_$name.log 2>&1
    echo "ncu $name rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
    ncu -i rep_$name.ncu-rep --page source --csv --print-source sass | gzip > $L/sass_$name.csv.gz
    ncu -i rep_$name.ncu-rep --page details > $L/details_$name.txt 2>&1
  done
done
export SIM_REQUIRE_GPU=1 SIM_EXE=$B/sim SIM_SOURCE_DIR=$R
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
cd $R
( step gpu_test 330 $B/gpu_test --gtest_brief=1 ) &
( sleep 2; step cli_test 330 $B/cli_test --gtest_brief=1 ) &
( sleep 4; step memcheck 180 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuSiteUpdate*:GpuContinuous*:GpuChain*Ising2d_256*:GpuBox*:GpuMulticanonical*On*' --gtest_brief=1
  step racecheck 100 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuSiteUpdate*:GpuBox*' --gtest_brief=1 ) &
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; cd /tmp && tar czf $OUT/logs1.tgz -C /tmp logs1
