#!/usr/bin/env bash
# Session g, device call 5 (final binaries, 2 GPUs): weak scaling of decomposed Swendsen-Wang
# (the label merge now on the boundary layers); parallel tempering's exchange rounds on the GPU
# (sim bench ensemble rows, 64 rungs, exchanging every sweep and every 10) on GPU 0 alone; the
# GPU programs with SIM_REQUIRE_GPU=1, one GPU each, and sanitizers on the tempering tests;
# test_ranks' cluster and tempering cases on 2 GPU ranks.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 SIM_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
L=/tmp/logs5; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD
save() { tar czf $OUT/logs5.tgz -C /tmp logs5; cp $L/steps.txt $OUT/ 2>/dev/null; }
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY|test_ranks' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; } > $L/machine.txt 2>&1
mkdir -p /tmp/w && cd /tmp/w
timeout 90 mpirun -n 2 $B/sim bench --scaling weak --model ising --kernel swendsen_wang --dims 4096 4096 --repeats 3 --json $L/scaling_sw_4096.json > $L/scaling_sw_4096.txt 2>&1
echo "scaling SW 4096^2 rc=$? $(tail -1 $L/scaling_sw_4096.txt)" >> $L/steps.txt
save
export OMP_NUM_THREADS=6
( export CUDA_VISIBLE_DEVICES=0
  for spec in "ising|256 256|" "potts|256 256|--q 10" "on|64 64 64|--n 3 --precision float" "phi4|64 64 64|--precision float"; do
    IFS='|' read model dims extra <<< "$spec"
    for k in "metropolis replicas" "metropolis tempering" "metropolis tempering every 10"; do
      name="${model}_${k// /_}"
      step ens_$name 60 $B/sim bench --model $model $extra --dims $dims --kernel "$k" --repeats 5 --json $L/ens_$name.json
    done
    python3 - "$L" "$model" >> $L/steps.txt <<'PY'
import json, sys
L, m = sys.argv[1], sys.argv[2]
t = {k: json.load(open(f"{L}/ens_{m}_metropolis_{k}.json"))["kernels"][0]["seconds_per_sweep"] for k in ["replicas", "tempering", "tempering_every_10"]}
print(f"{m}: untempered {t['replicas']*1e3:.4f} ms/sweep; every sweep {t['tempering']*1e3:.4f} ms ({100*(1-t['replicas']/t['tempering']):.1f} %); every 10 {t['tempering_every_10']*1e3:.4f} ms ({100*(1-t['replicas']/t['tempering_every_10']):.1f} %)")
PY
  done
  cd $OLDPWD; step gpu_test 300 $B/gpu_test --gtest_brief=1 ) &
( export CUDA_VISIBLE_DEVICES=1; cd $OLDPWD
  step cli_test 260 $B/cli_test --gtest_brief=1
  step tempering_test 60 $B/tempering_test --gtest_brief=1
  step annealing_test 60 $B/annealing_test --gtest_brief=1
  step multicanonical_test 60 $B/multicanonical_test --gtest_brief=1
  step config_test 30 $B/config_test --gtest_brief=1
  step unit_test 60 $B/unit_test --gtest_brief=1
  step memcheck_tempering 100 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuTempering*' --gtest_brief=1
  step racecheck_tempering 60 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuTempering*Ising2d_metropolis*' --gtest_brief=1 ) &
wait; save
cd $OLDPWD 2>/dev/null || true
step mpi_ranks_gpu 120 python3 tests/mpi/test_ranks.py $B/sim mpirun cuda /tmp/mpi_gpu ising2d_clusters ising3d_packed_sw_field potts3d_wolff_field phi4_3d_clusters o3_3d_clusters ising2d_tempering ising2d_feedback
echo "total $((SECONDS-T0)) s" >> $L/steps.txt; save
