#!/usr/bin/env bash
# Session u, device call 3: cluster_bench only (sm_90, Release): Swendsen-Wang's coins, a bit a
# label from blocks of 128 labels (ClusterDecision), the move kernel drawing one block for each
# warp's row of 128 sites (cb_coins) against the same code drawing a block for each
# representative (cb_nocoins: the coins' keys, no shared blocks); the faces' kernel as before.
# Every start checked against the global unions and the serial labels; Nsight Compute of the
# move and the bonds at 2D 4096^2.
set -uo pipefail
L=/tmp/logs3; mkdir -p $L; T0=$SECONDS
rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .gpu/cb3.tar.xz -C /tmp/b
B=/tmp/b/cbv
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > $L/machine.txt 2>&1
timeout 200 $B/cb_coins --repeats 3 --filter "2D" --json $L/all_2d.json > $L/all_2d.txt 2>&1
echo "all 2D rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
for round in 1 2; do
  for v in cb_nocoins cb_coins; do
    timeout 120 $B/$v --repeats 20 --filter "critical tiles 32x128 @256 fused @256" --json $L/${v}_$round.json > $L/${v}_$round.txt 2>&1
    echo "$v round $round rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
  done
done
prof() { local name=$1 bin=$2 regex=$3 filter=$4; local s=$SECONDS
  timeout 100 ncu --clock-control none --kernel-name-base demangled --set full --import-source yes -k regex:"$regex" --launch-skip 3 --launch-count 1 -o $L/$name \
    $B/$bin --repeats 1 --filter "$filter" > $L/run_$name.txt 2>&1
  echo "ncu $name rc=$? $((SECONDS-s)) s" >> $L/steps.txt
  ncu -i $L/$name.ncu-rep --page details > $L/details_$name.txt 2>&1
  ncu -i $L/$name.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $L/sass_$name.csv.gz; }
prof move cb_coins "move_aligned_tiles" "4096^2 critical tiles 32x128 @256 fused @256"
prof bonds cb_coins "ClusterBonds" "4096^2 critical tiles 32x128 @256 fused @256"
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; tar czf $OUT/logs3.tgz --exclude='*.ncu-rep' -C /tmp logs3
cat $OUT/steps.txt; grep -c " ok$" $L/all_2d.txt; grep -v " ok$" $L/all_2d.txt | tail -4
for f in $L/cb_*.txt; do echo "== $f"; cut -c1-160 $f | grep -E "critical"; done
grep -E "Duration|Registers Per|Achieved Occ|Executed Instructions  " $L/details_*.txt
