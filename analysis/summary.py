"""Per-run analysis: thermalisation cut, primary observables and derived quantities with
Gamma-method errors (the `summary` command).

Thermalisation cut (automatic): the smallest cut c from {0, 1/16, 1/8, 1/4, 1/2} of the
measurements (per replica) such that, in the kept part, the means of its first and second
halves agree within 3 combined errors for both e and m^2 (all replicas together), the
combined error being sqrt(2) times the Gamma-method error of the second half's mean (a drift
inside the first half would inflate that half's own Gamma error and so hide itself). sim
already discards run.thermalization sweeps, so c = 0 is allowed. When no candidate passes,
1/2 is cut and a warning says that the series drifts. `--cut N` overrides.

Per model, e is the energy-like series and m the order parameter (per site; V = number of
sites, beta the simulated coupling):
    ising, potts  e = energy, m = magnetization (signed for Ising)
    on            e = energy (with the h term), m = magnetization = |m|, the modulus of the
                  magnetisation vector; the components are magnetization_0 .. _{n-1}
    phi4          m = phi (signed mean field), no energy: the action density S/V stands in for
                  e in the thermalisation check; no beta

Primary observables:
    ising, potts  e, m, |m|, m^2, m^4, e^2; m2_improved where the file has it (below)
    on            e, |m|, m^2, m^4, e^2; m_0, m_0^2 (component along h, only at h != 0);
                  n = 2: helicity_0 .. _{d-1} (each one's mean is the helicity modulus)
    phi4          m, |m|, m^2, m^4, phi2 (local (1/V) sum phi_x^2), link, action

Derived quantities (b = beta, or 1 for phi4, whose action already holds the couplings):
    U4      = 1 - <m^4> / (3 <m^2>^2)                   Binder cumulant, scalar m (2/3
                                                        ordered, 0 for Gaussian m)
            = (n+2)/2 (1 - n/(n+2) <m^4>/<m^2>^2)       O(n), m the n-vector: 1 ordered, 0 for
                                                        a Gaussian m vector
    chi     = b V (<m^2> - <|m|>^2)                     susceptibility (|m| convention)
    chi'    = b V <m^2>                                 only at h = 0 (<m> = 0 by symmetry)
    chi_c   = b V (<m^2> - <m>^2)                       only at h != 0 (connected; O(n): of
                                                        m_0, the component along the field)
    C       = beta^2 V (<e^2> - <e>^2)                  specific heat (not for phi4)
    Upsilon = (1/d) sum_a <helicity_a>                  O(2): helicity modulus, axis average

Improved estimator (Ising and Potts, from a cluster pass at h = 0): where the file has the
series m2_improved (an improved estimator of <M^2>/V = V <m^2>: sum_C |C|^2 / V over the
clusters of a Swendsen-Wang pass, the mean cluster size of a Wolff pass), it is a primary
observable too, and summary compares it with the plain estimator V <m^2> from the
magnetization series (Potts: |m|^2 of the modulus): both with their Gamma-method errors and
tau_int, their difference with the Gamma error of the paired differences V m_t^2 -
m2_improved_t (the two are measured on the same configurations, so their errors are
correlated; this is the combined error with the covariance included), the difference in
those errors (a warning beyond 3), and the ratio of the plain error to the improved one.

With /correlators/structure_factor/series (measure.structure_factor = true), also S(0),
S(k_min) and the second-moment correlation length
    xi2     = sqrt(<S(0)>/<S(k_min)> - 1) / (2 sin(pi/L))   L the longest extent
from the means of the series rows taken at or after the first sweep the cut keeps, with
Gamma-method errors (correlators.py); the file's own xi2 attribute (all samples, no cut, no
error) is shown next to it.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from analysis import correlators, gamma

CUT_FRACTIONS = (0.0, 1.0 / 16, 1.0 / 8, 1.0 / 4, 1.0 / 2)
CUT_SIGMAS = 3.0
CUT_RULE = ("smallest of 0, 1/16, 1/8, 1/4, 1/2 of the series whose kept part has first- and "
            "second-half means of e and m^2 agreeing within 3 sqrt(2) times the Gamma error "
            "of the second half's mean")

PRIMARY_NAMES = ("e", "m", "|m|", "m^2", "m^4", "e^2")  # Ising and Potts
IMPROVED = "m2_improved"  #: a cluster pass's improved estimator of <M^2>/V (Ising, Potts)
IMPROVED_MODELS = ("ising", "potts")
IMPROVED_SIGMAS = 3.0  #: a larger plain - improved difference (in its errors) is warned about


_PRIMARY = {
    "e": lambda e, m: e,
    "m": lambda e, m: m,
    "|m|": lambda e, m: np.abs(m),
    "m^2": lambda e, m: m * m,
    "m^4": lambda e, m: (m * m) ** 2,
    "e^2": lambda e, m: e * e,
}


def chain_names(model):
    """(energy-like chain, order-parameter chain) of a model's file."""
    return ("action", "phi") if model == "phi4" else ("energy", "magnetization")


