"""Correlator analysis: the second-moment correlation length from the structure-factor series
and cosh effective masses of the time-slice correlators (the `effmass` command).

Thermalisation: the correlator series keep the rows measured at or after the first sweep that
the observables' thermalisation cut keeps (summary.py: automatic, or --cut N measurements), so
that every command discards the same stretch of the run.

Second-moment correlation length (from /correlators/structure_factor/series):
    xi2 = sqrt(<S(0)> / <S(k_min)> - 1) / (2 sin(pi / L))
with L the longest lattice extent and S(k_min) averaged over the unit momenta 2 pi / L along the
longest axes. It is a function of the two means (not the mean of the per-measurement xi2,
which is biased), with its error from the Gamma method (gamma.analyse_derived; replicas
combined).

Effective mass (from /correlators/timeslice, C(dt, p) with dt = 0 .. T-1 periodic):
  - C(dt) is averaged over the measurements and replicas kept;
  - errors: a blocked jackknife over blocks of consecutive measurements within each replica;
    the block length is 20 times the integrated autocorrelation time of C(dt = 1, p) (Gamma
    method), with at least 20 and at most 200 blocks (gamma.choose_block_length, as reweight
    uses); each leave-one-block-out average gives its own m_eff;
  - m_eff(dt) solves C(dt) / C(dt + 1) = cosh(m (dt - T/2)) / cosh(m (dt + 1 - T/2)), the
    ratio of a single state's contribution A cosh(m (dt - T/2)) on the periodic time axis
    (C(T) = C(0)). The right side is monotonic in m >= 0 (rising from 1 for dt < (T-1)/2,
    falling from 1 beyond), so the root is unique; it is bracketed and found by bisection on
    the logarithms (to rounding; vectorised over dt and jackknife samples; no overflow for
    large m T). NaN where no m >= 0 solves it: a non-positive C,
    a ratio on the wrong side of 1, or dt = (T-1)/2 for odd T (where both sides are 1);
    the jackknife error is NaN where any leave-one-out sample has no solution.
  - For p != 0, m_eff measures E(p), the energy of the lowest state of momentum p (for a
    free lattice boson, sinh^2(E/2) = sinh^2(m/2) + sum_a sin^2(p_a / 2)).
"""

import math
from dataclasses import dataclass, field

import numpy as np

from analysis import gamma

XI2_DEFINITION = "sqrt(<S(0)>/<S(k_min)> - 1) / (2 sin(pi/L))"
BLOCK_RULE = ("blocked jackknife: blocks of 20 tau_int(C(dt=1)) measurements (Gamma method), "
              "at least 20 and at most 200 blocks, within each replica")


def second_moment_length(s0, s_min, length):
    """xi2 = sqrt(s0/s_min - 1) / (2 sin(pi/L)); NaN where s0 <= s_min or s_min <= 0."""
    s0, s_min = float(s0), float(s_min)
    if not (s0 > s_min and s_min > 0.0):
        return math.nan
    return math.sqrt(s0 / s_min - 1.0) / (2.0 * math.sin(math.pi / length))


def first_kept_row(sweeps, first_sweep):
    """The index of the first row of a series (sweeps increasing) at or after first_sweep
    (None: 0)."""
    if first_sweep is None:
        return 0
    return int(np.searchsorted(np.asarray(sweeps), first_sweep, side="left"))


def cut_sweep(run, cut):
    """The first sweep that a cut of `cut` observable measurements keeps (None: nothing cut)."""
    if not cut or len(run.sweep) == 0:
        return None
    if cut >= len(run.sweep):
        return int(run.sweep[-1]) + 1
    return int(run.sweep[cut])


@dataclass
class Xi2Result:
    s0: gamma.GammaResult
    s_min: gamma.GammaResult
    xi2: gamma.GammaResult  #: None where <S(0)> <= <S(k_min)>
    length: int  #: L, the longest extent
    rows: int  #: series rows used (per replica)
    cut_rows: int  #: series rows discarded
    spacing: float  #: sweeps between series rows (None with fewer than 2)
    problem: str = None  #: why there is no xi2, when there is none


