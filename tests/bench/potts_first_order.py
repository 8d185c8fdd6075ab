#!/usr/bin/env python3
"""The 2D 10-state Potts model's first-order transition from multicanonical runs (issue 21):
runs `sim inputs/potts10_muca.toml` at several L, analyses each with `analysis multicanonical
--first-order`, and extrapolates the equal-height peak energies, the transition beta and the
interface tension to L -> infinity against the exact values.

  python3 tests/bench/potts_first_order.py OUTDIR --sim SIM [--sizes 16,24,32,48,64]
      [--walkers 16384] [--measurements 1000] [--measure-every 20] [--thermalization 2000]
      [--max-sweeps N] [--budget SECONDS] [--backend cuda] [--fit-only]
      [--walltime HH:MM:SS] [--resume] [--refine-iterations N --refine-sweeps S]

Each size L writes OUTDIR/potts10_L<L>.{h5,log,json,txt}; the window of sampled energies per
site narrows with L (the peaks do): [-1.9, -0.7] up to L = 32, [-1.85, -0.8] above. With
--fit-only the runs are skipped and the JSON files already in OUTDIR are fitted. With --walltime
each run stops with a checkpoint before that time (a size too long for one job); the same
command with --resume continues it there (another job, the checkpoint carried along), and the
size is analysed once its run ends.

Finite-size behaviour: asymptotically (L much larger than the disordered phase's correlation
length, about 10.6 for q = 10) the equal-height peak energies and beta approach their limits as
1/V up to exponentially small terms (Borgs-Kotecky), the interface tension
ln(P_max/P_min)/(2L) as 1/L. At the sizes a short GPU job reaches (L <= 64) the lattice is
only a few correlation lengths wide, so both forms are fitted, quantity = limit + c / L^p with
p = 1 and 2, and the chi^2 says which describes the data; with four sizes or more, also with p
fitted (scipy's curve_fit). The fits are weighted least squares
with the jackknife errors of each L, over the sizes >= --fit-from (default: every size but
the smallest); the error of an extrapolation is the fit's, scaled by sqrt(chi^2/dof) when that
exceeds 1. Writes OUTDIR/first_order.{json,txt}.

Exact (Baxter 1973; Borgs and Janke 1992): beta_t = ln(1 + sqrt 10), e_ord = -1.6642525,
e_dis = -0.9682031 (latent heat 0.6960494), interface tension sigma_od = 0.0473505
(2 sigma_od = 0.094701).
"""

import argparse
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import time

import numpy as np

EXACT = {"beta": math.log(1 + math.sqrt(10)), "e_ordered": -1.6642525,
         "e_disordered": -0.9682031, "latent_heat": 0.6960494,
         "interface_tension": 0.0473505}
FITS = ("beta", "e_ordered", "e_disordered", "latent_heat", "interface_tension")
REPO = pathlib.Path(__file__).resolve().parents[2]


def window(size):
    return "[-1.9, -0.7]" if size <= 32 else "[-1.85, -0.8]"


