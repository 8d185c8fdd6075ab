"""Lattica analysis: reading the HDF5 files that sim writes (schema "lattica/1").

    python3 -m analysis info FILE...      metadata, series lengths, plain sample means

From Python:

    from analysis import lattica_file
    run = lattica_file.load("lattice.h5")
    run.observables["energy"], run.sweep, run.snapshots[-1]

Needs numpy and h5py (Debian: python3-numpy, python3-h5py).
"""

from analysis.lattica_file import SCHEMA, LatticaFile, SchemaError, Snapshots, load

__all__ = ["SCHEMA", "LatticaFile", "SchemaError", "Snapshots", "load"]
