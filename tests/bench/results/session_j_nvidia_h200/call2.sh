#!/usr/bin/env bash
# Session j, device call 2: parallel tempering with the round's sums taken from the last pass of
# the sweep before it (Ising, Potts) and the passes reading each slot's couplings through its
# rung (issue 21): sim bench of the ensemble cases as in call 1, Nsight Compute's kernel
# durations of a few tempered Ising and Potts sweeps. The continuous models' runs of 4 sites
# (issue 20): sim bench at 256^3 and ncu of the phi^4 Metropolis kernel. Then the whole GPU
# suite (gpu_test, cli_test) with SIM_REQUIRE_GPU=1, memcheck and racecheck.
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
for spec in "phi4|--precision float|metropolis" "phi4|--precision float|overrelaxation" "on|--n 3 --precision float|metropolis" "on|--n 3 --precision float|heatbath" "on|--n 3 --precision float|overrelaxation" "phi4|--precision double|metropolis"; do
  IFS='|' read model extra k <<< "$spec"
  name="cont_${model}_$(echo $extra | tr -d ' -')_$k"
  timeout 90 $B/sim bench --model $model $extra --dims 256 256 256 --kernel "$k" --repeats 5 --json $L/json/$name.json >> $L/bench_continuous.txt 2>&1
  echo "$name rc=$? $(grep -o '"site_updates_per_ns": [0-9.]*' $L/json/$name.json)" >> $L/steps.txt
done
timeout 120 ncu --clock-control none --kernel-name regex:UpdateColour --launch-skip 4 --launch-count 1 \
  --metrics smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size \
  $B/sim bench --model phi4 --precision float --dims 256 256 256 --kernel metropolis --repeats 1 > $L/ncu_phi4_metropolis.txt 2>&1
echo "ncu phi4 rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
cd $R
( step gpu_test 420 $B/gpu_test --gtest_brief=1 ) &
( sleep 2; step cli_test 400 $B/cli_test --gtest_brief=1 ) &
( sleep 4; step memcheck 300 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuTempering*:*GpuChain*Ising2d*:*GpuContinuous*:*GpuMulticanonical*' --gtest_brief=1
  step racecheck 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuTempering*Ising2d_metropolis*:*GpuTempering*Potts*:*GpuContinuous*Phi4*' --gtest_brief=1 ) &
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $L/machine.txt $L/ncu_round_*.txt $L/ncu_phi4_metropolis.txt $OUT/ 2>/dev/null
tar czf $OUT/logs2.tgz -C /tmp logs2
