#!/usr/bin/env bash
# Device call 6: the final binaries (after the simplification), SIM_REQUIRE_GPU=1.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1 SIM_REQUIRE_GPU=1
L=$OUT; mkdir -p /tmp/b; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh; B=/tmp/b/gpu/bin
nvidia-smi --query-gpu=name --format=csv,noheader > $L/gpu.txt
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED) |^OK|^FAILED|slab FFT on|test_ranks' $L/$name.log | tr '\n' ' ')" | tee -a $L/steps.txt; }
step slab_fft_gpu_1 30 $B/slab_fft_gpu_test
step slab_fft_gpu_2 30 mpirun -n 2 $B/slab_fft_gpu_test
step mpi_ranks_gpu 60 python3 tests/mpi/test_ranks.py $B/sim mpirun cuda /tmp/mpi_gpu phi4_3d_mala phi4_3d_langevin phi4_3d_spectral
step gpu_test 170 $B/gpu_test --gtest_brief=1
