"""Reads a Lattica output file (HDF5, schema "lattica/1") and sweep index files.

The layout (see README.md, "Output"):

    /                      attributes: schema, program_version, git_commit, created_utc,
                           input_path, input_toml, resolved_config, model, algorithm (the
                           update sequence joined with ", "), backend, device, seed, h,
                           lattice_dims, replicas (R, default 1 when absent),
                           point_index (index in a parameter sweep; absent for a single run),
                           finished (1 once the run did all its sweeps; absent in older files),
                           and per model:
                             ising:  beta
                             potts:  beta, q
                             on:     beta, n (spin components), precision, hits
                             phi4:   kappa, lambda (no beta), precision, hits
                           metropolis_step, metropolis_acceptance (on/phi4 with a Metropolis
                           pass; acceptance -1 when not measured)
                           langevin_step, langevin_shift (phi4 with a langevin or mala pass;
                           the free kernel's shift, see the README), mala_acceptance (mala)
    /observables/<name>    float64 [n] when R = 1, [n, R] when R > 1 (column r = replica r);
                           ising/potts/on: energy, magnetization (on: the modulus |m|), ...;
                           on: magnetization_0 .. _{n-1}, for n = 2 helicity_0 .. _{d-1};
                           phi4: phi, abs_phi, phi2, phi4, link, action
    /observables/sweep     int64 [n], sweeps completed at each measurement
    /observables           attribute committed_length
    /histograms/<name>/values, counts
                           int64, exact histogram of a TOTAL (not per-site) integer
                           observable over all measurements and replicas; only values that
                           occurred, sorted; attribute committed_length = sum of counts
                           (ising/potts only; the group is empty for on and phi4)
    /snapshots/configuration  [frames, L0, L1, ...] (R = 1) or [frames, R, L0, ...]; int8
                           (ising), uint8 (potts), float32/float64 (phi4), and for on the
                           same with a trailing component axis [..., n]; attribute packing =
                           "bits" (ising, output.snapshot_packing): uint8, 8 spins per byte
                           along the last axis (L/8 bytes), least significant bit first
    /snapshots/sweep       int64 [frames]
    /snapshots             attribute committed_length
    /correlators/structure_factor/   (only with measure.structure_factor = true)
                           S, S_error, S_connected  float64 [L_0, ..., L_{d-2}, L_{d-1}/2 + 1]
                             (half spectrum of a real FFT, S(-k) = S(k)); momentum_<a> float64
                             [L_a] (last axis [L/2 + 1]), k = 2 pi n / L_a, negative above
                             L_a/2; G, G_connected float64 [L_0, ..., L_{d-1}], G(r), r_a = 0 ..
                             L_a - 1 periodic; radial_k, radial_S float64, radial_modes int64:
                             shells of |k|; mean_field float64 [components]. These tables are
                             written when the run ends: a crashed run has only the series.
                           attributes samples, components, every, xi2 (from <S(0)>, <S(k_min)>)
    /correlators/structure_factor/series/
                           sweep int64 [n], s0, s_min, xi2 float64 [n] or [n, R];
                           attribute committed_length
    /correlators/timeslice/   (only with measure.timeslice = true; the last axis is time T)
                           momenta int64 [n_p, d-1] (integer vectors n, p_a = 2 pi n_a / L_a;
                           row 0 is p = 0), momentum_values float64 [n_p, d-1], sweep int64 [n],
                           C float64 [n, T, n_p] or [n, R, T, n_p]: C(dt, p) = (1/(T V_s))
                           sum_t sum_c Re[O_c(t + dt, p) O_c(t, p)^*], O_c(t, p) = sum_x
                           phi_c(x, t) exp(-i p.x), dt = 0 .. T-1 (periodic);
                           attributes every, momenta_per_axis, committed_length

sim raises committed_length only after the data it vouches for is on disk, so every series
here is cut to it: a file left behind by a crashed run reads up to its last complete
measurement and frame.

A parameter sweep also writes `<stem>.index.json` (schema "lattica-index/1") naming one file
per point; `expand_paths` turns a mix of .h5 and index .json paths into the list of files.
"""

import json
import os

import h5py
import numpy as np

