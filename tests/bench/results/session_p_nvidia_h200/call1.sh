#!/usr/bin/env bash
# Session p, device call 1: Swendsen-Wang's flattening and move in one kernel per aligned tile
# (move_aligned_tiles_kernel). cluster_bench of the new code (variants "... fused @256/@512",
# checked against the other variants' roots and moved spins) beside session o's final binary in
# the same job, critical starts; Nsight Compute of the fused kernel at 2D 4096^2.
set -uo pipefail
L=/tmp/logs1; mkdir -p $L; T0=$SECONDS
B=$PWD/.gpu
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > $L/machine.txt 2>&1
for b in cluster_bench_old cluster_bench_new; do
  timeout 150 $B/$b --repeats 20 --filter "critical tiles" --json $L/$b.json > $L/$b.txt 2>&1; echo "$b rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
done
timeout 120 ncu --clock-control none --kernel-name-base demangled --set full -k regex:"move_aligned_tiles" --launch-skip 2 --launch-count 1 -o $L/fused \
  $B/cluster_bench_new --repeats 1 --filter "4096^2 critical tiles 32x128 @512 fused @256" > $L/run_fused.txt 2>&1
echo "ncu rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
ncu -i $L/fused.ncu-rep --page details > $L/details_fused.txt 2>&1
cuobjdump -sass -fun move_aligned_tiles $B/cluster_bench_new 2>/dev/null | grep -E "^\s+/\*[0-9a-f]+\*/" | wc -l >> $L/steps.txt
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/*.txt $L/*.json $OUT/ 2>/dev/null
cat $L/steps.txt; grep -E "critical tiles (32x128|8x16x32) @512" $L/cluster_bench_old.txt $L/cluster_bench_new.txt | cut -c1-150
