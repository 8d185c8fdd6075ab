"""Single-histogram (Ferrenberg-Swendsen) reweighting with blocked-jackknife errors.

A run at coupling beta0 (field h) samples exp(-beta0 H). An average at beta (same h) is

    <O>_beta = sum_i O_i w_i / sum_i w_i,   w_i = exp(-(beta - beta0) E_i),   E_i = V e_i,

with E the total energy including the field term. The exponents are shifted by their maximum
before exponentiating (log-sum-exp), so nothing overflows.

The measurements are compressed by energy: per distinct value of e (exact for a discrete
model) the count and the sums of |m|, m^2, m^4, m are kept, in total and per jackknife block.
An average at any beta then costs O(number of energy levels), and a leave-one-block-out
average subtracts that block's (small) table from the total.

Errors: blocked jackknife, blocks of consecutive measurements within each replica, about
20 tau_int long (the largest tau_int of e, |m|, m^2 from the Gamma method), at least 20
blocks (see gamma.choose_block_length).

Reliable range: the reweighted mean energy must stay inside the central 95 % of the sampled
energy distribution (between its 2.5 % and 97.5 % quantiles); outside it the few
measurements in the tail carry the average and the result is not trustworthy. `reach()`
gives the beta interval where this holds.

Models: anything with a beta and an energy series. For O(n) the energy is continuous, so
every measurement is its own level (exact, only slower); m is then |m| and U4 the O(n)
normalisation (summary.binder). phi4 has no beta (its weight is exp(-S) with the couplings
inside S), so reweighter_for refuses it.
"""

import math

import numpy as np
from scipy import optimize

from analysis import gamma, summary

QUANTITIES = ("e", "|m|", "m^2", "U4", "C", "chi")
TAIL = 0.025  # probability in each tail outside the "central part" of the sampled energies

# Columns of the per-level tables.
_COUNT, _DE, _DE2, _ABS, _M2, _M4, _M = range(7)


