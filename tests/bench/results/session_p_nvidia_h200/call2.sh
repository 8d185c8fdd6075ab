#!/usr/bin/env bash
# Session p, device call 2: where the fused kernel's instructions go (call 1 measured it slower
# than the flattening and move it replaces: 0.0132 against 0.0030 + 0.0071 ns per site at 2D
# 4096^2, 123.5 M warp instructions). Nsight Compute's SASS source page of one launch.
set -uo pipefail
L=/tmp/logs2; mkdir -p $L; T0=$SECONDS
B=$PWD/.gpu
timeout 120 ncu --clock-control none --kernel-name-base demangled --section SourceCounters --section InstructionStats -k regex:"move_aligned_tiles" --launch-skip 2 --launch-count 1 -o $L/fused \
  $B/cluster_bench_new --repeats 1 --filter "4096^2 critical tiles 32x128 @512 fused @256" > $L/run_fused.txt 2>&1
echo "ncu rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
ncu -i $L/fused.ncu-rep --page source --csv --print-source sass | gzip > $L/sass_fused.csv.gz
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $L/run_fused.txt $L/sass_fused.csv.gz $OUT/
cat $L/steps.txt; zcat $L/sass_fused.csv.gz | head -3 | cut -c1-400
