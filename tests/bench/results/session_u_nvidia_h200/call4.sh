#!/usr/bin/env bash
# Session u, device call 4: cluster_bench only (sm_90, Release): the move kernel's
# representatives that are roots take their coins in one loop and the others, listed again, go
# through find_root and their own Philox blocks in a second (cb_split); every 2D start checked;
# Nsight Compute of the move at 2D 4096^2.
set -uo pipefail
L=/tmp/logs4; mkdir -p $L; T0=$SECONDS
rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .gpu/cb4.tar.xz -C /tmp/b
B=/tmp/b/cbv
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > $L/machine.txt 2>&1
timeout 200 $B/cb_split --repeats 3 --filter "2D" --json $L/all_2d.json > $L/all_2d.txt 2>&1
echo "all 2D rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
for round in 1 2; do
  timeout 120 $B/cb_split --repeats 20 --filter "critical tiles 32x128 @256 fused @256" --json $L/cb_split_$round.json > $L/cb_split_$round.txt 2>&1
  echo "cb_split round $round rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
done
timeout 100 ncu --clock-control none --kernel-name-base demangled --set full -k regex:"move_aligned_tiles" --launch-skip 3 --launch-count 1 -o $L/move \
  $B/cb_split --repeats 1 --filter "4096^2 critical tiles 32x128 @256 fused @256" > $L/run_move.txt 2>&1
ncu -i $L/move.ncu-rep --page details > $L/details_move.txt 2>&1
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; tar czf $OUT/logs4.tgz --exclude='*.ncu-rep' -C /tmp logs4
cat $OUT/steps.txt; grep -c " ok$" $L/all_2d.txt; grep -v " ok$" $L/all_2d.txt | tail -4
for f in $L/cb_*.txt; do echo "== $f"; cut -c1-160 $f | grep -E "critical"; done
grep -E "Duration|Registers Per|Achieved Occ|Executed Instructions  " $L/details_*.txt
