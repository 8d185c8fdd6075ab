#!/usr/bin/env bash
# Session k, device call 2 (issue 19): warps kept together (__syncwarp at the end of each pass
# of the tiles' union and find loops): the code before (old), the code before with the
# __syncwarp (old2) and the run-head unions with it (new), interleaved; then ncu of new.
set -uo pipefail
L=/tmp/logs2; mkdir -p $L; B=$PWD/.gpu2; T0=$SECONDS
for round in 1 2; do
  for v in old old2 new; do
    timeout 200 $B/cluster_bench_$v --repeats 9 --filter "critical tiles" > $L/crit_${v}_$round.txt 2>&1; echo "$v $round rc=$? $((SECONDS-T0))s" >> $L/steps.txt
  done
done
timeout 240 $B/cluster_bench_new --repeats 3 > $L/all_new.txt 2>&1; echo "all new rc=$? $((SECONDS-T0))s" >> $L/steps.txt
timeout 200 ncu --set full --import-source yes -k regex:label_tiles -c 1 -o $L/tiles_new $B/cluster_bench_new --repeats 1 --filter "8192^2 critical tiles 32x128 @512" > $L/ncu_run.txt 2>&1; echo "ncu rc=$? $((SECONDS-T0))s" >> $L/steps.txt
ncu -i $L/tiles_new.ncu-rep --page details > $L/ncu_details.txt 2>&1
ncu -i $L/tiles_new.ncu-rep --page source --csv --print-source sass > $L/ncu_source_sass.csv 2>&1
cd $L && tar czf $OUT/call2_logs.tgz *.txt *.csv && cp steps.txt $OUT/
