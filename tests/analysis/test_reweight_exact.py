#!/usr/bin/python3
"""`analysis reweight` against exact enumeration of the 4x4 Ising model.

    test_reweight_exact.py SIM_EXE

sim samples L = 4 (periodic) at beta = 0.40, at h = 0 and at h = 0.1; the series are
reweighted to beta = 0.42 (and 0.38) at the same h, and <e>, <|m|>, <m^2>, U4, C, chi must
agree with the exact values from all 2^16 states within 4 reported (jackknife) errors.
Reweighting to the simulated beta itself must reproduce the plain sample means.
unittest test cases; arguments after SIM_EXE go to unittest (-v, -k PATTERN).
"""

import json
import os
import pathlib
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from script_support import (LATTICE_TOML, analysis_env, positional_arguments,  # noqa: E402
                            run, sim_command, sim_env)

from analysis import lattica_file  # noqa: E402

L, V = 4, 16
BETA0 = 0.40
TARGETS = (0.42, 0.38)
MEASUREMENTS, CUT = 100_000, 1000
TIMEOUT = 120  # seconds, each command
[SIM] = positional_arguments(1, __doc__)


def exact_states():
    """Interaction energy E_J = -sum_<ij> s_i s_j and M = sum_i s_i of all 2^16 states."""
    codes = np.arange(1 << V, dtype=np.int64)
    spins = 1 - 2 * ((codes[:, None] >> np.arange(V)) & 1).astype(np.int64)
    s = spins.reshape(-1, L, L)
    bonds = np.sum(s * (np.roll(s, -1, axis=1) + np.roll(s, -1, axis=2)), axis=(1, 2))
    return -bonds.astype(np.float64), s.sum(axis=(1, 2)).astype(np.float64)


def exact_values(beta, h, e_j, m_total):
    energy = e_j - h * m_total  # total energy including the field term
    x = -beta * energy
    w = np.exp(x - x.max())
    w /= w.sum()
    e, m = energy / V, m_total / V
    mean = lambda o: float(np.dot(w, o))  # noqa: E731
    m2, m4, am = mean(m ** 2), mean(m ** 4), mean(np.abs(m))
    return {"e": mean(e), "|m|": am, "m^2": m2, "U4": 1.0 - m4 / (3.0 * m2 * m2),
            "C": beta * beta * V * (mean(e * e) - mean(e) ** 2), "chi": beta * V * (m2 - am * am)}


class ReweightExactTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.e_j, cls.m_total = exact_states()
        cls._scratch = tempfile.TemporaryDirectory(prefix="lattica_reweight_")
        cls.scratch = cls._scratch.name
        cls.env = analysis_env()

    @classmethod
    def tearDownClass(cls):
        cls._scratch.cleanup()

    def reweight(self, *arguments):
        return run([sys.executable, "-m", "analysis", "reweight", *arguments], TIMEOUT,
                   env=self.env, cwd=self.scratch)

    def check_field(self, h):
        out = os.path.join(self.scratch, f"l4_h{h}.h5")
        result = run(sim_command(SIM, LATTICE_TOML, out, 4242, "lattice.dims=[4,4]",
                                 f"model.beta={BETA0}", f"model.h={h}", "run.thermalization=1000",
                                 f"run.measurements={MEASUREMENTS}", "run.measure_every=1",
                                 "run.threads=1", "output.snapshot_every=0"),
                     TIMEOUT, env=sim_env())
        self.assertEqual(result.returncode, 0, f"sim: {result.stderr}")
        result = self.reweight(out, "--cut", str(CUT), "--beta", str(BETA0), *map(str, TARGETS),
                               "--json")
        self.assertEqual(result.returncode, 0, f"reweight:\n{result.stderr}")
        document = json.loads(result.stdout)
        self.assertEqual((document["cut"], document["h"]), (CUT, h), "cut/h")
        self.assertGreaterEqual(document["blocks"], 20, "jackknife blocks")
        points = {p["beta"]: p for p in document["points"]}

        # At the simulated beta the weights are all 1: plain sample means.
        chains = lattica_file.load(out).chains
        e = chains["energy"][CUT:, 0]
        m = chains["magnetization"][CUT:, 0]
        plain = {"e": e.mean(), "|m|": np.abs(m).mean(), "m^2": (m * m).mean(),
                 "U4": 1.0 - (m ** 4).mean() / (3.0 * (m * m).mean() ** 2),
                 "C": BETA0 ** 2 * V * e.var(),
                 "chi": BETA0 * V * ((m * m).mean() - np.abs(m).mean() ** 2)}
        for name, value in plain.items():
            with self.subTest(beta=BETA0, quantity=name):
                got = points[BETA0][name]["value"]
                self.assertLessEqual(abs(got - value), 1e-12 * max(1.0, abs(value)),
                                     f"h = {h}: {name} reweighted to the simulated beta {got} "
                                     f"!= plain mean {value}")

        for beta in TARGETS:
            exact = exact_values(beta, h, self.e_j, self.m_total)
            point = points[beta]
            self.assertTrue(point["in_range"], f"h = {h}, beta = {beta} flagged out of range")
            for name, value in exact.items():
                with self.subTest(beta=beta, quantity=name):
                    got, error = point[name]["value"], point[name]["error"]
                    message = f"h = {h}, beta = {beta}: {name} = {got} +- {error}, exact {value}"
                    self.assertIsNotNone(error, message)
                    self.assertGreater(error, 0, message)
                    self.assertLessEqual(abs(got - value), 4.0 * error, message)
                    print(f"h = {h}, beta = {beta}: {name:>4} = {got:.5f} +- {error:.5f}, exact "
                          f"{value:.5f} ({(got - value) / error:+.2f} errors)")

        # Far away the reweighting must warn. (Not towards large beta: on 4x4 at 0.40 the ground
        # state is sampled often enough that reweighting there is sound.)
        result = self.reweight(out, "--beta", "0")
        self.assertEqual(result.returncode, 0, f"reweight to beta = 0:\n{result.stderr}")
        self.assertIn("outside the central 95 %", result.stdout,
                      f"no warning for beta = 0:\n{result.stderr}")

    def test_zero_field(self):
        self.check_field(0.0)

    def test_field(self):
        self.check_field(0.1)


if __name__ == "__main__":
    unittest.main()
