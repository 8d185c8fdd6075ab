#!/usr/bin/env bash
# tests/bench/pack_bundle.sh [BUILD_DIR]   (repo root, on the build machine)
#
# Packs what tests/bench/cluster_device_call.sh runs on a GPU node into .gpu/gpu.tar.xz (git-ignored;
# hand it to the device tool with carry [".gpu"]): sim, gpu_test, cli_test and cluster_bench of
# BUILD_DIR (default build-gpu), with the shared libraries the node lacks
# (../shared/tools/device-bundle), stripped. BUILD_DIR must be a Release build made with
# -DCMAKE_CUDA_ARCHITECTURES=90 (the node is sm_90) and those targets built, e.g.
#   cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90
#   cmake --build build-gpu -j2 --target sim gpu_test cli_test cluster_bench
set -euo pipefail
build=${1:-build-gpu}
executables=("$build/sim" "$build/tests/gpu_test" "$build/tests/cli_test"
  "$build/tests/cluster_bench")
for exe in "${executables[@]}"; do
  [[ -x $exe ]] || { echo "pack_bundle: $exe is missing: build it first" >&2; exit 1; }
done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# One at a time, sim last: device-bundle stops (pipefail) at an executable that needs none of
# the libraries it copies, such as gpu_test, before writing env.sh.
for exe in "${executables[@]:1}" "${executables[0]}"; do
  ../shared/tools/device-bundle "$stage/gpu" "$exe" > /dev/null || true
done
for exe in "${executables[@]}"; do
  [[ -x $stage/gpu/bin/$(basename "$exe") ]] || { echo "pack_bundle: $exe not bundled" >&2; exit 1; }
done
[[ -f $stage/gpu/env.sh ]] || { echo "pack_bundle: device-bundle wrote no env.sh" >&2; exit 1; }
strip "$stage"/gpu/bin/* 2>/dev/null || true  # symbols are a third of the bundle
mkdir -p .gpu
tar cf - -C "$stage" gpu | xz -9e -T2 > .gpu/gpu.tar.xz
echo "pack_bundle: .gpu/gpu.tar.xz $(du -h .gpu/gpu.tar.xz | cut -f1) ($("$build/sim" --version 2>&1 | head -1))"
