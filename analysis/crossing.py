"""Binder-cumulant crossings between lattice sizes (the `crossing` command).

Runs are grouped by lattice_dims (runs with the same dims, beta and h are merged as extra
replicas). For each pair of consecutive sizes (ordered by volume):

- Each size's curve U4_L(beta) is reweighted from its simulated point nearest to beta
  (single-histogram reweighting, see reweight.py); between two simulated points the curve
  switches source at their midpoint.
- The search range is where both sizes can be trusted: each size covers [lowest, highest]
  of its points' reliable reweighting ranges (reweight.Reweighter.reach: the reweighted mean
  energy stays in the central 95 % of the sampled energies); the pair uses the overlap.
- D(beta) = U4_L1 - U4_L2 is scanned on a grid for sign changes; each is refined with
  Brent's method, with the source point of each size held fixed (the one nearest the
  bracket), so D is smooth there. A sign change that only comes from switching source
  points is not a crossing and is dropped.
- Error: for each size a blocked jackknife over the blocks of its source run (all its
  reweighted values move together when a block is left out), the root found again for
  each leave-one-block-out sample; the two sizes are independent runs, so their jackknife
  variances add. The U4 value at the crossing gets its error the same way.
When D keeps one sign over the whole range, the curves do not cross there and the command
says so (with the sign, which tells on which side the crossing should lie).

All runs must be of one model with a beta: U4 is the model's Binder cumulant (for O(n) the
normalised vector form, see summary.binder). phi4 runs have no beta to reweight in, and
runs of different models do not belong on one set of curves; `refusal` says why a set of
runs cannot be crossed.
"""

import math

import numpy as np
from scipy import optimize

from analysis import gamma, reweight, summary

GRID = 401


def size_label(dims):
    dims = list(dims)
    return str(dims[0]) if len(set(dims)) == 1 else "x".join(str(n) for n in dims)


class SizeCurve:
    """U4 against beta for one lattice size, from its runs by nearest-point reweighting."""

    def __init__(self, dims, prepared_runs):
        self.dims = tuple(dims)
        self.label = size_label(dims)
        self.points = sorted(prepared_runs, key=lambda p: p.beta)
        self.reweighters = []
        self.warnings = []
        for p in self.points:
            rw, ok = reweight.reweighter_for(p)
            if not ok:
                self.warnings.append(
                    f"L = {self.label}, beta = {p.beta}: too few measurements for jackknife "
                    f"blocks of 20 tau_int (blocks of {rw.block_length}); errors may be "
                    f"underestimated")
            self.reweighters.append(rw)
        self.betas = np.array([p.beta for p in self.points])
        self.reaches = [rw.reach() for rw in self.reweighters]
        self.range = (min(r[0] for r in self.reaches), max(r[1] for r in self.reaches))

    def nearest(self, beta):
        return int(np.argmin(np.abs(self.betas - beta)))

    def u4(self, beta, source=None, block=None):
        """U4 at beta reweighted from point `source` (default: the nearest), optionally with
        jackknife block `block` of that point left out."""
        k = self.nearest(beta) if source is None else source
        rw = self.reweighters[k]
        return float(rw.quantities(rw.sums_without(beta, block), beta)["U4"])


def _root(f, guess, step, limit):
    """A root of f near guess: a bracket grown around guess (up to limit away), then Brent."""
    low, high = guess - step, guess + step
    f_low, f_high = f(low), f(high)
    while f_low * f_high > 0:
        step *= 2.0
        if step > limit:
            return math.nan
        low, high = guess - step, guess + step
        f_low, f_high = f(low), f(high)
    return optimize.brentq(f, low, high, xtol=1e-12, rtol=1e-10)


