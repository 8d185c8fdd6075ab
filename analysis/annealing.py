"""Population annealing runs ([annealing]): the per-step table of /annealing and the free
energy with its error.

/annealing has one row per step k of the schedule: beta_k, each population's estimate of
ln Z_k (log_z[k, p]), beta F per site, the population mean and standard deviation of x, |x|
and x^2 of every observable (energy[k] = [<e>, <|e|>, <e^2>], ...), the number of families
and rho_t, the effective population of the step's weights, and (annealing.replica_output)
every replica's observables and family.

Errors. The free energy: P independent populations (annealing.populations, and the
populations of several files of independent seeds together) give P estimates of
beta F = -ln Z / V; the mean is reported with the standard error std / sqrt(P). With P = 1
there is no error bar (NaN). The observables' population means: sigma sqrt(rho_t / R), with
sigma the population's standard deviation and R / rho_t the number of effectively
independent replicas (Wang, Machta and Katzgraber, PRE 92, 063307 (2015)); it neglects the
correlations that equilibration leaves within families beyond rho_t.
"""

import math
from dataclasses import dataclass

import h5py
import numpy as np


@dataclass
class Annealing:
    """A population annealing run's /annealing group (committed rows)."""

    path: str
    replicas: int
    populations: int
    sweeps_per_step: int
    volume: int
    resampling: str
    log_z0: float
    columns: dict  #: name -> array, axis 0 the step


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def read_annealing(path):
    """The /annealing group of a file, or None for a run without it."""
    with h5py.File(path, "r") as f:
        if "annealing" not in f:
            return None
        g = f["annealing"]
        n = int(g.attrs.get("committed_length", g["step"].shape[0]))
        columns = {name: np.asarray(item[:n]) for name, item in g.items()}
        return Annealing(path=path, replicas=int(g.attrs["replicas"]),
                         populations=int(g.attrs["populations"]),
                         sweeps_per_step=int(g.attrs["sweeps_per_step"]),
                         volume=int(g.attrs["volume"]), resampling=_text(g.attrs["resampling"]),
                         log_z0=float(g.attrs["log_z0"]), columns=columns)


OBSERVABLE_MOMENTS = (("e", "energy", 0), ("|m|", "magnetization", 1),
                      ("m^2", "magnetization", 2))


def free_energies(runs):
    """beta F per site at every step from runs of one schedule: [steps, populations of all
    runs]."""
    steps = min(len(r.columns["beta"]) for r in runs)
    betas = [r.columns["beta"][:steps] for r in runs]
    for b in betas[1:]:
        if not np.array_equal(b, betas[0]):
            raise ValueError("the files anneal along different schedules")
    return np.concatenate([-r.columns["log_z"][:steps] / r.volume for r in runs], axis=1)


def step_table(runs):
    """Per step: beta, beta F per site with its error, the observables' population means with
    rho_t-based errors, families, rho_t and the effective population fraction (of the first
    run; the observables averaged over the runs)."""
    f = free_energies(runs)
    steps, samples = f.shape
    first = runs[0]
    rows = []
    for k in range(steps):
        row = {"step": int(first.columns["step"][k]), "beta": float(first.columns["beta"][k]),
               "beta_f": float(f[k].mean()),
               "beta_f_error": float(f[k].std(ddof=1) / math.sqrt(samples))
               if samples > 1 else float("nan"),
               "families": int(first.columns["families"][k]),
               "rho_t": float(first.columns["rho_t"][k]),
               "effective_fraction": float(first.columns["effective_population"][k]
                                           / first.replicas)}
        for label, name, moment in OBSERVABLE_MOMENTS:
            if name not in first.columns:
                continue
            means = [r.columns[name][k, moment] for r in runs]
            errors = [r.columns[name + "_std"][k, moment]
                      * math.sqrt(r.columns["rho_t"][k] / r.replicas) for r in runs]
            row[label] = float(np.mean(means))
            row[label + "_error"] = float(math.sqrt(sum(e * e for e in errors)) / len(runs))
        rows.append(row)
    return rows


def format_table(paths, runs, rows):
    """The per-step table as text."""
    first = runs[0]
    samples = sum(r.populations for r in runs)
    lines = [", ".join(paths) + f": population annealing, {first.replicas} replicas in "
             f"{first.populations} population(s) per file, {first.sweeps_per_step} sweeps per "
             f"step, {first.resampling} resampling; beta F error from {samples} independent "
             f"population(s)",
             f"{'step':>5} {'beta':>9} {'beta F/V':>14} {'error':>9} {'e':>10} {'err':>8} "
             f"{'|m|':>8} {'err':>8} {'m^2':>8} {'err':>8} {'families':>8} {'rho_t':>9} "
             f"{'R_eff/R':>7}"]
    for r in rows:
        lines.append(f"{r['step']:>5} {r['beta']:>9.5f} {r['beta_f']:>14.8f} "
                     f"{r['beta_f_error']:>9.2e} {r.get('e', math.nan):>10.6f} "
                     f"{r.get('e_error', math.nan):>8.1e} {r.get('|m|', math.nan):>8.5f} "
                     f"{r.get('|m|_error', math.nan):>8.1e} {r.get('m^2', math.nan):>8.5f} "
                     f"{r.get('m^2_error', math.nan):>8.1e} {r['families']:>8} "
                     f"{r['rho_t']:>9.3g} {r['effective_fraction']:>7.3f}")
    return "\n".join(lines)


def plot(rows, path):
    """beta F per site, <e> and rho_t against beta, as a PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    beta = [r["beta"] for r in rows]
    figure, axes = plt.subplots(1, 3, figsize=(13, 4))
    axes[0].errorbar(beta, [r["beta_f"] for r in rows],
                     yerr=[0 if math.isnan(r["beta_f_error"]) else r["beta_f_error"]
                           for r in rows], fmt=".-")
    axes[0].set_ylabel("beta F / V")
    axes[1].errorbar(beta, [r.get("e", math.nan) for r in rows],
                     yerr=[r.get("e_error", 0) for r in rows], fmt=".-")
    axes[1].set_ylabel("<e>")
    axes[2].semilogy(beta, [r["rho_t"] for r in rows], ".-")
    axes[2].set_ylabel("rho_t")
    for ax in axes:
        ax.set_xlabel("beta")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
