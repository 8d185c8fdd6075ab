#!/usr/bin/python3
"""The correlator groups (/correlators/structure_factor, /correlators/timeslice) on synthetic
files written with synthetic.py (this directory) to the layout sim writes.

Covers: the cosh effective mass of exact correlators (even and odd T, the periodic wrap, no
solution where there is none); `effmass` on C(dt, p) = A cosh(E(p) (dt - T/2)) with
autocorrelated multiplicative noise gives back E(p) within its jackknife error at every dt,
for p = 0 and p != 0, with replicas, one replica (C stored [n, T, n_p]) and d = 2; the
thermalisation cut by sweep; a free Gaussian field from which C is computed by its definition
gives the exact lattice propagator and E(p) (4 sinh^2(E/2) = M^2 + p_hat^2) and, through the
structure-factor series, xi2 = 1/M; committed_length truncation; inconsistent groups are
ignored with a warning; `summary` prints xi2 from the s0 and s_min series with a Gamma error;
`info` lists the groups; `plot` writes the correlator figures; errors and --help.
Given sim's path as its argument it also runs sim (CPU, tiny lattices: Ising d = 3 with two
replicas, XY d = 2) with both correlators on, checks that the reader takes its files, that
the last C row and structure-factor series row equal their definitions on the final snapshot
(synthetic.timeslice_correlator), and that effmass, summary and plot run on them.
Fixed seeds: deterministic.
Run: PYTHONPATH=<repo> /usr/bin/python3 tests/analysis/test_correlators.py [SIM_EXE]
"""

import json
import math
import os
import pathlib
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from script_support import (LATTICE_TOML, ScratchCase, ar1, call_analysis,  # noqa: E402
                            positional_arguments, run, sim_command, sim_env)

import synthetic  # noqa: E402

from analysis import correlators, gamma, lattica_file  # noqa: E402

call = call_analysis  # the command line, in this process: (status, stdout, stderr)
# sim's path when given as the first argument (the rest goes to unittest)
[SIM] = positional_arguments(1)
PULL = 4.0  # |estimate - exact| <= PULL errors at every dt


def lattice_energy(mass, p):
    """E(p) of a free lattice boson of mass M: 4 sinh^2(E/2) = M^2 + sum_a 4 sin^2(p_a/2)."""
    p_hat2 = np.sum(4.0 * np.sin(0.5 * np.asarray(p, dtype=float)) ** 2, axis=-1)
    return 2.0 * np.arcsinh(0.5 * np.sqrt(mass * mass + p_hat2))


def observables(rng, n, replicas):
    """Stationary e and m series for the run the correlators belong to."""
    shape = (n, replicas)
    e = -1.2 + 0.05 * ar1(rng, 0.3, shape)
    m = 0.3 * ar1(rng, 0.3, shape)
    return (e[:, 0], m[:, 0]) if replicas == 1 else (e, m)


def cosh_correlator(rng, n, replicas, dims, per_axis, mass, noise=0.03, a=0.5):
    """C [n, R, T, n_p] = A(p) cosh(E(p) (dt - T/2)) (1 + noise eta), eta AR(1) in the
    measurements (coefficient a) and symmetric in dt (C(dt) = C(T - dt) as sim's is)."""
    extent = dims[-1]
    momenta = synthetic.timeslice_momenta(dims, per_axis)
    p = 2.0 * np.pi * momenta / np.array(dims[:-1], dtype=float)
    energy = lattice_energy(mass, p)
    dt = np.arange(extent)
    exact = (1.0 + np.arange(len(momenta)))[None, :] * np.cosh(
        energy[None, :] * (dt[:, None] - 0.5 * extent))  # [T, n_p]
    half = extent // 2 + 1
    eta = ar1(rng, a, (n, replicas * half * len(momenta))).reshape(n, replicas, half, -1)
    eta = np.concatenate([eta, eta[:, :, 1:extent - half + 1][:, :, ::-1]], axis=2)
    return exact[None, None] * (1.0 + noise * eta), momenta, energy


