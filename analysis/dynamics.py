"""Autocorrelation dynamics of update algorithms across lattice sizes (the `dynamics` command).

Each file is one run: one update sequence (root attribute `algorithm`, the passes joined with
", "), one lattice size, any number of replicas. Per run, after the thermalisation cut of
summary.py (`--cut` overrides it):

    tau_int of e (energy per site; phi4: the action density), |m| and m^2 by the Gamma method
    (gamma.py), all replicas combined, in sweeps: the measurement spacing (run.measure_every,
    read from the sweep series) times tau_int in measurements. A sweep is one pass of the
    whole update sequence: a "wolff" pass of update.wolff_clusters = N single clusters counts
    as one sweep, whatever N.
    L       the lattice extent (V^(1/d) with a warning when the extents differ)
    rate    site updates per ns as sim counts them: sweeps x V x replicas x passes of the
            sequence, over the run's seconds. sim prints it when the run ends ("... in S s (X
            site updates/ns, backend)", on stderr) but does not store it in the file, so it
            comes from a side file (--rates JSON, as tests/bench/cluster_dynamics.py writes
            it) or from --rate KEY=VALUE; without one there are no samples per second.
    samples independent samples per second (all replicas together) of an observable:
                rate 1e9 / (passes V 2 tau_int)
            (the run makes rate 1e9 / (passes V) sweeps per second, 2 tau_int of them per
            independent sample); for a sequence of one pass this is rate / (2 tau_int V).
    Wolff (a sequence of "wolff" alone, with m2_improved): the fraction of the sites flipped
    per sweep, f = N <|C|> / V (<|C|> = <m2_improved>, the mean size of the clusters grown,
    each seeded at a random site), and tau_int in the customary Wolff units, tau_int f
    (sweeps of flipped sites).

Per algorithm (runs of the same model, dimension and label: the sequence, with the Wolff
cluster count when it is not 1) and observable, the fit

    tau_int = A L^z     weighted least squares of ln tau_int = ln A + z ln L, weights
                        (tau_int / error)^2, over the algorithm's sizes (at least two); errors
                        of A and z from the covariance of the fit (not scaled by chi^2/dof;
                        the JSON also has them scaled by sqrt(chi^2/dof) where that is > 1)

over the sizes --fit-sizes MIN:MAX admits (default all; either bound may be left out, e.g.
64: for the sizes where corrections to scaling have faded), and, at L = --extrapolate
(default 4096, V = L^d), the fitted tau_int and the independent
samples per second with the rate of the algorithm's largest measured size (a GPU's rate grows
with the lattice until it is full, so this rather underestimates the rate at a large L; give
the rate at that size with --extrapolation-rate LABEL=VALUE, e.g. from `sim bench`), and the
gain of each algorithm over the reference one (--reference, default "metropolis"): its samples
per second over the reference's, at the extrapolated L and at every size both measured.
Errors of samples per second and gains come from the tau_int errors alone (the rates are
taken as exact).

A FILE may also be an earlier JSON document of this command (--json): its runs, with the rates
they had, are analysed again, so that a committed result can be refitted over other sizes or
extrapolated with other rates without the runs' files.
"""

import json
import math
import os
import tomllib
from dataclasses import dataclass, field

import numpy as np

from analysis import summary

OBSERVABLES = ("e", "|m|", "m^2")
RATES_SCHEMA = "lattica-rates/1"
DEFAULT_REFERENCE = "metropolis"
DEFAULT_EXTRAPOLATE = 4096
FIT_RULE = ("tau_int = A L^z: weighted least squares of ln tau_int = ln A + z ln L with "
            "weights (tau_int / error)^2; errors of A and z from the fit's covariance")
SAMPLES_RULE = "independent samples per second = rate 1e9 / (passes V 2 tau_int), all replicas"
DOCUMENT_SCHEMA = "lattica-dynamics/1"


def _finite(x):
    return None if x is None or not math.isfinite(x) else float(x)


def resolved_config(run):
    """The run's resolved configuration (TOML) as a dict, {} when it has none or it does not
    parse."""
    text = run.attrs.get("resolved_config")
    if not isinstance(text, str):
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _section(config, name):
    value = config.get(name)
    return value if isinstance(value, dict) else {}


