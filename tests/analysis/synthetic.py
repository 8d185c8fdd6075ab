"""Writes files in sim's output format (schema "lattica/1") from numpy arrays, and sweep
index files, for the tests in this directory. The data need not come from a Markov chain.

    import synthetic  # with tests/analysis on sys.path, as the test scripts put it
    synthetic.write_run("a.h5", energy, magnetization, beta=0.44, dims=(16, 16))
    synthetic.write_on_run("o.h5", energy, m_vectors, beta=1.1, dims=(8, 8), helicity=...)
    synthetic.write_phi4_run("p.h5", phi, kappa=0.18, lam=1.1, dims=(8, 8))
    synthetic.write_structure_factor("a.h5", s0, s_min, spectrum=S)    # adds the groups
    synthetic.write_timeslice("a.h5", C, momenta_per_axis=2)            # to a written run
"""

import json
import os

import h5py
import numpy as np


def _int64(value):
    return np.int64(value)


def write_run(path, energy, magnetization, *, beta, dims, h=0.0, sweep=None, replicas=None,
              point_index=None, seed=1, committed_length=None, histograms=None,
              histogram_lengths=None, configuration=None, extra_rows=0, model="ising",
              algorithm="metropolis"):
    """Writes one run. energy, magnetization: [n] (one replica) or [n, R] (stored as given).

    sweep: int64 [n] (default 1..n). replicas: the root attribute (default: the number of
    columns; None writes it only when the data are 2-D). committed_length: the observables'
    committed length (default n); extra_rows appends that many rows of garbage after the
    data, as a crashed run might leave. histograms: {name: (values, counts)}; with
    histogram_lengths {name: committed_length} (default: the sum of counts).
    configuration: the final frame (default all +1 of dims, with an R axis when R > 1).
    """
    energy = np.asarray(energy, dtype=np.float64)
    if configuration is not None:
        configuration = np.asarray(configuration, dtype=np.int8)
    return write_observables(
        path, {"energy": energy, "magnetization": magnetization}, model=model, dims=dims,
        attributes={"beta": float(beta), "h": float(h)}, sweep=sweep, replicas=replicas,
        point_index=point_index, seed=seed, committed_length=committed_length,
        histograms=histograms, histogram_lengths=histogram_lengths,
        configuration=configuration, extra_rows=extra_rows, algorithm=algorithm)


def write_on_run(path, energy, m_vectors, *, beta, dims, h=0.0, helicity=None,
                 precision="double", algorithm="heatbath, overrelaxation", hits=1,
                 metropolis=None, **kwargs):
    """Writes an O(n) run as sim does (model "on"). energy: [N] or [N, R]; m_vectors: the
    per-site magnetisation vectors, [N, n] or [N, R, n]: magnetization is their modulus and
    magnetization_c their components. helicity: [N, d] or [N, R, d] (n = 2), written as
    helicity_a. metropolis: (step, acceptance) written as metropolis_step and
    metropolis_acceptance. The final frame is all spins along component 0, in `precision`.
    Other keywords as for write_observables."""
    m_vectors = np.asarray(m_vectors, dtype=np.float64)
    n = m_vectors.shape[-1]
    observables = {"energy": energy, "magnetization": np.linalg.norm(m_vectors, axis=-1)}
    for c in range(n):
        observables[f"magnetization_{c}"] = m_vectors[..., c]
    if helicity is not None:
        helicity = np.asarray(helicity, dtype=np.float64)
        for a in range(helicity.shape[-1]):
            observables[f"helicity_{a}"] = helicity[..., a]
    attributes = {"beta": float(beta), "h": float(h), "n": np.int64(n),
                  "precision": precision, "hits": np.int64(hits)}
    if metropolis is not None:
        attributes["metropolis_step"], attributes["metropolis_acceptance"] = map(float,
                                                                                 metropolis)
    replicas = 1 if m_vectors.ndim == 2 else m_vectors.shape[1]
    frame = np.zeros(([replicas] if replicas > 1 else []) + [int(d) for d in dims] + [n],
                     dtype=np.float32 if precision == "float" else np.float64)
    frame[..., 0] = 1.0
    kwargs.setdefault("configuration", frame)
    return write_observables(path, observables, model="on", dims=dims, attributes=attributes,
                             algorithm=algorithm, **kwargs)