def free_field(rng, count, dims, mass):
    """count independent configurations of the free Gaussian field with action
    (1/2) sum phi (-Laplacian + M^2) phi: <|phi(k)|^2> = V / (p_hat^2 + M^2)."""
    grids = np.meshgrid(*[2.0 * np.pi * np.fft.fftfreq(length) for length in dims],
                        indexing="ij")
    filter_ = 1.0 / np.sqrt(sum(4.0 * np.sin(0.5 * k) ** 2 for k in grids) + mass * mass)
    axes = tuple(range(1, len(dims) + 1))
    noise = rng.standard_normal((count,) + tuple(dims))
    return np.fft.ifftn(np.fft.fftn(noise, axes=axes) * filter_, axes=axes).real


class Scratch(ScratchCase):
    prefix = "lattica_corr_"

    def effmass(self, path, *args):
        status, out, err = call("effmass", path, *args, "--json")
        self.assertEqual(status, 0, err)
        return json.loads(out)

    def assert_masses(self, m, exact, label, dts=None):
        """m_eff within PULL jackknife errors of exact at every dt (or at dts)."""
        values = np.array([np.nan if x is None else x for x in m["m_eff"]])
        errors = np.array([np.nan if x is None else x for x in m["m_eff_error"]])
        dts = range(len(values)) if dts is None else dts
        for dt in dts:
            self.assertTrue(np.isfinite(values[dt]) and np.isfinite(errors[dt]),
                            f"{label}: dt = {dt}: m_eff {values[dt]} ± {errors[dt]}")
            self.assertGreater(errors[dt], 0.0, f"{label}: dt = {dt}")
            self.assertLessEqual(abs(values[dt] - exact), PULL * errors[dt],
                                 f"{label}: dt = {dt}: m_eff {values[dt]} ± {errors[dt]}, "
                                 f"exact {exact}")
        return values, errors


class CoshMassTest(unittest.TestCase):
    def test_exact_correlators(self):
        for extent in (8, 16, 15, 64):
            dt = np.arange(extent)
            for mass in (0.02, 0.3, 1.0, 4.0, 12.0):
                c = 3.0 * np.cosh(mass * (dt - 0.5 * extent))
                m = correlators.effective_masses(c)
                for t in dt:
                    if extent % 2 and 2 * t == extent - 1:  # both sides are 1: no solution
                        self.assertTrue(math.isnan(m[t]), (extent, mass, t))
                    else:
                        self.assertAlmostEqual(m[t] / mass, 1.0, delta=1e-9,
                                               msg=f"T = {extent}, m = {mass}, dt = {t}")
                # the periodic wrap: dt = T-1 compares C(T-1) with C(T) = C(0)
                self.assertAlmostEqual(m[-1], mass, delta=1e-9 * mass)

    def test_no_solution(self):
        self.assertTrue(math.isnan(correlators.cosh_mass(-1.0, 2.0, 0, 16)))  # C <= 0
        self.assertTrue(math.isnan(correlators.cosh_mass(1.0, 0.0, 0, 16)))
        self.assertTrue(math.isnan(correlators.cosh_mass(1.0, 2.0, 0, 16)))  # rises before T/2
        self.assertTrue(math.isnan(correlators.cosh_mass(2.0, 1.0, 12, 16)))  # falls after
        self.assertTrue(math.isnan(correlators.cosh_mass(1.0, 1.0, 3, 16)))  # m = 0 exactly
        self.assertTrue(math.isnan(correlators.cosh_mass(math.nan, 1.0, 3, 16)))
        # a pure exponential (T -> infinity) gives its decay rate near dt = 0
        self.assertAlmostEqual(correlators.cosh_mass(math.exp(0.7 * 4), math.exp(0.7 * 3), 4,
                                                     200), 0.7, places=9)


