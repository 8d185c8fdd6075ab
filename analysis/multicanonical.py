"""Multicanonical runs (sim's [multicanonical] section): ln g(E), reweighting, first-order
transitions.

A run's /multicanonical group holds the frozen log weights ln W(E) of its production (from
Wang-Landau, or from the refinement after it: attributes refine_iterations, refine_sweeps), the
production histogram H(E) (every walker after every sweep) and, every run.measure_every
sweeps, every walker's energy E and integer order parameter. Then

    ln g(E) = ln H(E) - ln W(E) + const,

normalised so that g of the ground state is its degeneracy (2 for Ising, q for Potts), or, if
the production never reached the ground state, so that sum_E g(E) = q^V. A run restricted to an
energy window (multicanonical.window) knows ln g only up to a constant: it is normalised to 0 at
the lowest energy sampled, and the free energy is not available (NaN). Canonical averages at
any beta follow from the time series reweighted by exp(-beta E - ln W(E)); the free energy per
site from ln Z = ln sum_E g(E) e^(-beta E). Errors: jackknife over blocks of walkers (the
walkers are independent chains), each block's ln g from its own time series.

The continuous models, O(n) (model "on", E = -sum_<ij> s_i.s_j) and phi^4 (model "phi4",
E = -2 sum_<xy> phi_x phi_y), run in binned energies: bin 0 holds E < bin_low, bins 1 .. count
the window [bin_low + (k-1) bin_width, bin_low + k bin_width), bin count + 1 everything above
(the group's energy holds the bins' centres, NaN for those two). Such a run is always windowed:
ln g per bin is relative and the free energy is not available. Their canonical averages come
from the time series alone, reweighted with exp(-c E_i - ln W(bin(E_i))) (exact in E_i, no bin
centres), c the run's coupling: beta for O(n), kappa for phi^4 (whose walkers sample
exp(-sum_x V(phi_x)) W(E), the action being kappa E + sum_x V(phi_x)). Samples outside the window
(a walker's start, where ln W is NaN) carry no weight.
"""

import dataclasses
import math

import h5py
import numpy as np


@dataclasses.dataclass
class Multicanonical:
    path: str
    model: str
    q: int
    dims: tuple
    beta: float  # the run's coupling: beta, or kappa for phi^4 (see coupling)
    energy: np.ndarray  # total energy of each bin (binned runs: its centre, NaN outside)
    log_weight: np.ndarray
    histogram: np.ndarray
    visited: np.ndarray
    energy_series: np.ndarray  # [measurement, walker]
    order_series: np.ndarray
    attrs: dict
    n: int = 1  # O(n) components
    coupling: str = "beta"  # the name of the coupling conjugate to E: "beta" or "kappa"
    bin_low: float = float("nan")  # binned runs: the window's lowest total energy
    bin_width: float = float("nan")  # binned runs: the bins' width in total energy

    @property
    def volume(self):
        return int(np.prod(self.dims))

    @property
    def binned(self):
        """Whether the energies are binned (O(n), phi^4) rather than exact (Ising, Potts)."""
        return bool(np.isfinite(self.bin_width))

    @property
    def model_name(self):
        """The model as reports name it: ising, potts q = 3, O(3), phi^4."""
        if self.model == "potts":
            return f"potts q = {self.q}"
        if self.model == "on":
            return f"O({self.n})"
        if self.model == "phi4":
            return "phi^4"
        return self.model

    def order_per_site(self, order):
        """Ising: m = M / V; Potts: m = (q n_max / V - 1) / (q - 1); O(n): m = |M| / V;
        phi^4: m = M / V (signed)."""
        v = self.volume
        if self.model == "potts":
            return (self.q * order / v - 1.0) / (self.q - 1.0)
        return order / v

    def binder(self, m4, m2):
        """U4 from <m^4> and <m^2>: O(n) with n > 1 summary.binder's vector convention (0 for
        a Gaussian m vector, 1 ordered), otherwise 1 - <m^4>/(3 <m^2>^2)."""
        if self.model == "on":
            from analysis.summary import binder
            return binder(m4, m2, components=self.n)
        return 1.0 - m4 / (3.0 * m2 * m2)


