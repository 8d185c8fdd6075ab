"""Per-run analysis: thermalisation cut, primary observables and derived quantities with
Gamma-method errors (the `summary` command).

Thermalisation cut (automatic): the smallest cut c from {0, 1/16, 1/8, 1/4, 1/2} of the
measurements (per replica) such that, in the kept part, the means of its first and second
halves agree within 3 combined errors for both e and m^2 (all replicas together), the
combined error being sqrt(2) times the Gamma-method error of the second half's mean (a drift
inside the first half would inflate that half's own Gamma error and so hide itself). sim
already discards run.thermalization sweeps, so c = 0 is allowed. When no candidate passes,
1/2 is cut and a warning says that the series drifts. `--cut N` overrides.

Quantities (per site; V = number of sites, beta the simulated coupling):
    primary: e, m, |m|, m^2, m^4, e^2
    U4      = 1 - <m^4> / (3 <m^2>^2)                   Binder cumulant
    chi     = beta V (<m^2> - <|m|>^2)                  susceptibility (|m| convention)
    chi'    = beta V <m^2>                              only at h = 0 (<m> = 0 by symmetry)
    chi_c   = beta V (<m^2> - <m>^2)                    only at h != 0 (connected)
    C       = beta^2 V (<e^2> - <e>^2)                  specific heat
"""

import math
from dataclasses import dataclass, field

import numpy as np

from analysis import gamma

CUT_FRACTIONS = (0.0, 1.0 / 16, 1.0 / 8, 1.0 / 4, 1.0 / 2)
CUT_SIGMAS = 3.0
CUT_RULE = ("smallest of 0, 1/16, 1/8, 1/4, 1/2 of the series whose kept part has first- and "
            "second-half means of e and m^2 agreeing within 3 sqrt(2) times the Gamma error "
            "of the second half's mean")

PRIMARY_NAMES = ("e", "m", "|m|", "m^2", "m^4", "e^2")


_PRIMARY = {
    "e": lambda e, m: e,
    "m": lambda e, m: m,
    "|m|": lambda e, m: np.abs(m),
    "m^2": lambda e, m: m * m,
    "m^4": lambda e, m: (m * m) ** 2,
    "e^2": lambda e, m: e * e,
}


def primary(name, e, m):
    """One primary observable as a list of replica arrays, from e and m replica lists."""
    return [_PRIMARY[name](x, y) for x, y in zip(e, m)]


def primary_series(e, m):
    """The primary observables as lists of replica arrays, from e and m replica lists."""
    return {name: primary(name, e, m) for name in PRIMARY_NAMES}


def derived_quantities(beta, volume, h):
    """(name, inputs, f, description) of the derived quantities; f takes the means of inputs."""
    specs = [
        ("U4", ("m^4", "m^2"), lambda a: 1.0 - a[0] / (3.0 * a[1] ** 2),
         "1 - <m^4>/(3 <m^2>^2)"),
        ("chi", ("m^2", "|m|"), lambda a: beta * volume * (a[0] - a[1] ** 2),
         "beta V (<m^2> - <|m|>^2)"),
    ]
    if h == 0.0:
        specs.append(("chi'", ("m^2",), lambda a: beta * volume * a[0], "beta V <m^2>"))
    else:
        specs.append(("chi_c", ("m^2", "m"), lambda a: beta * volume * (a[0] - a[1] ** 2),
                      "beta V (<m^2> - <m>^2)"))
    specs.append(("C", ("e^2", "e"), lambda a: beta ** 2 * volume * (a[0] - a[1] ** 2),
                  "beta^2 V (<e^2> - <e>^2)"))
    return specs


