#!/usr/bin/env python3
"""Dynamic critical behaviour of the Ising model's update algorithms (issue 19): runs sim at
beta_c for a list of lattice sizes per algorithm (Swendsen-Wang, Wolff, Metropolis), times each
run, then `python3 -m analysis dynamics` fits tau_int = A L^z per algorithm and compares the
independent samples per second, extrapolated to a large lattice, with Metropolis.

  python3 tests/bench/cluster_dynamics.py OUTDIR --sim SIM [--backend cuda|cpu|auto]
      [--dims 2|3] [--algorithms swendsen_wang,wolff,metropolis]
      [--sizes [ALGORITHM=]L,L,...]... [--replicas [ALGORITHM=]R]... [--sweeps [ALGORITHM=]N]...
      [--taus-per-run [ALGORITHM=]K]... [--thermalization-taus 20] [--measure-every auto|N]
      [--wolff-clusters 1] [--budget 270] [--threads N] [--seed 2026]
      [--extrapolate L] [--reference metropolis] [--dry-run]

Model: Ising, h = 0, hot start (Wolff: cold, since its small clusters relax a random
configuration slowly), beta_c = ln(1 + sqrt 2)/2 in 2D, 0.22165455 in 3D (--dims 3).
Each run is one file OUTDIR/<algorithm>_<d>d_L<L>.h5 (an existing one is overwritten). Its
length is sized from a generous guess of its slowest tau_int (GUESSES below, in sweeps = passes
of the update sequence): thermalization --thermalization-taus (20) guesses, then
--taus-per-run guesses of measured sweeps (cluster moves 2000, Metropolis 300; at least 2000
sweeps), or --sweeps N measured sweeps. Measurements every sweep, except for Metropolis
(--measure-every auto): every max(1, guess(tau_int(e)) / 10) sweeps, which still resolves the
energy's tau_int and keeps the files small. Replicas (--replicas): at most 16 for cluster moves
and 64 for Metropolis, fewer (down to 4) when R V would pass 2^22 sites. Local moves run the
multi-spin-coded kernel where the lattice allows it (last extent a multiple of 64; every replica
in one launch), the byte kernel's chain bit for bit.

Default sizes: 2D swendsen_wang and wolff 16 .. 1024, metropolis 16, 32, 64, 128; 3D
swendsen_wang and wolff 8 .. 128, metropolis 8 .. 64. Metropolis stops at L = 128 in 2D because
its tau_int grows as L^2.17: measured on an H100 (tests/bench/README.md, issue 17)
tau_int(m^2) = 44 and 186 sweeps at L = 32 and 64, about 0.024 L^2.17, so L = 128 needs about
0.4 M sweeps and L = 256 about 2 M (fits a 5-minute budget, by the estimate; add it with
--sizes metropolis=16,32,64,128,256 on a quiet GPU). An amplitude of 0.3 (sometimes quoted)
would be 12 times the measured one: the guesses here use 0.03.

Time budget (--budget, seconds of sim runs, default 270 = a 5-minute call less the analysis):
runs go size by size (all algorithms at the smallest size, then the next ...); a run is skipped
when its predicted time (its site updates at the rate of the algorithm's previous run, plus
that run's start-up time) exceeds what is left, and so are the algorithm's larger sizes. A GPU's
rate grows with the lattice, so this is cautious. A run still going when the budget is spent
(plus 30 s) is stopped and left out.

Timing: the wall clock of each sim process and sim's own line "sim: wrote F: S sweeps of V
sites x R replica(s), ... in T s (X site updates/ns, backend)" (stderr), from which the rate is
computed again at full precision (S V R passes / T; sim prints it with 3 decimals).
Writes OUTDIR/rates_<d>d.json (schema lattica-rates/1: per file the rates, seconds and run
settings; runs of earlier calls into the same OUTDIR are kept, so one algorithm per call
builds up a full set), then runs the analysis on every file listed there and writes
OUTDIR/dynamics_<d>d.txt (the table, also printed), .json and .png.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BETA_C = {2: 0.5 * math.log(1.0 + math.sqrt(2.0)), 3: 0.22165455}
ALGORITHMS = ("swendsen_wang", "wolff", "metropolis")
LOCAL = ("metropolis", "heatbath")

# Generous guesses of the slowest tau_int (sweeps) at beta_c: (amplitude, exponent) of A L^z.
# 2D Metropolis: measured about 0.024 L^2.17 for m^2 (L = 32, 64); its energy's tau_int is about
# a third. Cluster moves: a few sweeps, growing slowly; Wolff with one cluster per pass flips
# a fraction ~ L^(gamma/nu - d) of the lattice per pass (2D: L^-0.25, 3D: L^-1.04).
GUESSES = {
    (2, "metropolis"): (0.03, 2.17), (2, "heatbath"): (0.08, 2.17),
    (2, "swendsen_wang"): (2.0, 0.25), (2, "wolff"): (1.0, 0.5),
    (3, "metropolis"): (0.15, 2.03), (3, "heatbath"): (0.4, 2.03),
    (3, "swendsen_wang"): (1.5, 0.55), (3, "wolff"): (2.0, 1.0),
}
DEFAULT_SIZES = {
    (2, "swendsen_wang"): [16, 32, 64, 128, 256, 512, 1024],
    (2, "wolff"): [16, 32, 64, 128, 256, 512, 1024],
    (2, "metropolis"): [16, 32, 64, 128],
    (3, "swendsen_wang"): [8, 16, 32, 64, 128],
    (3, "wolff"): [8, 16, 32, 64, 128],
    (3, "metropolis"): [8, 16, 32, 64],
}
SITES_FOR_REPLICAS = 1 << 22
GRACE = 30.0  # seconds a run may go past the budget before it is stopped

FINISHED = re.compile(r"sim: wrote (?P<file>.+?): (?P<sweeps>\d+) sweeps of (?P<sites>\d+) sites "
                      r"x (?P<replicas>\d+) replica\(s\), (?P<measurements>\d+) measurements, "
                      r"\d+ snapshots in (?P<seconds>[0-9.eE+-]+) s \((?P<rate>[0-9.eE+-]+) "
                      r"site updates/ns, (?P<backend>[^)]+)\)")


def guess_tau(d, algorithm, size, clusters=1):
    """The generous guess of the slowest tau_int in sweeps (a Wolff pass of N clusters moves
    N times as much, so its guess is divided by N, down to 1)."""
    amplitude, exponent = GUESSES.get((d, algorithm), GUESSES[(d, "metropolis")])
    tau = amplitude * size ** exponent
    if algorithm == "wolff":
        tau = max(1.0, tau / clusters)
    return max(1.0, tau)


def per_algorithm(values, name, default, convert=int):
    """An option given as [ALGORITHM=]VALUE (repeatable): the value for one algorithm (a bare
    VALUE applies to all, ALGORITHM=VALUE overrides it), or default."""
    found = default
    for text in values or []:
        key, sep, value = text.partition("=")
        if not sep:
            found = convert(key)
    for text in values or []:
        key, sep, value = text.partition("=")
        if sep and key.strip() == name:
            found = convert(value)
    return found


def sizes_list(text):
    return [int(x) for x in text.split(",") if x.strip()]


def plan_run(args, algorithm, size):
    """The settings of one run: a dict with the input's numbers and the site updates."""
    d = args.dims
    clusters = args.wolff_clusters if algorithm == "wolff" else 1
    tau = guess_tau(d, algorithm, size, clusters)
    local = algorithm in LOCAL
    volume = size ** d
    cap = 64 if local else 16
    replicas = per_algorithm(args.replicas, algorithm, None)
    if replicas is None:
        replicas = max(min(4, cap), min(cap, SITES_FOR_REPLICAS // volume))
    if args.measure_every == "auto":
        every = max(1, int(tau / 3.0 / 10.0)) if local else 1
    else:
        every = int(args.measure_every)
    taus = per_algorithm(args.taus_per_run, algorithm, 300.0 if local else 2000.0, float)
    sweeps = per_algorithm(args.sweeps, algorithm, None)
    if sweeps is None:
        sweeps = max(2000, int(math.ceil(taus * tau)))
    measurements = max(2, sweeps // every)
    thermalization = per_algorithm(args.thermalization, algorithm, None)
    if thermalization is None:
        thermalization = max(100, int(math.ceil(args.thermalization_taus * tau)))
    total = thermalization + measurements * every
    name = f"{algorithm}_{d}d_L{size}"
    return {"algorithm": algorithm, "L": size, "d": d, "volume": volume, "replicas": replicas,
            "wolff_clusters": clusters if algorithm == "wolff" else None,
            "tau_guess": tau, "thermalization": thermalization, "measurements": measurements,
            "measure_every": every, "sweeps": total,
            "site_updates": total * volume * replicas,  # one pass per sweep
            "name": name, "file": name + ".h5", "toml": name + ".toml"}


def input_text(args, plan, seed):
    d, size = plan["d"], plan["L"]
    update = f'sequence = ["{plan["algorithm"]}"]\n'
    if plan["algorithm"] == "wolff":
        update += f"wolff_clusters = {plan['wolff_clusters']}\n"
    threads = f"threads = {args.threads}\n" if args.threads is not None else ""
    return (f"# {plan['algorithm']} at beta_c, written by tests/bench/cluster_dynamics.py\n"
            f"[lattice]\ndims = [{', '.join([str(size)] * d)}]\n"
            f"[model]\nkind = \"ising\"\nbeta = {BETA_C[d]!r}\nh = 0.0\n"
            f"[update]\n{update}"
            f"[run]\nthermalization = {plan['thermalization']}\n"
            f"measurements = {plan['measurements']}\nmeasure_every = {plan['measure_every']}\n"
            f"replicas = {plan['replicas']}\nseed = {seed}\nbackend = \"{args.backend}\"\n"
            f"start = \"{'cold' if plan['algorithm'] == 'wolff' else 'hot'}\"\n{threads}"
            f"[output]\npath = \"{plan['file']}\"\nsnapshot_every = 0\n")


def run_sim(args, plan, seed, timeout):
    """Writes the input, runs sim in OUTDIR, times it; the record for the rates file, or None
    when sim failed or was stopped."""
    with open(os.path.join(args.outdir, plan["toml"]), "w", encoding="utf-8") as f:
        f.write(input_text(args, plan, seed))
    env = dict(os.environ)
    env.setdefault("OMP_WAIT_POLICY", "passive")
    started = time.monotonic()
    try:
        result = subprocess.run([args.sim, plan["toml"], "--force"], cwd=args.outdir, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"  {plan['name']}: stopped after {timeout:.0f} s (past the budget); left out",
              flush=True)
        return None
    wall = time.monotonic() - started
    text = result.stdout + result.stderr
    if result.returncode != 0:
        print(f"  {plan['name']}: sim failed (exit {result.returncode}):\n{text}", flush=True)
        return None
    match = FINISHED.search(text)
    record = dict(plan, seed=seed, wall_seconds=wall, backend=args.backend)
    record["file"] = plan["file"]
    if match is None:
        print(f"  {plan['name']}: no 'sim: wrote' line in sim's output; the rate is from the "
              f"wall clock", flush=True)
        record.update(sim_seconds=None, site_updates_per_ns_printed=None,
                      site_updates_per_ns=plan["site_updates"] / (wall * 1e9))
    else:
        seconds = float(match["seconds"])
        done = int(match["sweeps"]) * int(match["sites"]) * int(match["replicas"])
        record.update(sim_seconds=seconds, sweeps=int(match["sweeps"]),
                      site_updates=done, device_backend=match["backend"],
                      site_updates_per_ns_printed=float(match["rate"]),
                      site_updates_per_ns=(done / (seconds * 1e9) if seconds > 0
                                           else float(match["rate"])))
    record["wall_site_updates_per_ns"] = record["site_updates"] / (wall * 1e9)
    return record


def load_rates(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    return list(document.get("runs", []))


def write_rates(path, runs, args):
    document = {"schema": "lattica-rates/1",
                "what": "site updates per ns of each run (sim's own figure, recomputed from "
                        "its sweeps x sites x replicas / seconds; wall_site_updates_per_ns "
                        "from the wall clock of the process), written by "
                        "tests/bench/cluster_dynamics.py",
                "runs": sorted(runs, key=lambda r: (r["algorithm"], r["L"]))}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=1)
        f.write("\n")


def analyse(args, runs):
    """python3 -m analysis dynamics on the files of `runs`; writes the table, JSON and PNG."""
    files = [r["file"] for r in runs if os.path.exists(os.path.join(args.outdir, r["file"]))]
    if not files:
        print("no runs to analyse")
        return 1
    stem = f"dynamics_{args.dims}d"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (REPO, os.environ.get("PYTHONPATH")) if p))
    command = [sys.executable, "-m", "analysis", "dynamics", *files,
               "--rates", f"rates_{args.dims}d.json", "--extrapolate", str(args.extrapolate),
               "--reference", args.reference, f"--json={stem}.json", "--plot", f"{stem}.png"]
    result = subprocess.run(command, cwd=args.outdir, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    with open(os.path.join(args.outdir, f"{stem}.txt"), "w", encoding="utf-8") as f:
        f.write(result.stdout)
    print(result.stdout, end="")
    if result.stderr:
        print(result.stderr, end="", file=sys.stderr)
    return result.returncode


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("outdir")
    parser.add_argument("--sim", required=True, help="the sim executable")
    parser.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--dims", type=int, default=2, choices=(2, 3))
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS),
                        help="comma-separated passes, one run sequence each (default "
                             "swendsen_wang,wolff,metropolis; heatbath works too)")
    parser.add_argument("--sizes", action="append", metavar="[ALGORITHM=]L,L,...")
    parser.add_argument("--replicas", action="append", metavar="[ALGORITHM=]R")
    parser.add_argument("--sweeps", action="append", metavar="[ALGORITHM=]N",
                        help="measured sweeps per run (default: --taus-per-run guesses)")
    parser.add_argument("--thermalization", action="append", metavar="[ALGORITHM=]N",
                        help="thermalization sweeps (default: --thermalization-taus guesses)")
    parser.add_argument("--taus-per-run", action="append", metavar="[ALGORITHM=]K")
    parser.add_argument("--thermalization-taus", type=float, default=20.0)
    parser.add_argument("--measure-every", default="auto", metavar="auto|N")
    parser.add_argument("--wolff-clusters", type=int, default=1)
    parser.add_argument("--budget", type=float, default=270.0,
                        help="seconds of sim runs in this call (default 270)")
    parser.add_argument("--threads", type=int, help="run.threads (CPU backend)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--extrapolate", type=int,
                        help="size of the extrapolation (default 4096 in 2D, 512 in 3D)")
    parser.add_argument("--reference", default="metropolis")
    parser.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    args = parser.parse_args(argv)
    if args.measure_every != "auto" and not args.measure_every.isdigit():
        parser.error("--measure-every: auto or a positive integer")
    if args.extrapolate is None:
        args.extrapolate = 4096 if args.dims == 2 else 512
    args.sim = os.path.abspath(args.sim)
    args.outdir = os.path.abspath(args.outdir)
    os.makedirs(args.outdir, exist_ok=True)
    algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    sizes = {a: sorted(set(per_algorithm(args.sizes, a, DEFAULT_SIZES.get(
        (args.dims, a), DEFAULT_SIZES[(args.dims, "metropolis")]), sizes_list)))
        for a in algorithms}
    plans = sorted((plan_run(args, a, size) for a in algorithms for size in sizes[a]),
                   key=lambda p: (p["L"], algorithms.index(p["algorithm"])))

    print(f"{args.dims}D Ising at beta_c = {BETA_C[args.dims]!r}, h = 0, hot start (Wolff cold); "
          f"backend {args.backend}; budget {args.budget:g} s of sim runs")
    print(f"  {'run':<24} {'R':>4} {'tau guess':>10} {'therm.':>9} {'meas.':>9} {'every':>6} "
          f"{'site updates':>13}")
    for p in plans:
        print(f"  {p['name']:<24} {p['replicas']:>4} {p['tau_guess']:>10.3g} "
              f"{p['thermalization']:>9} {p['measurements']:>9} {p['measure_every']:>6} "
              f"{p['site_updates']:>13.3g}")
    if args.dry_run:
        return 0

    rates_path = os.path.join(args.outdir, f"rates_{args.dims}d.json")
    runs = {r["file"]: r for r in load_rates(rates_path)}
    last = {}  # algorithm -> its latest record (for the prediction)
    skipped = set()
    started = time.monotonic()
    for k, p in enumerate(plans):
        left = args.budget - (time.monotonic() - started)
        a = p["algorithm"]
        if a in skipped:
            print(f"  {p['name']}: skipped (a smaller size did not fit the budget)")
            continue
        if a in last:
            previous = last[a]
            overhead = max(0.0, previous["wall_seconds"] - (previous["sim_seconds"] or 0.0))
            predicted = p["site_updates"] / (previous["site_updates_per_ns"] * 1e9) + overhead
            if predicted > left:
                print(f"  {p['name']}: skipped, predicted {predicted:.3g} s > {left:.3g} s left "
                      f"(and the larger sizes of {a})", flush=True)
                skipped.add(a)
                continue
        if left <= 0:
            print(f"  {p['name']}: skipped (budget spent)")
            skipped.add(a)
            continue
        record = run_sim(args, p, args.seed + 1000 * k + p["L"], left + GRACE)
        if record is None:
            skipped.add(a)
            continue
        last[a] = record
        runs[record["file"]] = record
        write_rates(rates_path, list(runs.values()), args)  # after every run
        print(f"  {p['name']}: {record['wall_seconds']:.3g} s wall, sim {record['sim_seconds']}"
              f" s, {record['site_updates_per_ns']:.4g} site updates/ns "
              f"(printed {record['site_updates_per_ns_printed']})", flush=True)
    print(f"sim runs took {time.monotonic() - started:.1f} s\n")
    if not runs:
        return 1
    return analyse(args, list(runs.values()))


if __name__ == "__main__":
    sys.exit(main())
