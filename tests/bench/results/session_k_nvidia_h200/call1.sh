#!/usr/bin/env bash
# Session k, device call 1 (issue 19): the tiles' labelling with unions between run heads only
# (the leftmost bond between two runs) and finds from the heads only, against the code before
# (cluster_bench_old, HEAD dc04dfc's tile_labels.cuh), same job; every case checks its roots
# against the global union-find and, on small lattices, the serial labelling. Then Nsight
# Compute (full set, source counters) of the new label_tiles_kernel at 8192^2 critical.
set -uo pipefail
L=/tmp/logs1; mkdir -p $L; B=$PWD/.gpu2; T0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > $L/machine.txt
for round in 1 2; do
  for v in old new; do
    timeout 200 $B/cluster_bench_$v --repeats 9 --filter "critical tiles" > $L/crit_${v}_$round.txt 2>&1; echo "$v $round rc=$? $((SECONDS-T0))s" >> $L/steps.txt
  done
done
timeout 240 $B/cluster_bench_new --repeats 3 > $L/all_new.txt 2>&1; echo "all new rc=$? $((SECONDS-T0))s" >> $L/steps.txt
timeout 200 ncu --set full --import-source yes -k regex:label_tiles -c 1 -o $L/tiles_new $B/cluster_bench_new --repeats 1 --filter "8192^2 critical tiles 32x128 @512" > $L/ncu_run.txt 2>&1; echo "ncu rc=$? $((SECONDS-T0))s" >> $L/steps.txt
ncu -i $L/tiles_new.ncu-rep --page details > $L/ncu_details.txt 2>&1
ncu -i $L/tiles_new.ncu-rep --page source --csv --print-source cuda > $L/ncu_source_cuda.csv 2>&1 || ncu -i $L/tiles_new.ncu-rep --page source --csv > $L/ncu_source_cuda.csv 2>&1
ncu -i $L/tiles_new.ncu-rep --page source --csv --print-source sass > $L/ncu_source_sass.csv 2>&1
cd $L && tar czf $OUT/call1_logs.tgz *.txt *.csv && cp steps.txt crit_*.txt $OUT/ 2>/dev/null; ls -la $L >> $OUT/steps.txt