def _jackknife(curve, source, other, other_source, root, step, limit, first):
    """Leave-one-block-out roots and U4 values over the blocks of curve's source point.
    `first` says whether curve is the smaller size (D = U4_first - U4_second)."""
    roots, values = [], []
    sign = 1.0 if first else -1.0
    reference = curve if first else other
    reference_source = source if first else other_source
    for block in range(len(curve.reweighters[source].blocks)):
        def d(b, block=block):
            return sign * (curve.u4(b, source, block) - other.u4(b, other_source))
        r = _root(d, root, step, limit)
        roots.append(r)
        if math.isnan(r):
            values.append(math.nan)
        elif first:
            values.append(reference.u4(r, reference_source, block))
        else:
            values.append(reference.u4(r, reference_source))
    return np.array(roots), np.array(values)


def find_crossings(small, large):
    """The crossings of U4 between SizeCurves small and large, as a dict for the report."""
    low = max(small.range[0], large.range[0])
    high = min(small.range[1], large.range[1])
    pair = {"L": [small.label, large.label], "dims": [list(small.dims), list(large.dims)],
            "range": [low, high], "crossings": [], "warnings": []}
    if not low < high:
        pair["status"] = "no overlap"
        pair["message"] = (f"the reliable reweighting ranges of L = {small.label} "
                           f"[{small.range[0]:.6g}, {small.range[1]:.6g}] and L = {large.label} "
                           f"[{large.range[0]:.6g}, {large.range[1]:.6g}] do not overlap")
        return pair
    grid = np.linspace(low, high, GRID)
    step = grid[1] - grid[0]
    diff = np.array([small.u4(b) - large.u4(b) for b in grid])
    brackets = [i for i in range(len(grid) - 1)
                if diff[i] == 0.0 or diff[i] * diff[i + 1] < 0.0]
    roots = []
    for i in brackets:
        middle = 0.5 * (grid[i] + grid[i + 1])
        s, t = small.nearest(middle), large.nearest(middle)
        def d(b, s=s, t=t):
            return small.u4(b, s) - large.u4(b, t)
        a, b = grid[i], grid[i + 1]
        if d(a) == 0.0:
            root = a
        elif d(a) * d(b) < 0.0:
            root = optimize.brentq(d, a, b, xtol=1e-12, rtol=1e-10)
        else:
            continue  # a jump where the source point changes, not a crossing
        if any(abs(root - r[0]) < 1e-9 for r in roots):
            continue
        roots.append((root, s, t))

    limit = high - low
    for root, s, t in roots:
        value = small.u4(root, s)
        roots_small, u_small = _jackknife(small, s, large, t, root, step, limit, True)
        roots_large, u_large = _jackknife(large, t, small, s, root, step, limit, False)
        failed = int(np.sum(np.isnan(roots_small)) + np.sum(np.isnan(roots_large)))
        if failed:
            beta_error = u_error = math.inf
        else:
            beta_error = math.hypot(gamma.jackknife_error(roots_small),
                                    gamma.jackknife_error(roots_large))
            u_error = math.hypot(gamma.jackknife_error(u_small), gamma.jackknife_error(u_large))
        crossing = {
            "beta": root, "beta_error": beta_error, "U4": value, "U4_error": u_error,
            "sources": [
                {"L": small.label, "beta": small.points[s].beta, "files": small.points[s].paths,
                 "blocks": len(small.reweighters[s].blocks),
                 "block_length": small.reweighters[s].block_length},
                {"L": large.label, "beta": large.points[t].beta, "files": large.points[t].paths,
                 "blocks": len(large.reweighters[t].blocks),
                 "block_length": large.reweighters[t].block_length}],
            "warnings": [],
        }
        if failed:
            crossing["warnings"].append(
                f"{failed} jackknife samples have no crossing nearby; the error is unknown")
        for curve, k in ((small, s), (large, t)):
            lo, hi = curve.reaches[k]
            if not lo <= root <= hi:
                crossing["warnings"].append(
                    f"L = {curve.label}: the crossing lies outside the reliable reweighting "
                    f"range [{lo:.6g}, {hi:.6g}] of the run at beta = {curve.points[k].beta}")
        pair["crossings"].append(crossing)

    if pair["crossings"]:
        pair["status"] = "crossing"
        if len(pair["crossings"]) > 1:
            pair["warnings"].append(f"{len(pair['crossings'])} crossings: the curves are too "
                                    "noisy or too close to tell them apart")
    else:
        pair["status"] = "no crossing"
        above = small.label if diff[0] > 0 else large.label
        below = large.label if diff[0] > 0 else small.label
        pair["message"] = (f"the U4 curves do not cross in the sampled range "
                           f"[{low:.6g}, {high:.6g}]: U4(L = {above}) > U4(L = {below}) "
                           f"throughout")
    return pair