def run_size(args, size):
    base = os.path.join(args.outdir, f"potts10_L{size}")
    command = [args.sim, str(REPO / "inputs" / "potts10_muca.toml"), "--backend", args.backend,
               "--set", f"lattice.dims=[{size},{size}]",
               "--set", f"multicanonical.walkers={args.walkers}",
               "--set", f"multicanonical.window={window(size)}",
               "--set", f"multicanonical.max_sweeps={args.max_sweeps}",
               "--set", f"run.thermalization={args.thermalization}",
               "--set", f"run.measurements={args.measurements}",
               "--set", f"run.measure_every={args.measure_every}",
               "-o", base + ".h5"]
    if args.refine_iterations > 0:
        command += ["--set", f"multicanonical.refine_iterations={args.refine_iterations}",
                    "--set", f"multicanonical.refine_sweeps={args.refine_sweeps}"]
    if args.walltime:
        command += ["--set", f'run.walltime="{args.walltime}"']
    resume = args.resume and os.path.exists(base + ".h5.checkpoint")
    command += ["--resume"] if resume else ["--force"]
    start = time.time()
    with open(base + ".log", "a" if resume else "w") as log:
        code = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT,
                               timeout=args.budget)
    print(f"L = {size}: sim exit {code} after {time.time() - start:.0f} s", flush=True)
    if code == 75:  # stopped by run.walltime with a checkpoint
        print(f"L = {size}: stopped with {base}.h5.checkpoint; continue with --resume",
              flush=True)
        return
    if code != 0:
        return
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with open(base + ".txt", "w") as out:
        code = subprocess.call([sys.executable, "-m", "analysis", "multicanonical", base + ".h5",
                                "--first-order", f"--json={base}.json"], stdout=out,
                               stderr=subprocess.STDOUT, env=env, timeout=args.budget)
    print(f"L = {size}: analysis exit {code}", flush=True)
    if not args.keep_files:
        os.remove(base + ".h5")  # 130 MB of time series per size
        if os.path.exists(base + ".h5.checkpoint"):
            os.remove(base + ".h5.checkpoint")


def weighted_fit(x, y, error):
    """y = a + b x by weighted least squares: (a, its error, b, chi^2, dof); the error is
    scaled by sqrt(chi^2/dof) when that exceeds 1."""
    w = 1.0 / np.asarray(error) ** 2
    design = np.vstack([np.ones_like(x), x]).T
    cov = np.linalg.inv(design.T @ (design * w[:, None]))
    a, b = cov @ (design.T @ (w * y))
    chi2 = float(np.sum(w * (y - a - b * x) ** 2))
    dof = len(x) - 2
    scale = math.sqrt(chi2 / dof) if dof > 0 and chi2 > dof else 1.0
    return float(a), float(math.sqrt(cov[0, 0]) * scale), float(b), chi2, dof


def power_fit(size, y, error):
    """y = a + c size^-p with p free, weighted: (a, its error, p, its error, chi^2, dof), errors
    from the covariance scaled by sqrt(chi^2/dof) when that exceeds 1; None if it fails."""
    from scipy.optimize import curve_fit
    model = lambda x, a, c, p: a + c * x ** (-p)
    try:
        popt, cov = curve_fit(model, size, y, p0=[y[-1], (y[0] - y[-1]) * size[0], 1.0],
                              sigma=error, absolute_sigma=True, maxfev=20000)
    except RuntimeError:
        return None
    chi2 = float(np.sum(((y - model(size, *popt)) / error) ** 2))
    dof = len(size) - 3
    scale = math.sqrt(chi2 / dof) if dof > 0 and chi2 > dof else 1.0
    return (float(popt[0]), float(math.sqrt(cov[0, 0])) * scale, float(popt[2]),
            float(math.sqrt(cov[2, 2])) * scale, chi2, dof)


