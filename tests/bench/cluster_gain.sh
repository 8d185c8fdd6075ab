#!/usr/bin/env bash
# tests/bench/cluster_gain.sh CALL_DIR [DYNAMICS_JSON]   (repo root, on the build machine)
#
# Issue 19's gain at L = 4096: the independent samples per second of Swendsen-Wang, Wolff and the
# multi-spin Metropolis kernel from the tau_int fits of DYNAMICS_JSON (default: session q's 2D
# Ising runs at beta_c with session y's longer Metropolis runs at L = 512, 1024; the chains are
# unchanged since) and the rates of one device call's sim bench (CALL_DIR/json/*.json as
# tests/bench/cluster_device_call.sh writes them, so that the rates come from one job): each
# kernel's faster round (sw2d_4096_{1,2}, ms2d_4096_{1,2}) and wolff2d_4096.
# Writes CALL_DIR/dynamics_gain_4096_fit64.txt (fits over L >= 64) and dynamics_gain_4096.txt
# (fits over every size) and prints the gain table of the first.
set -euo pipefail
dir=${1:?usage: tests/bench/cluster_gain.sh CALL_DIR [DYNAMICS_JSON]}
fits=${2:-tests/bench/results/session_y_nvidia_h100/dynamics_2d_fit64.json}
python=/usr/bin/python3  # Debian's, with numpy and scipy
rate() {  # the largest site_updates_per_ns of the files CALL_DIR/json/$1*.json
  "$python" -c 'import json, sys; print(max(json.load(open(f))["kernels"][0]["site_updates_per_ns"] for f in sys.argv[1:]))' \
    "$dir/json/$1"*.json
}
rates=(--extrapolate 4096 --extrapolation-rate "swendsen_wang=$(rate sw2d_4096_)"
  --extrapolation-rate "metropolis=$(rate ms2d_4096_)" --extrapolation-rate "wolff=$(rate wolff2d_4096)")
"$python" -m analysis dynamics "$fits" "${rates[@]}" --fit-sizes 64: > "$dir/dynamics_gain_4096_fit64.txt"
"$python" -m analysis dynamics "$fits" "${rates[@]}" > "$dir/dynamics_gain_4096.txt"
sed -n '/^extrapolated to L = 4096/,$p' "$dir/dynamics_gain_4096_fit64.txt"
