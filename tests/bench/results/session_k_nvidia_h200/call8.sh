#!/usr/bin/env bash
# Session k, device call 8: the final code. sim bench of the multi-spin kernels beside NVIDIA's
# cuIsingModel (2D 65536^2 twice, heat bath, 3D 512^3, 2D 4096^2 for the cluster gain), the
# cluster passes (Swendsen-Wang 2D 4096^2 and 8192^2, multi-spin, 3D 256^3, Wolff 8192^2),
# whole runs of 2D 8192^2 measuring every sweep against once; then the whole GPU suite
# (gpu_test, cli_test) with SIM_REQUIRE_GPU=1, memcheck and racecheck of the cluster and
# multi-spin tests.
set -uo pipefail
export SIM_REQUIRE_GPU=1
L=/tmp/logs8; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD; R=$PWD; P=$PWD/.gpu2/peer
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $B/sim --version; } > $L/machine.txt 2>&1
export OMP_NUM_THREADS=8
mkdir -p /tmp/w && cd /tmp/w
bench() { local name=$1; shift
  timeout 120 $B/sim bench --repeats 5 --json $L/json/$name.json "$@" >> $L/bench.txt 2>&1
  echo "$name rc=$? $(grep -o '"site_updates_per_ns": [0-9.]*' $L/json/$name.json | head -1)" >> $L/steps.txt; }
peer() { timeout 100 $P/cuIsing -x 65536 -y 65536 -n 3000 -p 1000 -a 1.0 -g 1 > $L/peer_$1.txt 2>&1; echo "peer_$1 rc=$? $(grep -o 'spins/ns: [0-9.]*' $L/peer_$1.txt)" >> $L/steps.txt; }
run() { local every=$1 round=$2; rm -f /tmp/w/r.h5; local s=$(date +%s.%N)
  timeout 120 $B/sim $R/inputs/lattice.toml --set 'lattice.dims=[8192,8192]' --set run.thermalization=0 --set run.measurements=$((20000 / every)) --set run.measure_every=$every --set output.snapshot_every=0 --set output.path=/tmp/w/r.h5 > $L/run_${every}_$round.txt 2>&1
  local rc=$? e=$(date +%s.%N)
  echo "run measure_every=$every round $round rc=$rc wall $(awk "BEGIN{print $e - $s}") s: $(grep -o 'in [0-9.]* s ([0-9.]* site updates/ns' $L/run_${every}_$round.txt)" >> $L/steps.txt; }
for round in 1 2; do
  peer $round
  bench ms2d_65536_$round --model ising --kernel "metropolis multispin" --dims 65536 65536 --cpu-dims 256 256
done
bench hb2d_65536 --model ising --kernel "heatbath multispin" --dims 65536 65536 --cpu-dims 256 256
bench ms3d_512 --model ising --kernel "metropolis multispin" --dims 512 512 512 --cpu-dims 32 32 32
bench hb3d_512 --model ising --kernel "heatbath multispin" --dims 512 512 512 --cpu-dims 32 32 32
bench ms2d_4096 --model ising --kernel "metropolis multispin" --dims 4096 4096 --cpu-dims 256 256
bench sw2d_4096 --model ising --kernel swendsen_wang --dims 4096 4096
bench sw2d_8192 --model ising --kernel swendsen_wang --dims 8192 8192
bench swms2d_8192 --model ising --kernel "swendsen_wang multispin" --dims 8192 8192
bench sw3d_256 --model ising --kernel swendsen_wang --dims 256 256 256
bench wolff2d_8192 --model ising --kernel wolff --dims 8192 8192
for round in 1 2; do run 1 $round; run 20000 $round; done
echo "bench done $((SECONDS-T0)) s" >> $L/steps.txt
cd $R
( step gpu_test 420 $B/gpu_test --gtest_brief=1 ) &
( sleep 2; step cli_test 400 $B/cli_test --gtest_brief=1 ) &
( sleep 4; step memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuClusterLabels*:*GpuClusterChain*:*GpuChain*Ising2d_256*:*GpuChain*packed*' --gtest_brief=1
  step racecheck 150 compute-sanitizer --tool racecheck --error-exitcode 1 $B/gpu_test --gtest_filter='*GpuClusterLabels*Tiled*:*GpuClusterLabels*Replicas*' --gtest_brief=1 ) &
wait
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/
cd $L && tar czf $OUT/call8_logs.tgz steps.txt machine.txt bench.txt json peer_*.txt run_*.txt gpu_test.log cli_test.log memcheck.log racecheck.log 2>/dev/null
