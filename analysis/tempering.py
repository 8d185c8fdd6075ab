"""Parallel tempering (replica exchange) runs: per-rung summaries, exchange and round-trip
statistics, and reweighting across rungs with MBAR (the multiple-histogram method without
bins).

A tempered file's /observables hold R = rungs x ladders columns in rung order (column
l * rungs + k: ladder l, rung k); /tempering holds the ladder (every rung's couplings), the rung
of every replica slot at each measurement, each measured configuration's log Boltzmann weight
under every rung's couplings (log_weight[n, i, j]), and /tempering/statistics (acceptance per
pair of rungs, round trips, the up-going fraction per rung).
"""

import math
from dataclasses import dataclass, field

import h5py
import numpy as np

from analysis import gamma, lattica_file


@dataclass
class Tempering:
    """A tempered run's /tempering group."""

    rungs: int
    ladders: int
    exchange_every: int
    tempered: list  #: names of the couplings the ladder varies, e.g. ["beta"]
    couplings: dict  #: name -> [rungs] values of every coupling at every rung
    replica_rung: np.ndarray  #: [n, R] rung of each slot at each measurement
    log_weight: np.ndarray  #: [n, R, rungs]
    sweep: np.ndarray  #: [n]
    statistics: dict = field(default_factory=dict)  #: name -> array (/tempering/statistics)


def read_tempering(path):
    """The /tempering group of a file (committed rows), or None for an untempered run."""
    with h5py.File(path, "r") as f:
        if "tempering" not in f:
            return None
        g = f["tempering"]
        n = int(g.attrs.get("committed_length", g["sweep"].shape[0]))
        tempered = lattica_file._plain(g.attrs.get("tempered", ""))
        couplings = {name: np.asarray(g[name][:], dtype=np.float64)
                     for name in ("beta", "kappa", "lambda", "h") if name in g}
        statistics = {name: np.asarray(item[:]) for name, item in g["statistics"].items()} \
            if "statistics" in g else {}
        return Tempering(rungs=int(g.attrs["rungs"]), ladders=int(g.attrs["ladders"]),
                         exchange_every=int(g.attrs["exchange_every"]),
                         tempered=[t for t in str(tempered).split(",") if t],
                         couplings=couplings,
                         # absent where the run wrote rung means (output.observables)
                         replica_rung=np.asarray(g["replica_rung"][:n], dtype=np.int64)
                         if "replica_rung" in g else None,
                         log_weight=np.asarray(g["log_weight"][:n], dtype=np.float64)
                         if "log_weight" in g else None,
                         sweep=np.asarray(g["sweep"][:n], dtype=np.int64),
                         statistics=statistics)


def rung_chains(run, t, name):
    """Observable `name` at each rung as [n, ladders] (the ladders are independent replicas)."""
    chains = run.chains[name]
    ladders = chains.shape[1] // t.rungs  # 1 where the file holds each rung's mean (means)
    return [chains[:, [l * t.rungs + k for l in range(ladders)]] for k in range(t.rungs)]


def automatic_cut(run, t):
    """The thermalisation cut: summary's rule (no drift between the kept halves) applied to
    every rung's ladders, the largest of the rungs' cuts."""
    from analysis import summary
    energy_name, order_name = summary.chain_names(run.model)
    cut = 0
    for e, m in zip(rung_chains(run, t, energy_name), rung_chains(run, t, order_name)):
        k, _, _ = summary.choose_cut([e[:, l] for l in range(e.shape[1])],
                                     [m[:, l] for l in range(m.shape[1])])
        cut = max(cut, k)
    return cut


def rung_summaries(run, t, cut=0):
    """Per rung: its couplings and every observable's mean, Gamma error and tau_int."""
    out = []
    for k in range(t.rungs):
        entry = {"rung": k, "couplings": {c: float(v[k]) for c, v in t.couplings.items()},
                 "observables": {}}
        for name in run.chains:
            series = rung_chains(run, t, name)[k][cut:]
            if len(series) < 2:
                continue
            r = gamma.analyse(series)
            entry["observables"][name] = {"value": r.value, "error": r.error,
                                          "tau_int": r.tau_int}
        out.append(entry)
    return out


def exchange_statistics(t):
    """Acceptance per pair, round trips (count, mean length in sweeps with its standard error,
    rate per ladder per sweep) and the up-going fraction per rung."""
    s = t.statistics
    trips = np.asarray(s.get("round_trip_sweeps", []), dtype=np.float64)
    sweeps = float(t.sweep[-1]) if len(t.sweep) else 0.0
    mean = float(trips.mean()) if len(trips) else math.nan
    error = float(trips.std(ddof=1) / math.sqrt(len(trips))) if len(trips) > 1 else math.nan
    return {"pair_acceptance": [float(a) for a in s.get("pair_acceptance", [])],
            "pair_attempts": [int(a) for a in s.get("pair_attempts", [])],
            "round_trips": int(len(trips)),
            "round_trip_mean_sweeps": mean, "round_trip_mean_error": error,
            "round_trips_per_ladder_per_sweep":
                len(trips) / (t.ladders * sweeps) if sweeps > 0 else math.nan,
            "up_fraction": [float(f) for f in s.get("up_fraction", [])],
            "feedback_ladder": feedback_ladder(t.couplings[t.tempered[0]],
                                               s.get("up_fraction", []))
            if len(t.tempered) == 1 and len(s.get("up_fraction", [])) == t.rungs else None}


