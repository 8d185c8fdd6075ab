#!/usr/bin/python3
"""Gathers one GPU's benchmark figures into tests/bench/results/<gpu-name>.json.

    /usr/bin/python3 tests/bench/collect_results.py LOGDIR [OUT.json]

LOGDIR holds what one device run wrote: gpu.txt (nvidia-smi name, driver, memory),
bench_<model>.json (sim bench --json), bench_ising_2e36.json (sim bench at 262144^2),
primitives.json (primitives_bench --json), transposes.json (transpose_bench --json, optional)
and e2e_*.txt (the final line of sim runs at 8192^2: updates only, measuring every sweep,
snapshots every 100 sweeps). Every figure is copied as measured; the end-to-end overheads are
computed from the run times sim printed.
"""
import glob
import json
import os
import re
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def run_seconds(path):
    """Seconds of the run loop from sim's final line ('... in 2.27 s (...)')."""
    with open(path) as f:
        text = f.read()
    found = re.findall(r"sim: wrote .* in ([0-9.]+) s \(", text)
    if not found:
        raise SystemExit(f"{path}: no 'sim: wrote' line")
    return float(found[-1])


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    logs = sys.argv[1]
    with open(os.path.join(logs, "gpu.txt")) as f:
        name, driver, memory = [x.strip() for x in f.readline().split(",")]
    out = {"device": name, "driver": driver, "memory": memory, "sim_bench": {}}
    for path in sorted(glob.glob(os.path.join(logs, "bench_*.json"))):
        key = os.path.basename(path)[len("bench_"):-len(".json")]
        out["sim_bench"][key] = load(path)
    for key, file in [("primitives", "primitives.json"), ("transposes", "transposes.json")]:
        path = os.path.join(logs, file)
        if os.path.exists(path):
            out[key] = load(path)
    updates = sorted(glob.glob(os.path.join(logs, "e2e_updates_*.txt")))
    measure = sorted(glob.glob(os.path.join(logs, "e2e_measure_*.txt")))
    if updates and measure:
        base = min(run_seconds(p) for p in updates)
        with_measure = min(run_seconds(p) for p in measure)
        out["end_to_end_8192"] = {
            "what": "sim inputs/lattice.toml at 8192^2 (multi-spin coded), 20000 sweeps; run "
                    "times of the best of the repeats",
            "updates_only_s": base,
            "measure_every_sweep_s": with_measure,
            "measurement_overhead_percent": 100 * (with_measure / base - 1),
        }
        snap = os.path.join(logs, "e2e_snap.txt")
        base5k = os.path.join(logs, "e2e_updates5k.txt")
        if os.path.exists(snap) and os.path.exists(base5k):
            a, b = run_seconds(base5k), run_seconds(snap)
            out["end_to_end_8192"].update({
                "snapshot_runs": "5000 sweeps, a snapshot every 100 (50 frames of 64 MiB)",
                "no_snapshots_s": a,
                "snapshot_every_100_s": b,
                "snapshot_overhead_percent": 100 * (b / a - 1),
            })
    target = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results",
        re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") + ".json")
    with open(target, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote", target)


if __name__ == "__main__":
    main()