def run_algorithm(run):
    """(algorithm, passes, wolff_clusters, label) of a LatticaFile: the update sequence as sim
    records it (passes joined with ", "), its passes, update.wolff_clusters (1 when the
    resolved configuration has none) and the label runs are grouped by."""
    algorithm = str(run.attrs.get("algorithm", "unknown"))
    passes = [a.strip() for a in algorithm.split(",") if a.strip()] or [algorithm]
    clusters = int(_section(resolved_config(run), "update").get("wolff_clusters", 1))
    return algorithm, passes, clusters, algorithm_label(algorithm, clusters)


def algorithm_label(algorithm, wolff_clusters=1):
    """An algorithm's label: the update sequence, with the Wolff cluster count when it is
    not 1 ("wolff (4 clusters)")."""
    passes = [a.strip() for a in algorithm.split(",")]
    if "wolff" in passes and wolff_clusters != 1:
        return f"{algorithm} ({wolff_clusters} clusters)"
    return algorithm


# --------------------------------------------------------------------------- rates


def parse_rate_option(text):
    """(key, value) of a --rate KEY=VALUE option: KEY a file (its path or name), a lattice
    size L, or LABEL:L (an algorithm's label and a size); VALUE in site updates per ns."""
    key, sep, value = text.rpartition("=")
    if not sep or not key.strip():
        raise ValueError(f"--rate {text!r}: expected KEY=VALUE (KEY a file, L or LABEL:L)")
    try:
        rate = float(value)
    except ValueError:
        raise ValueError(f"--rate {text!r}: {value!r} is not a number") from None
    if not rate > 0 or not math.isfinite(rate):
        raise ValueError(f"--rate {text!r}: the rate must be a positive number")
    return key.strip(), rate


def read_rates(path):
    """The side file of rates: {file: site updates per ns}. Accepts the document the bench
    driver writes (schema "lattica-rates/1": {"runs": [{"file": ..., "site_updates_per_ns":
    ...}, ...]}) or a plain object {file: rate}; files relative to the side file's directory
    are kept both as written and resolved against that directory."""
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    base = os.path.dirname(os.path.abspath(path))
    pairs = []
    if isinstance(document, dict) and "runs" in document:
        for entry in document["runs"]:
            if isinstance(entry, dict) and entry.get("site_updates_per_ns") is not None:
                pairs.append((str(entry["file"]), float(entry["site_updates_per_ns"])))
    elif isinstance(document, dict):
        pairs = [(str(k), float(v)) for k, v in document.items() if v is not None]
    else:
        raise ValueError(f"{path}: expected an object of rates")
    rates = {}
    for name, rate in pairs:
        rates[name] = rate
        rates[os.path.normpath(os.path.join(base, name))] = rate
    return rates


def find_rate(path, label, size, rate_options, side_rates):
    """The rate of a run (site updates per ns) and where it came from, or (None, None).
    --rate options come first (a file before LABEL:L before L), then the side file."""
    names = {path, os.path.abspath(path), os.path.normpath(path), os.path.basename(path)}
    by_file = by_label = by_size = None
    for key, value in rate_options:
        if key in names or os.path.abspath(key) == os.path.abspath(path):
            by_file = value
        else:
            prefix, sep, tail = key.rpartition(":")
            if sep and tail.strip() == str(size) and prefix.strip() == label:
                by_label = value
            elif key == str(size):
                by_size = value
    for value, source in ((by_file, "--rate (file)"), (by_label, "--rate (label:L)"),
                          (by_size, "--rate (L)")):
        if value is not None:
            return value, source
    for name in (path, os.path.abspath(path), os.path.normpath(os.path.abspath(path)),
                 os.path.basename(path)):
        if name in side_rates:
            return side_rates[name], "--rates"
    return None, None


# --------------------------------------------------------------------------- fits