def primary_names(model="ising", components=1, h=0.0, helicity_axes=0, improved=False):
    """The primary observables summary reports for a model (see the module doc);
    helicity_axes: how many helicity_a series an O(2) file has (d, or 0 without them);
    improved: the file has the m2_improved series (reported for Ising and Potts)."""
    if model == "phi4":
        return ["m", "|m|", "m^2", "m^4", "phi2", "link", "action"]
    if model == "on":
        names = ["e", "|m|", "m^2", "m^4", "e^2"]  # m is already the modulus: no separate |m|
        if h != 0.0:
            names += ["m_0", "m_0^2"]
        names += [f"helicity_{a}" for a in range(helicity_axes)]
        return names
    return list(PRIMARY_NAMES) + ([IMPROVED] if improved and model in IMPROVED_MODELS else [])


def primary(name, e, m, extra=None):
    """One primary observable as a list of replica arrays, from the e and m replica lists;
    names other than those of e and m are other chains of the file, in extra
    ({chain name: replica list}); m_0 is magnetization_0 and a trailing ^2 squares."""
    if name in _PRIMARY:
        return [_PRIMARY[name](x, y) for x, y in zip(e, m)]
    if name == "action":  # phi4's energy-like series
        return list(e)
    if name.endswith("^2"):
        return [x * x for x in primary(name[:-2], e, m, extra)]
    return list((extra or {})["magnetization_0" if name == "m_0" else name])


def binder(m4, m2, components=1):
    """The Binder cumulant from <m^4> and <m^2> (numbers or arrays).

    Scalar order parameter (components = 1): the Ising convention 1 - <m^4>/(3 <m^2>^2),
    0 for Gaussian m, 2/3 when ordered. O(n) vector m (components = n): with r =
    <|m|^4>/<|m|^2>^2 a Gaussian m vector has r = (n+2)/n (each component contributes 3 s^4,
    each pair of components 2 s^4) and an ordered one (fixed |m|) r = 1, so
    U = (n+2)/2 (1 - n/(n+2) r) is 0 and 1 there."""
    if components == 1:
        return 1.0 - m4 / (3.0 * m2 * m2)
    n = components
    return 0.5 * ((n + 2) - n * m4 / (m2 * m2))


def derived_quantities(beta, volume, h, model="ising", components=1, helicity_axes=0):
    """(name, inputs, f, description) of the derived quantities; f takes the means of inputs.
    beta None (phi4): the susceptibilities carry no beta factor and there is no C.
    helicity_axes: d for an O(2) run with its helicity_a series, else 0."""
    n = components
    if n == 1:
        u4 = "1 - <m^4>/(3 <m^2>^2)"
    else:
        u4 = f"(n+2)/2 (1 - n/(n+2) <m^4>/<m^2>^2), n = {n} (0 Gaussian m vector, 1 ordered)"
    b, bv = (beta, "beta V") if beta is not None else (1.0, "V")
    note = " (no beta: phi4 has none)" if beta is None else ""
    specs = [
        ("U4", ("m^4", "m^2"), lambda a: binder(a[0], a[1], n), u4),
        ("chi", ("m^2", "|m|"), lambda a: b * volume * (a[0] - a[1] ** 2),
         f"{bv} (<m^2> - <|m|>^2){note}"),
    ]
    if h == 0.0:
        specs.append(("chi'", ("m^2",), lambda a: b * volume * a[0], f"{bv} <m^2>{note}"))
    elif model == "on":  # connected, along the field: the modulus is never centred
        specs.append(("chi_c", ("m_0^2", "m_0"), lambda a: b * volume * (a[0] - a[1] ** 2),
                      f"{bv} (<m_0^2> - <m_0>^2), m_0 along h"))
    else:
        specs.append(("chi_c", ("m^2", "m"), lambda a: b * volume * (a[0] - a[1] ** 2),
                      f"{bv} (<m^2> - <m>^2){note}"))
    if beta is not None:
        # beta * beta: a huge beta gives inf (reported as not finite); beta ** 2 would raise.
        specs.append(("C", ("e^2", "e"), lambda a: beta * beta * volume * (a[0] - a[1] ** 2),
                      "beta^2 V (<e^2> - <e>^2)"))
    if helicity_axes:
        axes = tuple(f"helicity_{a}" for a in range(helicity_axes))
        specs.append(("Upsilon", axes, lambda a: float(np.mean(a)),
                      f"helicity modulus, (1/{helicity_axes}) sum_a <helicity_a>"))
    return specs


