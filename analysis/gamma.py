"""Statistical errors of Monte Carlo time series: the Gamma method and a blocked jackknife.

The Gamma method follows U. Wolff, "Monte Carlo errors with less errors",
Comput. Phys. Commun. 156 (2004) 143. Notation of the paper:

- Data a_alpha^r(t): primary observable alpha, replica r = 1..R, time t = 1..N_r,
  N = sum_r N_r. Means per replica abar_alpha^r, overall abar_alpha = sum_r N_r abar^r / N.
- A derived quantity F = f(A_1, A_2, ...) is estimated by f(abar). Its fluctuations are
  projected onto one series with the gradient f_alpha = df/dA_alpha at abar (numerical
  central differences, step a fifth of the naive error of A_alpha):
      delta_F^r(t) = sum_alpha f_alpha (a_alpha^r(t) - abar_alpha).
  For a primary observable f is the identity and delta_F is just a - abar.
- Autocorrelation function, averaged over replicas:
      Gamma_F(t) = sum_r sum_{i=1}^{N_r - t} delta^r(i) delta^r(i+t) / sum_r (N_r - t).
- C_F(W) = Gamma_F(0) + 2 sum_{t=1}^{W} Gamma_F(t), tau_int(W) = C_F(W) / (2 Gamma_F(0)).
- Automatic window: assuming tau_exp ~ S tau_int (S = S_tau = 1.5),
      tau(W) = S / ln((2 tau_int(W) + 1) / (2 tau_int(W) - 1))   (tiny if tau_int(W) <= 1/2),
      g(W)   = exp(-W / tau(W)) - tau(W) / sqrt(W N),
  the derivative of the sum of systematic (truncation) and statistical error with respect to
  W; W is the first W >= 1 where g(W) < 0, i.e. where that sum stops decreasing.
- Bias correction at the chosen W: C_F -> C_F (1 + (2W + 1)/N), Gamma_F(t) -> Gamma_F(t) +
  C_F(W)/N (both remove the O(1/N) bias of subtracting the estimated mean).
- Error sigma_F = sqrt(C_F / N); tau_int = C_F / (2 Gamma_F(0)) (corrected values);
  error of tau_int from the Madras-Sokal approximation in the form Wolff uses:
      sigma(tau_int)^2 = (4/N) (W + 1/2 - tau_int) tau_int^2;
  error of the error sigma_F * sigma(tau_int) / (2 tau_int).
- With R >= 2 replicas the O(1/N) bias of a nonlinear f is cancelled:
      F = (R f(abar) - sum_r N_r f(abar^r) / N) / (R - 1).

Data may be given as a 1-D array [N] (one replica), a 2-D array [n, R] (R replicas of equal
length, column r = replica r), or a list of 1-D arrays (replicas of any lengths).
"""

import math
from dataclasses import dataclass, field

import numpy as np

S_TAU = 1.5


@dataclass
class GammaResult:
    """The outcome of a Gamma-method analysis of one (primary or derived) quantity."""

    value: float
    error: float
    error_of_error: float
    tau_int: float  #: integrated autocorrelation time, in units of the series spacing
    tau_int_error: float
    window: int  #: the summation window W
    n: int  #: total number of measurements N (all replicas)
    replicas: int
    window_found: bool = True  #: False when no W up to the largest lag met the criterion
    rho: np.ndarray = field(default=None, repr=False)  #: normalised Gamma(t), t = 0..len-1
    rho_error: np.ndarray = field(default=None, repr=False)  #: its error (Madras-Sokal)

    @property
    def naive_error(self):
        """The error the data would have without autocorrelations, sqrt(Gamma(0)/N)."""
        if self.tau_int <= 0:
            return 0.0
        return self.error / math.sqrt(2.0 * self.tau_int)

    def as_dict(self):
        return {"value": self.value, "error": self.error, "error_of_error": self.error_of_error,
                "tau_int": self.tau_int, "tau_int_error": self.tau_int_error,
                "window": self.window, "window_found": self.window_found, "n": self.n,
                "replicas": self.replicas}


