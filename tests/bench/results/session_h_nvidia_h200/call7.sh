#!/usr/bin/env bash
# Session h, device call 7: sim bench --kernel multicanonical with JSON (device, copy bandwidth)
# for every model's walkers; the walker kernels are call 5's.
set -uo pipefail
L=/tmp/logs7; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
for spec in "potts|16 16|--q 10|16384" "potts|64 64|--q 10|16384" "potts|64 64|--q 10|4096" "potts|64 64|--q 10|1024" "ising|16 16||16384" "ising|64 64||16384" "on|16 16|--n 3 --precision float|16384" "on|16 16|--n 3 --precision double|16384" "phi4|8 8 8|--precision float|16384" "phi4|8 8 8|--precision double|16384"; do
  IFS='|' read model dims extra walkers <<< "$spec"
  name="muca_${model}${extra//[ -]/}_${dims// /x}_${walkers}"
  timeout 60 $B/sim bench --kernel multicanonical --model $model $extra --dims $dims --walkers $walkers --repeats 7 --json $L/json/$name.json >> $L/bench_muca.txt 2>&1
done
echo "total $((SECONDS-T0)) s" >> $L/bench_muca.txt
cp $L/bench_muca.txt $OUT/; tar czf $OUT/json7.tgz -C $L json