def read(path):
    """The /multicanonical group of a sim output; ValueError when the file has none."""
    with h5py.File(path, "r") as f:
        if "multicanonical" not in f:
            raise ValueError("not a multicanonical run (no /multicanonical)")
        g = f["multicanonical"]
        attrs = {k: (v.item() if hasattr(v, "item") else v) for k, v in g.attrs.items()}
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in attrs.items()}
        coupling = str(attrs.get("coupling", "beta"))
        if "coupling_value" in attrs:
            value = float(attrs["coupling_value"])
        elif coupling in f.attrs:  # files written before the group carried its coupling
            value = float(f.attrs[coupling])
        else:
            value = float("nan")
        return Multicanonical(
            path=path, model=attrs["model"], q=int(attrs["q"]),
            dims=tuple(int(x) for x in f.attrs["lattice_dims"]), beta=value,
            energy=g["energy"][()].astype(np.float64),
            log_weight=g["log_weight"][()].astype(np.float64),
            histogram=g["histogram"][()].astype(np.float64), visited=g["visited"][()],
            energy_series=g["energy_series"][()].astype(np.float64),
            order_series=g["order_series"][()].astype(np.float64), attrs=attrs,
            n=int(attrs.get("n", 1)), coupling=coupling,
            bin_low=float(attrs.get("bin_low", float("nan"))),
            bin_width=float(attrs.get("bin_width", float("nan"))))


def _logsumexp(a):
    top = np.max(a)
    return top + math.log(np.sum(np.exp(a - top)))


def windowed(run):
    """Whether the run sampled only part of the energy range (multicanonical.window)."""
    first = int(run.attrs.get("window_first_bin", 0))
    last = int(run.attrs.get("window_last_bin", len(run.energy) - 1))
    return first > 0 or last < len(run.energy) - 1


def normalise(run, lng):
    """ln g with NaN for unvisited bins, normalised by the ground state or by sum g = q^V (a
    windowed run, every binned one included: 0 at the lowest energy sampled)."""
    lng = np.array(lng, dtype=float)
    ok = np.isfinite(lng) & np.isfinite(run.energy)
    lng[~ok] = np.nan
    ground = int(np.argmin(np.where(ok, run.energy, np.inf)))
    lowest = np.nanmin(run.energy) if np.isfinite(run.energy).any() else np.nan
    if ok.any() and windowed(run):
        return lng - lng[ground]
    if ok.any() and run.energy[ground] == lowest:
        return lng - lng[ground] + math.log(run.q)
    return lng - _logsumexp(lng[ok]) + run.volume * math.log(run.q)


def log_g_from_counts(run, counts):
    """Normalised ln g from visit counts per bin of the production (NaN where none)."""
    with np.errstate(divide="ignore", invalid="ignore"):  # log 0; NaN weights off the window
        lng = np.where(counts > 0, np.log(counts) - run.log_weight, np.nan)
    return normalise(run, lng)


def _bin_index(run, energies):
    """The bin of each total energy. Ising, Potts: run.energy decreases with the bin. Binned
    runs as sim bins them: 0 below bin_low (and NaN), 1 + floor((E - bin_low) / bin_width)
    inside the window, the last bin above it."""
    energies = np.asarray(energies, dtype=np.float64)
    if not run.binned:
        return np.searchsorted(-run.energy, -energies)
    count = len(run.energy) - 2
    with np.errstate(invalid="ignore"):
        inside = energies >= run.bin_low
        k = np.floor((np.where(inside, energies, run.bin_low) - run.bin_low) / run.bin_width)
    return np.where(inside, np.where(k < count, 1 + k, count + 1), 0).astype(np.int64)


def _block_counts(run, blocks):
    """Per block of walkers: the time series' visit counts per bin."""
    walkers = run.energy_series.shape[1]
    index = _bin_index(run, run.energy_series)
    out = []
    for b in range(blocks):
        cols = np.arange(walkers)[b::blocks]
        out.append(np.bincount(index[:, cols].ravel(), minlength=len(run.energy)).astype(float))
    return out


def _jackknife(values):
    """Jackknife error of leave-one-out estimates (rows) of a vector or scalar."""
    v = np.asarray(values, dtype=float)
    n = v.shape[0]
    if n < 2:
        return np.full(v.shape[1:], np.nan)
    return np.sqrt((n - 1) / n * np.sum((v - v.mean(axis=0)) ** 2, axis=0))


def _blocks(run, requested):
    return max(1, min(requested, run.energy_series.shape[1]))


