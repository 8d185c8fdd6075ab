#!/usr/bin/env bash
# Session f, device call 1: cuFFT work-area probe; the suite's programs that this session's
# memory work does not touch, on two GPUs side by side; physics_test (CPU only) in 8 shards;
# sanitizers; test_ranks cuda (every case) on 2 GPUs; weak scaling of SW and snapshots.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1 SIM_REQUIRE_GPU=1
L=/tmp/logs1; mkdir -p $L /tmp/b; T0=$SECONDS
tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD
save() { tar czf $OUT/logs1.tgz -C /tmp logs1; cp $L/steps.txt $OUT/ 2>/dev/null; }
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY|test_ranks|passed|failed' $L/$name.log | tail -4 | tr '\n' ' ')" >> $L/steps.txt; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; free -g | head -2; } > $L/machine.txt 2>&1
step fft_work 60 $B/fft_work; cat $L/fft_work.log >> $L/steps.txt; save
filter='*packed*:GpuSnapshots.*:GpuBox.*:*Lattices/1*:GpuPhilox.*:GpuReduce.*:GpuHistogram.*:*Ising2d_130x66*:*Ising2d_2x512*:*Ising3d_16x8x24*:*Ising4d_8x4x6x10*:*replicas*:*Potts2d_q3*:*Potts3d*:*Ising1d*:*Xy1d*:*O4_3d*:*Phi4_2d*:*Heisenberg2d*:*GpuStructureFactor.Potts3d*:GpuClusterLabels.Replicas*:GpuClusterLabels.EngineBonds*:GpuClusterLabels.TiledLabellingOfBoxes*'
( export CUDA_VISIBLE_DEVICES=0
  for tool in memcheck racecheck synccheck; do
    step sanitizer_$tool 150 compute-sanitizer --tool $tool --error-exitcode 1 $B/gpu_test --gtest_filter="$filter" --gtest_brief=1
  done ) &
( export CUDA_VISIBLE_DEVICES=1
  for t in config_test tempering_test multicanonical_test annealing_test cluster_exact_test unit_test checkpoint_parts_test; do
    step $t 150 $B/$t --gtest_brief=1
  done ) &
( for i in 0 1 2 3 4 5 6 7; do
    GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 300 $B/physics_test --gtest_brief=1 > $L/physics_test_$i.log 2>&1 &
  done; wait
  echo "physics_test 8 shards: $(grep -h -E '^\[  (PASSED|FAILED) ' $L/physics_test_*.log | tr '\n' ' ')" >> $L/steps.txt ) &
wait; save
step mpi_ranks_gpu 260 python3 tests/mpi/test_ranks.py $B/sim mpirun cuda /tmp/mpi_gpu; save
mkdir -p /tmp/w && cd /tmp/w
for spec in "ising|swendsen_wang|4096,4096" "ising|snapshot|8192,8192"; do
  IFS='|' read model kernel dims <<< "$spec"; name=${kernel// /_}
  timeout 60 mpirun -n 2 $B/sim bench --scaling weak --model $model --kernel "$kernel" --dims $dims --repeats 3 --json $L/scaling_${model}_${name}.json > $L/scaling_${model}_${name}.txt 2>&1
  echo "scaling $model $kernel rc=$? $(tail -1 $L/scaling_${model}_${name}.txt)" >> $L/steps.txt; save
done
echo "total $((SECONDS-T0)) s" >> $L/steps.txt; save