@dataclass
class PowerLawFit:
    """tau = A L^z fitted to (L, tau, error) points; see fit_power_law."""

    amplitude: float  #: A
    amplitude_error: float
    z: float
    z_error: float
    covariance: np.ndarray  #: of (ln A, z)
    chi2: float
    dof: int
    sizes: list = field(default_factory=list)

    @property
    def chi2_dof(self):
        return self.chi2 / self.dof if self.dof > 0 else None

    @property
    def scale(self):
        """sqrt(chi^2/dof) where that is > 1, else 1: the factor that scaled errors carry."""
        c = self.chi2_dof
        return math.sqrt(c) if c is not None and c > 1.0 else 1.0

    def at(self, size):
        """(tau, error) of the fit at lattice size `size`."""
        x = math.log(size)
        tau = self.amplitude * size ** self.z
        variance = (self.covariance[0, 0] + 2.0 * x * self.covariance[0, 1]
                    + x * x * self.covariance[1, 1])
        return tau, tau * math.sqrt(max(variance, 0.0))

    def as_dict(self):
        return {"A": self.amplitude, "A_error": self.amplitude_error, "z": self.z,
                "z_error": self.z_error, "chi2": self.chi2, "dof": self.dof,
                "chi2_dof": self.chi2_dof, "A_error_scaled": self.amplitude_error * self.scale,
                "z_error_scaled": self.z_error * self.scale,
                "covariance_lnA_z": self.covariance.tolist(), "sizes": list(self.sizes)}


def fit_power_law(sizes, taus, errors):
    """Fits tau = A L^z by weighted least squares in log-log: ln tau = ln A + z ln L with
    weights (tau / error)^2 (the error of ln tau is error / tau). Points whose tau or error
    is not positive and finite are left out. Returns a PowerLawFit, or None with fewer than
    two distinct sizes left."""
    points = [(float(s), float(t), float(e)) for s, t, e in zip(sizes, taus, errors)
              if s is not None and t is not None and e is not None and s > 0 and t > 0
              and e > 0 and math.isfinite(t) and math.isfinite(e)]
    if len({s for s, _, _ in points}) < 2:
        return None
    x = np.array([math.log(s) for s, _, _ in points])
    y = np.array([math.log(t) for _, t, _ in points])
    w = np.array([(t / e) ** 2 for _, t, e in points])
    design = np.stack([np.ones_like(x), x], axis=1)
    normal = design.T @ (w[:, None] * design)
    covariance = np.linalg.inv(normal)
    ln_a, z = covariance @ (design.T @ (w * y))
    residual = y - (ln_a + z * x)
    chi2 = float(np.sum(w * residual ** 2))
    amplitude = math.exp(ln_a)
    return PowerLawFit(amplitude, amplitude * math.sqrt(covariance[0, 0]), float(z),
                       math.sqrt(covariance[1, 1]), covariance, chi2, len(points) - 2,
                       sorted({int(s) if float(s).is_integer() else s for s, _, _ in points}))


# --------------------------------------------------------------------------- per run


def samples_per_second(rate, passes, volume, tau_sweeps, tau_error=None):
    """(independent samples per second, error) = rate 1e9 / (passes V 2 tau) and its error
    from tau's alone; (None, None) without a rate or a positive tau."""
    if rate is None or tau_sweeps is None or not tau_sweeps > 0:
        return None, None
    value = rate * 1e9 / (passes * volume * 2.0 * tau_sweeps)
    error = value * tau_error / tau_sweeps if tau_error is not None else None
    return value, error


def _ratio(a, a_error, b, b_error):
    """a / b with relative errors added in quadrature; (None, None) when either is missing."""
    if a is None or b is None or not b > 0:
        return None, None
    value = a / b
    relative = [x / y for x, y in ((a_error, a), (b_error, b)) if x is not None and y]
    return value, value * math.sqrt(sum(r * r for r in relative))