def xi2_from_series(sf, first_sweep=None):
    """xi2 with its Gamma-method error from the means of the s0 and s_min series of a
    lattica_file.StructureFactor, keeping rows at or after first_sweep. None with fewer than 2
    rows kept."""
    start = first_kept_row(sf.sweep, first_sweep)
    s0 = sf.chain("s0")[start:]
    s_min = sf.chain("s_min")[start:]
    if len(s0) < 2:
        return None
    length = sf.longest
    sweep = sf.sweep[start:]
    spacing = float(np.median(np.diff(sweep))) if len(sweep) >= 2 else None
    r0, r1 = gamma.analyse(s0), gamma.analyse(s_min)
    result = Xi2Result(r0, r1, None, length, len(s0), start, spacing)
    if not (r0.value > r1.value > 0.0):
        result.problem = (f"<S(0)> = {r0.value:.6g} is not above <S(k_min)> = {r1.value:.6g} "
                          f"> 0: no xi2")
        return result

    def f(a):
        return math.sqrt(max(a[0] / a[1] - 1.0, 0.0)) / (2.0 * math.sin(math.pi / length))

    try:
        result.xi2 = gamma.analyse_derived(f, [s0, s_min])
    except (ValueError, ZeroDivisionError) as e:
        result.problem = f"xi2: {e}"
    return result


# --------------------------------------------------------------------------- effective mass


def _log_cosh(x):
    """log cosh x without overflow."""
    x = np.abs(x)
    return x + np.log1p(np.exp(-2.0 * x)) - math.log(2.0)


BISECTIONS = 80  # halvings of [0, target + log 2 + 1]: far below double rounding


def cosh_masses(c0, c1, dt, extent):
    """The m >= 0 with c0 / c1 = cosh(m (dt - T/2)) / cosh(m (dt + 1 - T/2)), elementwise
    (arrays broadcast together), NaN where there is none (see the module doc).

    With u = dt - T/2, v = u + 1 the right side is exp(+-(log cosh(m u) - log cosh(m v))),
    monotonic in m with its logarithm between m ||u| - |v|| - log 2 and m ||u| - |v||
    (||u| - |v|| = 1 for integer dt unless u = -1/2), so the root lies in
    [0, |log(c0/c1)| + log 2 + 1] and is found there by bisection on all elements at once.
    """
    c0, c1, dt = np.broadcast_arrays(np.asarray(c0, dtype=np.float64),
                                     np.asarray(c1, dtype=np.float64),
                                     np.asarray(dt, dtype=np.float64))
    u = dt - 0.5 * extent
    v = u + 1.0
    direction = np.sign(np.abs(u) - np.abs(v))  # +1: the ratio rises with m; -1: falls
    with np.errstate(divide="ignore", invalid="ignore"):
        target = direction * np.log(c0 / c1)
    valid = ((c0 > 0.0) & (c1 > 0.0) & np.isfinite(c0) & np.isfinite(c1) & (direction != 0.0)
             & np.isfinite(target) & (target > 0.0))
    target = np.where(valid, target, 1.0)
    low = np.zeros_like(target)
    high = target + math.log(2.0) + 1.0
    for _ in range(BISECTIONS):
        middle = 0.5 * (low + high)
        below = direction * (_log_cosh(middle * u) - _log_cosh(middle * v)) < target
        low = np.where(below, middle, low)
        high = np.where(below, high, middle)
    return np.where(valid, 0.5 * (low + high), np.nan)


def cosh_mass(c0, c1, dt, extent):
    """One effective mass (a float, NaN where there is none); see cosh_masses."""
    return float(cosh_masses(c0, c1, dt, extent))


def effective_masses(correlator):
    """m_eff(dt), dt = 0 .. T-1, of periodic correlators C[..., T] (C(T) = C(0)) along the
    last axis."""
    c = np.asarray(correlator, dtype=np.float64)
    extent = c.shape[-1]
    return cosh_masses(c, np.roll(c, -1, axis=-1), np.arange(extent), extent)


