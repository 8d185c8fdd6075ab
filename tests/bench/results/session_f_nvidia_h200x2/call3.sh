#!/usr/bin/env bash
# Session f, device call 3: the final binaries' GPU suite with SIM_REQUIRE_GPU=1 (two lanes,
# one GPU each), sanitizers, slab FFT and test_ranks' spectral/MALA cases on 2 GPUs, memcheck
# on 2 ranks, weak scaling of SW, snapshots and the distributed FFT.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1 SIM_REQUIRE_GPU=1
L=/tmp/logs3; mkdir -p $L /tmp/b; T0=$SECONDS
[ -x /tmp/b/gpu/bin/sim ] || tar xJf .gpu/gpu.tar.xz -C /tmp/b
source /tmp/b/gpu/env.sh; B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $L/gpu.txt 2>&1
save() { tar czf $OUT/logs3.tgz -C /tmp logs3; cp $L/steps.txt $OUT/ 2>/dev/null; }
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY|test_ranks|slab FFT on' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
export OMP_NUM_THREADS=6
small='*packed*:GpuSnapshots.*:GpuBox.*:*Lattices/1*:GpuPhilox.*:GpuReduce.*:GpuHistogram.*:*Ising2d_130x66*:*Potts2d_q3*:*Phi4_2d*:*GpuStructureFactor.*:*Mala*:*Langevin*:GpuClusterLabels.Replicas*:GpuClusterLabels.EngineBonds*'
( export CUDA_VISIBLE_DEVICES=0; step gpu_test 260 $B/gpu_test --gtest_brief=1; step slab_fft_gpu_1 40 $B/slab_fft_gpu_test ) &
( export CUDA_VISIBLE_DEVICES=0; step sanitizer_memcheck 260 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter="$small" --gtest_brief=1 ) &
( export CUDA_VISIBLE_DEVICES=1; step cli_test 280 $B/cli_test --gtest_brief=1 ) &
( export CUDA_VISIBLE_DEVICES=1
  step multicanonical_test 120 $B/multicanonical_test --gtest_brief=1
  step cluster_exact_test 150 $B/cluster_exact_test --gtest_brief=1
  step config_test 30 $B/config_test --gtest_brief=1
  step sanitizer_racecheck 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuStructureFactor.*:*Mala*:GpuReduce.*:GpuHistogram.*:*Phi4_2d*' --gtest_brief=1
) &
wait; save
unset OMP_NUM_THREADS
step slab_fft_gpu_2 40 mpirun -n 2 $B/slab_fft_gpu_test
step mpi_ranks_gpu 150 python3 tests/mpi/test_ranks.py $B/sim mpirun cuda /tmp/mpi_gpu phi4_3d_mala phi4_3d_langevin phi4_3d_spectral phi4_2d_spectral ising3d_spectral resume_spectral_mala
save
[ -f /tmp/mpi_gpu/phi4_3d_mala.toml ] && step memcheck_2ranks_mala 90 mpirun -n 2 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 $B/sim /tmp/mpi_gpu/phi4_3d_mala.toml -o /tmp/mc.h5 --force --set run.backend=\"cuda\"
grep -c "ERROR SUMMARY: 0 errors" $L/memcheck_2ranks_mala.log >> $L/steps.txt 2>/dev/null; save
mkdir -p /tmp/w && cd /tmp/w
for spec in "ising|swendsen_wang|4096 4096|" "ising|snapshot|8192 8192|" "phi4|structure factor|256 256 256|--precision double" "phi4|structure factor|512 512 512|--precision double"; do
  IFS='|' read model kernel dims extra <<< "$spec"; name="${kernel// /_}_${dims// /x}"
  timeout 90 mpirun -n 2 $B/sim bench --scaling weak --model $model --kernel "$kernel" --dims $dims $extra --repeats 3 --json $L/scaling_${model}_${name}.json > $L/scaling_${model}_${name}.txt 2>&1
  echo "scaling $model $kernel $dims rc=$? $(tail -1 $L/scaling_${model}_${name}.txt)" >> $L/steps.txt; save
done
echo "total $((SECONDS-T0)) s" >> $L/steps.txt; save