def log_g(run, blocks=20):
    """ln g(E) (from the production histogram) and its jackknife error over walker blocks."""
    central = log_g_from_counts(run, run.histogram)
    per_block = _block_counts(run, _blocks(run, blocks))
    total = sum(per_block)
    leave_out = [log_g_from_counts(run, total - c) for c in per_block]
    return central, _jackknife(leave_out)


def _canonical_binned(run, energies, orders, coupling):
    """<e>, C, U4 at the coupling from the time series alone, each sample weighted by
    exp(-coupling E - ln W(bin(E))); samples where ln W is NaN (outside the window) carry no
    weight. f: NaN (ln g is only relative)."""
    v = run.volume
    energies = np.asarray(energies, dtype=np.float64)
    orders = np.asarray(orders, dtype=np.float64)
    nan = float("nan")
    x = -coupling * energies - run.log_weight[_bin_index(run, energies)]
    keep = np.isfinite(x)
    if not keep.any():
        return {"e": nan, "C": nan, "U4": nan, "f": nan}
    x, e, m = x[keep], energies[keep] / v, run.order_per_site(orders[keep])
    w = np.exp(x - np.max(x))
    w /= np.sum(w)
    mean_e = float(np.dot(w, e))
    c = float(coupling * coupling * v * np.dot(w, (e - mean_e) ** 2))
    m2 = float(np.dot(w, m * m))
    m4 = float(np.dot(w, m ** 4))
    u4 = float(run.binder(m4, m2)) if m2 > 0 else nan
    return {"e": mean_e, "C": c, "U4": u4, "f": nan}


def _canonical(run, lng, energies, orders, beta):
    """<e>, C, U4, f at beta from ln g (e, C, f) and the time series (U4); binned runs from
    the time series alone (_canonical_binned)."""
    if run.binned:
        return _canonical_binned(run, energies, orders, beta)
    v = run.volume
    ok = np.isfinite(lng)
    a = lng[ok] - beta * run.energy[ok]
    ln_z = _logsumexp(a)
    p = np.exp(a - ln_z)
    e = run.energy[ok] / v
    mean_e = float(np.sum(p * e))
    c = float(beta * beta * v * (np.sum(p * e * e) - mean_e ** 2))
    f = float(-ln_z / (beta * v)) if beta != 0 and not windowed(run) else float("nan")
    x = -beta * energies - run.log_weight[_bin_index(run, energies)]
    w = np.exp(x - np.max(x)) if x.size else x
    m = run.order_per_site(orders)
    m2 = np.sum(w * m * m) / np.sum(w) if x.size else float("nan")
    m4 = np.sum(w * m ** 4) / np.sum(w) if x.size else float("nan")
    u4 = float(1.0 - m4 / (3.0 * m2 * m2)) if x.size and m2 > 0 else float("nan")
    return {"e": mean_e, "C": c, "U4": u4, "f": f}


def reweight(run, betas, blocks=20):
    """Per beta: <e>, C, U4 and the free energy per site f, with jackknife errors."""
    central_lng = log_g_from_counts(run, run.histogram)
    nb = _blocks(run, blocks)
    per_block = _block_counts(run, nb)
    total = sum(per_block)
    walkers = run.energy_series.shape[1]
    results = []
    for beta in betas:
        row = _canonical(run, central_lng, run.energy_series.ravel(),
                         run.order_series.ravel(), beta)
        leave_out = []
        for b in range(nb):
            keep = np.setdiff1d(np.arange(walkers), np.arange(walkers)[b::nb])
            lng = log_g_from_counts(run, total - per_block[b])
            leave_out.append(list(_canonical(run, lng, run.energy_series[:, keep].ravel(),
                                             run.order_series[:, keep].ravel(), beta).values()))
        errors = _jackknife(leave_out) if nb > 1 else [float("nan")] * 4
        out = {"beta": float(beta)}
        for (name, value), err in zip(row.items(), errors):
            out[name] = value
            out[name + "_error"] = float(err)
        results.append(out)
    return results


def _peak_energy(energy, lp, i, lo, hi):
    """The energy of a peak of ln P at bin i (within bins lo .. hi - 1): the vertex of a
    parabola fitted to the contiguous bins with ln P >= ln P_i - 1 (the bin itself when fewer
    than 3), which is smoother than the single highest bin."""
    a = i
    while a > lo and lp[a - 1] >= lp[i] - 1:
        a -= 1
    b = i + 1
    while b < hi and lp[b] >= lp[i] - 1:
        b += 1
    if b - a < 3:
        return float(energy[i])
    c2, c1, _ = np.polyfit(energy[a:b] - energy[i], lp[a:b], 2)
    if c2 >= 0:
        return float(energy[i])
    return float(energy[i] + np.clip(-c1 / (2 * c2), energy[a] - energy[i], energy[b - 1] - energy[i]))


