#!/usr/bin/env bash
# Session j, device call 2 (issue 21): parallel tempering with the round's sums taken from the
# last pass of the sweep before it (Ising, Potts) and the passes reading each slot's couplings
# through its rung (no table gathered per round). sim bench of the ensemble cases as in call 1,
# Nsight Compute's kernel durations of a few tempered Ising and Potts sweeps; then the GPU
# tempering and chain tests with SIM_REQUIRE_GPU=1, memcheck and racecheck of them.
set -uo pipefail
export SIM_REQUIRE_GPU=1
L=/tmp/logs2; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD; R=$PWD
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; nproc; $B/sim --version; } > $L/machine.txt 2>&1
export OMP_NUM_THREADS=8
cd /tmp && mkdir -p w && cd w
ens() { local model=$1 dims=$2 extra=$3 tag=$4
  for k in "metropolis replicas" "metropolis tempering without exchanges" "metropolis tempering every 10" "metropolis tempering"; do
    timeout 60 $B/sim bench --model $model $extra --dims $dims --kernel "$k" --repeats 9 --json $L/json/ens_${model}_${k// /_}_$tag.json >> $L/bench_$model.txt 2>&1
  done
  /usr/bin/env python3 - "$L" "$model" "$tag" >> $L/steps.txt <<'PY'
import json, sys
L, m, tag = sys.argv[1:4]
t = {k: json.load(open(f"{L}/json/ens_{m}_metropolis_{k}_{tag}.json"))["kernels"][0]["seconds_per_sweep"]
     for k in ["replicas", "tempering_without_exchanges", "tempering_every_10", "tempering"]}
u, n = t["replicas"], t["tempering_without_exchanges"]
print(f"{m} {tag}: untempered {u*1e3:.4f} ms/sweep, ladder without rounds {n*1e3:.4f} (couplings {100*(1-u/n):.1f} %), "
      f"every 10 {t['tempering_every_10']*1e3:.4f} (rounds {100*(1-n/t['tempering_every_10']):.1f} %, all {100*(1-u/t['tempering_every_10']):.1f} %), "
      f"every sweep {t['tempering']*1e3:.4f} (rounds {100*(1-n/t['tempering']):.1f} %, round {1e6*(t['tempering']-n):.1f} us)")
PY
}
for tag in a b; do ens ising "256 256" "" $tag; done
ens potts "256 256" "--q 10" a
ens on "64 64 64" "--n 3 --precision float" a
ens phi4 "64 64 64" "--precision float" a
echo "bench done $((SECONDS-T0)) s" >> $L/steps.txt
for spec in "ising|" "potts|--q 10"; do
  IFS='|' read model extra <<< "$spec"
  timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 400 --launch-count 40 \
    $B/sim bench --model $model $extra --dims 256 256 --kernel "metropolis tempering" --repeats 1 > $L/ncu_round_$model.txt 2>&1
  echo "ncu $model rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
done
cd $R
step gpu_tempering_chain 300 $B/gpu_test --gtest_filter='*Tempering*:*GpuChain*' --gtest_brief=1
step memcheck_tempering 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuTempering*' --gtest_brief=1
step racecheck_tempering 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuTempering*Ising2d_metropolis*' --gtest_brief=1
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $L/machine.txt $L/ncu_round_*.txt $OUT/ 2>/dev/null
tar czf $OUT/logs2.tgz -C /tmp logs2