def feedback_ladder(couplings, up_fraction, floor=1e-3):
    """One step of the feedback optimisation of Katzgraber, Trebst, Huse and Troyer (J. Stat.
    Mech. (2006) P03018): the ladder with the same ends whose rungs are spaced by the density
    eta(c) ~ sqrt(|df/dc| / dc) of the measured up-going fraction f(k), which places rungs
    where f changes fastest (the bottlenecks) and flattens the round-trip current. A rung
    never visited by a labelled configuration (f < 0) leaves the ladder as it is. sim applies
    the same rule during thermalization (tempering.feedback; feedback_ladder in
    sim/engine/tempering_ladder.hpp); tests hold both to one hand-computed step."""
    c = np.asarray(couplings, dtype=np.float64)
    f = np.asarray(up_fraction, dtype=np.float64)
    if len(c) < 3 or np.any(f < 0):
        return [float(x) for x in c]
    dc = np.diff(c)
    slope = np.maximum(np.abs(np.diff(f)), floor) / np.abs(dc)
    eta = np.sqrt(slope / np.abs(dc))  # constant on each interval
    mass = np.concatenate(([0.0], np.cumsum(eta * np.abs(dc))))
    goals = mass[-1] * np.arange(len(c)) / (len(c) - 1)
    new = np.interp(goals, mass, c)  # the cumulative density is linear on each interval
    new[0], new[-1] = c[0], c[-1]
    return [float(x) for x in new]


def _logsumexp(a, axis=None):
    top = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(top, axis=axis) + np.log(np.sum(np.exp(a - top), axis=axis))


def mbar_free_energies(log_weight, counts, initial=None, multiplicity=None, tolerance=1e-10,
                       iterations=200):
    """Dimensionless free energies f_k = -ln Z_k (f_0 = 0) of the rungs by MBAR (Shirts and
    Chodera 2008): the solution of f_i = -ln sum_n exp(lw_i(x_n)) / sum_k N_k
    exp(f_k + lw_k(x_n)), found as the minimum of the convex F(f) = sum_n ln sum_k N_k
    exp(f_k + lw_k(x_n)) - sum_k N_k f_k by damped Newton steps. log_weight: [N, K] every
    sample's log weight at every rung; counts: [K] samples drawn at each rung; initial: a
    starting guess (e.g. the solution for most of the same samples); multiplicity: [N] how
    many samples each row stands for (discrete models repeat their log weights), default 1."""
    counts = np.asarray(counts, dtype=np.float64)
    m = np.ones(len(log_weight)) if multiplicity is None else np.asarray(multiplicity, float)
    log_counts = np.log(counts)
    f = np.zeros(log_weight.shape[1]) if initial is None else np.array(initial, dtype=np.float64)

    def objective(f):
        a = log_counts + f + log_weight
        d = _logsumexp(a, axis=1)
        return float(m @ d - counts @ f), np.exp(a - d[:, None])  # p[n, k], rows sum to 1

    value, p = objective(f)
    for _ in range(iterations):
        occupation = m @ p
        gradient = occupation - counts
        hessian = np.diag(occupation) - p.T @ (m[:, None] * p)
        step = np.zeros_like(f)
        # f_0 stays fixed; least squares where rungs barely overlap (a flat direction).
        step[1:] = np.linalg.lstsq(hessian[1:, 1:], -gradient[1:], rcond=None)[0]
        scale = 1.0
        while True:
            trial_value, trial_p = objective(f + scale * step)
            if trial_value <= value + 1e-13 * abs(value) or scale < 1e-10:
                break
            scale /= 2
        f = f + scale * step
        value, p = trial_value, trial_p
        if np.max(np.abs(scale * step)) < tolerance:
            break
    return f - f[0]


def _samples(t, cut):
    """The kept samples' log weights as [N, rungs] (measurement-major, then rung-ordered
    column, as run.chains[name][cut:].reshape(-1)) and the measurements kept."""
    w = t.log_weight[cut:]
    n, columns, rungs = w.shape
    return w.reshape(n * columns, rungs), n


