#!/usr/bin/env bash
# Session p, device call 4: the fused kernel reading each site's part (1 + its representative's local site,
# written by the tiles' labelling, 2 bytes a site) instead of its parent: no divisions. cluster_bench
# of the new code, checked against the other variants' roots and moved spins, beside session o's final binary in
# the same job, critical starts; Nsight Compute of the fused kernel at 2D 4096^2.
set -uo pipefail
L=/tmp/logs4; mkdir -p $L; T0=$SECONDS
B=$PWD/.gpu
for b in cluster_bench_old cluster_bench_new; do
  timeout 150 $B/$b --repeats 20 --filter "critical tiles" --json $L/$b.json > $L/$b.txt 2>&1; echo "$b rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
done
timeout 120 ncu --clock-control none --kernel-name-base demangled --section SourceCounters --section InstructionStats --section LaunchStats --section Occupancy --section SpeedOfLight -k regex:"move_aligned_tiles" --launch-skip 2 --launch-count 1 -o $L/fused \
  $B/cluster_bench_new --repeats 1 --filter "4096^2 critical tiles 32x128 @512 fused @256" > $L/run_fused.txt 2>&1
echo "ncu rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
ncu -i $L/fused.ncu-rep --page details > $L/details_fused.txt 2>&1; ncu -i $L/fused.ncu-rep --page source --csv --print-source sass | gzip > $L/sass_fused.csv.gz
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/*.txt $L/*.json $L/sass_fused.csv.gz $OUT/ 2>/dev/null
cat $L/steps.txt; grep -E "critical tiles (32x128|8x16x32) @512" $L/cluster_bench_old.txt $L/cluster_bench_new.txt | cut -c1-150