def model_notes(model):
    """What a reader of a summary of this model should know about its conventions."""
    if model == "on":
        return ["m is |m|, the modulus of the magnetisation vector (1/V) sum_i s_i; U4 is the "
                "O(n) Binder cumulant normalised to 0 (Gaussian m vector) and 1 (ordered)"]
    if model == "phi4":
        return ["m = phi, the signed mean field (1/V) sum_x phi_x; phi2 is the local "
                "(1/V) sum_x phi_x^2, not m^2. phi4 has no beta: chi carries no beta factor and "
                "there is no specific heat; the action density stands in for e in the "
                "thermalisation check"]
    return []


def model_parameters(run):
    """The model's parameters from a LatticaFile's attributes, in display order."""
    names = {"on": ("n", "beta", "h"), "phi4": ("kappa", "lambda", "h"),
             "potts": ("q", "beta", "h")}.get(run.model, ("beta", "h"))
    return {name: run.attrs.get(name, 0.0 if name == "h" else None) for name in names}


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
    beta: float  #: None for phi4
    h: float
    dims: tuple
    volume: int
    e: list  #: per-replica arrays of the energy-like series per site, after the cut
    m: list  #: per-replica arrays of the order parameter per site, after the cut
    cut: int  #: measurements per replica discarded
    auto_cut: bool
    drift_free: bool
    measurements: int  #: committed measurements per replica (before the cut)
    spacing: float  #: sweeps between measurements (None with fewer than 2)
    run: object = None  #: the LatticaFile (first one when merged)
    warnings: list = field(default_factory=list)
    model: str = "ising"
    components: int = 1  #: n for O(n), else 1
    parameters: dict = field(default_factory=dict)  #: the model's parameters, for display
    extra: dict = field(default_factory=dict)  #: other chains: name -> replica list, cut
    _gammas: dict = field(default_factory=dict, repr=False)

    @property
    def replicas(self):
        return len(self.e)

    @property
    def used(self):
        return sum(len(x) for x in self.e)

    @property
    def coupling_name(self):
        return "kappa" if self.model == "phi4" else "beta"

    @property
    def coupling(self):
        """beta, or kappa for phi4: what a sweep over this model varies."""
        return self.beta if self.beta is not None else self.parameters.get("kappa")

    @property
    def energy_name(self):
        return "action" if self.model == "phi4" else "e"

    @property
    def helicity_axes(self):
        """d when this is an O(2) run with all its helicity_a series, else 0."""
        axes = [f"helicity_{a}" for a in range(len(self.dims))]
        wanted = self.model == "on" and self.components == 2
        return len(axes) if wanted and all(a in self.extra for a in axes) else 0

    @property
    def has_improved(self):
        """An Ising or Potts run with the m2_improved series of a cluster pass."""
        return self.model in IMPROVED_MODELS and IMPROVED in self.extra

    def primary_names(self):
        return primary_names(self.model, self.components, self.h, self.helicity_axes,
                             self.has_improved)

    def series(self, name):
        stored = self.stored_moment(name)
        return list(self.extra[stored]) if stored else primary(name, self.e, self.m, self.extra)

    def stored_moment(self, name):
        """The file's series of primary `name` when the run wrote replica means
        (output.observables = "means": the mean of |x|, x^2 and x^4 of every observable x,
        since a power of a mean is not the mean of the power), else None."""
        energy, order = chain_names(self.model)
        stored = {"|m|": f"|{order}|", "m^2": f"{order}^2", "m^4": f"{order}^4",
                  "e^2": f"{energy}^2"}.get(name)
        if stored is None and name.endswith("^2"):
            stored = ("magnetization_0" if name == "m_0^2" else name[:-2]) + "^2"
        return stored if stored in self.extra else None

    def primaries(self):
        return {name: self.series(name) for name in self.primary_names()}

    def gamma(self, name):
        """Gamma analysis of a primary observable (cached)."""
        if name not in self._gammas:
            self._gammas[name] = gamma.analyse(self.series(name))
        return self._gammas[name]

    def max_tau(self, names=None):
        names = names or (self.energy_name, "|m|", "m^2")
        return max(self.gamma(name).tau_int for name in names)