class EffmassTest(Scratch):
    def test_cosh_with_noise_every_dt(self):
        dims, mass, n, replicas = (6, 4, 16), 0.35, 1500, 2
        c, momenta, energy = cosh_correlator(self.rng, n, replicas, dims, 2, mass)
        e, m = observables(self.rng, n, replicas)
        path = synthetic.write_run(self.path("c.h5"), e, m, beta=0.3, dims=dims)
        synthetic.write_timeslice(path, c, momenta_per_axis=2, extra_rows=7)
        self.assertEqual(len(momenta), 5)  # p = 0, 2 along axis 0, 2 along axis 1

        d = self.effmass(path, "--momentum", "all")
        self.assertEqual(d["schema"], "lattica-effmass/1")
        self.assertEqual((d["T"], d["spatial_volume"], d["replicas"], d["measurements"]),
                         (16, 24, 2, n))
        self.assertEqual(d["cut"], 0)
        self.assertEqual(d["measurements_used"], n)
        self.assertEqual(len(d["momenta"]), 5)
        pulls = []
        for k, mo in enumerate(d["momenta"]):
            self.assertEqual(mo["index"], k)
            self.assertEqual(mo["n"], momenta[k].tolist())
            np.testing.assert_allclose(mo["p"], 2 * np.pi * momenta[k] / np.array(dims[:-1]))
            self.assertEqual(mo["measures"], "m" if k == 0 else "E(p)")
            # the average is the plain mean of the committed rows (not the garbage after)
            np.testing.assert_allclose(mo["C"], c[:, :, :, k].mean(axis=(0, 1)), rtol=1e-12)
            values, errors = self.assert_masses(mo, energy[k], f"momentum {k}")
            pulls.extend((values - energy[k]) / errors)
            # blocks about 20 tau_int of C(dt = 1) long; AR(1) a = 0.5 has tau_int 1.5
            self.assertGreater(mo["tau_int_C1"], 1.0)
            self.assertGreaterEqual(mo["block_length"], 20 * mo["tau_int_C1"] - 1)
            self.assertTrue(mo["blocks_ok"])
            self.assertEqual(mo["blocks"], replicas * (n // mo["block_length"]))
            # the jackknife error of C(0) agrees with the Gamma method's
            g = gamma.analyse(c[:, :, 0, k])
            self.assertLess(abs(mo["C_error"][0] / g.error - 1.0), 0.3)
        pulls = np.array(pulls)
        # the errors are neither far too large nor too small (mirrored dt repeat values)
        self.assertTrue(0.3 < np.sqrt(np.mean(pulls ** 2)) < 1.6, np.sqrt(np.mean(pulls ** 2)))

        # default: p = 0 only; the table
        d0 = self.effmass(path)
        self.assertEqual([mo["index"] for mo in d0["momenta"]], [0])
        self.assertEqual(d0["momenta"][0]["m_eff"], d["momenta"][0]["m_eff"])
        status, out, err = call("effmass", path, "--momentum", "3")
        self.assertEqual(status, 0, err)
        self.assertIn("E(p)", out)
        self.assertIn("momentum 3: n = (0, 1)", out)
        self.assertIn("jackknife", out)
        rows = [line.split() for line in out.splitlines() if line[:7].strip().isdigit()]
        self.assertEqual([int(r[0]) for r in rows], list(range(9)))  # dt = 0 .. T/2
        status, out, err = call("effmass", path)
        self.assertIn("m_eff measures the mass m", out)
        report = self.path("e.json")
        status, out, err = call("effmass", path, f"--json={report}")
        self.assertEqual(status, 0, err)
        with open(report) as f:
            self.assertEqual(json.load(f)["momenta"][0]["index"], 0)

    def test_one_replica_two_dimensions(self):
        dims, mass, n = (8, 12), 0.5, 2500
        c, momenta, energy = cosh_correlator(self.rng, n, 1, dims, 3, mass, noise=0.02, a=0.2)
        e, m = observables(self.rng, n, 1)
        path = synthetic.write_run(self.path("d2.h5"), e, m, beta=0.3, dims=dims)
        synthetic.write_timeslice(path, c[:, 0], momenta_per_axis=3)  # stored [n, T, n_p]
        run = lattica_file.load(path)
        self.assertEqual(run.timeslice.stored_shape, (n, 12, 4))
        self.assertEqual(run.timeslice.correlator().shape, (n, 1, 12, 4))
        d = self.effmass(path, "--momentum", "all")
        for k, mo in enumerate(d["momenta"]):
            self.assert_masses(mo, energy[k], f"d = 2, momentum {k}")

    def test_cut_by_sweep(self):
        dims, n = (4, 4, 8), 1600
        c, _, energy = cosh_correlator(self.rng, n // 2, 1, dims, 1, 0.6, a=0.0)
        e, m = observables(self.rng, n, 1)
        e[:300] += np.linspace(0.8, 0.0, 300)  # a relaxation: the automatic cut is 1/4
        path = synthetic.write_run(self.path("cut.h5"), e, m, beta=0.3, dims=dims,
                                   sweep=10 * np.arange(1, n + 1))
        synthetic.write_timeslice(path, c[:, 0], every=2)  # every second measurement
        run = lattica_file.load(path)
        np.testing.assert_array_equal(run.timeslice.sweep, 20 * np.arange(1, n // 2 + 1))
        d = self.effmass(path)
        self.assertEqual(d["cut"], 400)
        self.assertEqual(d["first_sweep"], 4010)  # the sweep of measurement 400 (0-based)
        self.assertEqual(d["measurements_used"], n // 2 - 200)  # rows from sweep 4020 on
        np.testing.assert_allclose(d["momenta"][0]["C"], c[200:, 0, :, 0].mean(axis=0),
                                   rtol=1e-12)
        d = self.effmass(path, "--cut", "0")
        self.assertIsNone(d["first_sweep"])
        self.assertEqual(d["measurements_used"], n // 2)

    def test_free_field(self):
        """C from its definition on free-field configurations: the exact lattice propagator
        (1/T) sum_k exp(i k dt) / (4 sin^2(k/2) + M^2 + p_hat^2) = cosh(E (dt - T/2)) /
        (2 sinh E sinh(E T/2)), and xi2 = 1/M from the S(0) and S(k_min) series."""
        dims, mass, count, replicas = (4, 4, 16), 0.5, 1200, 2
        fields = free_field(self.rng, count * replicas, dims, mass)
        momenta = synthetic.timeslice_momenta(dims, 1)
        c = np.array([synthetic.timeslice_correlator(x, momenta) for x in fields])
        c = c.reshape(count, replicas, dims[-1], len(momenta))
        np.testing.assert_allclose(c, c[:, :, (-np.arange(16)) % 16], rtol=1e-9, atol=1e-12,
                                   err_msg="C(dt) = C(T - dt)")
        volume = int(np.prod(dims))
        spectra = np.abs(np.fft.rfftn(fields, axes=(1, 2, 3))) ** 2 / volume
        s0 = spectra[:, 0, 0, 0].reshape(count, replicas)
        s_min = spectra[:, 0, 0, 1].reshape(count, replicas)  # 2 pi / L along the longest axis
        e, m = observables(self.rng, count, replicas)
        path = synthetic.write_run(self.path("free.h5"), e, m, beta=0.3, dims=dims)
        synthetic.write_timeslice(path, c, momenta_per_axis=1)
        synthetic.write_structure_factor(path, s0, s_min, spectrum=spectra.mean(axis=0))

        d = self.effmass(path, "--momentum", "all", "--cut", "0")
        p = 2.0 * np.pi * momenta / np.array(dims[:-1], dtype=float)
        energy = lattice_energy(mass, p)
        dt = np.arange(dims[-1])
        extent = dims[-1]
        for k, mo in enumerate(d["momenta"]):
            exact_c = np.cosh(energy[k] * (dt - extent / 2)) / (
                2.0 * np.sinh(energy[k]) * np.sinh(energy[k] * extent / 2))
            pull = (np.array(mo["C"]) - exact_c) / np.array(mo["C_error"])
            self.assertLess(np.max(np.abs(pull)), PULL, f"momentum {k}: C pulls {pull}")
            # m_eff where C is still well above its noise (p = 0: all of T/2)
            self.assert_masses(mo, energy[k], f"free field, momentum {k}",
                               dts=range(extent // 2) if k == 0 else range(3))

        status, out, err = call("summary", path, "--cut", "0", "--json")
        self.assertEqual(status, 0, err)
        sf = json.loads(out)["files"][0]["structure_factor"]
        xi2 = sf["xi2"]
        self.assertLess(abs(xi2["value"] - 1.0 / mass), PULL * xi2["error"], xi2)
        self.assertLess(xi2["error"], 0.1)
        # the file's attribute: from the averaged spectrum, all samples
        self.assertAlmostEqual(sf["file_xi2"], correlators.second_moment_length(
            s0.mean(), s_min.mean(), 16), places=10)

    def test_errors_and_help(self):
        e, m = observables(self.rng, 200, 1)
        plain = synthetic.write_run(self.path("plain.h5"), e, m, beta=0.3, dims=(4, 8))
        status, _, err = call("effmass", plain)
        self.assertEqual(status, 2)
        self.assertIn("no /correlators/timeslice", err)
        c, _, _ = cosh_correlator(self.rng, 200, 1, (4, 8), 1, 0.5)
        path = synthetic.write_run(self.path("t.h5"), e, m, beta=0.3, dims=(4, 8))
        synthetic.write_timeslice(path, c[:, 0], momenta_per_axis=1)
        for bad in ("2", "-1", "x"):
            status, _, err = call("effmass", path, "--momentum", bad)
            self.assertEqual(status, 2, bad)
            self.assertIn("--momentum", err)
        status, _, err = call("effmass", "--json", path, plain)
        self.assertEqual(status, 2)
        status, out, _ = call("effmass", "--help")
        self.assertEqual(status, 0)
        self.assertIn("cosh(m (dt - T/2))", out)
        status, out, _ = call("--help")
        self.assertIn("effmass", out)


class ReaderTest(Scratch):
    def test_groups_and_truncation(self):
        dims, n, replicas = (4, 6, 8), 300, 3
        e, m = observables(self.rng, n, replicas)
        path = synthetic.write_run(self.path("g.h5"), e, m, beta=0.3, dims=dims)
        run = lattica_file.load(path)
        self.assertIsNone(run.structure_factor)
        self.assertIsNone(run.timeslice)
        c, momenta, _ = cosh_correlator(self.rng, n, replicas, dims, 2, 0.4)
        synthetic.write_timeslice(path, c, momenta_per_axis=2, committed_length=250,
                                  extra_rows=10)
        s0 = 5.0 + self.rng.random((n // 2, replicas))
        s_min = 1.0 + self.rng.random((n // 2, replicas))
        spectrum = 1.0 + self.rng.random((4, 6, 5))
        synthetic.write_structure_factor(path, s0, s_min, spectrum=spectrum, every=2,
                                         committed_length=120, extra_rows=4, components=1)
        run = lattica_file.load(path)
        self.assertEqual(run.warnings, [])
        ts = run.timeslice
        self.assertEqual(len(ts), 250)
        self.assertEqual((ts.time_extent, ts.spatial_volume, ts.n_momenta, ts.replicas),
                         (8, 24, 5, 3))
        self.assertEqual((ts.every, ts.momenta_per_axis), (1, 2))
        np.testing.assert_array_equal(ts.momenta, momenta)
        np.testing.assert_allclose(ts.momentum_values, 2 * np.pi * momenta / [4, 6])
        np.testing.assert_array_equal(ts.correlator(), c[:250])
        np.testing.assert_array_equal(ts.correlator(slice(10, 20)), c[10:20])
        sf = run.structure_factor
        self.assertTrue(sf.complete)
        self.assertEqual(len(sf), 120)
        np.testing.assert_array_equal(sf.sweep, 2 * np.arange(1, 121))
        np.testing.assert_array_equal(sf.chain("s0"), s0[:120])
        self.assertEqual(sf.series["xi2"].shape, (120, 3))
        self.assertEqual((sf.every, sf.samples, sf.components, sf.longest), (2, 450, 1, 8))
        self.assertEqual(sf.spectrum_shape, (4, 6, 5))
        np.testing.assert_array_equal(sf.S, spectrum)
        self.assertEqual(sf.G.shape, dims)
        np.testing.assert_allclose(sf.G, np.fft.irfftn(spectrum, s=dims), rtol=1e-12)
        np.testing.assert_allclose(sf.G_connected, sf.G)  # mean_field 0
        np.testing.assert_allclose(sf.momentum(0), 2 * np.pi * np.array([0, 1, 2, -1]) / 4)
        np.testing.assert_allclose(sf.momentum(2), 2 * np.pi * np.arange(5) / 8)
        self.assertEqual(int(sf.radial_modes.sum()), 4 * 6 * 8)  # every mode of the lattice
        self.assertEqual(sf.radial_k[0], 0.0)
        self.assertAlmostEqual(sf.xi2, correlators.second_moment_length(
            spectrum[0, 0, 0], spectrum[0, 0, 1], 8), places=12)

    def test_unfinished_and_inconsistent(self):
        dims, n = (4, 8), 200
        e, m = observables(self.rng, n, 1)
        path = synthetic.write_run(self.path("u.h5"), e, m, beta=0.3, dims=dims)
        synthetic.write_structure_factor(path, 4.0 + self.rng.random(n), 1.0 + self.rng.random(n))
        run = lattica_file.load(path)
        self.assertFalse(run.structure_factor.complete)  # a crashed run: the series only
        with self.assertRaises(KeyError):
            run.structure_factor.S
        status, out, err = call("info", path)
        self.assertEqual(status, 0, err)
        self.assertIn("the run did not finish", out)
        status, out, err = call("summary", path)
        self.assertEqual(status, 0, err)
        self.assertIn("xi2", out)
        self.assertIn("missing", out)
        status, out, err = call("plot", path, "--out", self.path("f"))
        self.assertEqual(status, 0, err)
        self.assertNotIn("structure.png", out)

        # C with the wrong time extent, a structure factor with the wrong S: ignored / tables
        # dropped, with warnings; the rest of the file still reads
        c = np.ones((n, 7, 2))
        with h5py.File(path, "a") as f:
            g = f["correlators"].create_group("timeslice")
            g.create_dataset("momenta", data=np.array([[0], [1]], dtype=np.int64))
            g.create_dataset("momentum_values", data=np.array([[0.0], [np.pi / 2]]))
            g.create_dataset("sweep", data=np.arange(1, n + 1, dtype=np.int64))
            g.create_dataset("C", data=c)
            g.attrs["committed_length"] = np.int64(n)
            g.attrs["every"] = np.int64(1)
            sf = f["correlators/structure_factor"]
            sf.create_dataset("S", data=np.ones((4, 4)))  # should be [4, 5]
        run = lattica_file.load(path)
        self.assertIsNone(run.timeslice)
        self.assertFalse(run.structure_factor.complete)
        self.assertEqual(len(run.warnings), 2, run.warnings)
        self.assertTrue(any("timeslice" in w and "C has shape" in w for w in run.warnings))
        self.assertTrue(any("S has shape" in w for w in run.warnings))
        self.assertEqual(len(run), n)


class CommandTest(Scratch):
    def make(self, name, replicas=2, n=800):
        dims = (6, 6, 12)
        e, m = observables(self.rng, n, replicas)
        path = synthetic.write_run(self.path(name), e, m, beta=0.3, dims=dims)
        c, _, energy = cosh_correlator(self.rng, n, replicas, dims, 1, 0.4, a=0.0)
        synthetic.write_timeslice(path, c, momenta_per_axis=1)
        # s0 and s_min with known means: xi2 = sqrt(4 - 1) / (2 sin(pi / 12))
        s0 = 8.0 * (1.0 + 0.2 * ar1(self.rng, 0.6, (n // 2, replicas)))
        s_min = 2.0 * (1.0 + 0.1 * ar1(self.rng, 0.6, (n // 2, replicas)))
        ks = synthetic.momentum_grid(dims)
        mesh = np.meshgrid(*ks, indexing="ij")
        spectrum = 1.0 / (sum(4 * np.sin(k / 2) ** 2 for k in mesh) + 0.2)
        synthetic.write_structure_factor(path, s0, s_min, spectrum=spectrum, every=2)
        return path, s0, s_min

    def test_summary_xi2(self):
        path, s0, s_min = self.make("s.h5")
        status, out, err = call("summary", path, "--json")
        self.assertEqual(status, 0, err)
        s = json.loads(out)["files"][0]
        sf = s["structure_factor"]
        length = 12
        expected = gamma.analyse_derived(
            lambda a: math.sqrt(a[0] / a[1] - 1) / (2 * math.sin(math.pi / length)),
            [s0, s_min])
        self.assertEqual((sf["L"], sf["every"], sf["rows_used"], sf["cut_rows"]),
                         (12, 2, 400, 0))
        self.assertEqual(sf["spacing"], 2.0)
        self.assertAlmostEqual(sf["xi2"]["value"], expected.value, places=10)
        self.assertAlmostEqual(sf["xi2"]["error"], expected.error, places=10)
        self.assertAlmostEqual(sf["S(0)"]["mean"], float(s0.mean()), places=10)
        self.assertAlmostEqual(sf["S(k_min)"]["mean"], float(s_min.mean()), places=10)
        exact = math.sqrt(3.0) / (2 * math.sin(math.pi / 12))
        self.assertLess(abs(sf["xi2"]["value"] - exact), PULL * sf["xi2"]["error"])
        self.assertGreater(sf["xi2"]["tau_int"], 1.0)  # the AR(1) series are correlated
        self.assertAlmostEqual(sf["xi2"]["tau_int_sweeps"], 2 * sf["xi2"]["tau_int"])
        self.assertIn("sqrt(<S(0)>/<S(k_min)> - 1)", sf["xi2"]["definition"])
        self.assertEqual(sorted(s["derived"]), ["C", "U4", "chi", "chi'"])  # unchanged

        status, out, err = call("summary", path, "--cut", "100", "--json")
        sf = json.loads(out)["files"][0]["structure_factor"]
        self.assertEqual((sf["cut_rows"], sf["rows_used"]), (50, 350))  # sweeps 102, 104, ..
        cut = gamma.analyse_derived(
            lambda a: math.sqrt(a[0] / a[1] - 1) / (2 * math.sin(math.pi / length)),
            [s0[50:], s_min[50:]])
        self.assertAlmostEqual(sf["xi2"]["value"], cut.value, places=10)

        status, out, err = call("summary", path)
        self.assertEqual(status, 0, err)
        self.assertIn("structure factor", out)
        self.assertIn("xi2", out)
        self.assertIn("S(k_min)", out)
        self.assertIn("xi2 attribute", out)

        e, m = observables(self.rng, 300, 1)
        plain = synthetic.write_run(self.path("plain.h5"), e, m, beta=0.3, dims=(4, 4))
        status, out, err = call("summary", plain, "--json")
        self.assertIsNone(json.loads(out)["files"][0]["structure_factor"])
        status, out, err = call("summary", plain)
        self.assertNotIn("structure factor", out)

    def test_info_lists_groups(self):
        path, _, _ = self.make("i.h5")
        status, out, err = call("info", path)
        self.assertEqual(status, 0, err)
        for text in ("correlators:", "structure_factor: every 2 measurement(s), series of 400 "
                     "rows", "S 6 x 6 x 7 (half spectrum), G 6 x 6 x 12", "xi2 = ",
                     "timeslice: every 1 measurement(s), 800 rows, C 800 x 2 x 12 x 3",
                     "T = 12, V_s = 36, 3 momenta", "(0, 0) (1, 0) (0, 1)"):
            self.assertIn(text, out)
        e, m = observables(self.rng, 100, 1)
        plain = synthetic.write_run(self.path("plain.h5"), e, m, beta=0.3, dims=(4, 4))
        status, out, err = call("info", plain)
        self.assertNotIn("correlators:", out)

    def test_plot(self):
        path, _, _ = self.make("p.h5", replicas=1)
        out_dir = self.path("figures")
        status, out, err = call("plot", path, "--out", out_dir)
        self.assertEqual(status, 0, err)
        written = out.split()
        names = sorted(os.path.basename(p) for p in written)
        self.assertEqual(names, ["p.autocorr.png", "p.hist.png", "p.series.png",
                                 "p.structure.png", "p.timeslice.png"])
        for p in written:
            with open(p, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", p)


@unittest.skipIf(SIM is None, "no sim executable given")
class SimOutputTest(Scratch):
    """The reader and commands on what sim writes, against the definitions."""

    def simulate(self, name, *settings):
        path = self.path(name)
        result = run(sim_command(SIM, LATTICE_TOML, path, 4242, "run.thermalization=20",
                                 "run.measurements=60", "run.measure_every=1",
                                 "measure.timeslice=true", "measure.timeslice_momenta=2",
                                 "measure.structure_factor=true", *settings),
                     120, merge_stderr=True, env=sim_env())
        self.assertEqual(result.returncode, 0, result.stdout)
        return path

    def check_definitions(self, path, dims, replicas, components):
        run_ = lattica_file.load(path)
        self.assertEqual(run_.warnings, [])
        ts, sf = run_.timeslice, run_.structure_factor
        self.assertIsNotNone(ts)
        self.assertIsNotNone(sf)
        self.assertTrue(sf.complete)
        momenta = synthetic.timeslice_momenta(dims, 2)
        np.testing.assert_array_equal(ts.momenta, momenta)
        np.testing.assert_allclose(ts.momentum_values,
                                   2 * np.pi * momenta / np.array(dims[:-1], dtype=float))
        self.assertEqual((len(ts), ts.replicas, ts.time_extent), (60, replicas, dims[-1]))
        c = ts.correlator()
        self.assertEqual(c.shape, (60, replicas, dims[-1], len(momenta)))
        np.testing.assert_allclose(c, c[:, :, (-np.arange(dims[-1])) % dims[-1]], rtol=1e-9,
                                   atol=1e-9, err_msg="C(dt) = C(T - dt)")
        self.assertEqual(ts.sweep[-1], run_.snapshots.sweep[-1])
        frame = np.asarray(run_.snapshots[-1], dtype=np.float64)
        if replicas == 1:
            frame = frame[None]
        volume = int(np.prod(dims))
        longest = [a for a, n in enumerate(dims) if n == max(dims)]
        for r in range(replicas):
            np.testing.assert_allclose(
                c[-1, r], synthetic.timeslice_correlator(frame[r], momenta, components > 1),
                rtol=1e-10, atol=1e-12, err_msg=f"C of the final snapshot, replica {r}")
            phi = frame[r] if components > 1 else frame[r][..., None]
            spectrum = np.sum(np.abs(np.fft.fftn(phi, axes=tuple(range(len(dims))))) ** 2,
                              axis=-1) / volume
            unit = [spectrum[tuple(1 if b == a else 0 for b in range(len(dims)))]
                    for a in longest]
            self.assertAlmostEqual(sf.chain("s0")[-1, r], spectrum.flat[0], places=8)
            self.assertAlmostEqual(sf.chain("s_min")[-1, r], float(np.mean(unit)), places=8)
        for command in (("effmass", path, "--momentum", "all", "--json"),
                        ("summary", path, "--json"), ("plot", path, "--out", self.path("f"))):
            status, out, err = call(*command)
            self.assertEqual(status, 0, f"{command[0]}: {err}")
        self.assertIn("timeslice.png", out)
        self.assertIn("structure.png", out)

    def test_ising_3d_replicas(self):
        path = self.simulate("ising.h5", "lattice.dims=[4,4,8]", "model.beta=0.2",
                             "run.replicas=2")
        self.check_definitions(path, (4, 4, 8), 2, 1)

    def test_xy_2d(self):
        path = self.simulate("xy.h5", "lattice.dims=[6,8]", "model.kind=\"on\"", "model.n=2",
                             "model.beta=0.9")
        self.check_definitions(path, (6, 8), 1, 2)

    def test_radial_tables_only(self):
        """measure.structure_factor_tables = "radial": the same chain's shells, mean field, xi2
        and series bit for bit, and no per-mode table (the reader says why; plots draw S)."""
        dims = ["lattice.dims=[6,8]", "model.beta=0.4"]
        full = self.simulate("full.h5", *dims)
        radial = self.simulate("radial.h5", *dims, "measure.structure_factor_tables=\"radial\"")
        per_mode = ("S", "S_error", "S_connected", "G", "G_connected")
        with h5py.File(full, "r") as a, h5py.File(radial, "r") as b:
            ga, gb = a["correlators/structure_factor"], b["correlators/structure_factor"]
            self.assertEqual((ga.attrs["tables"], gb.attrs["tables"]), ("full", "radial"))
            for name in per_mode:
                self.assertIn(name, ga)
                self.assertNotIn(name, gb)
            for name in ("radial_k", "radial_S", "radial_modes", "mean_field", "momentum_0",
                         "momentum_1", "series/s0", "series/s_min", "series/xi2"):
                np.testing.assert_array_equal(ga[name][()], gb[name][()], err_msg=name)
            self.assertEqual(ga.attrs["xi2"], gb.attrs["xi2"])
            self.assertEqual(ga.attrs["samples"], gb.attrs["samples"])
        sf = lattica_file.load(radial).structure_factor
        self.assertTrue(sf.complete)
        self.assertFalse(sf.per_mode)
        self.assertTrue(lattica_file.load(full).structure_factor.per_mode)
        with self.assertRaisesRegex(KeyError, "structure_factor_tables"):
            sf.G
        np.testing.assert_array_equal(sf.radial_S, lattica_file.load(full).structure_factor.radial_S)
        status, out, err = call("plot", radial, "--out", self.path("r"))
        self.assertEqual(status, 0, err)
        self.assertIn("structure.png", out)


if __name__ == "__main__":
    unittest.main()
