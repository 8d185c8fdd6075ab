#!/usr/bin/python3
"""Gathers one GPU's benchmark figures into tests/bench/results/<gpu-name>.json.

    /usr/bin/python3 tests/bench/collect_results.py LOGDIR [OUT.json]

LOGDIR holds what one device run wrote: gpu.txt (nvidia-smi name, driver, memory),
bench_<model>.json (sim bench --json), bench_ising_2e36.json (sim bench at 262144^2),
primitives.json (primitives_bench --json), transposes.json (transpose_bench --json, optional)
e2e_*.txt (the final line of sim runs at 8192^2: updates only, measuring every sweep, and
5000 sweeps with and without a snapshot every 100 sweeps, as bytes and bit-packed) and dd_*.txt
(the disk's write rate). Every figure is copied as measured; the end-to-end overheads are
computed from the run times sim printed, the best of the repeats.
"""
import glob
import json
import os
import re
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def run_line(path):
    """(seconds of the run loop, sweeps, snapshots) from sim's final line."""
    with open(path) as f:
        text = f.read()
    found = re.findall(r"sim: wrote .*: ([0-9]+) sweeps .* ([0-9]+) snapshots in ([0-9.]+) s \(",
                       text)
    if not found:
        raise SystemExit(f"{path}: no 'sim: wrote' line")
    sweeps, snapshots, seconds = found[-1]
    return float(seconds), int(sweeps), int(snapshots)


def run_seconds(path):
    return run_line(path)[0]


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
            "what": "sim inputs/lattice.toml at 8192^2 (multi-spin coded), 20000 sweeps, "
                    "thermalization 0, the input's snapshot every 2000 sweeps kept; run times "
                    "of the best of the repeats",
            "updates_only_s": base,
            "measure_every_sweep_s": with_measure,
            "measurement_overhead_percent": 100 * (with_measure / base - 1),
        }
        # Snapshots every 100 sweeps against the same run without them (its final frame in
        # the same packing), as bytes and bit-packed.
        for packing, frame in [("bytes", "64 MiB"), ("bits", "8 MiB")]:
            plain = glob.glob(os.path.join(logs, f"e2e_{packing}_nosnap_*.txt"))
            snap = glob.glob(os.path.join(logs, f"e2e_{packing}_snap_*.txt"))
            if plain and snap:
                a = min(run_seconds(p) for p in plain)
                b = min(run_seconds(p) for p in snap)
                _, sweeps, frames = run_line(snap[0])
                _, _, plain_frames = run_line(plain[0])
                out["end_to_end_8192"][f"snapshots_{packing}"] = {
                    "what": f"{sweeps} sweeps, a snapshot every 100 ({frames} frames of {frame}) "
                            f"against {plain_frames} frames, output.snapshot_packing = " + packing,
                    "no_snapshots_s": a,
                    "snapshot_every_100_s": b,
                    "snapshot_overhead_percent": 100 * (b / a - 1),
                }
        disk = {}
        for path in sorted(glob.glob(os.path.join(logs, "dd_*.txt"))):
            with open(path) as f:
                disk[os.path.basename(path)[3:-4]] = f.read().strip()
        if disk:
            out["end_to_end_8192"]["disk_write_rate_dd"] = disk
    target = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results",
        re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") + ".json")
    with open(target, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote", target)


if __name__ == "__main__":
    main()
