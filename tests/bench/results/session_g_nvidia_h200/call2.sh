#!/usr/bin/env bash
# Session g, device call 2: the fused Swendsen-Wang kernels at full occupancy (launch bounds).
set -uo pipefail
export SIM_REQUIRE_GPU=1
L=/tmp/logs2; mkdir -p $L /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
save() { tar czf $OUT/logs2.tgz -C /tmp logs2; cp $L/steps.txt $OUT/ 2>/dev/null; }
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' $L/$name.log | tail -3 | tr '\n' ' ')" >> $L/steps.txt; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $L/machine.txt 2>&1
step cluster_bench_2d 120 $B/cluster_bench --repeats 20 --filter "2D 8192^2 critical" --json $L/cluster_bench_2d.json
step cluster_bench_3d 120 $B/cluster_bench --repeats 20 --filter "3D 256^3 critical" --json $L/cluster_bench_3d.json
mkdir -p /tmp/w && cd /tmp/w
for spec in "swendsen_wang|8192 8192" "swendsen_wang multispin|8192 8192" "swendsen_wang|256 256 256"; do
  IFS='|' read kernel dims <<< "$spec"; name="${kernel// /_}_${dims// /x}"
  step bench_$name 90 $B/sim bench --model ising --kernel "$kernel" --dims $dims --repeats 5 --json $L/bench_$name.json
  python3 -c "import json; k=json.load(open('$L/bench_$name.json'))['kernels'][0]; print('$name', k['site_updates_per_ns'])" >> $L/steps.txt
done
cd - >/dev/null; save
step gpu_cluster 200 $B/gpu_test --gtest_filter='*Cluster*:*cluster*' --gtest_brief=1
echo "total $((SECONDS-T0)) s" >> $L/steps.txt; save