@dataclass
class EffectiveMass:
    """C(dt) and m_eff(dt) of one projected momentum, with blocked-jackknife errors."""

    index: int  #: row of the momentum in /correlators/timeslice/momenta
    n: np.ndarray  #: the integer momentum vector
    p: np.ndarray  #: p_a = 2 pi n_a / L_a
    c: np.ndarray  #: [T] the average C(dt)
    c_error: np.ndarray
    m_eff: np.ndarray  #: [T], NaN where no solution
    m_eff_error: np.ndarray
    tau_int: gamma.GammaResult  #: of C(dt = 1) (C(0) when T = 1)
    block_length: int
    blocks: int
    blocks_ok: bool  #: False when the data were too short for blocks of 20 tau_int
    samples: np.ndarray = field(default=None, repr=False)  #: [K, T] jackknife m_eff

    @property
    def zero_momentum(self):
        return not np.any(self.n)

    def as_dict(self):
        extent = len(self.c)
        return {
            "index": self.index, "n": self.n, "p": self.p,
            "p_squared": float(np.dot(self.p, self.p)),
            "lattice_p_hat_squared": float(np.sum(4.0 * np.sin(0.5 * self.p) ** 2)),
            "measures": "m" if self.zero_momentum else "E(p)",
            "dt": list(range(extent)), "C": self.c, "C_error": self.c_error,
            "m_eff": self.m_eff, "m_eff_error": self.m_eff_error,
            "tau_int_C1": self.tau_int.tau_int, "tau_int_C1_error": self.tau_int.tau_int_error,
            "block_length": self.block_length, "blocks": self.blocks,
            "blocks_ok": self.blocks_ok,
        }


def effective_mass(ts, index, first_sweep=None, data=None):
    """The EffectiveMass of momentum row `index` of a lattica_file.Timeslice, keeping the
    rows at or after first_sweep. data: C already read ([n, R, T, n_p], all committed rows),
    to read the file once for several momenta. Raises ValueError with fewer than 2 samples."""
    if not 0 <= index < ts.n_momenta:
        raise ValueError(f"momentum index {index} out of range: the file has {ts.n_momenta} "
                         f"momenta (0 .. {ts.n_momenta - 1})")
    start = first_kept_row(ts.sweep, first_sweep)
    if data is None:
        data = ts.correlator()
    c = np.asarray(data[start:, :, :, index], dtype=np.float64)  # [n, R, T]
    n, replicas, extent = c.shape
    if n * replicas < 2:
        raise ValueError(f"{n} correlator measurement(s) x {replicas} replica(s) after the cut; "
                         f"at least 2 samples are needed")
    tau = gamma.analyse(c[:, :, 1 % extent])
    lengths = [n] * replicas
    block_length, ok = gamma.choose_block_length(tau.tau_int, lengths)
    bounds = gamma.block_bounds(lengths, block_length)
    sums = np.array([c[a:b, r].sum(axis=0) for r, a, b in bounds])  # [K, T]
    counts = np.array([b - a for _, a, b in bounds], dtype=np.float64)
    total = sums.sum(axis=0)
    count = float(n * replicas)
    mean = total / count
    if len(bounds) >= 2:
        leave_out = (total[None, :] - sums) / (count - counts)[:, None]
    else:
        leave_out = np.full((1, extent), np.nan)
    c_error = gamma.jackknife_error(leave_out)
    m_eff = effective_masses(mean)
    samples = effective_masses(leave_out)
    m_error = gamma.jackknife_error(samples)
    m_error = np.where(np.all(np.isfinite(samples), axis=0), m_error, np.nan)
    return EffectiveMass(index, np.asarray(ts.momenta[index]),
                         np.asarray(ts.momentum_values[index]), mean, c_error, m_eff, m_error,
                         tau, block_length, len(bounds), ok, samples)


def effective_mass_all(ts, first_sweep=None, indices=None):
    """EffectiveMass of every momentum (or of `indices`), reading C once."""
    data = ts.correlator()
    indices = range(ts.n_momenta) if indices is None else indices
    return [effective_mass(ts, i, first_sweep, data) for i in indices]


def momentum_label(n, p):
    """'p = 0' or 'n = (1, 0), p = (0.3927, 0)'."""
    if not np.any(n):
        return "p = 0"
    ns = ", ".join(str(int(x)) for x in n)
    ps = ", ".join(f"{x:.4g}" for x in p)
    return f"n = ({ns}), p = ({ps})"
