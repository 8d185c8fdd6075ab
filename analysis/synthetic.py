"""Writes files in sim's output format (schema "lattica/1") from numpy arrays, and sweep
index files, for tests and examples. The data need not come from a Markov chain.

    from analysis import synthetic
    synthetic.write_run("a.h5", energy, magnetization, beta=0.44, dims=(16, 16))
    synthetic.write_on_run("o.h5", energy, m_vectors, beta=1.1, dims=(8, 8), helicity=...)
    synthetic.write_phi4_run("p.h5", phi, kappa=0.18, lam=1.1, dims=(8, 8))
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