def equal_height(run, lng, beta0, tolerance=1e-10):
    """The beta at which P(E) ~ g(E) e^(-beta E) has two peaks of equal height, the peaks'
    energies per site and the interface tension ln(P_max / P_min) / (2 L^(d-1)); None when
    P(E) has no second peak near beta0.

    The peaks are the maxima on either side of a split energy: first the mean energy at beta0,
    then the minimum of P between the two peaks, until the split stays put. (The largest local
    maxima of ln P would not do: near the ground state g(E) jumps between energies that few
    excitations reach.) Binned runs: P over the bins' centres (beta is then the run's coupling,
    kappa for phi^4); None with fewer than 3 bins."""
    ok = np.isfinite(lng) & np.isfinite(run.energy)
    if np.count_nonzero(ok) < 3:
        return None
    energy = run.energy[ok].astype(float)
    order = np.argsort(energy)
    energy, g = energy[order], lng[ok][order]
    lp0 = g - beta0 * energy
    p0 = np.exp(lp0 - np.max(lp0))
    split = int(np.clip(np.searchsorted(energy, np.sum(p0 * energy) / np.sum(p0)), 1,
                        len(energy) - 1))

    def gap(b):  # ordered (low E) peak minus disordered peak, in ln P
        x = g - b * energy
        return np.max(x[:split]) - np.max(x[split:])

    beta = beta0
    for _ in range(50):
        lo, hi = beta - 0.05, beta + 0.05
        while gap(lo) > 0:
            lo -= 0.05
        while gap(hi) < 0:
            hi += 0.05
        while hi - lo > tolerance:
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if gap(mid) < 0 else (lo, mid)
        beta = 0.5 * (lo + hi)
        lp = g - beta * energy
        i_ord = int(np.argmax(lp[:split]))
        i_dis = split + int(np.argmax(lp[split:]))
        new_split = i_ord + int(np.argmin(lp[i_ord:i_dis + 1]))
        if new_split in (i_ord, i_dis):
            return None  # one peak: the minimum lies at a maximum
        if new_split == split:
            break
        split = new_split
    v = run.volume
    p_min = float(lp[split])
    p_max = 0.5 * (lp[i_ord] + lp[i_dis])
    area = v / max(run.dims)  # L^(d-1) for a hypercube
    e_ord = _peak_energy(energy, lp, i_ord, 0, split) / v
    e_dis = _peak_energy(energy, lp, i_dis, split, len(lp)) / v
    return {"beta": float(beta), "e_ordered": e_ord, "e_disordered": e_dis,
            "latent_heat": e_dis - e_ord,
            "log_peak_ratio": float(p_max - p_min),
            "interface_tension": float((p_max - p_min) / (2.0 * area))}


def tunnelling(run, e_ordered, e_disordered):
    """How the production's walkers moved between the two peaks (energies per site): the
    walkers whose measurements visited both (E at or below the ordered peak, and at or above
    the disordered one), and the one-way tunnelling events (from one of those regions to the
    other) of all walkers together. Without such events the production's P(E) keeps the
    populations the walkers started with."""
    e = run.energy_series / run.volume  # [measurement, walker]
    region = np.where(e <= e_ordered, -1, np.where(e >= e_disordered, 1, 0))
    events = 0
    both = 0
    for walker in range(region.shape[1]):
        path = region[:, walker]
        path = path[path != 0]
        events += int(np.count_nonzero(path[1:] != path[:-1]))
        both += int(path.size > 0 and path.min() < 0 < path.max())
    return {"walkers_in_both_peaks": both, "tunnelling_events": events}


def first_order(run, beta0, blocks=20):
    """equal_height() of the central ln g, with jackknife errors over walker blocks, and the
    walkers' tunnelling() between its peaks."""
    central = equal_height(run, log_g_from_counts(run, run.histogram), beta0)
    if central is None:
        return None
    moves = tunnelling(run, central["e_ordered"], central["e_disordered"])
    per_block = _block_counts(run, _blocks(run, blocks))
    total = sum(per_block)
    leave_out = []
    for c in per_block:
        r = equal_height(run, log_g_from_counts(run, total - c), central["beta"])
        if r is not None:
            leave_out.append([r[k] for k in central])
    if len(leave_out) == len(per_block) and len(leave_out) > 1:
        for k, err in zip(list(central), _jackknife(leave_out)):
            central[k + "_error"] = float(err)
    central.update(moves)
    return central


