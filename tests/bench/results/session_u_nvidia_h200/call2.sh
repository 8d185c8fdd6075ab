#!/usr/bin/env bash
# Session u, device call 2: cluster_bench only (sm_90, Release): the move of call 1 at 8 blocks an
# SM, and the aligned sweeps uniting the tiles' faces themselves (the second tile to arrive at a
# face unites it) against the same code with unite_tile_faces_kernel ("faces apart"); every
# start (random, ordered, critical) checked against the global unions and the serial labels.
# Nsight Compute of the sweeps with the faces at 2D 4096^2.
set -uo pipefail
L=/tmp/logs2; mkdir -p $L; T0=$SECONDS
rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .gpu/cb2.tar.xz -C /tmp/b
B=/tmp/b/cbv
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > $L/machine.txt 2>&1
timeout 200 $B/cb_faces --repeats 3 --filter "2D" --json $L/all_2d.json > $L/all_2d.txt 2>&1
echo "all 2D rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
timeout 100 $B/cb_faces --repeats 3 --filter "3D" --json $L/all_3d.json > $L/all_3d.txt 2>&1
echo "all 3D rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
for round in 1 2; do
  timeout 120 $B/cb_faces --repeats 20 --filter "critical tiles 32x128 @256 fused @256" --json $L/fused_$round.json > $L/fused_$round.txt 2>&1
  echo "fused round $round rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
done
prof() { local name=$1 bin=$2 regex=$3 filter=$4; local s=$SECONDS
  timeout 100 ncu --clock-control none --kernel-name-base demangled --set full --import-source yes -k regex:"$regex" --launch-skip 3 --launch-count 1 -o $L/$name \
    $B/$bin --repeats 1 --filter "$filter" > $L/run_$name.txt 2>&1
  echo "ncu $name rc=$? $((SECONDS-s)) s" >> $L/steps.txt
  ncu -i $L/$name.ncu-rep --page details > $L/details_$name.txt 2>&1
  ncu -i $L/$name.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $L/sass_$name.csv.gz; }
prof sweeps cb_faces "label_aligned_tiles" "4096^2 critical tiles 32x128 @256 fused @256"
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; tar czf $OUT/logs2.tgz --exclude='*.ncu-rep' -C /tmp logs2
cat $OUT/steps.txt; grep -c " ok$" $L/all_2d.txt $L/all_3d.txt; grep -v " ok$" $L/all_2d.txt $L/all_3d.txt | tail -5
for f in $L/fused_*.txt; do echo "== $f"; cut -c1-160 $f | grep -E "critical"; done
grep -E "Duration|Registers Per|Achieved Occ|Theoretical Occ" $L/details_sweeps.txt
