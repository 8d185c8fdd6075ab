#!/usr/bin/env python3
"""Peak host memory per rank of a decomposed run (issue 22), from sim's own report ("sim: peak
host memory per rank X MiB (largest of N; smallest Y MiB)"), on 1, 2 and 4 CPU ranks of one
lattice, for runs that add one kind of step each to the final snapshot every run takes:

  snapshot     the final snapshot only (and the measurements)
  checkpoint   + a checkpoint every sweep
  spectral     + the structure factor at every measurement
  spectral_checkpoint  + the structure factor and a checkpoint every sweep

A benchmark program, not a test: the figures depend on the machine and its libraries.

Usage: memory_per_rank.py SIM MPIRUN [--dims 256,256,256] [--ranks 1,2,4]
       [--steps snapshot,checkpoint,spectral,spectral_checkpoint] [--json FILE]"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
CHECKPOINT, SPECTRAL = "checkpoint_every = 1\n", "[measure]\nstructure_factor = true\n"
STEPS = {"snapshot": ("", ""), "checkpoint": (CHECKPOINT, ""), "spectral": ("", SPECTRAL),
         "spectral_checkpoint": (CHECKPOINT, SPECTRAL)}  # ([run] keys, further sections)
REPORT = re.compile(r"peak host memory(?: per rank)? ([0-9.]+) MiB"
                    r"(?: \(largest of (\d+); smallest ([0-9.]+) MiB\))?")


def input_text(dims, step):
    run_keys, rest = STEPS[step]
    return f"""[lattice]
dims = [{dims}]
[model]
kind = "phi4"
kappa = 0.18
lambda = 1.1
precision = "double"
[run]
thermalization = 1
measurements = 2
measure_every = 1
seed = 7
backend = "cpu"
{run_keys}{rest}"""


def peak(sim, mpirun, ranks, path, out):
    command = [sim, path, "-o", out, "--force"]
    if ranks > 1:
        command = [mpirun, "-n", str(ranks)] + command
    r = subprocess.run(command, env=ENV, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({r.returncode}):\n{r.stderr}")
    m = REPORT.search(r.stderr)
    if not m:
        sys.exit(f"no memory report in:\n{r.stderr}")
    largest = float(m.group(1))
    return {"largest_mib": largest,
            "smallest_mib": float(m.group(3)) if m.group(3) else largest}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sim")
    p.add_argument("mpirun")
    p.add_argument("--dims", default="256,256,256")
    p.add_argument("--ranks", default="1,2,4")
    p.add_argument("--steps", default=",".join(STEPS))
    p.add_argument("--json")
    args = p.parse_args()
    dims = args.dims.replace(",", ", ")
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for step in args.steps.split(","):
            path = os.path.join(work, f"{step}.toml")
            with open(path, "w") as f:
                f.write(input_text(dims, step))
            for ranks in map(int, args.ranks.split(",")):
                row = {"step": step, "ranks": ranks,
                       **peak(args.sim, args.mpirun, ranks, path, os.path.join(work, "out.h5"))}
                print(f"{step:19s} {ranks} rank(s): largest {row['largest_mib']:.0f} MiB, "
                      f"smallest {row['smallest_mib']:.0f} MiB", flush=True)
                rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"lattice": [int(n) for n in args.dims.split(",")],
                       "model": "phi4 double, Metropolis", "backend": "cpu",
                       "omp_threads_per_rank": 1, "rows": rows}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