class Reweighter:
    """Reweighting of one run's (or merged runs') e and m series to other couplings."""

    def __init__(self, e, m, beta, volume, block_length, components=1):
        """e, m: lists of per-replica arrays (energy and magnetization per site, after the
        thermalisation cut); beta: the simulated coupling; block_length in measurements;
        components: n of an O(n) model (its Binder normalisation), 1 for a scalar m."""
        e = gamma.replicas_of(e)
        m = gamma.replicas_of(m)
        lengths = [len(x) for x in e]
        if lengths != [len(x) for x in m]:
            raise ValueError("e and m differ in shape")
        self.beta = float(beta)
        self.volume = int(volume)
        self.components = int(components)
        self.bounds = gamma.block_bounds(lengths, block_length)
        self.block_length = block_length
        e_all = np.concatenate(e)
        m_all = np.concatenate(m)
        self.n = len(e_all)
        if self.n == 0:
            raise ValueError("no data")
        self.levels, level = np.unique(e_all, return_inverse=True)
        self.e0 = float(e_all.mean())
        de = e_all - self.e0
        self.table = self._tabulate(level, de, m_all, len(self.levels))
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        self.blocks = []
        for r, start, stop in self.bounds:
            rows = slice(offsets[r] + start, offsets[r] + stop)
            used, local = np.unique(level[rows], return_inverse=True)
            self.blocks.append((used, self._tabulate(local, de[rows], m_all[rows], len(used))))
        counts = self.table[:, _COUNT]
        cumulative = np.cumsum(counts) / self.n
        self.e_low = float(self.levels[np.searchsorted(cumulative, TAIL)])
        self.e_high = float(self.levels[min(np.searchsorted(cumulative, 1.0 - TAIL),
                                            len(self.levels) - 1)])
        self.e_std = float(math.sqrt(max(np.dot(counts, (self.levels - self.e0) ** 2) / self.n,
                                         0.0)))

    @staticmethod
    def _tabulate(level, de, m, size):
        """Per energy level: count and sums of de, de^2, |m|, m^2, m^4, m (one column each,
        made one at a time to keep memory at a few copies of the series)."""
        columns = (lambda: None, lambda: de, lambda: de * de, lambda: np.abs(m),
                   lambda: m * m, lambda: (m * m) ** 2, lambda: m)
        return np.stack([np.bincount(level, weights=make(), minlength=size).astype(np.float64)
                         for make in columns], axis=1)

    def _weights(self, beta):
        x = -(beta - self.beta) * self.volume * self.levels
        return np.exp(x - x.max())

    def sums(self, beta, jackknife=True):
        """Weighted sums (7 columns) on all data, and [K, 7] with each block left out."""
        w = self._weights(beta)
        total = w @ self.table
        if not jackknife:
            return total, None
        left_out = np.array([w[used] @ t for used, t in self.blocks])
        return total, total[None, :] - left_out

    def sums_without(self, beta, block):
        """Weighted sums with one block (index) left out; block None: all data."""
        w = self._weights(beta)
        total = w @ self.table
        if block is None:
            return total
        used, t = self.blocks[block]
        return total - w[used] @ t

    def quantities(self, sums, beta):
        """Reweighted e, |m|, m^2, m^4, U4, C, chi, chi' from sums ([7] or [K, 7])."""
        s = np.asarray(sums)
        z = s[..., _COUNT]
        de = s[..., _DE] / z
        e = self.e0 + de
        variance = s[..., _DE2] / z - de * de
        absm = s[..., _ABS] / z
        m2 = s[..., _M2] / z
        m4 = s[..., _M4] / z
        return {
            "e": e,
            "|m|": absm,
            "m^2": m2,
            "m^4": m4,
            "m": s[..., _M] / z,
            "U4": summary.binder(m4, m2, self.components),
            "C": beta * beta * self.volume * variance,
            "chi": beta * self.volume * (m2 - absm * absm),
            "chi'": beta * self.volume * m2,
        }

    def mean_energy(self, beta):
        total, _ = self.sums(beta, jackknife=False)
        return self.e0 + total[_DE] / total[_COUNT]

    def effective_fraction(self, beta):
        """Kish's effective sample size (sum w)^2 / sum w^2 over the measurements, as a
        fraction of their number."""
        w = self._weights(beta)
        counts = self.table[:, _COUNT]
        return float((w @ counts) ** 2 / (w * w @ counts) / self.n)

    def in_range(self, beta):
        """Whether the reweighted mean energy lies in the central 95 % of the sampled one."""
        e = self.mean_energy(beta)
        return self.e_low <= e <= self.e_high

    def reach(self):
        """(beta_low, beta_high): the couplings where the reweighted mean energy reaches the
        97.5 % and the 2.5 % quantile of the sampled energies (it falls as beta grows)."""
        if self.e_std == 0.0 or self.e_low == self.e_high:
            return self.beta, self.beta
        step = 1.0 / (self.volume * self.e_std)  # shifts <E> by about one std. dev.
        ends = []
        for sign, target in ((-1.0, self.e_high), (1.0, self.e_low)):
            # g < 0 while the reweighted mean is inside, > 0 beyond the quantile.
            g = lambda b, s=sign, t=target: s * (t - self.mean_energy(b))  # noqa: E731
            if g(self.beta) >= 0:  # the sampled mean itself sits at the quantile
                ends.append(self.beta)
                continue
            far = self.beta + sign * step
            tries = 0
            while g(far) < 0 and tries < 60:
                far = self.beta + 2.0 * (far - self.beta)
                tries += 1
            if g(far) < 0:
                ends.append(far)
                continue
            low, high = sorted((self.beta, far))
            ends.append(optimize.brentq(g, low, high, xtol=1e-12, rtol=1e-12))
        return ends[0], ends[1]

    def evaluate(self, beta):
        """Reweighted quantities at beta with blocked-jackknife errors:
        {name: (value, error)} plus 'ess_fraction' and 'in_range'."""
        total, left_out = self.sums(beta)
        values = self.quantities(total, beta)
        samples = self.quantities(left_out, beta)
        result = {name: (float(values[name]), float(gamma.jackknife_error(samples[name])))
                  for name in values}
        result["ess_fraction"] = self.effective_fraction(beta)
        result["in_range"] = bool(self.e_low <= values["e"] <= self.e_high)
        return result


def means_refusal(prepared):
    """Why a run cannot be reweighted because it wrote replica means
    (output.observables = "means"), or None: reweighting needs each configuration's energy."""
    averaged = getattr(prepared.run, "averaged_over", 1) if prepared.run is not None else 1
    if averaged <= 1:
        return None
    return (f"{prepared.paths[0]}: its observables are means over {averaged} replicas "
            f"(output.observables = \"means\"); reweighting needs every configuration's "
            f"energy: run with output.observables = \"replicas\"")


def reweighter_for(prepared):
    """A Reweighter for a summary.Prepared run, blocks chosen from its Gamma analysis.
    Returns (reweighter, block_ok) where block_ok is False when the data were too short for
    blocks of 20 tau_int with at least 20 blocks. ValueError for a run without beta (phi4)."""
    if prepared.beta is None:
        raise ValueError(f"{prepared.paths[0]}: a {prepared.model} run has no beta to "
                         f"reweight in")
    refused = means_refusal(prepared)
    if refused:
        raise ValueError(refused)
    tau = prepared.max_tau()
    length, ok = gamma.choose_block_length(tau, [len(x) for x in prepared.e])
    return Reweighter(prepared.e, prepared.m, prepared.beta, prepared.volume, length,
                      prepared.components), ok