def write_phi4_run(path, phi, *, kappa, lam, dims, h=0.0, phi2=None, link=None, action=None,
                   precision="double", algorithm="metropolis, overrelaxation", hits=1,
                   metropolis=None, **kwargs):
    """Writes a phi^4 run as sim does (model "phi4": kappa and lambda, no beta). phi: the
    mean field per measurement, [N] or [N, R]; abs_phi and phi4 follow from it (phi4 as if
    every site held phi), phi2, link and action default to phi^2, phi^2 and zero. The final
    frame is all phi = 1, in `precision`. Other keywords as for write_observables."""
    phi = np.asarray(phi, dtype=np.float64)
    observables = {"phi": phi, "abs_phi": np.abs(phi),
                   "phi2": phi * phi if phi2 is None else phi2, "phi4": phi ** 4,
                   "link": phi * phi if link is None else link,
                   "action": np.zeros_like(phi) if action is None else action}
    attributes = {"kappa": float(kappa), "lambda": float(lam), "h": float(h),
                  "precision": precision, "hits": np.int64(hits)}
    if metropolis is not None:
        attributes["metropolis_step"], attributes["metropolis_acceptance"] = map(float,
                                                                                 metropolis)
    replicas = 1 if phi.ndim == 1 else phi.shape[1]
    frame = np.ones(([replicas] if replicas > 1 else []) + [int(d) for d in dims],
                    dtype=np.float32 if precision == "float" else np.float64)
    kwargs.setdefault("configuration", frame)
    return write_observables(path, observables, model="phi4", dims=dims,
                             attributes=attributes, algorithm=algorithm, **kwargs)


def write_observables(path, observables, *, model, dims, attributes, sweep=None,
                      replicas=None, point_index=None, seed=1, committed_length=None,
                      histograms=None, histogram_lengths=None, configuration=None,
                      extra_rows=0, algorithm="metropolis"):
    """Writes one run of any model: observables {name: [n] or [n, R]} (stored as given, in
    order), the model's root attributes (e.g. beta and h, or kappa, lambda and h).

    sweep: int64 [n] (default 1..n). replicas: the root attribute (default: the number of
    columns; None writes it only when the data are 2-D). committed_length: the observables'
    committed length (default n); extra_rows appends that many rows of garbage after the
    data, as a crashed run might leave. histograms: {name: (values, counts)}; with
    histogram_lengths {name: committed_length} (default: the sum of counts).
    configuration: the final frame, stored with its dtype (default int8 +1 of dims, with an
    R axis when R > 1).
    """
    observables = {name: np.asarray(x, dtype=np.float64) for name, x in observables.items()}
    first = next(iter(observables.values()))
    n = first.shape[0]
    columns = 1 if first.ndim == 1 else first.shape[1]
    if sweep is None:
        sweep = np.arange(1, n + 1, dtype=np.int64)
    sweep = np.asarray(sweep, dtype=np.int64)
    if extra_rows:
        observables = {name: np.concatenate([x, np.full((extra_rows,) + x.shape[1:], 1e300)])
                       for name, x in observables.items()}
        sweep = np.concatenate([sweep, np.full(extra_rows, -1, dtype=np.int64)])
    dims = [int(d) for d in dims]
    settings = "".join(f"{k} = {v!r}\n" for k, v in attributes.items()
                       if isinstance(v, (float, int, np.integer)))
    toml = f"[lattice]\ndims = {dims}\n[model]\nkind = \"{model}\"\n{settings}"
    with h5py.File(path, "w") as f:
        a = f.attrs
        a["schema"] = "lattica/1"
        a["program_version"] = "synthetic"
        a["git_commit"] = "none"
        a["created_utc"] = "1970-01-01T00:00:00Z"
        a["input_path"] = "synthetic.toml"
        a["input_toml"] = toml
        a["resolved_config"] = toml
        a["model"] = model
        a["algorithm"] = algorithm
        for name, value in attributes.items():
            a[name] = value
        a["seed"] = np.uint64(seed)
        a["lattice_dims"] = np.array(dims, dtype=np.int64)
        a["backend"] = "synthetic"
        a["device"] = "numpy"
        if replicas is None and first.ndim == 2:
            replicas = columns
        if replicas is not None:
            a["replicas"] = _int64(replicas)
        if point_index is not None:
            a["point_index"] = _int64(point_index)

        g = f.create_group("observables")
        for name, x in observables.items():
            g.create_dataset(name, data=x, maxshape=(None,) + x.shape[1:], chunks=True)
        g.create_dataset("sweep", data=sweep, maxshape=(None,), chunks=True)
        g.attrs["committed_length"] = _int64(n if committed_length is None else committed_length)

        hg = f.create_group("histograms")  # sim always writes the group, empty if need be
        for name, (values, counts) in (histograms or {}).items():
            sub = hg.create_group(name)
            sub.create_dataset("values", data=np.asarray(values, dtype=np.int64))
            sub.create_dataset("counts", data=np.asarray(counts, dtype=np.int64))
            length = (histogram_lengths or {}).get(name, int(np.sum(counts)))
            sub.attrs["committed_length"] = _int64(length)

        s = f.create_group("snapshots")
        if configuration is None:
            shape = ([columns] if columns > 1 else []) + dims
            configuration = np.ones(shape, dtype=np.int8)
        configuration = np.asarray(configuration)[None]
        s.create_dataset("configuration", data=configuration,
                         maxshape=(None,) + configuration.shape[1:], chunks=True)
        s.create_dataset("sweep", data=np.array([sweep[n - 1] if n else 0], dtype=np.int64),
                         maxshape=(None,), chunks=True)
        s.attrs["committed_length"] = _int64(1)
    return path


