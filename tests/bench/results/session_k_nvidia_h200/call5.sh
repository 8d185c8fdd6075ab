#!/usr/bin/env bash
# Session k, device call 5 (issue 20): multi-spin kernels with every word's first Philox block
# drawn at once, unconditionally (sim_exp: engines_cuda_discrete.cu with that
# kernels/models/ising_packed.hpp), against the engine (sim, bebd71d), interleaved, beside
# NVIDIA's cuIsingModel; then the cluster rows of the README's table that call 4 left out.
set -uo pipefail
L=/tmp/logs5; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
xz -dc .gpu2/sim_exp.xz > /tmp/b/sim_exp; chmod +x /tmp/b/sim_exp
NEW=/tmp/b/gpu/bin/sim; EXP=/tmp/b/sim_exp; P=$PWD/.gpu2/peer
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; $NEW --version; } > $L/machine.txt 2>&1
export OMP_NUM_THREADS=8
mkdir -p /tmp/w && cd /tmp/w
bench() { # version name args...
  local v=$1 name=$2; shift 2; local exe=$NEW; [ $v = exp ] && exe=$EXP
  timeout 120 $exe bench --repeats 5 --json $L/json/${name}_$v.json "$@" >> $L/bench_$v.txt 2>&1
  echo "$name $v rc=$? $(grep -o '"site_updates_per_ns": [0-9.]*' $L/json/${name}_$v.json | head -1)" >> $L/steps.txt
}
peer() { timeout 100 $P/cuIsing -x 65536 -y 65536 -n 3000 -p 1000 -a 1.0 -g 1 > $L/peer_$1.txt 2>&1; echo "peer_$1 rc=$? $(grep -o 'spins/ns: [0-9.]*' $L/peer_$1.txt)" >> $L/steps.txt; }
for round in 1 2; do
  for v in new exp; do
    bench $v ms2d_65536_$round --model ising --kernel "metropolis multispin" --dims 65536 65536 --cpu-dims 256 256
    bench $v hb2d_65536_$round --model ising --kernel "heatbath multispin" --dims 65536 65536 --cpu-dims 256 256
    bench $v ms3d_512_$round --model ising --kernel "metropolis multispin" --dims 512 512 512 --cpu-dims 32 32 32
  done
  peer $round
done
bench new potts3_sw_8192 --model potts --q 3 --kernel swendsen_wang --dims 8192 8192
bench new on3f_sw_256 --model on --n 3 --precision float --kernel swendsen_wang --dims 256 256 256
bench new phi4f_sw_256 --model phi4 --precision float --kernel swendsen_wang --dims 256 256 256
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cd $L && tar czf $OUT/call5_logs.tgz steps.txt machine.txt bench_*.txt json peer_*.txt 2>/dev/null; cp steps.txt $OUT/