def prepare(run, cut=None):
    """The analysed part of a LatticaFile: the thermalisation cut (automatic when cut is
    None, else cut measurements per replica) applied to every replica."""
    if run.tempered:
        raise ValueError(f"{run.path}: a parallel-tempering run, whose columns are rungs of "
                         f"different couplings: use 'python3 -m analysis tempering'")
    energy_name, order_name = chain_names(run.model)
    needed = [energy_name, order_name]
    if run.model == "on" and run.h != 0.0:
        needed.append("magnetization_0")
    missing = [name for name in needed if name not in run.chains]
    if missing:
        raise ValueError(f"{run.path}: needs observables {', '.join(needed)}; missing "
                         f"{', '.join(missing)}")
    for name, chain in run.chains.items():
        bad = np.argwhere(~np.isfinite(chain))
        if len(bad):
            k, r = bad[0]
            raise ValueError(f"{run.path}: {name} is {chain[k, r]} at sweep {run.sweep[k]} "
                             f"(replica {r}): the run overflowed, and values that are not "
                             f"finite cannot be analysed (sim now refuses such couplings, or "
                             f"stops with exit status 3)")
    energy, magnetization = run.chains[energy_name], run.chains[order_name]
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
    extra = {name: [chain[cut:, r] for r in range(chain.shape[1])]
             for name, chain in run.chains.items() if name not in (energy_name, order_name)}
    prepared = Prepared([run.path], run.beta, run.h, run.dims, run.volume,
                        [x[cut:] for x in e], [x[cut:] for x in m], cut, auto, drift_free, n,
                        run.sweep_spacing, run, warnings, model=run.model,
                        components=run.components, parameters=model_parameters(run),
                        extra=extra)
    if run.model == "on" and run.components == 2 and not prepared.helicity_axes:
        warnings.append("no helicity_0 .. helicity_{d-1} series: no helicity modulus")
    return prepared


def merge(prepared):
    """Several Prepared runs of one model at the same dims and parameters as one with all
    their replicas."""
    first = prepared[0]
    if len(prepared) == 1:
        return first
    for p in prepared[1:]:
        if (p.model, p.dims, p.parameters) != (first.model, first.dims, first.parameters):
            raise ValueError("merge: runs differ in parameters")
    warnings = [w for p in prepared for w in p.warnings]
    shared = set.intersection(*(set(p.extra) for p in prepared))
    extra = {name: [x for p in prepared for x in p.extra[name]] for name in shared}
    return Prepared([path for p in prepared for path in p.paths], first.beta, first.h,
                    first.dims, first.volume, [x for p in prepared for x in p.e],
                    [x for p in prepared for x in p.m], first.cut,
                    all(p.auto_cut for p in prepared), all(p.drift_free for p in prepared),
                    first.measurements, first.spacing, first.run, warnings, model=first.model,
                    components=first.components, parameters=first.parameters, extra=extra)


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


def structure_factor_summary(p):
    """S(0), S(k_min) and xi2 = sqrt(<S(0)>/<S(k_min)> - 1) / (2 sin(pi/L)) with Gamma-method
    errors from the run's /correlators/structure_factor/series (rows at or after the first
    sweep the cut keeps), as a plain dict; None when the run has no such series."""
    sf = p.run.structure_factor if p.run is not None else None
    if sf is None or len(p.paths) != 1:
        return None
    first_sweep = correlators.cut_sweep(p.run, p.cut)
    r = correlators.xi2_from_series(sf, first_sweep)
    d = {"series_rows": len(sf), "every": sf.every, "L": sf.longest,
         "file_xi2": _finite(sf.xi2) if sf.xi2 is not None else None,
         "file_samples": sf.samples, "complete": sf.complete}
    if r is None:
        kept = len(sf) - correlators.first_kept_row(sf.sweep, first_sweep)
        d["problem"] = f"{len(sf)} series rows, {kept} after the cut: too few for an error"
        return d
    d.update({"cut_rows": r.cut_rows, "rows_used": r.rows, "spacing": r.spacing,
              "S(0)": _gamma_dict(r.s0, r.spacing), "S(k_min)": _gamma_dict(r.s_min, r.spacing)})
    if r.xi2 is not None:
        x = _gamma_dict(r.xi2, r.spacing)
        x["value"] = x.pop("mean")
        x["definition"] = f"{correlators.XI2_DEFINITION}, L = {sf.longest}"
        d["xi2"] = x
    if r.problem:
        d["problem"] = r.problem
    return d


