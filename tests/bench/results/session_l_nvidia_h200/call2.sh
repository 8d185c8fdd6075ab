#!/usr/bin/env bash
# Session l, device call 2 (issue 20): the new code (O(n) Metropolis proposal in one Philox block,
# decompose without the last division, one replica without a division, occupancy-aware block
# size in for_each) against the session k binary (sim_old) in the same job, interleaved:
# continuous models at 256^3, multi-spin Ising beside cuIsingModel, byte and cluster kernels;
# then Nsight Compute source counters of the new O(3) and phi^4 float kernels.
set -uo pipefail
L=/tmp/logs2; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; P=$PWD/.gpu2/peer
xz -dc .gpu2/sim_old.xz > /tmp/b/sim_old && chmod +x /tmp/b/sim_old
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $B/sim --version; /tmp/b/sim_old --version; } > $L/machine.txt 2>&1
export OMP_NUM_THREADS=8
mkdir -p /tmp/w && cd /tmp/w
bench() { local exe=$1 name=$2; shift 2
  timeout 120 $exe bench --repeats 5 --json $L/json/$name.json "$@" >> $L/bench.txt 2>&1
  echo "$name rc=$? $(grep -o '"site_updates_per_ns": [0-9.]*' $L/json/$name.json | head -1)" >> $L/steps.txt; }
peer() { timeout 100 $P/cuIsing -x 65536 -y 65536 -n 3000 -p 1000 -a 1.0 -g 1 > $L/peer_$1.txt 2>&1; echo "peer_$1 rc=$? $(grep -o 'spins/ns: [0-9.]*' $L/peer_$1.txt)" >> $L/steps.txt; }
for round in 1 2; do
  for v in new old; do
    exe=$B/sim; [ $v = old ] && exe=/tmp/b/sim_old
    for k in metropolis overrelaxation heatbath; do
      bench $exe on3f_${k}_${v}_$round --model on --n 3 --precision float --dims 256 256 256 --kernel $k --cpu-dims 32 32 32
    done
    bench $exe on3d_metropolis_${v}_$round --model on --n 3 --precision double --dims 256 256 256 --kernel metropolis --cpu-dims 32 32 32
    bench $exe on2f_metropolis_${v}_$round --model on --n 2 --precision float --dims 256 256 256 --kernel metropolis --cpu-dims 32 32 32
    for k in metropolis overrelaxation; do
      bench $exe phi4f_${k}_${v}_$round --model phi4 --precision float --dims 256 256 256 --kernel $k --cpu-dims 32 32 32
    done
    bench $exe ising_byte_${v}_$round --model ising --kernel metropolis --dims 4096 4096 --cpu-dims 256 256
    bench $exe potts3_${v}_$round --model potts --q 3 --kernel metropolis --dims 4096 4096 --cpu-dims 256 256
    bench $exe ms2d_${v}_$round --model ising --kernel "metropolis multispin" --dims 65536 65536 --cpu-dims 256 256
    bench $exe ms3d_${v}_$round --model ising --kernel "metropolis multispin" --dims 512 512 512 --cpu-dims 32 32 32
    bench $exe sw2d_${v}_$round --model ising --kernel swendsen_wang --dims 4096 4096
  done
  peer $round
done
echo "bench done $((SECONDS-T0)) s" >> $L/steps.txt
for spec in "on3f_metropolis|on|--n 3 --precision float|metropolis" "on3f_overrelaxation|on|--n 3 --precision float|overrelaxation" "phi4f_metropolis|phi4|--precision float|metropolis"; do
  IFS='|' read name model extra k <<< "$spec"
  timeout 150 ncu --kernel-name-base demangled --set full --import-source yes --clock-control none -k regex:UpdateColour --launch-skip 2 --launch-count 1 -o rep_$name \
    $B/sim bench --model $model $extra --dims 256 256 256 --kernel $k --repeats 1 > $L/ncu_$name.log 2>&1
  echo "ncu $name rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
  ncu -i rep_$name.ncu-rep --page source --csv --print-source sass > $L/sass_$name.csv 2>&1
  ncu -i rep_$name.ncu-rep --page details > $L/details_$name.txt 2>&1
done
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cd /tmp && tar czf $OUT/logs2.tgz -C /tmp logs2
