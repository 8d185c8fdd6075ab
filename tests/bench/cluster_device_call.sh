#!/usr/bin/env bash
# tests/bench/cluster_device_call.sh [PART...]   (repo root, on a GPU node, via the device tool)
#
# The cluster moves' figures (issue 19) and a quick GPU check in one device call of under 10
# minutes (tests/run_gpu_suite.sh runs every test program, longer). PARTs, in this order,
# default all of them:
#   machine        the GPU, its driver and clocks, sim --version
#   cluster_bench  the cluster labelling's phases at critical configurations (2D, 3D)
#   bench          sim bench of the cluster passes and the multi-spin Metropolis kernel (twice
#                  each at 4096^2: the issue 19 gain's two rates come from one job), with the
#                  device's copy bandwidth in every JSON
#   suite          gpu_test and cli_test with SIM_REQUIRE_GPU=1 (skips fail)
#   sanitizers     compute-sanitizer memcheck, racecheck and synccheck of the cluster tests and
#                  memcheck and racecheck of Swendsen-Wang runs of sim (2D, 3D, 3D with a field)
# It runs the bundle .gpu/gpu.tar.xz (tests/bench/pack_bundle.sh) and writes to $OUT:
# steps.txt (a line a step: its exit status, seconds, gtest or sanitizer summary), machine.txt,
# json/*.json, cluster_bench.json and logs.tgz (every log). suite and sanitizers run side by side.
# Copy $OUT into tests/bench/results/session_<x>_<gpu>/callN/ and commit it.
set -uo pipefail
: "${OUT:?cluster_device_call: run it through the device tool, which sets OUT}"
parts=("$@")
[[ ${#parts[@]} -gt 0 ]] || parts=(machine cluster_bench bench suite sanitizers)
wants() { local p; for p in "${parts[@]}"; do [[ $p == "$1" ]] && return 0; done; return 1; }

repo=$PWD logs=/tmp/cluster_device_call bundle=/tmp/device_bundle
rm -rf "$logs" "$bundle" && mkdir -p "$logs/json" "$bundle" /tmp/device_work
tar xJf .gpu/gpu.tar.xz -C "$bundle" || { echo "cluster_device_call: no .gpu/gpu.tar.xz (carry .gpu)" >&2; exit 1; }
# shellcheck source=/dev/null
source "$bundle/gpu/env.sh"
bin=$bundle/gpu/bin start=$SECONDS

# step NAME SECONDS COMMAND...: runs COMMAND with a time limit, its output in NAME.log.
step() {
  local name=$1 limit=$2 began=$SECONDS
  shift 2
  timeout "$limit" "$@" > "$logs/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - began))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY|sites/ns' "$logs/$name.log" | tail -3 | tr '\n' ' ')" >> "$logs/steps.txt"
}
# bench NAME ARGS...: one sim bench, its JSON in json/NAME.json.
bench() {
  local name=$1
  shift
  (cd /tmp/device_work && step "bench_$name" 150 "$bin/sim" bench --repeats 5 --json "$logs/json/$name.json" "$@")
  echo "  $name $(grep -o '"site_updates_per_ns": [0-9.]*' "$logs/json/$name.json" 2>/dev/null | head -1)" >> "$logs/steps.txt"
}

if wants machine; then
  { nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
    "$bin/sim" --version; } > "$logs/machine.txt" 2>&1
fi
if wants cluster_bench; then
  step cluster_bench 200 "$bin/cluster_bench" --repeats 20 --filter "critical tiles" --json "$logs/cluster_bench.json"
fi
if wants bench; then
  export OMP_NUM_THREADS=8
  for round in 1 2; do
    bench sw2d_4096_$round --model ising --kernel swendsen_wang --dims 4096 4096
    bench ms2d_4096_$round --model ising --kernel "metropolis multispin" --dims 4096 4096 --cpu-dims 256 256
  done
  bench sw2d_8192 --model ising --kernel swendsen_wang --dims 8192 8192
  bench swms2d_8192 --model ising --kernel "swendsen_wang multispin" --dims 8192 8192
  bench sw3d_256 --model ising --kernel swendsen_wang --dims 256 256 256
  bench wolff2d_4096 --model ising --kernel wolff --dims 4096 4096
  bench swpotts3_8192 --model potts --q 3 --kernel swendsen_wang --dims 8192 8192
  bench swon3f_256 --model on --n 3 --precision float --kernel swendsen_wang --dims 256 256 256
  bench swphi4f_256 --model phi4 --precision float --kernel swendsen_wang --dims 256 256 256
fi

export SIM_REQUIRE_GPU=1 SIM_EXE=$bin/sim SIM_SOURCE_DIR=$repo
if wants suite; then
  step gpu_test 400 "$bin/gpu_test" --gtest_brief=1 &
  (sleep 2; step cli_test 400 "$bin/cli_test" --gtest_brief=1) &
fi
if wants sanitizers; then
  (
    sleep 4
    sanitize() { local tool=$1 name=$2 limit=$3; shift 3
      step "$name" "$limit" compute-sanitizer --tool "$tool" --error-exitcode 1 "$@"; }
    sanitize memcheck memcheck 240 "$bin/gpu_test" --gtest_brief=1 \
      --gtest_filter='GpuClusterLabels*:GpuClusterChain*'
    sanitize racecheck racecheck 180 "$bin/gpu_test" --gtest_brief=1 \
      --gtest_filter='GpuClusterLabels.ReplicasAre*:GpuClusterLabels.EngineBonds*:GpuClusterLabels.SweptTiles*:GpuClusterLabels.AlignedGrids*:GpuClusterChain*Ising2d_128_sw*:GpuClusterChain*aligned*'
    sanitize synccheck synccheck 150 "$bin/gpu_test" --gtest_brief=1 --gtest_filter='GpuClusterLabels.EngineBonds*'
    cd /tmp/device_work || exit 1
    short=(--set run.thermalization=2 --set run.measurements=3)
    cube=(--set 'lattice.dims=[64,64,64]' --set model.beta=0.2216544)
    input=$repo/inputs/ising2d_sw.toml
    sanitize memcheck memcheck_sim2d 90 "$bin/sim" "$input" "${short[@]}" --set output.path=mc2.h5
    sanitize racecheck racecheck_sim2d 90 "$bin/sim" "$input" "${short[@]}" --set output.path=rc2.h5
    sanitize memcheck memcheck_sim3d 90 "$bin/sim" "$input" "${short[@]}" "${cube[@]}" --set output.path=mc3.h5
    sanitize memcheck memcheck_sim3dh 90 "$bin/sim" "$input" "${short[@]}" "${cube[@]}" --set model.h=0.01 --set output.path=mc3h.h5
    sanitize racecheck racecheck_sim3d 90 "$bin/sim" "$input" "${short[@]}" "${cube[@]}" --set output.path=rc3.h5
  ) &
fi
wait
echo "total $((SECONDS - start))s" >> "$logs/steps.txt"

cp "$logs/steps.txt" "$OUT/"
for f in machine.txt cluster_bench.json; do [[ -f $logs/$f ]] && cp "$logs/$f" "$OUT/"; done
[[ -n $(ls "$logs/json") ]] && cp -r "$logs/json" "$OUT/"
tar czf "$OUT/logs.tgz" -C "$(dirname "$logs")" "$(basename "$logs")"
cat "$OUT/steps.txt"
! grep -qE '^[a-z_0-9]+ rc=[1-9]' "$OUT/steps.txt"  # the exit status: every step passed