def refusal(prepared_runs):
    """Why these runs cannot be crossed (a message), or None when they can."""
    models = sorted({model_label(p) for p in prepared_runs})
    if len(models) > 1:
        return f"the runs are of different models ({', '.join(models)}); cross one at a time"
    without = [p.paths[0] for p in prepared_runs if p.beta is None]
    if without:
        return (f"{without[0]}: a {prepared_runs[0].model} run has no beta, so its U4 cannot "
                f"be reweighted in beta; crossings need runs with a beta (ising, potts, on)")
    means = [reweight.means_refusal(p) for p in prepared_runs]
    return next((m for m in means if m), None)


def model_label(p):
    """The model with the parameter that sets its universality class (n, q)."""
    extra = {k: v for k, v in p.parameters.items() if k in ("n", "q")}
    return p.model + "".join(f" {k} = {v}" for k, v in extra.items())


def group_by_size(prepared_runs):
    """{dims: [Prepared]} with runs of the same model at the same dims and parameters merged."""
    groups = {}
    for p in prepared_runs:
        key = (p.dims, p.model, tuple(sorted(p.parameters.items())))
        groups.setdefault(key, []).append(p)
    sizes = {}
    for (dims, _, _), runs in groups.items():
        sizes.setdefault(dims, []).append(summary.merge(runs))
    return sizes


def crossings(prepared_runs):
    """All pairs of consecutive sizes: a list of pair dicts (see find_crossings), plus
    warnings about the input."""
    sizes = group_by_size(prepared_runs)
    warnings = []
    curves = []
    for dims in sorted(sizes, key=lambda d: (int(np.prod(d)), d)):
        runs = sizes[dims]
        fields = {p.h for p in runs}
        if len(fields) > 1:
            warnings.append(f"L = {size_label(dims)}: runs at different fields h {sorted(fields)}"
                            f"; skipped")
            continue
        curve = SizeCurve(dims, runs)
        warnings.extend(curve.warnings)
        curves.append(curve)
    if len(curves) < 2:
        warnings.append("fewer than two lattice sizes: nothing to cross")
    pairs = [find_crossings(a, b) for a, b in zip(curves, curves[1:])]
    return pairs, warnings


def format_pairs(pairs, warnings):
    lines = []
    for pair in pairs:
        a, b = pair["L"]
        lo, hi = pair["range"]
        lines.append(f"L = {a} / L = {b}: searched beta in [{lo:.6g}, {hi:.6g}]")
        if pair["status"] != "crossing":
            lines.append(f"  NO CROSSING: {pair['message']}")
        for c in pair["crossings"]:
            lines.append(f"  crossing at beta = {summary.format_value(c['beta'], c['beta_error'])}"
                         f", U4 = {summary.format_value(c['U4'], c['U4_error'])}")
            src = "; ".join(f"L = {s['L']} from beta = {s['beta']} ({s['blocks']} blocks of "
                            f"{s['block_length']})" for s in c["sources"])
            lines.append(f"    reweighted: {src}")
            for w in c["warnings"]:
                lines.append(f"    warning: {w}")
        for w in pair["warnings"]:
            lines.append(f"  warning: {w}")
    for w in warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)
