#!/usr/bin/env bash
# Session k, device call 3 (issue 19): cluster_bench of the code before (old, dc04dfc), with the
# warps kept in step (new, 6f05515) and with each Swendsen-Wang cluster's word drawn once at
# its root (move; checked against every site drawing it), interleaved, the critical cases.
set -uo pipefail
L=/tmp/logs3; mkdir -p $L; B=$PWD/.gpu2; T0=$SECONDS
for round in 1 2; do
  for v in old new move; do
    timeout 200 $B/cluster_bench_$v --repeats 9 --filter "critical tiles" > $L/crit_${v}_$round.txt 2>&1; echo "$v $round rc=$? $((SECONDS-T0))s" >> $L/steps.txt
  done
done
timeout 240 $B/cluster_bench_move --repeats 3 > $L/all_move.txt 2>&1; echo "all move rc=$? $((SECONDS-T0))s" >> $L/steps.txt
cd $L && tar czf $OUT/call3_logs.tgz *.txt && cp steps.txt $OUT/
