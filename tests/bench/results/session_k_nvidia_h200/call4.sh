#!/usr/bin/env bash
# Session k, device call 4 (issues 19, 20): sim bench of the code before (sim_old, dc04dfc) and
# with every warp kept in step (sim, 6f05515), interleaved: the cluster passes (Swendsen-Wang 2D
# 8192^2 byte and multi-spin, 4096^2, 3D 256^3, Wolff 8192^2), the multi-spin kernels beside
# NVIDIA's cuIsingModel (65536^2; 4096^2 for the gain), the continuous models at 256^3.
set -uo pipefail
L=/tmp/logs4; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
xz -dc .gpu2/sim_old.xz > /tmp/b/sim_old; chmod +x /tmp/b/sim_old
NEW=/tmp/b/gpu/bin/sim; OLD=/tmp/b/sim_old; P=$PWD/.gpu2/peer
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $NEW --version; } > $L/machine.txt 2>&1
export OMP_NUM_THREADS=8
mkdir -p /tmp/w && cd /tmp/w
bench() { # version name args...
  local v=$1 name=$2; shift 2; local exe=$NEW; [ $v = old ] && exe=$OLD
  timeout 120 $exe bench --repeats 5 --json $L/json/${name}_$v.json "$@" >> $L/bench_$v.txt 2>&1
  echo "$name $v rc=$? $(grep -o '"site_updates_per_ns": [0-9.]*' $L/json/${name}_$v.json | head -1)" >> $L/steps.txt
}
peer() { timeout 100 $P/cuIsing -x 65536 -y 65536 -n 3000 -p 1000 -a 1.0 -g 1 > $L/peer_$1.txt 2>&1; echo "peer_$1 rc=$? $(grep -o 'spins/ns: [0-9.]*' $L/peer_$1.txt)" >> $L/steps.txt; }
for round in 1 2; do
  for v in old new; do
    bench $v sw2d_8192_$round --model ising --kernel swendsen_wang --dims 8192 8192
    bench $v swms2d_8192_$round --model ising --kernel "swendsen_wang multispin" --dims 8192 8192
    bench $v sw3d_256_$round --model ising --kernel swendsen_wang --dims 256 256 256
    bench $v ms2d_65536_$round --model ising --kernel "metropolis multispin" --dims 65536 65536 --cpu-dims 256 256
  done
  [ -x $P/cuIsing ] && peer $round
done
for v in old new; do
  bench $v sw2d_4096 --model ising --kernel swendsen_wang --dims 4096 4096
  bench $v wolff2d_8192 --model ising --kernel wolff --dims 8192 8192
  bench $v ms2d_4096 --model ising --kernel "metropolis multispin" --dims 4096 4096 --cpu-dims 256 256
  bench $v hb2d_65536 --model ising --kernel "heatbath multispin" --dims 65536 65536 --cpu-dims 256 256
  bench $v ms3d_512 --model ising --kernel "metropolis multispin" --dims 512 512 512 --cpu-dims 32 32 32
  bench $v phi4f_met --model phi4 --precision float --dims 256 256 256 --kernel metropolis
  bench $v phi4f_or --model phi4 --precision float --dims 256 256 256 --kernel overrelaxation
  bench $v on3f_met --model on --n 3 --precision float --dims 256 256 256 --kernel metropolis
done
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cd $L && tar czf $OUT/call4_logs.tgz steps.txt machine.txt bench_*.txt json peer_*.txt 2>/dev/null; cp steps.txt $OUT/
