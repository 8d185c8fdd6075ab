#!/usr/bin/env bash
# Session t, device call 3: cluster_bench only (sm_90, Release): call 2's code, the sweeps' sites
# walking to their roots in the last loop instead of the labels pointed at roots first, and the
# sweeps bounded to 32 registers (__launch_bounds__(512, 4)). Nsight Compute of the sweeps at 2D
# 4096^2 (critical), 16 rows a thread. cluster_bench_faces: the same and the faces' unions left
# out where the face site before joins the same parts (unite_tile_faces_kernel); Nsight Compute
# of its faces.
set -uo pipefail
L=/tmp/logs3; mkdir -p $L; T0=$SECONDS
rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .gpu/cb3.tar.xz -C /tmp/b
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
prof tiles16 "label_aligned_tiles" "4096^2 critical tiles 32x128 @256 fused @256"
timeout 240 $B/cluster_bench_faces --repeats 20 --filter "critical tiles" --json $L/cluster_bench_faces.json > $L/cluster_bench_faces.txt 2>&1
echo "cluster_bench_faces rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
B0=$B; B=$B/../bin_faces; mkdir -p $B; cp $B0/cluster_bench_faces $B/cluster_bench
prof faces "unite_tile_faces" "4096^2 critical tiles 32x128 @256 fused @256"
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; tar czf $OUT/logs3.tgz --exclude='*.ncu-rep' -C /tmp logs3
cat $OUT/steps.txt; cut -c1-150 $L/cluster_bench.txt | grep -E "critical"; echo faces; cut -c1-150 $L/cluster_bench_faces.txt | grep -E "critical"