def exact_histograms(energy, magnetization, volume, h=0.0):
    """Histograms {energy, magnetization} of TOTAL values as sim writes them, from per-site
    series of any shape: M = V m, and E_J = V e + h M (the interaction part of the energy)."""
    m_total = np.rint(np.asarray(magnetization) * volume).astype(np.int64).ravel()
    e_total = np.rint(np.asarray(energy) * volume + h * m_total.reshape(np.shape(energy))
                      ).astype(np.int64).ravel()
    result = {}
    for name, values in (("energy", e_total), ("magnetization", m_total)):
        v, c = np.unique(values, return_counts=True)
        result[name] = (v, c)
    return result


def write_index(path, points, *, swept, input_path="synthetic.toml"):
    """Writes a sweep index (schema "lattica-index/1"). points: a list of dicts with keys
    file (relative to the index's directory), parameters, seed; index is their position."""
    document = {"schema": "lattica-index/1", "input": input_path, "swept": list(swept),
                "points": [dict({"index": i}, **p) for i, p in enumerate(points)]}
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=2)
    return path


# --------------------------------------------------------------------------- correlators


def _extendable(group, name, data):
    data = np.asarray(data)
    return group.create_dataset(name, data=data, maxshape=(None,) + data.shape[1:],
                                chunks=True)


def _run_dims_and_sweeps(f):
    dims = [int(d) for d in np.atleast_1d(f.attrs["lattice_dims"])]
    observables = f["observables"]
    n = int(observables.attrs["committed_length"])
    return dims, observables["sweep"][:n]


def _garbage(x, rows, fill):
    x = np.asarray(x)
    if not rows:
        return x
    return np.concatenate([x, np.full((rows,) + x.shape[1:], fill, dtype=x.dtype)])