SCHEMA = "lattica/1"
INDEX_SCHEMA = "lattica-index/1"


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
    if n < 0:
        raise SchemaError(f"{path}: {group.name} has committed_length {n}")
    for name, item in group.items():
        if isinstance(item, h5py.Dataset) and item.shape[0] < n:
            raise SchemaError(
                f"{path}: {item.name} has {item.shape[0]} rows but committed_length is {n}")
    return n


class Snapshots:
    """The saved configurations, read from the file one frame (or one slice) at a time.

    A frame is [L0, L1, ...] when the run has one replica, [R, L0, L1, ...] otherwise; an O(n)
    run adds a trailing component axis [..., n]. Values keep the stored dtype (int8, uint8,
    float32 or float64), except that Ising spins stored 8 per byte (output.snapshot_packing =
    "bits", dataset attribute packing = "bits") are unpacked to int8 +1/-1.
    """

    def __init__(self, path, count, frame_shape, sweep, dtype=np.int8, components=1,
                 bit_packed=False):
        self.path = path
        self.count = count  #: committed frames
        self.bit_packed = bit_packed  #: stored 8 spins per byte along the last axis
        if bit_packed:
            frame_shape = tuple(frame_shape[:-1]) + (8 * frame_shape[-1],)
            dtype = np.int8
        self.frame_shape = tuple(frame_shape)  #: shape of one frame
        self.sweep = sweep  #: int64 [count], sweeps completed when each frame was taken
        self.dtype = np.dtype(dtype)  #: the element type of the frames returned
        self.components = components  #: length of the trailing component axis (1: none)

    def _values(self, stored):
        if not self.bit_packed:
            return stored
        bits = np.unpackbits(stored, axis=-1, bitorder="little").astype(np.int8)
        return 2 * bits - 1

    @property
    def shape(self):
        return (self.count,) + self.frame_shape

    def __len__(self):
        return self.count

    def __getitem__(self, key):
        """Frame i (negative counts from the end), or a slice of frames, in the stored dtype."""
        if isinstance(key, slice):
            start, stop, step = key.indices(self.count)
            if step < 1:
                raise IndexError("snapshot slices need a positive step")
            if start >= stop:
                return np.empty((0,) + self.frame_shape, dtype=self.dtype)
            with h5py.File(self.path, "r") as f:
                return self._values(f["snapshots/configuration"][start:stop:step])
        i = int(key)
        if i < 0:
            i += self.count
        if not 0 <= i < self.count:
            raise IndexError(f"snapshot {key} out of range ({self.count} frames)")
        with h5py.File(self.path, "r") as f:
            return self._values(f["snapshots/configuration"][i])

    def __iter__(self):
        for i in range(self.count):
            yield self[i]


class Histogram:
    """An exact histogram of an integer-valued total observable: values[k] occurred counts[k]
    times. `samples` (the group's committed_length) equals counts.sum()."""

    def __init__(self, name, values, counts, samples, description=None):
        self.name = name
        self.values = values  #: int64 [k], sorted, only values that occurred
        self.counts = counts  #: int64 [k]
        self.samples = samples  #: measurements x replicas included
        self.description = description

    def __len__(self):
        return len(self.values)

    def mean(self):
        return float(np.dot(self.values.astype(np.float64), self.counts) / self.counts.sum())


STRUCTURE_FACTOR = "correlators/structure_factor"
TIMESLICE = "correlators/timeslice"
STRUCTURE_FACTOR_SERIES = ("s0", "s_min", "xi2")


PER_MODE_TABLES = ("S", "S_error", "S_connected", "G", "G_connected")