def improved_comparison(p):
    """The improved estimator m2_improved against the plain V <m^2> (see the module doc), as
    a plain dict; None when the run has no m2_improved series."""
    if not p.has_improved:
        return None
    volume = float(p.volume)
    plain_series = [volume * x * x for x in p.m]  # Potts: m is already the modulus |m|
    improved_series = p.series(IMPROVED)
    plain = _gamma_dict(gamma.analyse(plain_series), p.spacing)
    improved = _gamma_dict(p.gamma(IMPROVED), p.spacing)
    difference = _gamma_dict(gamma.analyse([a - b for a, b in zip(plain_series,
                                                                   improved_series)]),
                             p.spacing)
    d = {"definition": "improved estimator of <M^2>/V = V <m^2> (M = sum_i s_i; Potts: the "
                       "modulus of sum_i exp(2 pi i s_i / q))",
         "plain": dict(plain, estimator="V <m^2>"),
         "improved": dict(improved, estimator=IMPROVED),
         "difference": dict(difference, estimator="V m^2 - m2_improved, per measurement")}
    error = difference["error"]
    value = difference["mean"]
    d["difference"]["sigmas"] = (_finite(value / error) if error else
                                 (0.0 if value == 0.0 else None))
    uncorrelated = math.hypot(plain["error"] or 0.0, improved["error"] or 0.0)
    d["difference"]["uncorrelated_error"] = uncorrelated
    ratio = (_finite(plain["error"] / improved["error"])
             if plain["error"] is not None and improved["error"] else None)
    d["error_ratio"] = ratio  # plain / improved: > 1 when the improved one is better
    d["variance_ratio"] = None if ratio is None else ratio * ratio
    sigmas = d["difference"]["sigmas"]
    if sigmas is None or abs(sigmas) > IMPROVED_SIGMAS:
        shown = "an undefined number of" if sigmas is None else f"{abs(sigmas):.1f}"
        p.warnings.append(f"{IMPROVED} and V <m^2> differ by {shown} errors of their "
                          f"difference ({value:.6g} ± {error:.2g})")
    return d


def summarize(p):
    """Means, errors and autocorrelation times of a Prepared run as a plain dict."""
    a = p.run.attrs if p.run is not None else {}
    observables = {}
    for name in p.primary_names():
        observables[name] = _gamma_dict(p.gamma(name), p.spacing)
    derived = {}
    for name, inputs, f, description in derived_quantities(p.beta, p.volume, p.h, p.model,
                                                           p.components, p.helicity_axes):
        try:
            result = gamma.analyse_derived(f, [p.series(i) for i in inputs])
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
        "model": a.get("model", p.model),
        "algorithm": a.get("algorithm"),
        "parameters": dict(p.parameters),
        "lattice_dims": dims,
        "L": dims[0] if len(set(dims)) == 1 else dims,
        "volume": p.volume,
        "beta": p.beta,
        "h": p.h,
        "replicas": p.replicas,
        # output.observables = "means": each series is the mean of this many replicas
        "averaged_over": getattr(p.run, "averaged_over", 1) if p.run is not None else 1,
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
        "structure_factor": structure_factor_summary(p),
        IMPROVED: improved_comparison(p),
        "notes": model_notes(p.model),
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
    parameters = s.get("parameters") or {"beta": s["beta"], "h": s["h"]}
    described = ", ".join(f"{k} = {v!r}" for k, v in parameters.items())
    lines.append(f"  {s['model']} ({s['algorithm']}), lattice {dims} (V = {s['volume']}), "
                 f"{described}, replicas = {s['replicas']}{where}"
                 + (f" (each the mean of {s['averaged_over']})"
                    if s.get("averaged_over", 1) > 1 else ""))
    spacing = s["sweep_spacing"]
    how = "automatic" if s["cut_rule"] != "given (--cut)" else "given"
    lines.append(f"  measurements: {s['measurements']} per replica, cut {s['cut']} ({how}), "
                 f"used {s['measurements_used_per_replica']} x {s['replicas']} = "
                 f"{s['measurements_used']}; "
                 + (f"{spacing:g} sweeps apart" if spacing is not None else "spacing unknown"))
    width = max([8] + [len(name) for name in s["observables"]])
    header = (f"  {'quantity':<{width}} {'mean ± error':>30} {'tau_int (meas.)':>18} "
              f"{'tau_int (sweeps)':>17} {'W':>6}")
    lines.append(header)
    for name, d in s["observables"].items():
        lines.append(_row(name, d["mean"], d, width))
    lines.append(f"  {'derived':<{width}} {'value ± error':>30}")
    for name, d in s["derived"].items():
        lines.append(_row(name, d["value"], d, width) + f"   {d['definition']}")
    sf = s.get("structure_factor")
    if sf is not None:
        lines.extend(_structure_factor_lines(sf, width))
    if s.get(IMPROVED) is not None:
        lines.extend(_improved_lines(s[IMPROVED], width))
    for note in s.get("notes", []):
        lines.append(f"  note: {note}")
    for w in s["warnings"]:
        lines.append(f"  warning: {w}")
    return "\n".join(lines)


