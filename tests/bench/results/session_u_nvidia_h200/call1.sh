#!/usr/bin/env bash
# Session u, device call 1: cluster_bench only (sm_90, Release): HEAD (session t) against the move
# kernel that keeps each thread's parts and spins in registers and lists representatives per warp
# (one barrier), at 6 and at 8 blocks an SM; Nsight Compute of the new move at 2D 4096^2.
set -uo pipefail
L=/tmp/logs1; mkdir -p $L; T0=$SECONDS
rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .gpu/cb1.tar.xz -C /tmp/b
B=/tmp/b/cbv
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > $L/machine.txt 2>&1
for round in 1 2; do
  for v in cb_head cb_new6 cb_new8; do
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
prof move6 cb_new6 "move_aligned_tiles" "4096^2 critical tiles 32x128 @256 fused @256"
prof move8 cb_new8 "move_aligned_tiles" "4096^2 critical tiles 32x128 @256 fused @256"
echo "total $((SECONDS-T0)) s" >> $L/steps.txt
cp $L/steps.txt $OUT/; tar czf $OUT/logs1.tgz --exclude='*.ncu-rep' -C /tmp logs1
cat $OUT/steps.txt; for f in $L/cb_*.txt; do echo "== $f"; cut -c1-150 $f | grep -E "critical"; done
grep -E "Duration|Registers Per|Achieved Occ|Theoretical Occ" $L/details_move*.txt