class StructureFactor:
    """/correlators/structure_factor: the end-of-run tables (read from the file when first
    used) and the per-measurement series of S(0), S(k_min) and xi2 (read with the file).

    `complete` is False when the run ended before the tables were written (a crashed run):
    then only the series, `every` and the lattice are known.
    """

    def __init__(self, path, dims, attrs, series, sweep, complete):
        self.path = path
        self.dims = tuple(dims)  #: the lattice extents L_0 .. L_{d-1}
        self.attrs = attrs  #: the group's attributes (samples, components, every, xi2)
        self.series = series  #: "s0", "s_min", "xi2" -> float64 as stored, [n] or [n, R]
        self.sweep = sweep  #: int64 [n], sweeps completed at each series row
        self.complete = complete  #: the end-of-run tables are present
        self._tables = {}

    @property
    def every(self):
        value = self.attrs.get("every")
        return None if value is None else int(value)

    @property
    def samples(self):
        """Measurements x replicas averaged into the tables (None before the run ended)."""
        value = self.attrs.get("samples")
        return None if value is None else int(value)

    @property
    def components(self):
        value = self.attrs.get("components")
        return None if value is None else int(value)

    @property
    def per_mode(self):
        """Whether the file has S, S_error, S_connected, G and G_connected (False: the run had
        measure.structure_factor_tables = "radial", and only the shells, mean field and xi2)."""
        return self.attrs.get("tables") != "radial"

    @property
    def xi2(self):
        """The file's xi2 attribute: from <S(0)> and <S(k_min)> over every sample (no cut)."""
        value = self.attrs.get("xi2")
        return None if value is None else float(value)

    @property
    def longest(self):
        """L, the longest lattice extent (k_min = 2 pi / L)."""
        return max(self.dims)

    @property
    def spectrum_shape(self):
        """[L_0, ..., L_{d-2}, L_{d-1}/2 + 1], the shape of S."""
        return self.dims[:-1] + (self.dims[-1] // 2 + 1,)

    def chain(self, name):
        """A series ("s0", "s_min", "xi2") as float64 [n, R]."""
        x = self.series[name]
        return x.reshape(-1, 1) if x.ndim == 1 else x

    def __len__(self):
        return len(self.sweep)

    def table(self, name):
        """One end-of-run dataset (S, S_error, S_connected, G, G_connected, momentum_<a>,
        radial_k, radial_S, radial_modes, mean_field), read on first use; KeyError when the
        file has none."""
        if name not in self._tables:
            if not self.complete:
                raise KeyError(f"{self.path}: /{STRUCTURE_FACTOR} has no tables (the run did "
                               f"not finish)")
            if not self.per_mode and name in PER_MODE_TABLES:
                raise KeyError(f"{self.path}: no /{STRUCTURE_FACTOR}/{name}: the run kept "
                               f"only the radial tables (measure.structure_factor_tables)")
            with h5py.File(self.path, "r") as f:
                group = f[STRUCTURE_FACTOR]
                if name not in group:
                    raise KeyError(f"{self.path}: no /{STRUCTURE_FACTOR}/{name}")
                self._tables[name] = group[name][()]
        return self._tables[name]

    def momentum(self, axis):
        """k values of each index along `axis` (2 pi n / L, negative above L/2)."""
        return self.table(f"momentum_{axis}")

    S = property(lambda self: self.table("S"))
    S_error = property(lambda self: self.table("S_error"))
    S_connected = property(lambda self: self.table("S_connected"))
    G = property(lambda self: self.table("G"))
    G_connected = property(lambda self: self.table("G_connected"))
    radial_k = property(lambda self: self.table("radial_k"))
    radial_S = property(lambda self: self.table("radial_S"))
    radial_modes = property(lambda self: self.table("radial_modes"))
    mean_field = property(lambda self: self.table("mean_field"))


class Timeslice:
    """/correlators/timeslice: momentum-projected time-slice correlators C(dt, p).

    The last lattice axis is time (T = L_{d-1}). `momenta` are the integer vectors n of the
    projected momenta p_a = 2 pi n_a / L_a (row 0: p = 0); `correlator()` reads the committed
    rows of C from the file, always as float64 [n, R, T, n_p].
    """

    def __init__(self, path, dims, attrs, momenta, momentum_values, sweep, replicas,
                 stored_shape):
        self.path = path
        self.dims = tuple(dims)
        self.attrs = attrs  #: every, momenta_per_axis, committed_length
        self.momenta = momenta  #: int64 [n_p, d-1]
        self.momentum_values = momentum_values  #: float64 [n_p, d-1]
        self.sweep = sweep  #: int64 [n], committed rows only
        self.replicas = replicas
        self.stored_shape = tuple(stored_shape)  #: the shape of the C dataset in the file

    @property
    def time_extent(self):
        """T = L_{d-1}."""
        return self.dims[-1]

    @property
    def spatial_volume(self):
        return int(np.prod(self.dims[:-1], dtype=np.int64))

    @property
    def every(self):
        value = self.attrs.get("every")
        return None if value is None else int(value)

    @property
    def momenta_per_axis(self):
        value = self.attrs.get("momenta_per_axis")
        return None if value is None else int(value)

    @property
    def n_momenta(self):
        return len(self.momenta)

    def __len__(self):
        return len(self.sweep)

    def correlator(self, rows=None):
        """C as float64 [n, R, T, n_p] for the committed rows (or the slice `rows` of them)."""
        n = len(self.sweep)
        start, stop, _ = (rows or slice(None)).indices(n)
        with h5py.File(self.path, "r") as f:
            c = f[TIMESLICE]["C"][start:max(start, stop)].astype(np.float64, copy=False)
        if c.ndim == 3:
            c = c[:, None]
        return c


class LatticaFile:
    """One run's output: metadata, observable series, histograms, snapshots and, where the
    run measured them, the correlators (`structure_factor`, `timeslice`; None otherwise).

    `observables[name]` is the committed part of the dataset as stored ([n] for one replica,
    [n, R] otherwise); `chains[name]` is the same data always as float64 [n, R], which is what
    the analysis uses.
    """

    def __init__(self, path, attrs, observables, sweep, snapshots, histograms=None,
                 warnings=None, structure_factor=None, timeslice=None):
        self.path = path
        self.attrs = attrs  #: root attributes; strings decoded, scalars as int/float
        self.observables = observables  #: name -> float64 array as stored (committed rows)
        self.sweep = sweep  #: int64 array, sweeps completed at each measurement
        self.snapshots = snapshots  #: Snapshots
        self.histograms = histograms or {}  #: name -> Histogram
        self.warnings = warnings or []  #: problems that did not stop the file being read
        self.structure_factor = structure_factor  #: StructureFactor, or None without one
        self.timeslice = timeslice  #: Timeslice, or None without one
        self.replicas = int(attrs.get("replicas", 1))
        #: a parallel-tempering run: its columns are rungs, not replicas of one chain
        self.tempered = False
        #: replicas averaged into each column of the observables (1: every replica's series)
        self.averaged_over = 1
        self.chains = {name: (series.reshape(-1, 1) if series.ndim == 1 else series)
                       for name, series in observables.items()}  #: name -> [n, R]

    @property
    def dims(self):
        return tuple(int(n) for n in np.atleast_1d(self.attrs["lattice_dims"]))

    @property
    def volume(self):
        return int(np.prod(self.dims, dtype=np.int64))

    @property
    def model(self):
        return str(self.attrs.get("model", "ising"))

    @property
    def components(self):
        """Components of the order parameter: n for O(n), else 1 (a scalar)."""
        return int(self.attrs.get("n", 1)) if self.model == "on" else 1

    @property
    def beta(self):
        """The inverse temperature, or None for phi4 (its couplings are kappa and lambda)."""
        value = self.attrs.get("beta")
        return None if value is None else float(value)

    @property
    def coupling_name(self):
        """The coupling a sweep varies: "kappa" for phi4, "beta" otherwise."""
        return "kappa" if self.model == "phi4" else "beta"

    @property
    def coupling(self):
        return float(self.attrs[self.coupling_name])

    @property
    def h(self):
        return float(self.attrs.get("h", 0.0))

    @property
    def point_index(self):
        """The index in a parameter sweep, or None for a single run."""
        value = self.attrs.get("point_index")
        return None if value is None else int(value)

    @property
    def sweep_spacing(self):
        """Sweeps between consecutive measurements (the median spacing), or None."""
        if len(self.sweep) < 2:
            return None
        return float(np.median(np.diff(self.sweep)))

    def __len__(self):
        """The number of committed measurements (rows; each row holds R replicas)."""
        return len(self.sweep)


def _read_histograms(f, path, warnings):
    histograms = {}
    if "histograms" not in f:
        return histograms
    for name, group in f["histograms"].items():
        if not isinstance(group, h5py.Group):
            continue
        if "values" not in group or "counts" not in group:
            warnings.append(f"histogram {name}: needs datasets values and counts; ignored")
            continue
        values = group["values"][:].astype(np.int64, copy=False)
        counts = group["counts"][:].astype(np.int64, copy=False)
        samples = group.attrs.get("committed_length")
        problem = None
        if values.ndim != 1 or values.shape != counts.shape:
            problem = f"values {values.shape} and counts {counts.shape} differ in shape"
        elif samples is None:
            problem = "no committed_length attribute"
        elif int(counts.sum()) != int(samples):
            problem = f"counts sum to {int(counts.sum())} but committed_length is {int(samples)}"
        elif len(values) > 1 and np.any(np.diff(values) <= 0):
            problem = "values are not strictly increasing"
        elif np.any(counts < 0):
            problem = "negative counts"
        if problem:
            warnings.append(f"histogram {name}: {problem}; ignored")
            continue
        histograms[name] = Histogram(name, values, counts, int(samples),
                                     _plain(group.attrs.get("description")))
    return histograms


def _rows_problem(group, names, n, replicas, tail=()):
    """Why datasets `names` of group cannot hold n committed rows of [n] / [n, R] (+ tail), or
    None."""
    for name in names:
        if name not in group or not isinstance(group[name], h5py.Dataset):
            return f"no dataset {name}"
        shape = group[name].shape
        if not shape or shape[0] < n:
            return f"{name} has shape {shape} but committed_length is {n}"
        rest = tuple(shape[1:])
        allowed = {(replicas,) + tuple(tail)}
        if replicas == 1:
            allowed.add(tuple(tail))
        if rest not in allowed:
            expected = " or ".join("[" + ", ".join(["n"] + [str(x) for x in a]) + "]"
                                   for a in sorted(allowed, key=len))
            return f"{name} has shape {shape}, expected {expected} (replicas = {replicas})"
    return None


def _committed(group):
    """(committed_length, problem)."""
    value = group.attrs.get("committed_length")
    if value is None:
        return 0, "no committed_length attribute"
    n = int(value)
    return n, (f"committed_length is {n}" if n < 0 else None)


def _columns(group, replicas):
    """Columns of a correlator series: its replicas, or with output.observables = "means" the
    means over `averaged_over` of them (one per rung when tempered), as /observables holds."""
    averaged = int(group.attrs.get("averaged_over", 1))
    return replicas // averaged if averaged >= 1 and replicas % averaged == 0 else replicas


def _read_structure_factor(f, path, dims, replicas, warnings):
    if STRUCTURE_FACTOR not in f or not isinstance(f[STRUCTURE_FACTOR], h5py.Group):
        return None
    group = f[STRUCTURE_FACTOR]
    attrs = {name: _plain(value) for name, value in group.attrs.items()}
    series, sweep = {}, np.zeros(0, dtype=np.int64)
    problem = None
    if "series" in group and isinstance(group["series"], h5py.Group):
        sub = group["series"]
        n, problem = _committed(sub)
        if problem is None:
            problem = _rows_problem(sub, ("sweep",), n, 1)
        if problem is None:
            problem = _rows_problem(sub, STRUCTURE_FACTOR_SERIES, n,
                                    _columns(sub, replicas))
        if problem is None:
            sweep = sub["sweep"][:n].astype(np.int64, copy=False)
            series = {name: sub[name][:n].astype(np.float64, copy=False)
                      for name in STRUCTURE_FACTOR_SERIES}
        else:
            problem = f"series: {problem}"
    else:
        problem = "no series subgroup"
    if problem is not None:
        warnings.append(f"/{STRUCTURE_FACTOR}: {problem}; ignored")
        return None
    half = tuple(dims[:-1]) + (dims[-1] // 2 + 1,)
    radial = attrs.get("tables") == "radial"  # measure.structure_factor_tables = "radial"
    complete = "S" in group or (radial and "radial_S" in group)
    if complete:
        expected = {} if radial else {"S": half, "S_error": half, "S_connected": half,
                                      "G": tuple(dims), "G_connected": tuple(dims)}
        for a, length in enumerate(half):
            expected[f"momentum_{a}"] = (length,)
        for name, shape in expected.items():
            if name not in group:
                problem = f"no dataset {name}"
            elif group[name].shape != shape:
                problem = f"{name} has shape {group[name].shape}, expected {shape}"
            if problem:
                break
        if problem is None:
            lengths = {group[name].shape for name in ("radial_k", "radial_S", "radial_modes")
                       if name in group}
            if len(lengths) != 1 or len(next(iter(lengths))) != 1:
                problem = "radial_k, radial_S and radial_modes are missing or differ in shape"
        if problem is not None:
            warnings.append(f"/{STRUCTURE_FACTOR}: {problem}; its tables are ignored "
                            f"(the series is kept)")
            complete = False
    return StructureFactor(path, dims, attrs, series, sweep, complete)


def _read_timeslice(f, path, dims, replicas, warnings):
    if TIMESLICE not in f or not isinstance(f[TIMESLICE], h5py.Group):
        return None
    group = f[TIMESLICE]
    attrs = {name: _plain(value) for name, value in group.attrs.items()}
    n, problem = _committed(group)
    momenta = values = None
    if problem is None:
        for name in ("momenta", "momentum_values", "sweep", "C"):
            if name not in group or not isinstance(group[name], h5py.Dataset):
                problem = f"no dataset {name}"
                break
    if problem is None:
        momenta = group["momenta"][()].astype(np.int64, copy=False)
        values = group["momentum_values"][()].astype(np.float64, copy=False)
        spatial = len(dims) - 1
        if momenta.ndim == 1 and spatial == 0:
            momenta = momenta.reshape(-1, 0)
            values = values.reshape(-1, 0)
        if momenta.ndim != 2 or momenta.shape[1] != spatial or values.shape != momenta.shape:
            problem = (f"momenta {momenta.shape} and momentum_values {values.shape}: expected "
                       f"[n_p, {spatial}]")
    if problem is None:
        problem = _rows_problem(group, ("sweep",), n, 1)
    columns = _columns(group, replicas)
    if problem is None:
        problem = _rows_problem(group, ("C",), n, columns, (dims[-1], len(momenta)))
    if problem is not None:
        warnings.append(f"/{TIMESLICE}: {problem}; ignored")
        return None
    sweep = group["sweep"][:n].astype(np.int64, copy=False)
    return Timeslice(path, dims, attrs, momenta, values, sweep, columns, group["C"].shape)


def load(path):
    """Opens a Lattica file and reads its metadata, observable series and histograms.

    Raises SchemaError when the file is not schema "lattica/1" or its groups are missing or
    inconsistent, OSError when it cannot be read as HDF5. An inconsistent histogram or
    correlator group does not raise: it is left out and noted in `warnings` (the structure
    factor keeps its series when only its end-of-run tables are wrong). The correlator groups
    are optional; their large tables and C are read from the file when first used.
    """
    path = str(path)
    warnings = []
    with h5py.File(path, "r") as f:
        schema = _plain(f.attrs.get("schema"))
        if schema != SCHEMA:
            found = "no schema attribute" if schema is None else f"schema {schema!r}"
            raise SchemaError(f"{path}: not a Lattica file: {found}, expected {SCHEMA!r}")
        attrs = {name: _plain(value) for name, value in f.attrs.items()}
        # phi4 has no temperature: kappa and lambda take beta's place. O(n) needs n for the
        # normalisation of its Binder cumulant.
        required = {"phi4": ("kappa", "lambda"), "on": ("beta", "n")}.get(attrs.get("model"),
                                                                           ("beta",))
        for key in required + ("lattice_dims",):
            if key not in attrs:
                raise SchemaError(f"{path}: no root attribute {key}")
        for group in ("observables", "snapshots"):
            if group not in f:
                raise SchemaError(f"{path}: no /{group} group")
        replicas = int(attrs.get("replicas", 1))
        if replicas < 1:
            raise SchemaError(f"{path}: replicas is {replicas}")

        group = f["observables"]
        n = _committed_length(group, path)
        # output.observables = "means": each column is the mean of this many replicas (the
        # ladders of a tempered run), and /kept_replicas may hold some of them in full.
        averaged_over = int(group.attrs.get("averaged_over", 1))
        if averaged_over < 1 or replicas % averaged_over:
            raise SchemaError(f"{path}: /observables averages {averaged_over} of {replicas} "
                              f"replicas")
        if "sweep" not in group:
            raise SchemaError(f"{path}: no /observables/sweep dataset")
        sweep = group["sweep"][:n].astype(np.int64, copy=False)
        observables = {}
        for name, item in group.items():
            if name == "sweep" or not isinstance(item, h5py.Dataset):
                continue
            if item.ndim == 1:
                columns = 1
            elif item.ndim == 2:
                columns = item.shape[1]
            else:
                raise SchemaError(f"{path}: {item.name} has shape {item.shape}, expected [n] "
                                  f"or [n, R]")
            if columns != replicas // averaged_over:
                raise SchemaError(f"{path}: {item.name} has shape {item.shape} but the file "
                                  f"says replicas = {replicas}" +
                                  (f", averaged over {averaged_over}" if averaged_over > 1
                                   else ""))
            observables[name] = item[:n].astype(np.float64, copy=False)
            bad = np.count_nonzero(~np.isfinite(observables[name]))
            if bad:  # an old file: sim now stops before writing such a value
                warnings.append(f"/observables/{name}: {bad} value(s) not finite; summary, "
                                f"reweight, crossing and plot refuse this file")

        histograms = _read_histograms(f, path, warnings)

        group = f["snapshots"]
        frames = _committed_length(group, path)
        if "configuration" not in group or "sweep" not in group:
            raise SchemaError(f"{path}: /snapshots needs datasets configuration and sweep")
        configuration = group["configuration"]
        frame_shape = configuration.shape[1:]
        snapshot_sweep = group["sweep"][:frames].astype(np.int64, copy=False)
        components = 1
        if attrs.get("model") == "on":
            components = int(attrs["n"])
            if not frame_shape or frame_shape[-1] != components:
                raise SchemaError(f"{path}: /snapshots/configuration has frames of "
                                  f"{frame_shape}, expected a last axis of n = {components}")
        packing = configuration.attrs.get("packing", "none")
        if isinstance(packing, bytes):
            packing = packing.decode()
        if packing not in ("none", "bits"):
            raise SchemaError(f"{path}: /snapshots/configuration has packing = {packing!r}")
        snapshots = Snapshots(path, frames, frame_shape, snapshot_sweep, configuration.dtype,
                              components, bit_packed=packing == "bits")

        dims = tuple(int(n) for n in np.atleast_1d(attrs["lattice_dims"]))
        structure_factor = _read_structure_factor(f, path, dims, replicas, warnings)
        timeslice = _read_timeslice(f, path, dims, replicas, warnings)

        tempered = "tempering" in f

    run = LatticaFile(path, attrs, observables, sweep, snapshots, histograms, warnings,
                      structure_factor, timeslice)
    run.tempered = tempered
    run.averaged_over = averaged_over
    return run


def is_index_file(path):
    """True when path names a sweep index (by its .json suffix)."""
    return str(path).lower().endswith(".json")


def read_index(path):
    """Reads a sweep index (schema "lattica-index/1"). Returns the parsed document with each
    point's "path" added: its file resolved against the index file's directory.

    Raises SchemaError when the document is not a Lattica sweep index, OSError when unreadable.
    """
    path = str(path)
    with open(path, encoding="utf-8") as f:
        try:
            document = json.load(f)
        except json.JSONDecodeError as e:
            raise SchemaError(f"{path}: not JSON: {e}") from None
    if not isinstance(document, dict) or document.get("schema") != INDEX_SCHEMA:
        found = document.get("schema") if isinstance(document, dict) else None
        raise SchemaError(f"{path}: not a Lattica sweep index: schema {found!r}, expected "
                          f"{INDEX_SCHEMA!r}")
    points = document.get("points")
    if not isinstance(points, list):
        raise SchemaError(f"{path}: the index has no list of points")
    base = os.path.dirname(os.path.abspath(path))
    for point in points:
        if not isinstance(point, dict) or not isinstance(point.get("file"), str):
            raise SchemaError(f"{path}: a point without a file name: {point!r}")
        point["path"] = os.path.normpath(os.path.join(base, point["file"]))
    return document


def expand_paths(paths, report=None):
    """The data files named by `paths`: .h5 files as they are, each index .json replaced by its
    points' files in index order. A point whose file is missing is passed to report(message)
    and skipped; an unreadable index raises (OSError or SchemaError).
    """
    files = []
    for path in paths:
        if not is_index_file(path):
            files.append(str(path))
            continue
        document = read_index(path)
        for point in document["points"]:
            if os.path.exists(point["path"]):
                files.append(point["path"])
            elif report is not None:
                parameters = point.get("parameters", {})
                described = ", ".join(f"{k} = {v}" for k, v in parameters.items())
                report(f"{path}: point {point.get('index')} ({described}): file "
                       f"{point['path']} is missing; skipped")
    return files
