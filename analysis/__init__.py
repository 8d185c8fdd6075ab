"""Lattica analysis: reading and analysing the HDF5 files that sim writes (schema "lattica/1").

Command line (from the repository root, with Debian's /usr/bin/python3; FILE is a .h5 file or
a sweep index .json standing for its points' files; every command has --help):

    python3 -m analysis info FILE...       metadata, series lengths, plain sample means
    python3 -m analysis summary FILE...    thermalisation cut; e, m, |m|, m^2, m^4, e^2 with
                                           Gamma-method errors and tau_int; U4, chi, C
    python3 -m analysis reweight FILE --beta B...
                                           single-histogram reweighting, jackknife errors
    python3 -m analysis crossing FILE...   Binder-cumulant crossings between lattice sizes
    python3 -m analysis effmass FILE [--momentum INDEX|all]
                                           time-slice correlators C(dt, p) and cosh effective
                                           masses, blocked-jackknife errors
    python3 -m analysis plot FILE... --out DIR
                                           PNG figures
    python3 -m analysis dynamics FILE... [--rates JSON] [--plot PNG]
                                           tau_int across sizes and update algorithms, fits
                                           tau = A L^z, samples per second and gains
summary, reweight, crossing, effmass and dynamics take --json [PATH] for a machine-readable
report. summary compares a cluster pass's improved estimator m2_improved with V <m^2>.
Files with /correlators/structure_factor also get xi2 (second-moment correlation length) in
summary, and correlator figures in plot.

Conventions (Ising): e = E/V with E = -sum_<ij> s_i s_j - h sum_i s_i, m = M/V;
U4 = 1 - <m^4>/(3 <m^2>^2); chi = beta V (<m^2> - <|m|>^2) (also chi' = beta V <m^2> at
h = 0, chi_c = beta V (<m^2> - <m>^2) at h != 0); C = beta^2 V (<e^2> - <e>^2).
O(n) ("on"): m = |m| (modulus of the magnetisation vector), U4 = (n+2)/2 (1 - n/(n+2)
<m^4>/<m^2>^2) (0 for a Gaussian m vector, 1 ordered), for n = 2 the helicity modulus.
phi4: m = phi, no beta (chi without a beta factor, no C; reweight and crossing refuse).
summary.py gives the details per model.

Modules:
    lattica_file   reader: load(path) -> LatticaFile (attrs, chains [n, R], sweep,
                   histograms, snapshots, structure_factor, timeslice); expand_paths() for
                   sweep index files
    correlators    xi2 from the structure-factor series; cosh effective masses of the
                   time-slice correlators with a blocked jackknife
    gamma          Gamma method (U. Wolff, Comput. Phys. Commun. 156 (2004) 143) for primary
                   and derived quantities; blocked jackknife
    summary        thermalisation cut and the per-run table
    reweight       Ferrenberg-Swendsen single-histogram reweighting
    crossing       Binder-cumulant crossings
    dynamics       autocorrelation times across lattice sizes and algorithms, dynamic
                   exponents, independent samples per second
    plots          figures (matplotlib, Agg)

From Python:

    from analysis import lattica_file, gamma
    run = lattica_file.load("lattice.h5")
    e = run.chains["energy"]            # float64 [n, R], committed rows only
    r = gamma.analyse(e)                # r.value, r.error, r.tau_int, r.tau_int_error, r.window

Needs numpy, scipy, h5py and matplotlib (Debian: python3-numpy, python3-scipy, python3-h5py,
python3-matplotlib).
"""

from analysis.lattica_file import (INDEX_SCHEMA, SCHEMA, Histogram, LatticaFile, SchemaError,
                                   Snapshots, StructureFactor, Timeslice, expand_paths, load,
                                   read_index)

__all__ = ["INDEX_SCHEMA", "SCHEMA", "Histogram", "LatticaFile", "SchemaError", "Snapshots",
           "StructureFactor", "Timeslice", "expand_paths", "load", "read_index"]