def refinement(run):
    """The weight refinement that ran after Wang-Landau (multicanonical.refine_iterations):
    (iterations, sweeps per walker and iteration), (0, 0) for none or files written before."""
    a = run.attrs
    return int(a.get("refine_iterations", 0)), int(a.get("refine_sweeps", 0))


def refinement_lines(run):
    """The report's line on the refinement, none without one."""
    iterations, sweeps = refinement(run)
    if iterations == 0:
        return []
    return [f"  refinement: {iterations} iterations of {sweeps} sweeps per walker (Berg's"
            f" recursion from each walker's local ratios; the production's weights are its)"]


def format_report(run, lng, lng_error, rows, transition):
    """Plain-text report of analyse()."""
    a = run.attrs
    c = run.coupling
    lines = [f"{run.path}: multicanonical {run.model_name}"
             + f", L = {'x'.join(map(str, run.dims))}, {a['walkers']} walkers"
             + (f", {c} = {run.beta:.8g}" if run.binned else ""),
             f"  Wang-Landau: {a['stages']} stages, ln f = {a['lnf_reached']:.3g}"
             f" ({'converged' if a['converged'] else 'NOT converged'}),"
             f" {a['wang_landau_sweeps']} sweeps per walker",
             *refinement_lines(run),
             f"  production: {run.energy_series.shape[0]} measurements every"
             f" {a['measure_every']} sweeps, histogram {int(run.histogram.sum())} entries",
             "  ln g(E) (" + ("relative: 0 at the lowest energy of the window"
                              if windowed(run) else "normalised")
             + (f"; E the centre of a bin of width {run.bin_width:.6g} in total energy, window "
                f"[{run.bin_low:.8g}, {run.bin_low + (len(run.energy) - 2) * run.bin_width:.8g})"
                if run.binned else "; E total energy") + "):"]
    ok = np.flatnonzero(np.isfinite(lng) & np.isfinite(run.energy))
    shown = ok if len(ok) <= 24 else ok[np.linspace(0, len(ok) - 1, 24).astype(int)]
    for k in shown:
        energy = (f"{run.energy[k]:14.6f}" if run.binned
                  else f"{int(round(run.energy[k])):8d}")
        lines.append(f"    E = {energy}  ln g = {lng[k]:14.6f} +- {lng_error[k]:.2g}")
    if len(shown) < len(ok):
        lines.append(f"    ({len(ok)} bins visited; --json lists all)")
    lines.append("  reweighted (per site" + (
        f"; C = {c}^2 V (<e^2> - <e>^2), no f: ln g is relative" if run.binned else "") + "):")
    for r in rows:
        line = (f"    {c} = {r['beta']:.8g}: e = {r['e']:.8f} +- {r['e_error']:.2g}, "
                f"C = {r['C']:.6f} +- {r['C_error']:.2g}, U4 = {r['U4']:.6f} +- "
                f"{r['U4_error']:.2g}")
        if not run.binned:
            line += f", f = {r['f']:.8f} +- {r['f_error']:.2g}"
        lines.append(line)
    if transition is not None:
        t = transition
        err = (lambda k: f" +- {t[k + '_error']:.2g}" if k + "_error" in t else "")
        lines.append(f"  equal-height P(E): {c} = {t['beta']:.8f}{err('beta')}, e_ordered = "
                     f"{t['e_ordered']:.6f}{err('e_ordered')}, e_disordered = "
                     f"{t['e_disordered']:.6f}{err('e_disordered')}, latent heat "
                     f"{t['latent_heat']:.6f}{err('latent_heat')}")
        lines.append(f"    ln(P_max/P_min) = {t['log_peak_ratio']:.6f}{err('log_peak_ratio')}, "
                     f"interface tension {t['interface_tension']:.6f}"
                     f"{err('interface_tension')}")
        lines.append(f"    production: {t['walkers_in_both_peaks']} of {a['walkers']} walkers "
                     f"visited both peaks, {t['tunnelling_events']} tunnelling events"
                     + ("" if t["tunnelling_events"] >= a["walkers"] else
                        " (fewer than one per walker: P(E) between the phases may not be in"
                        " equilibrium)"))
    return "\n".join(lines)
