#!/usr/bin/env bash
# Session l, device call 7 (issue 20): an experiment. sim_exp is f37d7e2's sim with the O(n) and
# phi^4 objects rebuilt so UpdateColour forms its own/other colour pointers once, opaque to the
# compiler (opaque_pointer), to see whether the 64-bit address arithmetic left in the O(3)
# kernels goes; the two interleaved in one job.
set -uo pipefail
L=/tmp/logs7; mkdir -p $L/json /tmp/b
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
xz -dc .gpu3/sim_exp.xz > /tmp/b/sim_exp && chmod +x /tmp/b/sim_exp
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $B/sim --version; } > $L/machine.txt 2>&1
mkdir -p /tmp/w && cd /tmp/w
bench() { local exe=$1 name=$2; shift 2
  timeout 120 $exe bench --repeats 5 --json $L/json/$name.json "$@" >> $L/bench.txt 2>&1
  echo "$name rc=$? $(grep -o '"site_updates_per_ns": [0-9.]*' $L/json/$name.json | head -1)" >> $L/steps.txt; }
for round in 1 2; do
  for v in kept exp; do
    exe=$B/sim; [ $v = exp ] && exe=/tmp/b/sim_exp
    for k in metropolis overrelaxation heatbath; do
      bench $exe on3f_${k}_${v}_$round --model on --n 3 --precision float --dims 256 256 256 --kernel $k --cpu-dims 16 16 16
    done
    bench $exe on2f_metropolis_${v}_$round --model on --n 2 --precision float --dims 256 256 256 --kernel metropolis --cpu-dims 16 16 16
    for k in metropolis overrelaxation; do
      bench $exe phi4f_${k}_${v}_$round --model phi4 --precision float --dims 256 256 256 --kernel $k --cpu-dims 16 16 16
    done
  done
done
for v in kept exp; do
  exe=$B/sim; [ $v = exp ] && exe=/tmp/b/sim_exp
  timeout 60 $exe $OLDPWD/inputs/heisenberg3d.toml --set 'lattice.dims=[32,32,32]' --set run.thermalization=20 --set run.measurements=30 --set output.path=/tmp/w/h_$v.h5 > $L/run_$v.txt 2>&1
  echo "run $v rc=$?" >> $L/steps.txt
done
cp $L/steps.txt $OUT/; cp /tmp/w/h_*.h5 $OUT/ 2>/dev/null; cd /tmp && tar czf $OUT/logs7.tgz -C /tmp logs7