def analyse_run(p, rate=None, rate_source=None):
    """The dynamics of one Prepared run (summary.prepare) as a plain dict."""
    run = p.run
    algorithm, passes, clusters, label = run_algorithm(run)
    warnings = list(p.warnings)
    dims = list(p.dims)
    if len(set(dims)) == 1:
        size = dims[0]
    else:
        size = p.volume ** (1.0 / len(dims))
        warnings.append(f"lattice {'x'.join(map(str, dims))} is not hypercubic: L is taken as "
                        f"V^(1/d) = {size:.4g}")
    spacing = p.spacing
    every = _section(resolved_config(run), "run").get("measure_every")
    if every is not None and spacing is not None and float(every) != spacing:
        warnings.append(f"run.measure_every = {every} but the measurements are {spacing:g} "
                        f"sweeps apart; the spacing is used")
    if spacing is None:
        spacing = float(every) if every is not None else 1.0
    names = [p.energy_name if name == "e" else name for name in OBSERVABLES]
    observables = {}
    for shown, name in zip(OBSERVABLES, names):
        g = p.gamma(name)
        tau, tau_error = g.tau_int * spacing, g.tau_int_error * spacing
        d = {"mean": g.value, "error": g.error, "tau_int": tau, "tau_int_error": tau_error,
             "tau_int_measurements": g.tau_int, "window": g.window,
             "window_found": g.window_found}
        d["samples_per_second"], d["samples_per_second_error"] = samples_per_second(
            rate, len(passes), p.volume, tau, tau_error)
        if not g.window_found:
            warnings.append(f"tau_int({shown}): no window met Wolff's criterion below half the "
                            f"series (too short for its autocorrelations)")
        if spacing > 1 and g.tau_int < 1.0:
            warnings.append(f"tau_int({shown}) = {g.tau_int:.3g} measurements: measurements "
                            f"{spacing:g} sweeps apart do not resolve it; its {tau:.3g} sweeps "
                            f"are an upper bound")
        observables[shown] = d
    result = {
        "file": p.paths[0], "model": p.model, "dims": dims, "d": len(dims), "L": size,
        "volume": p.volume, "parameters": dict(p.parameters), "algorithm": algorithm,
        "passes": passes, "wolff_clusters": clusters if "wolff" in passes else None,
        "label": label, "replicas": p.replicas, "measurements": p.measurements,
        "cut": p.cut, "measurements_used": p.used, "measure_every": spacing,
        "finished": run.attrs.get("finished"), "rate": rate, "rate_source": rate_source,
        "observables": observables, "wolff": None, "warnings": warnings,
    }
    if run.attrs.get("finished") == 0:
        warnings.append("the run did not finish (finished = 0): its series is shorter than "
                        "planned")
    if passes == ["wolff"] and p.has_improved:
        g = p.gamma(summary.IMPROVED)
        fraction = clusters * g.value / p.volume
        result["wolff"] = {
            "mean_cluster_size": g.value, "mean_cluster_size_error": g.error,
            "flipped_fraction_per_sweep": fraction,
            "flipped_fraction_error": clusters * g.error / p.volume,
            "tau_int_wolff_units": {name: observables[name]["tau_int"] * fraction
                                    for name in OBSERVABLES},
            "tau_int_wolff_units_error": {name: observables[name]["tau_int_error"] * fraction
                                          for name in OBSERVABLES}}
    return result


# --------------------------------------------------------------------------- across runs


def group_key(r):
    return (r["model"], r["d"], r["label"])


def _group_name(key, several):
    model, d, label = key
    return f"{label} ({model} {d}D)" if several else label


def _find_reference(groups, model, d, reference):
    for (m, dd, label), runs in groups.items():
        if (m, dd) == (model, d) and reference in (label, runs[0]["algorithm"]):
            return (m, dd, label)
    return None


def parse_fit_sizes(text):
    """(low, high) of a --fit-sizes MIN:MAX option, either bound None when left out."""
    low, sep, high = text.partition(":")
    if not sep:
        raise ValueError(f"--fit-sizes {text!r}: expected MIN:MAX (either may be left out)")
    bounds = []
    for part in (low, high):
        part = part.strip()
        if not part:
            bounds.append(None)
            continue
        try:
            value = float(part)
        except ValueError:
            raise ValueError(f"--fit-sizes {text!r}: {part!r} is not a number") from None
        if not value > 0 or not math.isfinite(value):
            raise ValueError(f"--fit-sizes {text!r}: a size must be positive")
        bounds.append(value)
    if bounds[0] is not None and bounds[1] is not None and bounds[0] > bounds[1]:
        raise ValueError(f"--fit-sizes {text!r}: MIN is above MAX")
    return tuple(bounds)


def _in_fit(size, fit_sizes):
    low, high = fit_sizes
    return (low is None or size >= low) and (high is None or size <= high)


def read_document(path):
    """The runs of an earlier dynamics document (--json), as analyse() takes them."""
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    if not isinstance(document, dict) or document.get("schema") != DOCUMENT_SCHEMA:
        raise ValueError(f"{path}: not a dynamics document (schema {DOCUMENT_SCHEMA!r})")
    runs = document.get("runs")
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        raise ValueError(f"{path}: its 'runs' are not a list of runs")
    for r in runs:
        r.pop("gain", None)  # analyse() computes the gains again
    return runs


