"""Writes files in sim's output format (schema "lattica/1") from numpy arrays, and sweep
index files, for tests and examples. The data need not come from a Markov chain.

    from analysis import synthetic
    synthetic.write_run("a.h5", energy, magnetization, beta=0.44, dims=(16, 16))
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
    magnetization = np.asarray(magnetization, dtype=np.float64)
    n = energy.shape[0]
    columns = 1 if energy.ndim == 1 else energy.shape[1]
    if sweep is None:
        sweep = np.arange(1, n + 1, dtype=np.int64)
    sweep = np.asarray(sweep, dtype=np.int64)
    if extra_rows:
        junk = np.full((extra_rows,) + energy.shape[1:], 1e300)
        energy = np.concatenate([energy, junk])
        magnetization = np.concatenate([magnetization, junk])
        sweep = np.concatenate([sweep, np.full(extra_rows, -1, dtype=np.int64)])
    dims = [int(d) for d in dims]
    toml = (f"[lattice]\ndims = {dims}\n[model]\nkind = \"{model}\"\nbeta = {beta!r}\n"
            f"h = {h!r}\n")
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
        a["beta"] = float(beta)
        a["h"] = float(h)
        a["seed"] = np.uint64(seed)
        a["lattice_dims"] = np.array(dims, dtype=np.int64)
        a["backend"] = "synthetic"
        a["device"] = "numpy"
        if replicas is None and energy.ndim == 2:
            replicas = columns
        if replicas is not None:
            a["replicas"] = _int64(replicas)
        if point_index is not None:
            a["point_index"] = _int64(point_index)

        g = f.create_group("observables")
        g.create_dataset("energy", data=energy, maxshape=(None,) + energy.shape[1:],
                         chunks=True)
        g.create_dataset("magnetization", data=magnetization,
                         maxshape=(None,) + magnetization.shape[1:], chunks=True)
        g.create_dataset("sweep", data=sweep, maxshape=(None,), chunks=True)
        g.attrs["committed_length"] = _int64(n if committed_length is None else committed_length)

        if histograms:
            hg = f.create_group("histograms")
            for name, (values, counts) in histograms.items():
                sub = hg.create_group(name)
                sub.create_dataset("values", data=np.asarray(values, dtype=np.int64))
                sub.create_dataset("counts", data=np.asarray(counts, dtype=np.int64))
                length = (histogram_lengths or {}).get(name, int(np.sum(counts)))
                sub.attrs["committed_length"] = _int64(length)

        s = f.create_group("snapshots")
        if configuration is None:
            shape = ([columns] if columns > 1 else []) + dims
            configuration = np.ones(shape, dtype=np.int8)
        configuration = np.asarray(configuration, dtype=np.int8)[None]
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