def reweight(run, t, targets, cut=0, blocks=20):
    """MBAR estimates of every observable at target values of the tempered coupling (one
    coupling varied; every model's log weight is affine in each of its couplings, so the
    target's is the affine continuation of the ladder's ends), with jackknife errors over
    blocks of measurements, and the rungs' free energies."""
    if t.log_weight is None:
        raise ValueError("the run wrote rung means (output.observables = \"means\"), without "
                         "every configuration's weights under every rung that MBAR needs; run "
                         "with output.observables = \"replicas\" to reweight")
    if len(t.tempered) != 1:
        raise ValueError("reweighting needs a ladder of one coupling; this one varies "
                         + ", ".join(t.tempered))
    name = t.tempered[0]
    ladder = t.couplings[name]
    lw, n = _samples(t, cut)
    counts = np.full(t.rungs, n * t.ladders)
    # A start near the solution: free-energy perturbation from each rung to the next.
    rung_of_sample = np.tile(np.arange(t.rungs * t.ladders) % t.rungs, n)
    start = np.zeros(t.rungs)
    for k in range(t.rungs - 1):
        own = lw[rung_of_sample == k]
        start[k + 1] = start[k] - (_logsumexp(own[:, k + 1] - own[:, k]) - math.log(len(own)))

    def target_weights(x):
        s = (x - ladder[0]) / (ladder[-1] - ladder[0])
        return lw[:, 0] + s * (lw[:, -1] - lw[:, 0])

    values = {o: run.chains[o][cut:].reshape(-1) for o in run.chains}
    # Samples with the same log weights (discrete models repeat them) enter MBAR once each.
    lw = np.ascontiguousarray(lw)
    keys = lw.view(np.dtype((np.void, lw.dtype.itemsize * lw.shape[1]))).reshape(-1)
    _, first, row_of = np.unique(keys, return_index=True, return_inverse=True)
    rows, row_of = lw[first], row_of.reshape(-1)

    def estimate(keep, initial=None):
        kept_counts = counts * keep.sum() / len(keep)
        multiplicity = np.bincount(row_of[keep], minlength=len(rows)).astype(np.float64)
        f = mbar_free_energies(rows, kept_counts, initial, multiplicity)
        denominator = _logsumexp(np.log(kept_counts) + f + rows, axis=1)[row_of[keep]]
        out = []
        for x in targets:
            log_w = target_weights(x)[keep] - denominator
            w = np.exp(log_w - log_w.max())
            w /= w.sum()
            out.append([float(np.dot(w, values[o][keep])) for o in values])
        return np.asarray(out), f

    everything = np.ones(len(lw), dtype=bool)
    full, f = estimate(everything, start)
    edges = np.linspace(0, n, blocks + 1).astype(int)
    row = np.repeat(np.arange(n), t.rungs * t.ladders)
    leave_out = []
    for b in range(blocks):
        keep = (row < edges[b]) | (row >= edges[b + 1])
        leave_out.append(estimate(keep, f)[0])
    errors = gamma.jackknife_error(np.asarray(leave_out))
    names = list(values)
    result = {"coupling": name, "free_energies": [float(x) for x in f], "targets": []}
    for i, x in enumerate(targets):
        result["targets"].append({name: float(x), "observables": {
            o: {"value": float(full[i, j]), "error": float(errors[i, j])}
            for j, o in enumerate(names)}})
    return result


def format_report(path, summaries, stats, reweighted=None):
    lines = [f"{path}: parallel tempering"]
    names = sorted({o for s in summaries for o in s["observables"]})
    header = "rung " + " ".join(f"{c:>9}" for c in summaries[0]["couplings"])
    lines.append(header + "".join(f"  {o:>24}" for o in names))
    for s in summaries:
        text = f"{s['rung']:>4} " + " ".join(f"{v:9.5f}" for v in s["couplings"].values())
        for o in names:
            r = s["observables"].get(o)
            text += f"  {r['value']:12.6f} +- {r['error']:8.6f}" if r else " " * 26
        lines.append(text)
    lines.append("pair acceptance: " + " ".join(f"{a:.3f}" for a in stats["pair_acceptance"]))
    lines.append(f"round trips: {stats['round_trips']}, mean {stats['round_trip_mean_sweeps']:.1f}"
                 f" +- {stats['round_trip_mean_error']:.1f} sweeps")
    lines.append("up fraction f(k): " + " ".join(f"{f:.3f}" for f in stats["up_fraction"]))
    if stats.get("feedback_ladder"):
        lines.append("feedback-optimised ladder (Katzgraber et al. 2006, one step): "
                     + ", ".join(f"{x:.6g}" for x in stats["feedback_ladder"]))
    if reweighted:
        lines.append(f"MBAR free energies f_k = -ln Z_k + ln Z_0: "
                     + " ".join(f"{f:.4f}" for f in reweighted["free_energies"]))
        for target in reweighted["targets"]:
            x = target[reweighted["coupling"]]
            text = f"  {reweighted['coupling']} = {x:.6f}:"
            for o, r in target["observables"].items():
                text += f"  {o} = {r['value']:.6f} +- {r['error']:.6f}"
            lines.append(text)
    return "\n".join(lines)