def analyse(runs, extrapolate=DEFAULT_EXTRAPOLATE, reference=DEFAULT_REFERENCE,
            extrapolation_rates=None, fit_sizes=(None, None)):
    """The document of the dynamics command from analyse_run() dicts: runs (sorted by model,
    d, label and L, each with its gains over the reference run of the same size), fits per
    algorithm and observable over the sizes in fit_sizes = (low, high) (None: unbounded), the
    extrapolation to L = extrapolate with gains over the reference algorithm.
    extrapolation_rates: {label: rate} at that size."""
    extrapolation_rates = dict(extrapolation_rates or {})
    runs = sorted(runs, key=lambda r: (r["model"], r["d"], r["label"], r["L"]))
    groups = {}
    for r in runs:
        groups.setdefault(group_key(r), []).append(r)
    several = len({(m, d) for m, d, _ in groups}) > 1
    warnings = []
    fits, extrapolated = [], []
    used_labels = set()
    for key, members in groups.items():
        model, d, label = key
        couplings = {tuple(sorted(r["parameters"].items())) for r in members}
        if len(couplings) > 1:
            warnings.append(f"{label}: its runs differ in the model's parameters "
                            f"({len(couplings)} sets): the fit mixes them")
        sizes = [r["L"] for r in members]
        if len(set(sizes)) != len(sizes):
            warnings.append(f"{label}: several runs of one size; each is a point of the fit")
        largest = max(members, key=lambda r: r["L"])
        rate, rate_from = largest["rate"], f"the rate of L = {largest['L']:g}"
        for name in (label, members[0]["algorithm"]):
            if name in extrapolation_rates:
                rate, rate_from = extrapolation_rates[name], "--extrapolation-rate"
                used_labels.add(name)
        volume = float(extrapolate) ** d
        fitted = [r for r in members if _in_fit(r["L"], fit_sizes)]
        for name in OBSERVABLES:
            fit = fit_power_law([r["L"] for r in fitted],
                                [r["observables"][name]["tau_int"] for r in fitted],
                                [r["observables"][name]["tau_int_error"] for r in fitted])
            entry = {"model": model, "d": d, "label": label,
                     "group": _group_name(key, several), "observable": name,
                     "fit": fit.as_dict() if fit else None}
            fits.append(entry)
            if fit is None:
                continue
            tau, tau_error = fit.at(extrapolate)
            value, error = samples_per_second(rate, len(members[0]["passes"]), volume, tau,
                                              tau_error)
            extrapolated.append({"model": model, "d": d, "label": label,
                                 "group": entry["group"], "observable": name,
                                 "L": extrapolate, "volume": volume, "tau_int": tau,
                                 "tau_int_error": tau_error, "rate": rate,
                                 "rate_from": rate_from if rate is not None else None,
                                 "samples_per_second": value,
                                 "samples_per_second_error": error})
    unknown = set(extrapolation_rates) - used_labels
    if unknown:
        warnings.append(f"--extrapolation-rate for no algorithm of these runs: "
                        f"{', '.join(sorted(unknown))}")

    # Gains over the reference: per size, and at the extrapolated size.
    references = {key: _find_reference(groups, key[0], key[1], reference) for key in groups}
    for model, d in sorted({(m, dd) for m, dd, _ in groups}):
        if _find_reference(groups, model, d, reference) is None:
            warnings.append(f"{model} {d}D: no runs of the reference algorithm {reference!r}: "
                            f"no gains")
    for key, members in groups.items():
        ref = references[key]
        ref_runs = {r["L"]: r for r in groups[ref]} if ref else {}
        for r in members:
            r["gain"] = None
            other = ref_runs.get(r["L"])
            if other is None:
                continue
            r["gain"] = {"reference": ref[2]}
            for name in OBSERVABLES:
                a, b = r["observables"][name], other["observables"][name]
                value, error = _ratio(a["samples_per_second"], a["samples_per_second_error"],
                                      b["samples_per_second"], b["samples_per_second_error"])
                if other is r and value is not None:
                    value, error = 1.0, 0.0  # the reference itself
                r["gain"][name] = {"value": value, "error": error}
    by_key = {(x["model"], x["d"], x["label"], x["observable"]): x for x in extrapolated}
    for x in extrapolated:
        ref = references[(x["model"], x["d"], x["label"])]
        base = by_key.get((x["model"], x["d"], ref[2], x["observable"])) if ref else None
        x["reference"] = ref[2] if ref else None
        if base is None:
            x["gain"], x["gain_error"] = None, None
            continue
        x["gain"], x["gain_error"] = _ratio(x["samples_per_second"],
                                            x["samples_per_second_error"],
                                            base["samples_per_second"],
                                            base["samples_per_second_error"])
        if base is x and x["gain"] is not None:
            x["gain"], x["gain_error"] = 1.0, 0.0  # the reference itself
    for r in runs:
        warnings.extend(f"{r['file']}: {w}" for w in r["warnings"])
    if not any(r["rate"] is not None for r in runs):
        warnings.append("no rates (give --rates JSON or --rate KEY=VALUE): no samples per "
                        "second and no gains")
    return {"schema": DOCUMENT_SCHEMA, "observables": list(OBSERVABLES),
            "tau_unit": "sweeps (passes of the whole update sequence)",
            "samples_rule": SAMPLES_RULE, "fit_rule": FIT_RULE,
            "fit_sizes": list(fit_sizes), "reference": reference,
            "extrapolate": extrapolate, "runs": runs, "fits": fits,
            "extrapolated": extrapolated, "warnings": warnings}


