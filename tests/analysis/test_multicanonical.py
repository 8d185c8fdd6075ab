#!/usr/bin/python3
"""`analysis multicanonical` on multicanonical runs of sim, against exact enumeration.

    test_multicanonical.py SIM_EXE

The 4x4 Ising model (all 2^16 states enumerated here): ln g(E) at every energy, and
reweighted to three betas <e>, C, U4 and the free energy per site, each within 5 of the
analysis' own jackknife errors over 32 blocks of walkers. The 8x8 Potts model with q = 10:
--first-order must find two peaks of equal height (checked on the returned ln g), ordered
below disordered, at a beta near the infinite-volume ln(1 + sqrt 10). The 4x4 Ising model in an
energy window from canonical weights: ln g relative to the window's lowest energy. unittest test cases; arguments after SIM_EXE go to
unittest.
"""

import json
import math
import os
import pathlib
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from script_support import analysis_env, positional_arguments, run, sim_env  # noqa: E402

[SIM] = positional_arguments(1, __doc__)
TIMEOUT = 200
BETAS = (0.2, 0.44, 0.7)  # reweighting targets of the Ising run
L, V = 4, 16

ISING = """
[lattice]
dims = [4, 4]
[model]
kind = "ising"
beta = 0.44
[multicanonical]
walkers = 64
lnf_initial = 0.5
lnf_final = 1e-3
[run]
thermalization = 100
measurements = 3000
seed = 21
threads = 1
"""

POTTS = """
[lattice]
dims = [8, 8]
[model]
kind = "potts"
q = 10
beta = 1.4260624389053682
[multicanonical]
walkers = 32
sweeps_per_iteration = 20
lnf_initial = 0.5
lnf_final = 1e-3
flatness = 0.7
[run]
thermalization = 100
measurements = 1000
measure_every = 4
seed = 5
threads = 1
"""


def enumerate_ising():
    """Energy and magnetisation of every state of the 4x4 Ising model."""
    codes = np.arange(1 << V, dtype=np.int64)
    s = (1 - 2 * ((codes[:, None] >> np.arange(V)) & 1)).reshape(-1, L, L)
    bonds = np.sum(s * (np.roll(s, -1, axis=1) + np.roll(s, -1, axis=2)), axis=(1, 2))
    return -bonds.astype(float), s.sum(axis=(1, 2)).astype(float)


def exact_canonical(energy, magnetisation, beta):
    x = -beta * energy
    top = x.max()
    w = np.exp(x - top)
    log_z = top + math.log(w.sum())
    w /= w.sum()
    e, m = energy / V, magnetisation / V
    mean_e = np.dot(w, e)
    m2, m4 = np.dot(w, m * m), np.dot(w, m ** 4)
    return {"e": mean_e, "C": beta * beta * V * (np.dot(w, e * e) - mean_e ** 2),
            "U4": 1 - m4 / (3 * m2 * m2), "f": -log_z / (beta * V)}


def simulate_and_analyse(scratch, name, text, *analysis_args):
    source, out = os.path.join(scratch, name + ".toml"), os.path.join(scratch, name + ".h5")
    with open(source, "w") as f:
        f.write(text)
    result = run([SIM, source, "--backend", "cpu", "-o", out, "-q"], TIMEOUT, env=sim_env())
    assert result.returncode == 0, result.stderr
    result = run([sys.executable, "-m", "analysis", "multicanonical", out, *analysis_args,
                  "--json"], TIMEOUT, env=analysis_env(), cwd=scratch)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


class MulticanonicalTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._scratch = tempfile.TemporaryDirectory(prefix="lattica_muca_")
        cls.ising = simulate_and_analyse(cls._scratch.name, "ising", ISING, "--blocks", "32",
                                         "--beta", *map(str, BETAS))
        cls.potts = simulate_and_analyse(cls._scratch.name, "potts", POTTS, "--first-order")
        cls.window = simulate_and_analyse(
            cls._scratch.name, "window",
            ISING.replace("[run]", 'window = [-1.5, 1.0]\ninitial_weights = "canonical"\n[run]'),
            "--blocks", "32")
        cls.energy, cls.magnetisation = enumerate_ising()

    @classmethod
    def tearDownClass(cls):
        cls._scratch.cleanup()

    def test_log_g_matches_enumeration(self):
        levels, counts = np.unique(self.energy, return_counts=True)
        got = dict(zip(self.ising["energy"], zip(self.ising["log_g"], self.ising["log_g_error"])))
        self.assertEqual(sorted(got), sorted(int(e) for e in levels))
        for e, n in zip(levels, counts):
            value, error = got[int(e)]
            if n == 2:  # the ground states (and the all-antiparallel states) fix the norm
                self.assertAlmostEqual(value, math.log(2), delta=max(5 * error, 1e-9))
                continue
            self.assertGreater(error, 0)
            self.assertLess(abs(value - math.log(n)), 5 * error,
                            f"E = {e}: {value} +- {error}, exact ln {n}")

    def test_a_window_gives_ln_g_relative_to_its_lowest_energy(self):
        levels, counts = np.unique(self.energy, return_counts=True)
        inside = (levels >= -1.5 * V) & (levels <= 1.0 * V)
        exact = np.log(counts[inside]) - math.log(counts[inside][0])
        got = dict(zip(self.window["energy"], zip(self.window["log_g"],
                                                 self.window["log_g_error"])))
        self.assertEqual(sorted(got), sorted(int(e) for e in levels[inside]))
        for e, want in zip(levels[inside], exact):
            value, error = got[int(e)]
            self.assertLess(abs(value - want), 5 * error + 1e-9,
                            f"E = {e}: {value} +- {error}, exact {want}")
        self.assertTrue(all(row["f"] is None for row in self.window["reweight"]))  # NaN

    def test_reweighting_matches_enumeration(self):
        for row in self.ising["reweight"]:
            want = exact_canonical(self.energy, self.magnetisation, row["beta"])
            for name in ("e", "C", "U4", "f"):
                self.assertGreater(row[name + "_error"], 0, name)
                self.assertLess(abs(row[name] - want[name]), 5 * row[name + "_error"],
                                f"beta {row['beta']} {name}: {row[name]} +- "
                                f"{row[name + '_error']}, exact {want[name]}")

    def test_potts_first_order_peaks_have_equal_height(self):
        t = self.potts["first_order"]
        self.assertIsNotNone(t)
        self.assertLess(abs(t["beta"] - math.log(1 + math.sqrt(10))), 0.1)
        self.assertLess(t["e_ordered"], t["e_disordered"])
        self.assertGreater(t["log_peak_ratio"], 0.5)
        self.assertAlmostEqual(t["interface_tension"], t["log_peak_ratio"] / 16)
        self.assertGreaterEqual(t["walkers_in_both_peaks"], 28)  # 8x8: walkers tunnel often
        self.assertGreater(t["tunnelling_events"], 32)  # more than one per walker
        energy = np.array(self.potts["energy"], dtype=float)
        log_p = np.array(self.potts["log_g"]) - t["beta"] * energy
        middle = 32 * (t["e_ordered"] + t["e_disordered"])  # total energy halfway
        ordered, disordered = log_p[energy < middle].max(), log_p[energy > middle].max()
        self.assertAlmostEqual(ordered, disordered, delta=1e-6)
        between = log_p[(energy > 64 * t["e_ordered"]) & (energy < 64 * t["e_disordered"])]
        self.assertAlmostEqual(ordered - between.min(), t["log_peak_ratio"], delta=1e-6)
    def test_a_canonical_run_is_refused(self):
        scratch = self._scratch.name
        source, out = os.path.join(scratch, "plain.toml"), os.path.join(scratch, "plain.h5")
        with open(source, "w") as f:
            f.write('[lattice]\ndims = [4, 4]\n[model]\nkind = "ising"\nbeta = 0.44\n'
                    '[run]\nthermalization = 10\nmeasurements = 10\nseed = 1\n')
        result = run([SIM, source, "--backend", "cpu", "-o", out, "-q"], TIMEOUT, env=sim_env())
        self.assertEqual(result.returncode, 0, result.stderr)
        result = run([sys.executable, "-m", "analysis", "multicanonical", out], TIMEOUT,
                     env=analysis_env(), cwd=scratch)
        self.assertEqual(result.returncode, 2)
        self.assertIn("not a multicanonical run", result.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:])
