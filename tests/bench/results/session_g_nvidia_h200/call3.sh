#!/usr/bin/env bash
# Session g, device call 3: where a Swendsen-Wang step's time goes at 8192^2 (Nsight Compute on
# cluster_bench's engine variant), then the engine's cluster rates and cluster tests again on the
# reverted kernels.
set -uo pipefail
export SIM_REQUIRE_GPU=1
L=/tmp/logs3; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
save() { tar czf $OUT/logs3.tgz -C /tmp logs3; cp $L/steps.txt $OUT/ 2>/dev/null; }
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1); echo "ncu: $NCU" >> $L/steps.txt
case="2D 8192^2 critical tiles 32x128 @512"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
step ncu_tiles 150 $NCU --kernel-name-base demangled -k regex:"label_tiles|unite_tile_faces|flatten_tiles" --launch-skip 3 --launch-count 3 $sections $B/cluster_bench --repeats 1 --filter "$case"
step ncu_for_each 150 $NCU --kernel-name-base demangled -k regex:"ClusterBonds|MoveClusters" --launch-skip 204 --launch-count 2 $sections $B/cluster_bench --repeats 1 --filter "$case"
save
mkdir -p /tmp/w && cd /tmp/w
for spec in "swendsen_wang|8192 8192" "swendsen_wang multispin|8192 8192" "swendsen_wang|256 256 256" "wolff|8192 8192"; do
  IFS='|' read kernel dims <<< "$spec"; name="${kernel// /_}_${dims// /x}"
  step bench_$name 90 $B/sim bench --model ising --kernel "$kernel" --dims $dims --repeats 5 --json $L/bench_$name.json
  python3 -c "import json; k=json.load(open('$L/bench_$name.json'))['kernels'][0]; print('$name', k['site_updates_per_ns'])" >> $L/steps.txt
done
cd - >/dev/null; save
step gpu_cluster 200 $B/gpu_test --gtest_filter='*Cluster*:*cluster*' --gtest_brief=1
echo "total $((SECONDS-T0)) s" >> $L/steps.txt; save