# --------------------------------------------------------------------------- output


def _value(value, error):
    if value is None:
        return "-"
    if error is None or not math.isfinite(error) or error <= 0:
        return f"{value:.4g}"
    return summary.format_value(value, error)


def _sci(value, error=None):
    """A number over many decades: 3 significant digits, and the error's relative size."""
    if value is None:
        return "-"
    text = f"{value:.3g}"
    if error is not None and value:
        text += f" ({100.0 * error / abs(value):.0f}%)"
    return text


def _fit_window(fit_sizes):
    """' over L >= 64' and the like for the fits' sizes, '' for all of them."""
    low, high = fit_sizes or (None, None)
    parts = ([f"L >= {low:g}"] if low is not None else []) + \
        ([f"L <= {high:g}"] if high is not None else [])
    return f" over {' and '.join(parts)}" if parts else ""


def format_dynamics(document):
    """The readable tables of a dynamics document."""
    d = document
    lines = [f"tau_int in {d['tau_unit']}, Gamma method, replicas combined; rate in site "
             f"updates/ns; samples/s: {d['samples_rule']}"]
    groups = {}
    for r in d["runs"]:
        groups.setdefault((r["model"], r["d"]), []).append(r)
    for (model, dim), runs in groups.items():
        parameters = ", ".join(f"{k} = {v:.8g}" if isinstance(v, float) else f"{k} = {v}"
                               for k, v in runs[0]["parameters"].items() if v is not None)
        lines.append("")
        lines.append(f"{model} {dim}D, {parameters}")
        width = max([9] + [len(r["label"]) for r in runs])
        header = (f"  {'algorithm':<{width}} {'L':>5} {'R':>4} {'meas.':>7} {'every':>5} "
                  f"{'rate':>9}")
        for name in OBSERVABLES:
            header += f" {'tau_int(' + name + ')':>17}"
        header += "   samples/s e, |m|, m^2"
        lines.append(header)
        for r in runs:
            rate = f"{r['rate']:.4g}" if r["rate"] is not None else "-"
            row = (f"  {r['label']:<{width}} {r['L']:>5g} {r['replicas']:>4} "
                   f"{r['measurements_used'] // max(r['replicas'], 1):>7} "
                   f"{r['measure_every']:>5g} {rate:>9}")
            for name in OBSERVABLES:
                o = r["observables"][name]
                row += f" {_value(o['tau_int'], o['tau_int_error']):>17}"
            row += "   " + ", ".join(_sci(r["observables"][name]["samples_per_second"])
                                     for name in OBSERVABLES)
            lines.append(row)
        gains = [r for r in runs if r.get("gain") and r["gain"]["reference"] != r["label"]]
        if gains:
            lines.append(f"  gain over {gains[0]['gain']['reference']} at the same L "
                         f"(samples/s ratio) e, |m|, m^2:")
            for r in gains:
                lines.append(f"    {r['label']:<{width}} L = {r['L']:<5g} " + ", ".join(
                    _value(r["gain"][n]["value"], r["gain"][n]["error"]) for n in OBSERVABLES))
        wolff = [r for r in runs if r.get("wolff")]
        if wolff:
            lines.append("  Wolff: flipped fraction per sweep f = N <|C|>/V, tau_int f (Wolff "
                         "units) for e, |m|, m^2:")
            for r in wolff:
                w = r["wolff"]
                lines.append(f"    {r['label']:<{width}} L = {r['L']:<5g} <|C|> = "
                             f"{_value(w['mean_cluster_size'], w['mean_cluster_size_error'])}, "
                             f"f = {w['flipped_fraction_per_sweep']:.4g}; " + ", ".join(
                                 _value(w["tau_int_wolff_units"][n],
                                        w["tau_int_wolff_units_error"][n])
                                 for n in OBSERVABLES))
    lines.append("")
    lines.append(f"fits {d['fit_rule']}{_fit_window(d.get('fit_sizes'))}:")
    width = max([9] + [len(f["group"]) for f in d["fits"]])
    lines.append(f"  {'algorithm':<{width}} {'obs.':>5} {'A':>18} {'z':>16} {'chi2/dof':>12}"
                 f"  sizes")
    unfitted = set()
    for f in d["fits"]:
        fit = f["fit"]
        if fit is None:
            if f["group"] not in unfitted:
                unfitted.add(f["group"])
                lines.append(f"  {f['group']:<{width}}   fewer than two sizes with errors: "
                             f"no fit")
            continue
        chi = (f"{fit['chi2_dof']:.3g} ({fit['dof']})" if fit["chi2_dof"] is not None
               else f"- ({fit['dof']})")
        lines.append(f"  {f['group']:<{width}} {f['observable']:>5} "
                     f"{_value(fit['A'], fit['A_error']):>18} "
                     f"{_value(fit['z'], fit['z_error']):>16} {chi:>12}  "
                     + ", ".join(f"{s:g}" for s in fit["sizes"]))
    if d["extrapolated"]:
        lines.append("")
        lines.append(f"extrapolated to L = {d['extrapolate']} (the fits' tau_int; rate: the "
                     f"largest size's unless --extrapolation-rate):")
        lines.append(f"  {'algorithm':<{width}} {'obs.':>5} {'tau_int':>22} {'rate':>9} "
                     f"{'samples/s':>16} {'gain over ' + d['reference']:>22}")
        for x in d["extrapolated"]:
            rate = f"{x['rate']:.4g}" if x["rate"] is not None else "-"
            gain = (_value(x["gain"], x["gain_error"]) if x.get("gain") is not None else "-")
            lines.append(f"  {x['group']:<{width}} {x['observable']:>5} "
                         f"{_sci(x['tau_int'], x['tau_int_error']):>22} {rate:>9} "
                         f"{_sci(x['samples_per_second'], x['samples_per_second_error']):>16} "
                         f"{gain:>22}")
    for w in d["warnings"]:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def plot(document, path):
    """tau_int against L, log-log, one panel per observable, one colour per algorithm, with
    the fitted power laws; written to path (PNG)."""
    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(OBSERVABLES), figsize=(5 * len(OBSERVABLES), 4.5),
                                squeeze=False)
    axes = axes[0]
    groups = {}
    for r in document["runs"]:
        groups.setdefault((r["model"], r["d"], r["label"]), []).append(r)
    several = len({(m, d) for m, d, _ in groups}) > 1
    fits = {(f["model"], f["d"], f["label"], f["observable"]): f["fit"]
            for f in document["fits"]}
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (key, runs) in enumerate(groups.items()):
        colour = colours[k % len(colours)]
        name = _group_name(key, several)
        sizes = np.array([r["L"] for r in runs], dtype=np.float64)
        for ax, obs in zip(axes, OBSERVABLES):
            tau = np.array([r["observables"][obs]["tau_int"] for r in runs])
            error = np.array([r["observables"][obs]["tau_int_error"] for r in runs])
            fit = fits.get(key + (obs,))
            label = name
            if fit is not None:
                label += f": z = {_value(fit['z'], fit['z_error'])}"
                grid = np.geomspace(sizes.min() / 1.2, sizes.max() * 1.2, 50)
                ax.plot(grid, fit["A"] * grid ** fit["z"], color=colour, ls="--", lw=1)
            ax.errorbar(sizes, tau, yerr=error, fmt="o", color=colour, ms=4, capsize=2,
                        label=label)
    sizes = sorted({r["L"] for r in document["runs"]})
    for ax, obs in zip(axes, OBSERVABLES):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.set_xticklabels([f"{s:g}" for s in sizes])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel("L")
        ax.set_ylabel(f"tau_int({obs}) [sweeps]")
        ax.set_title(f"{obs}: tau_int = A L^z")
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
