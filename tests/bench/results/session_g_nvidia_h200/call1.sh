#!/usr/bin/env bash
# Session g, device call 1: Swendsen-Wang with the bonds made in the tiles' labelling and the
# move made in the flattening (fused) against the unfused tiles, alone on the GPU; sim bench of
# the cluster passes; then the GPU programs with SIM_REQUIRE_GPU=1 and the sanitizers on the
# cluster tests.
set -uo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1 SIM_REQUIRE_GPU=1
L=/tmp/logs1; mkdir -p $L /tmp/b; T0=$SECONDS
tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD
save() { tar czf $OUT/logs1.tgz -C /tmp logs1; cp $L/steps.txt $OUT/ 2>/dev/null; }
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY|site_updates|step/ns' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; free -g | head -2; } > $L/machine.txt 2>&1
step cluster_bench_2d 120 $B/cluster_bench --repeats 20 --filter "2D 8192^2 critical" --json $L/cluster_bench_2d.json
step cluster_bench_3d 120 $B/cluster_bench --repeats 20 --filter "3D 256^3 critical" --json $L/cluster_bench_3d.json
save
mkdir -p /tmp/w && cd /tmp/w
for spec in "swendsen_wang|8192 8192" "swendsen_wang multispin|8192 8192" "wolff|8192 8192" "swendsen_wang|4096 4096" "swendsen_wang|256 256 256" "swendsen_wang multispin|256 256 256"; do
  IFS='|' read kernel dims <<< "$spec"; name="${kernel// /_}_${dims// /x}"
  step bench_$name 90 $B/sim bench --model ising --kernel "$kernel" --dims $dims --repeats 5 --json $L/bench_$name.json
done
cd - >/dev/null; save
export OMP_NUM_THREADS=5
cluster='GpuClusterLabels.*:*GpuClusterChain.*Ising2d_128_sw*:*Ising3d_10x12x14_sw*:*Ising1d_4096*:*Potts2d_q3_sw_field*:*Ising2d_96x130_wolff*:*Ising4d_6x4x6x64*:*Heisenberg3d_float_sw*'
( step gpu_test 330 $B/gpu_test --gtest_brief=1 ) &
( step sanitizer_memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter="$cluster" --gtest_brief=1
  step sanitizer_racecheck 200 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter="$cluster" --gtest_brief=1 ) &
( step cli_test 300 $B/cli_test --gtest_brief=1
  step multicanonical_test 60 $B/multicanonical_test --gtest_brief=1
  step config_test 30 $B/config_test --gtest_brief=1 ) &
( step cluster_exact_test 200 $B/cluster_exact_test --gtest_brief=1 ) &
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt; save
