#!/usr/bin/env bash
# Session k, device call 6 (issue 20): the multi-spin kernels with the first two Philox blocks of
# every word drawn at once (sim_exp2) and with the first one (sim_exp3, which also compiles the
# fused update-and-measure passes without the reductions' register bound), against the engine
# (sim, bebd71d); then whole runs of 2D Ising 8192^2 (multi-spin Metropolis, 20000 sweeps)
# measuring every sweep against measuring once, for each binary.
set -uo pipefail
L=/tmp/logs6; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
for v in exp2 exp3; do xz -dc .gpu2/sim_$v.xz > /tmp/b/sim_$v; chmod +x /tmp/b/sim_$v; done
cp /tmp/b/gpu/bin/sim /tmp/b/sim_new
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; /tmp/b/sim_new --version; } > $L/machine.txt 2>&1
export OMP_NUM_THREADS=8
mkdir -p /tmp/w && cd /tmp/w
bench() { # version name args...
  local v=$1 name=$2; shift 2
  timeout 120 /tmp/b/sim_$v bench --repeats 5 --json $L/json/${name}_$v.json "$@" >> $L/bench_$v.txt 2>&1
  echo "$name $v rc=$? $(grep -o '"site_updates_per_ns": [0-9.]*' $L/json/${name}_$v.json | head -1)" >> $L/steps.txt
}
run() { # version every round
  local v=$1 every=$2 round=$3; rm -f /tmp/w/r.h5
  local s=$(date +%s.%N)
  timeout 120 /tmp/b/sim_$v $OLDPWD/inputs/lattice.toml --set 'lattice.dims=[8192,8192]' --set run.thermalization=0 --set run.measurements=$((20000 / every)) --set run.measure_every=$every --set output.snapshot_every=0 --set output.path=/tmp/w/r.h5 > $L/run_${v}_${every}_$round.txt 2>&1
  local rc=$? e=$(date +%s.%N)
  echo "run $v measure_every=$every round $round rc=$rc wall $(awk "BEGIN{print $e - $s}") s: $(grep -o 'in [0-9.]* s ([0-9.]* site updates/ns' $L/run_${v}_${every}_$round.txt)" >> $L/steps.txt
}
for round in 1 2; do
  for v in new exp2 exp3; do
    bench $v ms2d_65536_$round --model ising --kernel "metropolis multispin" --dims 65536 65536 --cpu-dims 256 256
    bench $v hb2d_65536_$round --model ising --kernel "heatbath multispin" --dims 65536 65536 --cpu-dims 256 256
    bench $v ms3d_512_$round --model ising --kernel "metropolis multispin" --dims 512 512 512 --cpu-dims 32 32 32
  done
done
for round in 1 2; do
  for v in new exp2 exp3; do run $v 1 $round; run $v 20000 $round; done
done
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cd $L && tar czf $OUT/call6_logs.tgz steps.txt machine.txt bench_*.txt run_*.txt json 2>/dev/null; cp steps.txt $OUT/
