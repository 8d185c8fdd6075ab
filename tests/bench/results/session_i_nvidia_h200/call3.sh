#!/usr/bin/env bash
# Session i, device call 3 (final code: multi-spin runs of 4 words, tempering with the seed in
# the launch and a thread per exchange pair): sim bench of the tempering rows (the target: 64
# rungs of 2D Ising 256^2) and the multi-spin kernels beside cuIsingModel, alone on the GPU;
# then gpu_test, cli_test and tempering_test with SIM_REQUIRE_GPU=1, memcheck and racecheck of
# the chain and tempering GPU tests, and test_ranks' tempering cases on 2 CPU ranks.
set -uo pipefail
export SIM_REQUIRE_GPU=1 PYTHONUNBUFFERED=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
L=/tmp/logs3; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD; R=$PWD; P=$PWD/.gpu/peer
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; $B/sim --version; } > $L/machine.txt 2>&1
export OMP_NUM_THREADS=8
mkdir -p /tmp/w && cd /tmp/w
for spec in "ising|256 256|" "potts|256 256|--q 10" "on|64 64 64|--n 3 --precision float" "phi4|64 64 64|--precision float" "ising|256 256|"; do
  IFS='|' read model dims extra <<< "$spec"
  for k in "metropolis replicas" "metropolis tempering" "metropolis tempering every 10"; do
    name="${model}_${k// /_}"
    timeout 60 $B/sim bench --model $model $extra --dims $dims --kernel "$k" --repeats 7 --json $L/json/ens_$name.json >> $L/bench_tempering.txt 2>&1
  done
  python3 - "$L" "$model" >> $L/steps.txt <<'PY'
import json, sys
L, m = sys.argv[1], sys.argv[2]
t = {k: json.load(open(f"{L}/json/ens_{m}_metropolis_{k}.json"))["kernels"][0]["seconds_per_sweep"] for k in ["replicas", "tempering", "tempering_every_10"]}
print(f"{m}: untempered {t['replicas']*1e3:.4f} ms/sweep; every sweep {t['tempering']*1e3:.4f} ms ({100*(1-t['replicas']/t['tempering']):.1f} %); every 10 {t['tempering_every_10']*1e3:.4f} ms ({100*(1-t['replicas']/t['tempering_every_10']):.1f} %)")
PY
done
bench() { local name=$1; shift; timeout 120 $B/sim bench --model ising --repeats 5 --cpu-dims 256 256 --json $L/json/$name.json "$@" >> $L/bench_multispin.txt 2>&1; echo "$name rc=$? $(grep -o '"site_updates_per_ns": [0-9.]*' $L/json/$name.json)" >> $L/steps.txt; }
peer() { timeout 100 $P/cuIsing -x 65536 -y 65536 -n 3000 -p 1000 -a 1.0 -g 1 > $L/peer_$1.txt 2>&1; echo "peer_$1 rc=$? $(grep -o 'spins/ns: [0-9.]*' $L/peer_$1.txt)" >> $L/steps.txt; }
for round in 1 2; do peer $round; bench ms2d_65536_$round --kernel "metropolis multispin" --dims 65536 65536; done
bench hb2d_65536 --kernel "heatbath multispin" --dims 65536 65536
bench ms3d_512 --kernel "metropolis multispin" --dims 512 512 512
bench ms2d_131072 --kernel "metropolis multispin" --dims 131072 131072
echo "bench done $((SECONDS-T0)) s" >> $L/steps.txt
cd $R
( step gpu_test 400 $B/gpu_test --gtest_brief=1 ) &
( sleep 3; step cli_test 380 $B/cli_test --gtest_brief=1 ) &
( step tempering_test 120 $B/tempering_test --gtest_brief=1
  step memcheck_tempering_chain 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuTempering*:*GpuChain*Ising2d*' --gtest_brief=1
  step racecheck_tempering_chain 120 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuTempering*Ising2d_metropolis*:*GpuChain*Ising2d_16x512*' --gtest_brief=1
  step mpi_ranks_cpu_tempering 150 python3 tests/mpi/test_ranks.py $B/sim mpirun cpu /tmp/mpi_cpu ising2d_tempering ising2d_feedback ) &
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $L/machine.txt $L/bench_tempering.txt $L/bench_multispin.txt $OUT/ 2>/dev/null
tar czf $OUT/logs3.tgz -C /tmp logs3
