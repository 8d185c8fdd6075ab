#!/usr/bin/env bash
# Session t, device call 1: cluster_bench only (sm_90, Release), for the aligned tiles' new
# variants: unions linked to smaller roots (no atomic minimum, one word a node) against linking
# by priority; 16 rows a thread (blocks of 256 threads); tiles of 64 x 128 sites (8192). Nsight
# Compute of the sweeps and the move at 2D 4096^2 (critical) for two of them.
set -uo pipefail
L=/tmp/logs1; mkdir -p $L; T0=$SECONDS
rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .gpu/cb1.tar.xz -C /tmp/b
B=/tmp/b/gpu1/bin
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > $L/machine.txt 2>&1
timeout 240 $B/cluster_bench --repeats 20 --filter "critical tiles" --json $L/cluster_bench.json > $L/cluster_bench.txt 2>&1
echo "cluster_bench rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
prof() { local name=$1 regex=$2 filter=$3; local s=$SECONDS
  timeout 100 ncu --clock-control none --kernel-name-base demangled --set full --import-source yes -k regex:"$regex" --launch-skip 3 --launch-count 1 -o $L/$name \
    $B/cluster_bench --repeats 1 --filter "$filter" > $L/run_$name.txt 2>&1
  echo "ncu $name rc=$? $((SECONDS-s)) s" >> $L/steps.txt
  ncu -i $L/$name.ncu-rep --page details > $L/details_$name.txt 2>&1
  ncu -i $L/$name.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $L/sass_$name.csv.gz; }
prof tiles8 "label_aligned_tiles" "4096^2 critical tiles 32x128 @512 fused @256"
prof tiles16 "label_aligned_tiles" "4096^2 critical tiles 32x128 @256 fused @256"
prof tiles64 "label_aligned_tiles" "4096^2 critical tiles 64x128 @512 fused @256"
prof move64 "move_aligned_tiles" "4096^2 critical tiles 64x128 @512 fused @256"
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; tar czf $OUT/logs1.tgz --exclude='*.ncu-rep' -C /tmp logs1
cat $OUT/steps.txt; cut -c1-150 $L/cluster_bench.txt | grep -E "critical"