def fit(outdir, fit_from):
    rows = []
    for path in sorted(pathlib.Path(outdir).glob("potts10_L*.json")):
        size = int(re.search(r"L(\d+)", path.name).group(1))
        t = json.loads(path.read_text())["first_order"]
        if t is not None and "beta_error" in t:
            rows.append((size, t))
    rows.sort(key=lambda r: r[0])
    lines = ["2D Potts q = 10, equal-height P(E) per L (jackknife errors over walker blocks):",
             "   L  " + "  ".join(f"{k:>22s}" for k in FITS)]
    for size, t in rows:
        lines.append(f"{size:4d}  " + "  ".join(
            f"{t[k]:12.6f} +- {t[k + '_error']:7.1e}" for k in FITS))
    result = {"sizes": [s for s, _ in rows], "per_size": {s: t for s, t in rows}, "fits": {}}
    used = [(s, t) for s, t in rows if s >= fit_from]
    if len(used) >= 3:
        lines.append(f"fits over L >= {fit_from}: quantity = limit + c / L^p")
        for k, p in ((k, p) for k in FITS for p in (1, 2)):
            ok = [(s, t) for s, t in used if t[k + "_error"] > 0]  # 0: a peak at the window's edge
            if len(ok) < 3:
                continue
            x = np.array([1.0 / s ** p for s, _ in ok])
            y = np.array([t[k] for _, t in ok])
            e = np.array([t[k + "_error"] for _, t in ok])
            a, da, b, chi2, dof = weighted_fit(x, y, e)
            pull = (a - EXACT[k]) / da
            result["fits"][f"{k} 1/L^{p}"] = {"power": p, "limit": a, "error": da, "slope": b, "chi2": chi2,
                                 "dof": dof, "exact": EXACT[k], "pull": pull}
            lines.append(f"  {k:18s} p = {p}: {a:.6f} +- {da:.6f} (chi2/dof {chi2:.1f}/{dof}),"
                         f" exact {EXACT[k]:.7f}: {pull:+.1f} sigma")
    if len(used) >= 4:
        lines.append(f"free exponent over L >= {fit_from}: quantity = limit + c / L^p, p fitted")
        for k in FITS:
            ok = [(s, t) for s, t in used if t[k + "_error"] > 0]
            if len(ok) < 4:
                continue
            fitted = power_fit(np.array([float(s) for s, _ in ok]), np.array([t[k] for _, t in ok]),
                               np.array([t[k + "_error"] for _, t in ok]))
            if fitted is None:
                continue
            a, da, power, dpower, chi2, dof = fitted
            pull = (a - EXACT[k]) / da
            result["fits"][f"{k} free power"] = {"limit": a, "error": da, "power": power,
                                                 "power_error": dpower, "chi2": chi2, "dof": dof,
                                                 "exact": EXACT[k], "pull": pull}
            lines.append(f"  {k:18s} p = {power:.2f} +- {dpower:.2f}: {a:.6f} +- {da:.6f} "
                         f"(chi2/dof {chi2:.1f}/{dof}), exact {EXACT[k]:.7f}: {pull:+.1f} sigma")
    text = "\n".join(lines)
    print(text)
    (pathlib.Path(outdir) / "first_order.txt").write_text(text + "\n")
    (pathlib.Path(outdir) / "first_order.json").write_text(json.dumps(result, indent=2) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("outdir")
    p.add_argument("--sim", default=str(REPO / "build" / "sim"))
    p.add_argument("--sizes", default="16,24,32,48,64")
    p.add_argument("--walkers", type=int, default=16384)
    p.add_argument("--measurements", type=int, default=1000)
    p.add_argument("--measure-every", type=int, default=20)
    p.add_argument("--thermalization", type=int, default=2000)
    p.add_argument("--max-sweeps", type=int, default=200000)
    p.add_argument("--budget", type=float, default=600, help="seconds per sim call at most")
    p.add_argument("--backend", default="cuda")
    p.add_argument("--refine-iterations", type=int, default=0,
                   help="multicanonical.refine_iterations (0: the Wang-Landau weights alone)")
    p.add_argument("--refine-sweeps", type=int, default=10000,
                   help="multicanonical.refine_sweeps")
    p.add_argument("--fit-from", type=int, default=None)
    p.add_argument("--fit-only", action="store_true")
    p.add_argument("--keep-files", action="store_true", help="keep the .h5 files")
    p.add_argument("--walltime", default="",
                   help="[D-]HH:MM:SS: each sim run stops before it with a checkpoint (exit 75)")
    p.add_argument("--resume", action="store_true",
                   help="continue the sizes whose checkpoint OUTDIR holds (from --walltime)")
    args = p.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    if not args.fit_only:
        for size in sizes:
            try:
                run_size(args, size)
            except subprocess.TimeoutExpired:
                print(f"L = {size}: over --budget {args.budget} s", flush=True)
    fit(args.outdir, args.fit_from if args.fit_from is not None else sorted(sizes)[min(1, len(sizes) - 1)])


if __name__ == "__main__":
    main()