def replicas_of(data):
    """The data as a list of 1-D float64 arrays, one per replica (see the module doc)."""
    if isinstance(data, (list, tuple)):
        reps = [np.asarray(x, dtype=np.float64) for x in data]
        if any(x.ndim != 1 for x in reps):
            raise ValueError("a list of replicas must hold 1-D arrays")
        return reps
    a = np.asarray(data, dtype=np.float64)
    if a.ndim == 1:
        return [a]
    if a.ndim == 2:
        return [a[:, r] for r in range(a.shape[1])]
    raise ValueError(f"data of shape {a.shape}: expected [N], [n, R] or a list of replicas")


def _autocovariance(deltas, max_lag):
    """Gamma(t), t = 0..max_lag, of fluctuation series (one per replica), summed over replicas
    and divided by the number of pairs, computed by FFT."""
    total = np.zeros(max_lag + 1)
    pairs = np.zeros(max_lag + 1)
    lengths = sorted({len(d) for d in deltas})
    for n in lengths:
        group = np.stack([d for d in deltas if len(d) == n], axis=1)  # [n, k]
        lags = min(max_lag, n - 1)
        size = 1 << int(math.ceil(math.log2(2 * n)))  # zero padding: no wrap-around
        spectrum = np.fft.rfft(group, n=size, axis=0)
        acf = np.fft.irfft(spectrum * np.conj(spectrum), n=size, axis=0)[:lags + 1]
        total[:lags + 1] += acf.sum(axis=1)
        pairs[:lags + 1] += group.shape[1] * (n - np.arange(lags + 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pairs > 0, total / np.maximum(pairs, 1), 0.0)


def _window(gamma, n_total, stau):
    """Wolff's automatic window: (W, found) for the autocovariance gamma[0..]."""
    t_max = len(gamma) - 1
    if t_max < 1:
        return 0, False
    w = np.arange(1, t_max + 1, dtype=np.float64)
    c = gamma[0] + 2.0 * np.cumsum(gamma[1:])
    tau_int = c / (2.0 * gamma[0])
    g = np.full(t_max, -1.0)
    ok = tau_int > 0.5
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        tau = stau / np.log((2.0 * tau_int[ok] + 1.0) / (2.0 * tau_int[ok] - 1.0))
        g[ok] = np.exp(-w[ok] / tau) - tau / np.sqrt(w[ok] * n_total)
    below = np.flatnonzero(g < 0)
    if len(below) == 0:
        return t_max, False
    return int(below[0]) + 1, True


def _rho_error(rho, window, n_total, t_plot):
    """Error of the normalised autocorrelation rho(t), t = 0..t_plot, from the approximation
    delta rho(t)^2 = (1/N) sum_{k=1}^{t+W} [rho(k+t) + rho(|k-t|) - 2 rho(k) rho(t)]^2
    (after Madras and Sokal, as in Wolff's paper); rho beyond the computed lags is taken as 0."""
    size = len(rho)
    ext = np.zeros(2 * (t_plot + window) + 2)
    ext[:min(size, len(ext))] = rho[:len(ext)]
    errors = np.zeros(t_plot + 1)
    for t in range(1, t_plot + 1):
        k = np.arange(1, t + window + 1)
        terms = ext[k + t] + ext[np.abs(k - t)] - 2.0 * ext[k] * ext[t]
        errors[t] = math.sqrt(np.dot(terms, terms) / n_total)
    return errors


def _analyse(deltas, value, stau, max_lag, plot_lags):
    """Gamma method on projected fluctuations delta^r(t) of a quantity with estimate value."""
    n_total = sum(len(d) for d in deltas)
    replicas = len(deltas)
    shortest = min(len(d) for d in deltas)
    if max_lag is None:
        max_lag = max(1, shortest // 2)
    max_lag = max(0, min(max_lag, shortest - 1))
    gamma = _autocovariance(deltas, max_lag)
    if n_total < 2 or not gamma[0] > 0.0:
        # A constant series (or one value): no fluctuations, nothing to correlate.
        rho = np.zeros(min(len(gamma), plot_lags + 1))
        if len(rho):
            rho[0] = 1.0
        return GammaResult(value, 0.0, 0.0, 0.5, 0.0, 0, n_total, replicas, True, rho,
                           np.zeros_like(rho))
    window, found = _window(gamma, n_total, stau)
    c_w = gamma[0] + 2.0 * gamma[1:window + 1].sum()
    c_corrected = c_w * (1.0 + (2 * window + 1) / n_total)
    gamma_corrected = gamma + c_w / n_total
    tau_int = c_corrected / (2.0 * gamma_corrected[0])
    error = math.sqrt(max(c_corrected, 0.0) / n_total)
    tau_error = tau_int * math.sqrt(max(4.0 / n_total * (window + 0.5 - tau_int), 0.0))
    error_of_error = error * tau_error / (2.0 * tau_int) if tau_int > 0 else 0.0
    rho = gamma_corrected / gamma_corrected[0]
    t_plot = min(len(rho) - 1, max(plot_lags, 2 * window))
    rho = rho[:t_plot + 1]
    return GammaResult(float(value), error, error_of_error, float(tau_int), tau_error, window,
                       n_total, replicas, found, rho, _rho_error(rho, window, n_total, t_plot))


def analyse(data, *, stau=S_TAU, max_lag=None, plot_lags=50):
    """Gamma method for a primary observable: its mean, error, tau_int, ... (GammaResult).

    data: [N], [n, R] or a list of replica series. max_lag bounds the lags summed (default half
    the shortest replica); plot_lags how many lags of rho to keep (at least 2 W).
    """
    reps = replicas_of(data)
    n_total = sum(len(x) for x in reps)
    if n_total == 0:
        raise ValueError("no data")
    mean = sum(float(x.sum()) for x in reps) / n_total
    return _analyse([x - mean for x in reps], mean, stau, max_lag, plot_lags)


def analyse_derived(f, observables, *, stau=S_TAU, max_lag=None, plot_lags=50):
    """Gamma method for F = f(<A_1>, <A_2>, ...) of primary observables measured together.

    f takes a 1-D array of the means (in the order of `observables`) and returns a number.
    observables: a list of data (each [N], [n, R] or a list of replicas, all shaped alike).
    Errors are propagated through the gradient of f (numerical), see the module doc.
    """
    series = [replicas_of(x) for x in observables]
    shapes = [[len(x) for x in reps] for reps in series]
    if any(s != shapes[0] for s in shapes):
        raise ValueError(f"observables differ in shape: {shapes}")
    lengths = np.array(shapes[0], dtype=np.float64)
    n_total = int(lengths.sum())
    if n_total == 0:
        raise ValueError("no data")
    per_replica = np.array([[x.mean() if len(x) else 0.0 for x in reps] for reps in series])
    means = per_replica @ lengths / n_total  # [n_obs]
    value = float(f(means))

    # Gradient by central differences, step 1/5 of each observable's naive error.
    gradient = np.zeros(len(series))
    for alpha, reps in enumerate(series):
        variance = sum(float(np.sum((x - means[alpha]) ** 2)) for x in reps) / n_total
        step = 0.2 * math.sqrt(variance / n_total)
        if step == 0.0:
            continue  # no fluctuations: its derivative does not matter
        up, down = means.copy(), means.copy()
        up[alpha] += step
        down[alpha] -= step
        gradient[alpha] = (float(f(up)) - float(f(down))) / (2.0 * step)
    if not np.all(np.isfinite(gradient)):
        raise ValueError(f"the derived quantity has no finite gradient at the means: {gradient}")

    deltas = []
    for r in range(len(lengths)):
        d = np.zeros(int(lengths[r]))
        for alpha, reps in enumerate(series):
            if gradient[alpha] != 0.0:
                d += gradient[alpha] * (reps[r] - means[alpha])
        deltas.append(d)

    replicas = len(lengths)
    if replicas >= 2 and np.all(lengths > 0):
        # Cancel the O(1/N) bias of a nonlinear f with the per-replica estimates (Wolff).
        try:
            per = np.array([float(f(per_replica[:, r])) for r in range(replicas)])
            if np.all(np.isfinite(per)):
                value = (replicas * value - float(per @ lengths) / n_total) / (replicas - 1)
        except (ZeroDivisionError, FloatingPointError, ValueError):
            pass
    return _analyse(deltas, value, stau, max_lag, plot_lags)


# --------------------------------------------------------------------------- jackknife


@dataclass
class JackknifeResult:
    value: np.ndarray  #: the estimator on all data
    error: np.ndarray
    samples: np.ndarray = field(repr=False)  #: [K, ...] leave-one-block-out estimates
    block_length: int = 0
    blocks: int = 0

    @property
    def bias_corrected(self):
        """K theta - (K - 1) mean(theta_k): the jackknife estimate with its O(1/N) bias removed."""
        k = self.blocks
        return k * self.value - (k - 1) * np.mean(self.samples, axis=0)


def jackknife_error(samples):
    """sqrt((K-1)/K sum_k (theta_k - mean theta)^2) of leave-one-out estimates [K, ...]."""
    samples = np.asarray(samples, dtype=np.float64)
    k = samples.shape[0]
    if k < 2:
        return np.full(samples.shape[1:], np.nan)
    deviation = samples - samples.mean(axis=0)
    return np.sqrt((k - 1) / k * np.sum(deviation ** 2, axis=0))


def block_bounds(lengths, block_length):
    """Blocks of consecutive measurements within each replica: a list of (replica, start,
    stop). Each replica of length n gives max(1, n // block_length) blocks; the remainder
    joins its last block."""
    bounds = []
    for r, n in enumerate(lengths):
        if n == 0:
            continue
        count = max(1, n // block_length)
        for b in range(count):
            stop = n if b == count - 1 else (b + 1) * block_length
            bounds.append((r, b * block_length, stop))
    return bounds


def choose_block_length(tau_int, lengths, *, factor=20.0, min_blocks=20, max_blocks=200):
    """A block length for a blocked jackknife: `factor` times the largest tau_int (in
    measurements), so that blocks are much longer than the autocorrelation time, but short
    enough for at least min_blocks blocks over all replicas, and long enough for at most
    max_blocks. Returns (block_length, ok) where ok is False when min_blocks forced blocks
    shorter than factor * tau_int (the errors may then be underestimated)."""
    lengths = [int(n) for n in lengths if n > 0]
    if not lengths:
        raise ValueError("no data")
    total = sum(lengths)
    wanted = max(1, int(math.ceil(factor * max(tau_int, 0.5))))
    wanted = max(wanted, int(math.ceil(total / max_blocks)))
    if sum(n // wanted for n in lengths) >= min_blocks:
        return wanted, True
    # Too little data: the longest blocks that still give min_blocks blocks.
    length = max(1, total // min_blocks)
    while length > 1 and sum(n // length for n in lengths) < min_blocks:
        length -= 1
    return length, length >= factor * max(tau_int, 0.5)


def blocked_jackknife(observables, estimator, block_length):
    """Blocked jackknife of estimator(*series) over observables measured together.

    observables: a list of data ([N], [n, R] or a list of replicas, all shaped alike).
    estimator receives one 1-D array per observable holding the kept measurements of all
    replicas concatenated (so it must not depend on their order across replicas: means, sums,
    reweighted averages) and returns a number or an array.
    Blocks are consecutive runs of block_length measurements within a replica.
    """
    series = [replicas_of(x) for x in observables]
    lengths = [len(x) for x in series[0]]
    if any([len(x) for x in reps] != lengths for reps in series):
        raise ValueError("observables differ in shape")
    bounds = block_bounds(lengths, block_length)
    full = [np.concatenate(reps) for reps in series]
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    value = np.asarray(estimator(*full), dtype=np.float64)
    samples = []
    for r, start, stop in bounds:
        keep = np.ones(offsets[-1], dtype=bool)
        keep[offsets[r] + start:offsets[r] + stop] = False
        samples.append(np.asarray(estimator(*(x[keep] for x in full)), dtype=np.float64))
    samples = np.array(samples)
    return JackknifeResult(value, jackknife_error(samples), samples, block_length, len(bounds))