def momentum_grid(dims):
    """momentum_<a> as sim writes them: k = 2 pi n / L_a, negative above L_a/2; the last axis
    keeps its L/2 + 1 non-negative entries (the half spectrum)."""
    grids = []
    for a, length in enumerate(dims):
        count = length // 2 + 1 if a == len(dims) - 1 else length
        j = np.arange(count)
        grids.append(2.0 * np.pi * np.where(j <= length // 2, j, j - length) / length)
    return grids


def radial_shells(spectrum, dims):
    """(radial_k, radial_S, radial_modes) of a half-spectrum S as sim bins it: shells of width
    2 pi / L_max (shell = round(|k| / width)), each stored mode counting twice unless its last
    index is 0 or L/2 (its own mirror); empty shells left out."""
    grids = momentum_grid(dims)
    mesh = np.meshgrid(*grids, indexing="ij")
    magnitude = np.sqrt(sum(k * k for k in mesh))
    last = np.arange(dims[-1] // 2 + 1)
    weight = np.where((last == 0) | (2 * last == dims[-1]), 1, 2)
    weight = np.broadcast_to(weight, magnitude.shape)
    width = 2.0 * np.pi / max(dims)
    shell = np.rint(magnitude / width).astype(np.int64).ravel()
    counts = np.bincount(shell, weights=weight.ravel())
    k_sum = np.bincount(shell, weights=(weight * magnitude).ravel())
    s_sum = np.bincount(shell, weights=(weight * np.asarray(spectrum)).ravel())
    used = counts > 0
    return k_sum[used] / counts[used], s_sum[used] / counts[used], counts[used].astype(np.int64)


def write_structure_factor(path, s0, s_min, *, spectrum=None, spectrum_error=None,
                           mean_field=None, components=1, samples=None, every=1, sweep=None,
                           xi2=None, committed_length=None, extra_rows=0):
    """Adds /correlators/structure_factor to a run written by write_observables, as sim
    writes it. s0, s_min: the series, [n] or [n, R] (xi2 per row follows, NaN where s0 <=
    s_min); sweep: int64 [n] (default every `every`-th sweep of the observables).
    spectrum: <S(k)> on the half spectrum [L_0, ..., L_{d-1}/2 + 1] (None: no tables, as a
    run that did not finish leaves); G is its inverse FFT, the connected parts subtract
    V |mean_field|^2 at k = 0 and |mean_field|^2 from G; the radial shells and the xi2
    attribute (from S(0) and S at 2 pi / L along the longest axes, unless given) follow.
    committed_length / extra_rows as for write_observables."""
    s0 = np.asarray(s0, dtype=np.float64)
    s_min = np.asarray(s_min, dtype=np.float64)
    n = s0.shape[0]
    with h5py.File(path, "a") as f:
        dims, observed = _run_dims_and_sweeps(f)
        longest = max(dims)
        if sweep is None:
            sweep = observed[every - 1::every][:n]
        sweep = np.asarray(sweep, dtype=np.int64)
        with np.errstate(divide="ignore", invalid="ignore"):
            series_xi2 = np.where((s0 > s_min) & (s_min > 0),
                                  np.sqrt(s0 / s_min - 1.0), np.nan) / (
                2.0 * np.sin(np.pi / longest))
        group = f.require_group("correlators").create_group("structure_factor")
        group.attrs["every"] = _int64(every)
        series = group.create_group("series")
        _extendable(series, "sweep", _garbage(sweep, extra_rows, -1))
        for name, x in (("s0", s0), ("s_min", s_min), ("xi2", series_xi2)):
            _extendable(series, name, _garbage(x, extra_rows, 1e300))
        series.attrs["committed_length"] = _int64(n if committed_length is None
                                                  else committed_length)
        if spectrum is None:
            return path
        spectrum = np.asarray(spectrum, dtype=np.float64)
        half = tuple(dims[:-1]) + (dims[-1] // 2 + 1,)
        if spectrum.shape != half:
            raise ValueError(f"spectrum of shape {spectrum.shape}, expected {half}")
        volume = int(np.prod(dims))
        mean_field = np.zeros(components) if mean_field is None else np.asarray(mean_field,
                                                                                 dtype=float)
        m2 = float(np.dot(mean_field, mean_field))
        connected = spectrum.copy()
        connected.flat[0] -= volume * m2
        g = np.fft.irfftn(spectrum, s=dims)
        group.create_dataset("S", data=spectrum)
        group.create_dataset("S_error", data=np.zeros_like(spectrum) if spectrum_error is None
                             else np.asarray(spectrum_error, dtype=np.float64))
        group.create_dataset("S_connected", data=connected)
        group.create_dataset("G", data=g)
        group.create_dataset("G_connected", data=g - m2)
        for a, k in enumerate(momentum_grid(dims)):
            group.create_dataset(f"momentum_{a}", data=k)
        radial_k, radial_s, modes = radial_shells(spectrum, dims)
        group.create_dataset("radial_k", data=radial_k)
        group.create_dataset("radial_S", data=radial_s)
        group.create_dataset("radial_modes", data=modes)
        group.create_dataset("mean_field", data=mean_field)
        group.attrs["samples"] = _int64(n * (1 if s0.ndim == 1 else s0.shape[1])
                                        if samples is None else samples)
        group.attrs["components"] = _int64(components)
        if xi2 is None:
            unit = []
            for a, length in enumerate(dims):
                if length == longest:
                    index = [0] * len(dims)
                    index[a] = 1
                    unit.append(spectrum[tuple(index)])
            s1 = float(np.mean(unit))
            s00 = float(spectrum.flat[0])
            xi2 = (np.sqrt(s00 / s1 - 1.0) / (2.0 * np.sin(np.pi / longest))
                   if s00 > s1 > 0 else np.nan)
        group.attrs["xi2"] = np.float64(xi2)
    return path


def timeslice_momenta(dims, per_axis):
    """The integer momentum vectors sim projects on: [1 + per_axis (d-1), d-1], row 0 zero,
    then n e_a for n = 1 .. per_axis along each spatial axis a in turn."""
    spatial = len(dims) - 1
    rows = [np.zeros(spatial, dtype=np.int64)]
    for a in range(spatial):
        for n in range(1, per_axis + 1):
            row = np.zeros(spatial, dtype=np.int64)
            row[a] = n
            rows.append(row)
    return np.array(rows, dtype=np.int64).reshape(-1, spatial)


def write_timeslice(path, correlator, *, momenta_per_axis=1, momenta=None, every=1, sweep=None,
                    committed_length=None, extra_rows=0):
    """Adds /correlators/timeslice to a run written by write_observables, as sim writes it.
    correlator: C [n, T, n_p] (one replica) or [n, R, T, n_p], stored as given, T the last
    lattice extent; momenta: the integer vectors [n_p, d-1] (default timeslice_momenta(dims,
    momenta_per_axis)); sweep: int64 [n] (default every `every`-th sweep of the
    observables). committed_length / extra_rows as for write_observables."""
    correlator = np.asarray(correlator, dtype=np.float64)
    n = correlator.shape[0]
    with h5py.File(path, "a") as f:
        dims, observed = _run_dims_and_sweeps(f)
        if momenta is None:
            momenta = timeslice_momenta(dims, momenta_per_axis)
        momenta = np.asarray(momenta, dtype=np.int64).reshape(-1, len(dims) - 1)
        if correlator.shape[-2:] != (dims[-1], len(momenta)):
            raise ValueError(f"C of shape {correlator.shape}: expected [..., T = {dims[-1]}, "
                             f"n_p = {len(momenta)}]")
        values = 2.0 * np.pi * momenta / np.array(dims[:-1], dtype=np.float64)
        if sweep is None:
            sweep = observed[every - 1::every][:n]
        sweep = np.asarray(sweep, dtype=np.int64)
        group = f.require_group("correlators").create_group("timeslice")
        group.create_dataset("momenta", data=momenta)
        group.create_dataset("momentum_values", data=values.reshape(momenta.shape))
        _extendable(group, "sweep", _garbage(sweep, extra_rows, -1))
        _extendable(group, "C", _garbage(correlator, extra_rows, 1e300))
        group.attrs["every"] = _int64(every)
        group.attrs["momenta_per_axis"] = _int64(momenta_per_axis)
        group.attrs["committed_length"] = _int64(n if committed_length is None
                                                 else committed_length)
    return path


def timeslice_correlator(field, momenta, components=False):
    """C(dt, p) of one configuration as sim defines it: (1/(T V_s)) sum_t sum_c
    Re[O_c(t + dt, p) O_c(t, p)^*], O_c(t, p) = sum_x phi_c(x, t) exp(-i p.x), p_a = 2 pi n_a /
    L_a, the last lattice axis being time. field: [L_0, ..., L_{d-1}] (or with a trailing
    component axis where components); momenta: integer vectors [n_p, d-1]. Returns [T, n_p]."""
    phi = np.asarray(field, dtype=np.float64)
    if not components:
        phi = phi[..., None]
    dims = phi.shape[:-1]
    extent = dims[-1]
    spatial = tuple(range(len(dims) - 1))
    transformed = np.fft.fftn(phi, axes=spatial) if spatial else phi.astype(np.complex128)
    momenta = np.asarray(momenta, dtype=np.int64).reshape(-1, len(dims) - 1)
    o = np.array([transformed[tuple(int(n) % dims[a] for a, n in enumerate(row))]
                  for row in momenta])  # [n_p, T, c]
    volume_s = int(np.prod(dims[:-1], dtype=np.int64))
    c = np.empty((extent, len(momenta)))
    for dt in range(extent):
        c[dt] = np.sum((np.roll(o, -dt, axis=1) * np.conj(o)).real, axis=(1, 2))
    return c / (extent * volume_s)
