#!/usr/bin/env bash
# Session f, device call 4 (issue 23): test_ranks cuda, every case, on 2 GPUs with the final
# binaries; memcheck on 2 ranks of the decomposed cluster, tempering and MALA runs.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1 SIM_REQUIRE_GPU=1
L=/tmp/logs4; mkdir -p $L /tmp/b; T0=$SECONDS
tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh; B=/tmp/b/gpu/bin
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $L/gpu.txt 2>&1
save() { tar czf $OUT/logs4.tgz -C /tmp logs4; cp $L/steps.txt $OUT/ 2>/dev/null; }
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E 'test_ranks|ERROR SUMMARY' $L/$name.log | tr '\n' ' ')" >> $L/steps.txt; save; }
step mpi_ranks_gpu 240 python3 tests/mpi/test_ranks.py $B/sim mpirun cuda /tmp/mpi_gpu
for spec in "ising3d_packed_sw|[1,2,1]" "ising3d_packed_sw_field|[2,1,1]" "potts3d_wolff_field|[2,1,1]" "o3_3d_clusters|[2,1,1]" "phi4_3d_clusters|[2,1,1]" "ising2d_tempering|[2,1]"; do
  IFS='|' read name grid <<< "$spec"
  [ -f /tmp/mpi_gpu/$name.toml ] || { echo "no /tmp/mpi_gpu/$name.toml" >> $L/steps.txt; continue; }
  step memcheck_2ranks_$name 60 mpirun -n 2 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 $B/sim /tmp/mpi_gpu/$name.toml -o /tmp/mc_$name.h5 --force --set run.backend=\"cuda\" --set parallel.grid=$grid
done
ls /tmp/mpi_gpu | head -80 > $L/inputs.txt
echo "total $((SECONDS-T0)) s" >> $L/steps.txt; save
