#!/usr/bin/env bash
# Session g, device call 6 (final binaries): every replica's sums in one pair of launches (the
# segmented reduction's partials in a grown buffer); the tempering ensemble rows again on GPU 0
# alone; gpu_test, cli_test and tempering_test with SIM_REQUIRE_GPU=1 on GPU 1; memcheck of the
# reductions and tempering tests.
set -uo pipefail
export SIM_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
L=/tmp/logs6; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD; R=$PWD
save() { tar czf $OUT/logs6.tgz -C /tmp logs6; cp $L/steps.txt $OUT/ 2>/dev/null; }
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; } > $L/machine.txt 2>&1
G1=$(nvidia-smi -L | grep -c '^GPU'); [ "$G1" -ge 2 ] && G1=1 || G1=0
export OMP_NUM_THREADS=6
( export CUDA_VISIBLE_DEVICES=0; mkdir -p /tmp/w && cd /tmp/w
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
  if [ $G1 = 0 ]; then cd $R; step gpu_test 300 $B/gpu_test --gtest_brief=1; fi ) &
( export CUDA_VISIBLE_DEVICES=$G1
  if [ $G1 = 1 ]; then step gpu_test 300 $B/gpu_test --gtest_brief=1; fi
  step tempering_test 60 $B/tempering_test --gtest_brief=1
  step memcheck_reduce 120 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='GpuReduce.*:*GpuTempering*' --gtest_brief=1 ) &
( export CUDA_VISIBLE_DEVICES=$G1; sleep 5; step cli_test 260 $B/cli_test --gtest_brief=1 ) &
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt; save
