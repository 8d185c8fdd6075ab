"""Reads a Lattica output file (HDF5, schema "lattica/1").

The layout (see the design notes, "HDF5 output"):

    /                      attributes: schema, program_version, git_commit, created_utc,
                           input_path, input_toml, resolved_config, model, algorithm,
                           backend, device, seed, beta, h, lattice_dims
    /observables/<name>    float64 [n], one value per measurement
    /observables/sweep     int64 [n], sweeps completed at each measurement
    /observables           attribute committed_length
    /snapshots/configuration  int8 [frames, L0, L1, ...], lexicographic (last axis fastest)
    /snapshots/sweep       int64 [frames]
    /snapshots             attribute committed_length

sim raises committed_length only after the data it vouches for is on disk, so every series
here is cut to it: a file left behind by a crashed run reads up to its last complete
measurement and frame.
"""

import h5py
import numpy as np

SCHEMA = "lattica/1"


class SchemaError(ValueError):
    """The file is not a Lattica "lattica/1" file, or is inconsistent with that schema."""


def _plain(value):
    """An attribute value as plain Python: str for strings, int/float for scalars."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.ndarray) and value.dtype.kind in "OSU":
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _committed_length(group, path):
    """The group's committed_length, checked against the lengths of the datasets it covers."""
    if "committed_length" not in group.attrs:
        raise SchemaError(f"{path}: {group.name} has no committed_length attribute")
    n = int(group.attrs["committed_length"])
    for name, item in group.items():
        if isinstance(item, h5py.Dataset) and item.shape[0] < n:
            raise SchemaError(
                f"{path}: {item.name} has {item.shape[0]} rows but committed_length is {n}")
    return n


class Snapshots:
    """The saved configurations, read from the file one frame (or one slice) at a time."""

    def __init__(self, path, count, frame_shape, sweep):
        self.path = path
        self.count = count  #: committed frames
        self.frame_shape = tuple(frame_shape)  #: lattice dims of one frame
        self.sweep = sweep  #: int64 [count], sweeps completed when each frame was taken

    @property
    def shape(self):
        return (self.count,) + self.frame_shape

    def __len__(self):
        return self.count

    def __getitem__(self, key):
        """Frame i (negative counts from the end) as int8 [L0, L1, ...], or a slice of frames."""
        if isinstance(key, slice):
            start, stop, step = key.indices(self.count)
            if step < 1:
                raise IndexError("snapshot slices need a positive step")
            if start >= stop:
                return np.empty((0,) + self.frame_shape, dtype=np.int8)
            with h5py.File(self.path, "r") as f:
                return f["snapshots/configuration"][start:stop:step]
        i = int(key)
        if i < 0:
            i += self.count
        if not 0 <= i < self.count:
            raise IndexError(f"snapshot {key} out of range ({self.count} frames)")
        with h5py.File(self.path, "r") as f:
            return f["snapshots/configuration"][i]

    def __iter__(self):
        for i in range(self.count):
            yield self[i]


class LatticaFile:
    """One run's output: metadata, observable series and snapshots."""

    def __init__(self, path, attrs, observables, sweep, snapshots):
        self.path = path
        self.attrs = attrs  #: root attributes; strings decoded, scalars as int/float
        self.observables = observables  #: name -> float64 array, one value per measurement
        self.sweep = sweep  #: int64 array, sweeps completed at each measurement
        self.snapshots = snapshots  #: Snapshots

    @property
    def dims(self):
        return tuple(int(n) for n in self.attrs["lattice_dims"])

    def __len__(self):
        """The number of committed measurements."""
        return len(self.sweep)


def load(path):
    """Opens a Lattica file and reads its metadata and observable series.

    Raises SchemaError when the file is not schema "lattica/1" or its groups are missing or
    inconsistent, OSError when it cannot be read as HDF5.
    """
    path = str(path)
    with h5py.File(path, "r") as f:
        schema = _plain(f.attrs.get("schema"))
        if schema != SCHEMA:
            found = "no schema attribute" if schema is None else f"schema {schema!r}"
            raise SchemaError(f"{path}: not a Lattica file: {found}, expected {SCHEMA!r}")
        attrs = {name: _plain(value) for name, value in f.attrs.items()}
        for group in ("observables", "snapshots"):
            if group not in f:
                raise SchemaError(f"{path}: no /{group} group")

        group = f["observables"]
        n = _committed_length(group, path)
        if "sweep" not in group:
            raise SchemaError(f"{path}: no /observables/sweep dataset")
        sweep = group["sweep"][:n].astype(np.int64, copy=False)
        observables = {name: group[name][:n] for name in group if name != "sweep"}

        group = f["snapshots"]
        frames = _committed_length(group, path)
        if "configuration" not in group or "sweep" not in group:
            raise SchemaError(f"{path}: /snapshots needs datasets configuration and sweep")
        frame_shape = group["configuration"].shape[1:]
        snapshot_sweep = group["sweep"][:frames].astype(np.int64, copy=False)

    return LatticaFile(path, attrs, observables, sweep,
                       Snapshots(path, frames, frame_shape, snapshot_sweep))
