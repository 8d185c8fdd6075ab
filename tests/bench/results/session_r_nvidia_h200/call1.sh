#!/usr/bin/env bash
# Session r, device call 1: the final code of session q (clang-formatted; built with
# CMAKE_CUDA_ARCHITECTURES=90, Release). The whole GPU suite with SIM_REQUIRE_GPU=1; sim bench of
# Swendsen-Wang and multi-spin Metropolis at 2D 4096^2; Nsight Compute of the quads' bonds kernel
# and of the swept tiles' labelling (cluster_bench, 2D 4096^2 critical, the fused variant), to
# see what bounds them now.
set -uo pipefail
L=/tmp/logs1; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; R=$PWD
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $B/sim --version; } > $L/machine.txt 2>&1
export SIM_REQUIRE_GPU=1 SIM_EXE=$B/sim SIM_SOURCE_DIR=$R
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
prof() { local name=$1 regex=$2; local s=$SECONDS
  timeout 150 ncu --clock-control none --kernel-name-base demangled --set full -k regex:"$regex" --launch-skip 3 --launch-count 1 -o $L/$name \
    $B/cluster_bench --repeats 1 --filter "4096^2 critical tiles 32x128 @512 fused @256" > $L/run_$name.txt 2>&1
  echo "ncu $name rc=$? $((SECONDS-s)) s" >> $L/steps.txt
  ncu -i $L/$name.ncu-rep --page details > $L/details_$name.txt 2>&1; }
prof bonds "ClusterBonds"
prof tiles "label_aligned_tiles"
cd /tmp && mkdir -p w && cd w
export OMP_NUM_THREADS=8
bench() { local name=$1; shift
  timeout 120 $B/sim bench --repeats 5 --json $L/json/$name.json "$@" >> $L/bench.txt 2>&1
  echo "$name rc=$? $(grep -o '"site_updates_per_ns": [0-9.]*' $L/json/$name.json | head -1)" >> $L/steps.txt; }
bench sw2d_4096 --model ising --kernel swendsen_wang --dims 4096 4096
bench ms2d_4096 --model ising --kernel "metropolis multispin" --dims 4096 4096 --cpu-dims 256 256
cd $R
( step gpu_test 360 $B/gpu_test --gtest_brief=1 ) &
( sleep 2; step cli_test 360 $B/cli_test --gtest_brief=1 ) &
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; cd /tmp && tar czf $OUT/logs1.tgz --exclude='*.ncu-rep' -C /tmp logs1
cat $OUT/steps.txt
