#!/usr/bin/env bash
# Device call 3: the device-memory distributed FFT, spectra and MALA on 2 GPU ranks.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1 SIM_REQUIRE_GPU=1
L=/tmp/logs3; mkdir -p $L /tmp/b
tar xJf .gpu/gpu.tar.xz -C /tmp/b
source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $L/gpu.txt
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED) |^OK|^FAILED|^Ran |slab FFT on|ERROR SUMMARY|RACECHECK SUMMARY|test_ranks' $L/$name.log | tr '\n' ' ')" | tee -a $L/steps.txt; save; }
save() { tar czf $OUT/logs3.tgz -C /tmp logs3; cp $L/steps.txt $OUT/ 2>/dev/null; }
step slab_fft_gpu_1 60 $B/slab_fft_gpu_test
step slab_fft_gpu_2 60 mpirun -n 2 $B/slab_fft_gpu_test
step memcheck_slab_fft_gpu_2 90 mpirun -n 2 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 $B/slab_fft_gpu_test
step racecheck_slab_fft_gpu_1 60 compute-sanitizer --tool racecheck --error-exitcode 1 $B/slab_fft_gpu_test
# Device memory per rank while the scaling steps run (sampled every 0.2 s).
( while true; do nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader >> $L/device_memory.csv 2>/dev/null; echo "-- $SECONDS" >> $L/device_memory.csv; sleep 0.2; done ) &
sampler=$!
cd /tmp && for spec in "phi4|structure factor|256 256 256" "phi4|structure factor|512 512 512" "phi4|mala|256 256 256"; do
  IFS='|' read -r model kernel dims <<< "$spec"
  name=$(echo "${kernel}_${dims}" | tr " " _)
  timeout 60 mpirun -n 2 sim bench --scaling weak --model $model --kernel "$kernel" --precision double --dims $dims --repeats 3 --json $L/scaling_${name}.json > $L/scaling_${name}.txt 2>&1
  echo "scaling $kernel $dims rc=$? $(tail -1 $L/scaling_${name}.txt)" | tee -a $L/steps.txt; save
done
cd - > /dev/null
kill $sampler
step mpi_ranks_gpu 230 python3 tests/mpi/test_ranks.py $B/sim mpirun cuda /tmp/mpi_gpu
[ -f /tmp/mpi_gpu/phi4_3d_langevin.toml ] && step memcheck_2ranks_mala 80 mpirun -n 2 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 $B/sim /tmp/mpi_gpu/phi4_3d_langevin.toml -o /tmp/mc.h5 --force --set run.backend=\"cuda\"
step gpu_test 170 $B/gpu_test --gtest_brief=1