def _structure_factor_lines(sf, width):
    every = f", every {sf['every']} measurement(s)" if sf.get("every") else ""
    if "rows_used" in sf:
        header = (f"  structure factor (/correlators/structure_factor/series{every}): "
                  f"{sf['rows_used']} rows per replica after the cut ({sf['cut_rows']} cut)")
    else:
        header = f"  structure factor (/correlators/structure_factor/series{every})"
    lines = [header]
    for name in ("S(0)", "S(k_min)"):
        if name in sf:
            lines.append(_row(name, sf[name]["mean"], sf[name], width))
    if "xi2" in sf:
        x = sf["xi2"]
        lines.append(_row("xi2", x["value"], x, width) + f"   {x['definition']}")
    if sf.get("problem"):
        lines.append(f"  warning: structure factor: {sf['problem']}")
    if sf.get("file_xi2") is not None:
        lines.append(f"  note: the file's xi2 attribute (from <S> over all {sf['file_samples']} "
                     f"samples, no cut, no error): {sf['file_xi2']:.6g}")
    elif not sf.get("complete"):
        lines.append("  note: the structure-factor tables (S, G, xi2) are missing: the run did "
                     "not finish")
    return lines


def _improved_lines(c, width):
    """The table's comparison of the improved and plain estimators of <M^2>/V."""
    lines = [f"  {'<M^2>/V':<{width}} {'estimate ± error':>30}   (plain V <m^2> against the "
             f"cluster pass's improved estimator)"]
    lines.append(_row("V <m^2>", c["plain"]["mean"], c["plain"], width) + "   plain")
    lines.append(_row(IMPROVED, c["improved"]["mean"], c["improved"], width) + "   improved")
    difference = c["difference"]
    sigmas = difference["sigmas"]
    sigmas = f"{sigmas:+.2f}" if sigmas is not None else "?"
    lines.append(_row("difference", difference["mean"], difference, width)
                 + f"   plain - improved: {sigmas} errors of the paired differences "
                 f"(without their covariance: ± {difference['uncorrelated_error']:.2g})")
    ratio = c["error_ratio"]
    if ratio is not None:
        lines.append(f"  error ratio plain / improved: {ratio:.3g} (variance ratio "
                     f"{c['variance_ratio']:.3g}: "
                     + ("the improved estimator is the better one)" if ratio > 1 else
                        "the improved estimator is not better here)"))
    return lines


def _row(name, value, d, width=8):
    tau = format_value(d["tau_int"], d["tau_int_error"])
    sweeps = d.get("tau_int_sweeps")
    sweeps = f"{sweeps:.3g}" if sweeps is not None else "-"
    window = f"{d['window']}" + ("" if d["window_found"] else "!")
    return (f"  {name:<{width}} {format_value(value, d['error']):>30} {tau:>18} {sweeps:>17} "
            f"{window:>6}")
