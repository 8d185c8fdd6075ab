#!/usr/bin/env python3
"""Integrated autocorrelation times of 2D Ising Metropolis (and heat bath) at beta_c for one or
more sim executables, from long runs analysed with the Gamma method (python3 -m analysis
summary): what the dE = 0 acceptance of Metropolis costs in tau_int (README, "Metropolis at
dE = 0").

  python3 tests/bench/metropolis_tau.py OUTDIR NAME=SIM [NAME=SIM ...] [--sizes 32,64,128]
      [--replicas 64] [--sweeps-per-tau 500]

Writes OUTDIR/metropolis_tau.json and prints a table: for each executable and size, tau_int of
Metropolis (and, for the last executable, of the heat bath) for e, |m| and m^2 in sweeps, with
errors. Each run measures every sweep after a
thermalization of 20 000 sweeps (runs are on the GPU when sim finds one)."""
import json
import os
import subprocess
import sys

BETA_C = 0.44068679350977151
# Rough tau_int(|m|) of Metropolis at beta_c, to size the runs: ~0.02 L^2.17 sweeps.
def measurements_for(L, per_tau):
    return int(per_tau * max(10.0, 0.02 * L ** 2.17))

def run(sim, name, L, algorithm, replicas, per_tau, outdir):
    path = os.path.join(outdir, f"tau_{name}_{algorithm}_{L}.h5")
    toml = os.path.join(outdir, f"tau_{name}_{algorithm}_{L}.toml")
    with open(toml, "w") as f:
        f.write(f"""[model]
kind = "ising"
beta = {BETA_C!r}
[lattice]
dims = [{L}, {L}]
[update]
algorithm = "{algorithm}"
[run]
thermalization = 20000
measurements = {measurements_for(L, per_tau)}
replicas = {replicas}
seed = 2026
[output]
path = "{path}"
""")
    subprocess.run([sim, toml, "--force", "-q"], check=True)
    summary = subprocess.run([sys.executable, "-m", "analysis", "summary", path, "--json", "-"],
                             check=True, capture_output=True, text=True)
    os.remove(path)  # large; the summary holds what matters
    obs = json.loads(summary.stdout)["files"][0]["observables"]
    return {q: {"tau_int_sweeps": obs[q]["tau_int_sweeps"],
                "error": obs[q]["tau_int_sweeps_error"], "mean": obs[q]["mean"]}
            for q in ("e", "|m|", "m^2")}

def write_json(outdir, opts, results):
    with open(os.path.join(outdir, "metropolis_tau.json"), "w") as f:
        json.dump({"beta": BETA_C, "replicas": int(opts["--replicas"]),
                   "sweeps_per_tau": float(opts["--sweeps-per-tau"]), "results": results}, f,
                  indent=1)

def main(argv):
    args, opts = [], {"--sizes": "32,64,128", "--replicas": "64", "--sweeps-per-tau": "500"}
    it = iter(argv)
    for a in it:
        if a in opts:
            opts[a] = next(it)
        else:
            args.append(a)
    if len(args) < 2:
        sys.exit(__doc__)
    outdir, sims = args[0], [a.split("=", 1) for a in args[1:]]
    os.makedirs(outdir, exist_ok=True)
    sizes = [int(x) for x in opts["--sizes"].split(",")]
    results = []
    for L in sizes:
        for i, (name, sim) in enumerate(sims):
            # The heat bath of the last executable is the reference the Metropolis rules beat.
            for algorithm in ("metropolis", "heatbath") if i == len(sims) - 1 else ("metropolis",):
                r = run(sim, name, L, algorithm, int(opts["--replicas"]),
                        float(opts["--sweeps-per-tau"]), outdir)
                results.append({"sim": name, "L": L, "algorithm": algorithm, **r})
                write_json(outdir, opts, results)  # after every run: a cut-off run keeps the rest
                print(f"{name:>8} L={L:<4} {algorithm:<10} " + "  ".join(
                    f"{q} {v['tau_int_sweeps']:8.2f} +- {v['error']:.2f}" for q, v in r.items()),
                    flush=True)

if __name__ == "__main__":
    main(sys.argv[1:])
