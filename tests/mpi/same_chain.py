#!/usr/bin/env python3
"""Compares the chains of two Lattica output files: every dataset (observables, sweeps,
histograms, snapshots, step tuning) must hold the same values, bit for bit, or to a relative
tolerance (--rtol, for the observables of continuous models, whose sums are added in another
order on another number of ranks), the spectra (/correlators) to --spectral-rtol of their
largest value (a distributed FFT rounds otherwise than one process's), and the fields of
snapshots to --field-rtol of their largest value (moves through a distributed FFT).
Metadata attributes (device, times, backend) may differ.

Usage: same_chain.py A.h5 B.h5 [--rtol R] [--spectral-rtol R] [--field-rtol R]; exit 0 when
the chains agree, 1 otherwise. From Python (tests/mpi/test_ranks.py):
differences(A, B, rtol, spectral_rtol, field_rtol) -> (compared, problems)."""
import argparse
import sys

import h5py
import numpy as np


def datasets(f):
    out = {}
    f.visititems(lambda name, obj: out.__setitem__(name, obj) if isinstance(obj, h5py.Dataset) else None)
    return out


def differences(path_a, path_b, rtol=0.0, spectral_rtol=0.0, field_rtol=0.0):
    """(datasets compared, problems): every way the chains of the two files differ, as lines;
    none where they agree. rtol > 0 compares floating-point observables to that relative
    tolerance, spectral_rtol > 0 floating-point spectra and field_rtol > 0 snapshots to that
    fraction of their largest value, everything else bit for bit."""
    problems = []
    compared = 0
    with h5py.File(path_a, "r") as fa, h5py.File(path_b, "r") as fb:
        da, db = datasets(fa), datasets(fb)
        if set(da) != set(db):
            problems.append(f"datasets differ: only in A {sorted(set(da) - set(db))}, "
                            f"only in B {sorted(set(db) - set(da))}")
        for name in sorted(set(da) & set(db)):
            a, b = da[name][()], db[name][()]
            if np.shape(a) != np.shape(b):
                problems.append(f"{name}: shape {np.shape(a)} against {np.shape(b)}")
                continue
            compared += 1
            floating = np.issubdtype(np.asarray(a).dtype, np.floating)
            tolerant = rtol > 0 and floating and name.startswith("observables/")
            scaled = 0.0  # a tolerance relative to the dataset's largest value
            if floating and name.startswith("correlators/"):
                scaled = spectral_rtol
            elif floating and name.startswith("snapshots/"):
                scaled = field_rtol
            if scaled > 0:
                scale = np.nanmax(np.abs(b)) if np.size(b) else 0.0
                if not np.allclose(a, b, rtol=0, atol=scaled * scale, equal_nan=True):
                    worst = np.nanmax(np.abs(np.asarray(a) - b)) / max(scale, 1e-300)
                    problems.append(f"{name}: difference up to {worst:.3g} of the largest "
                                    f"value > {scaled}")
            elif tolerant:
                if not np.allclose(a, b, rtol=rtol, atol=0, equal_nan=True):
                    worst = np.nanmax(np.abs(np.asarray(a) - b) / np.maximum(np.abs(b), 1e-300))
                    problems.append(f"{name}: relative difference up to {worst:.3g} > {rtol}")
            elif np.asarray(a).tobytes() != np.asarray(b).tobytes():
                where = np.flatnonzero(np.asarray(a).ravel() != np.asarray(b).ravel())
                problems.append(f"{name}: differs at {len(where)} of {np.size(a)} values "
                                f"(first at flat index {where[0] if len(where) else '?'})")
        if compared == 0:
            problems.append("no datasets to compare")
    return compared, problems


def main():
    p = argparse.ArgumentParser()
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rtol", type=float, default=0.0,
                   help="relative tolerance for floating-point observables (0: bit for bit)")
    p.add_argument("--spectral-rtol", type=float, default=0.0,
                   help="tolerance for floating-point spectra, relative to their largest value")
    p.add_argument("--field-rtol", type=float, default=0.0,
                   help="tolerance for floating-point snapshots, relative to their largest value")
    args = p.parse_args()
    compared, problems = differences(args.a, args.b, args.rtol, args.spectral_rtol,
                                     args.field_rtol)
    for line in problems:
        print(f"same_chain: {args.a} vs {args.b}: {line}", file=sys.stderr)
    if not problems:
        print(f"same_chain: {args.a} and {args.b}: {compared} datasets agree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