def _halves_agree(series):
    """Whether the first and second halves of every replica list in `series` have means
    within CUT_SIGMAS combined errors; also the largest z found.

    The combined error is sqrt(2) times the Gamma error of the second half's mean: a drift
    in the first half would count as slow fluctuations there and inflate that half's own
    error, hiding itself; the later half is the better sample of equilibrium."""
    worst = 0.0
    for reps in series:
        first = sum(float(x[:len(x) // 2].sum()) for x in reps) / sum(len(x) // 2
                                                                       for x in reps)
        second = gamma.analyse([x[len(x) // 2:2 * (len(x) // 2)] for x in reps])
        spread = math.sqrt(2.0) * second.error
        difference = abs(first - second.value)
        if spread == 0.0:
            z = 0.0 if difference == 0.0 else math.inf
        else:
            z = difference / spread
        worst = max(worst, z)
    return worst <= CUT_SIGMAS, worst


def choose_cut(e, m):
    """The automatic thermalisation cut (measurements per replica) for replica lists e, m of
    equal lengths n. Returns (cut, drift_free, z): drift_free False means no candidate passed
    and n/2 is cut; z is the largest half-vs-half deviation (in errors) of the chosen cut."""
    n = min(len(x) for x in e)
    z = 0.0
    for fraction in CUT_FRACTIONS:
        cut = int(math.floor(fraction * n))
        if n - cut < 8:
            break
        ok, z = _halves_agree([[x[cut:] for x in e], [(x[cut:]) ** 2 for x in m]])
        if ok:
            return cut, True, z
    return n // 2, False, z


@dataclass
class Prepared:
    """The analysed part of one run (or of several runs at the same parameters)."""

    paths: list
    beta: float
    h: float
    dims: tuple
    volume: int
    e: list  #: per-replica arrays of energy per site, after the cut
    m: list  #: per-replica arrays of magnetization per site, after the cut
    cut: int  #: measurements per replica discarded
    auto_cut: bool
    drift_free: bool
    measurements: int  #: committed measurements per replica (before the cut)
    spacing: float  #: sweeps between measurements (None with fewer than 2)
    run: object = None  #: the LatticaFile (first one when merged)
    warnings: list = field(default_factory=list)
    _gammas: dict = field(default_factory=dict, repr=False)

    @property
    def replicas(self):
        return len(self.e)

    @property
    def used(self):
        return sum(len(x) for x in self.e)

    def primaries(self):
        return primary_series(self.e, self.m)

    def gamma(self, name):
        """Gamma analysis of a primary observable (cached)."""
        if name not in self._gammas:
            self._gammas[name] = gamma.analyse(primary(name, self.e, self.m))
        return self._gammas[name]

    def max_tau(self, names=("e", "|m|", "m^2")):
        return max(self.gamma(name).tau_int for name in names)


def prepare(run, cut=None):
    """The analysed part of a LatticaFile: the thermalisation cut (automatic when cut is
    None, else cut measurements per replica) applied to every replica."""
    if "energy" not in run.chains or "magnetization" not in run.chains:
        raise ValueError(f"{run.path}: needs observables energy and magnetization")
    energy, magnetization = run.chains["energy"], run.chains["magnetization"]
    n = energy.shape[0]
    if n < 2:
        raise ValueError(f"{run.path}: {n} committed measurements; at least 2 are needed")
    warnings = list(run.warnings)
    e = [energy[:, r] for r in range(energy.shape[1])]
    m = [magnetization[:, r] for r in range(magnetization.shape[1])]
    auto = cut is None
    drift_free = True
    if auto:
        cut, drift_free, z = choose_cut(e, m)
        if not drift_free:
            warnings.append(f"the series drifts: even after cutting half of it, its halves "
                            f"differ by {z:.1f} errors; run longer")
    if not 0 <= cut <= n - 2:
        raise ValueError(f"{run.path}: cannot cut {cut} of {n} measurements")
    return Prepared([run.path], run.beta, run.h, run.dims, run.volume,
                    [x[cut:] for x in e], [x[cut:] for x in m], cut, auto, drift_free, n,
                    run.sweep_spacing, run, warnings)


def merge(prepared):
    """Several Prepared runs at the same (dims, beta, h) as one with all their replicas."""
    first = prepared[0]
    if len(prepared) == 1:
        return first
    for p in prepared[1:]:
        if (p.dims, p.beta, p.h) != (first.dims, first.beta, first.h):
            raise ValueError("merge: runs differ in parameters")
    warnings = [w for p in prepared for w in p.warnings]
    return Prepared([path for p in prepared for path in p.paths], first.beta, first.h,
                    first.dims, first.volume, [x for p in prepared for x in p.e],
                    [x for p in prepared for x in p.m], first.cut,
                    all(p.auto_cut for p in prepared), all(p.drift_free for p in prepared),
                    first.measurements, first.spacing, first.run, warnings)


def _finite(x):
    return None if x is None or not math.isfinite(x) else float(x)


def _gamma_dict(result, spacing):
    d = {key: _finite(value) if isinstance(value, float) else value
         for key, value in result.as_dict().items()}
    d["mean"] = d.pop("value")
    if spacing is not None:
        d["tau_int_sweeps"] = _finite(result.tau_int * spacing)
        d["tau_int_sweeps_error"] = _finite(result.tau_int_error * spacing)
    return d


def summarize(p):
    """Means, errors and autocorrelation times of a Prepared run as a plain dict."""
    a = p.run.attrs if p.run is not None else {}
    observables = {}
    for name in PRIMARY_NAMES:
        observables[name] = _gamma_dict(p.gamma(name), p.spacing)
    derived = {}
    for name, inputs, f, description in derived_quantities(p.beta, p.volume, p.h):
        try:
            result = gamma.analyse_derived(f, [primary(i, p.e, p.m) for i in inputs])
        except (ValueError, ZeroDivisionError) as e:
            p.warnings.append(f"{name}: {e}")
            continue
        d = _gamma_dict(result, p.spacing)
        d["value"] = d.pop("mean")
        d["definition"] = description
        derived[name] = d
    dims = list(p.dims)
    return {
        "file": p.paths[0] if len(p.paths) == 1 else p.paths,
        "model": a.get("model"),
        "algorithm": a.get("algorithm"),
        "lattice_dims": dims,
        "L": dims[0] if len(set(dims)) == 1 else dims,
        "volume": p.volume,
        "beta": p.beta,
        "h": p.h,
        "replicas": p.replicas,
        "point_index": p.run.point_index if p.run is not None else None,
        "seed": a.get("seed"),
        "measurements": p.measurements,
        "cut": p.cut,
        "cut_rule": CUT_RULE if p.auto_cut else "given (--cut)",
        "drift_free": p.drift_free,
        "measurements_used_per_replica": p.used // max(p.replicas, 1),
        "measurements_used": p.used,
        "sweep_spacing": p.spacing,
        "observables": observables,
        "derived": derived,
        "warnings": list(p.warnings),
    }


def format_value(value, error):
    """'value ± error' with the error to two significant digits."""
    if value is None:
        return "-"
    if error is None or not math.isfinite(error) or error <= 0:
        return f"{value:.10g} ± {error if error is not None else '-'}"
    digits = max(0, 1 - int(math.floor(math.log10(error))))
    return f"{value:.{digits}f} ± {error:.{digits}f}"


def format_summary(s):
    """A readable table of a summarize() dict."""
    lines = []
    dims = "x".join(str(n) for n in s["lattice_dims"])
    where = f", sweep point {s['point_index']}" if s["point_index"] is not None else ""
    files = s["file"] if isinstance(s["file"], str) else ", ".join(s["file"])
    lines.append(f"{files}")
    lines.append(f"  {s['model']} ({s['algorithm']}), lattice {dims} (V = {s['volume']}), "
                 f"beta = {s['beta']!r}, h = {s['h']!r}, replicas = {s['replicas']}{where}")
    spacing = s["sweep_spacing"]
    how = "automatic" if s["cut_rule"] != "given (--cut)" else "given"
    lines.append(f"  measurements: {s['measurements']} per replica, cut {s['cut']} ({how}), "
                 f"used {s['measurements_used_per_replica']} x {s['replicas']} = "
                 f"{s['measurements_used']}; "
                 + (f"{spacing:g} sweeps apart" if spacing is not None else "spacing unknown"))
    header = (f"  {'quantity':<8} {'mean ± error':>30} {'tau_int (meas.)':>18} "
              f"{'tau_int (sweeps)':>17} {'W':>6}")
    lines.append(header)
    for name, d in s["observables"].items():
        lines.append(_row(name, d["mean"], d))
    lines.append(f"  {'derived':<8} {'value ± error':>30}")
    for name, d in s["derived"].items():
        lines.append(_row(name, d["value"], d) + f"   {d['definition']}")
    for w in s["warnings"]:
        lines.append(f"  warning: {w}")
    return "\n".join(lines)


def _row(name, value, d):
    tau = format_value(d["tau_int"], d["tau_int_error"])
    sweeps = d.get("tau_int_sweeps")
    sweeps = f"{sweeps:.3g}" if sweeps is not None else "-"
    window = f"{d['window']}" + ("" if d["window_found"] else "!")
    return (f"  {name:<8} {format_value(value, d['error']):>30} {tau:>18} {sweeps:>17} "
            f"{window:>6}")
