#!/usr/bin/python3
"""`analysis annealing` on population annealing runs of the 4x4 Ising model, against exact
enumeration of all 2^16 states.

    test_annealing.py SIM_EXE

sim anneals 8 independent populations of 512 replicas from beta = 0 to 0.6 (two runs of
different seeds); at every step the table's beta F per site must agree with the exact one
within 4.5 standard errors over the populations, and <e> within 4.5 of its rho_t-based
errors. The plot is written; a file without /annealing is refused (exit status 2). unittest
test cases; arguments after SIM_EXE go to unittest.
"""

import json
import os
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from script_support import (analysis_env, positional_arguments, run, sim_env,  # noqa: E402
                            exact_square_ising)

L, V = 4, 16
TIMEOUT = 120
[SIM] = positional_arguments(1, __doc__)

INPUT = """
[lattice]
dims = [4, 4]
[model]
kind = "ising"
[annealing]
beta = [0, 0.6]
steps = 12
sweeps = 5
populations = 8
[run]
replicas = 4096
threads = 1
"""


def exact(beta):
    exact = exact_square_ising(L, beta)
    return {"energy": exact["energy"], "beta_f": -exact["log_z"] / V}


class AnnealingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._scratch = tempfile.TemporaryDirectory(prefix="lattica_annealing_")
        cls.scratch = cls._scratch.name
        cls.files = []
        for seed in (5, 6):
            source = os.path.join(cls.scratch, f"pa{seed}.toml")
            with open(source, "w") as f:
                f.write(INPUT + f"seed = {seed}\n")
            out = os.path.join(cls.scratch, f"pa{seed}.h5")
            result = run([SIM, source, "--backend", "cpu", "-o", out, "-q"], TIMEOUT,
                         env=sim_env())
            assert result.returncode == 0, result.stderr
            cls.files.append(out)
        cls.plot = os.path.join(cls.scratch, "pa.png")
        result = run([sys.executable, "-m", "analysis", "annealing", *cls.files, "--json",
                      "--plot", cls.plot], TIMEOUT, env=analysis_env(), cwd=cls.scratch)
        assert result.returncode == 0, result.stderr
        cls.steps = json.loads(result.stdout)["steps"]

    @classmethod
    def tearDownClass(cls):
        cls._scratch.cleanup()

    def test_free_energy_and_energy_match_enumeration(self):
        self.assertEqual(len(self.steps), 13)
        for step in self.steps:
            want = exact(step["beta"])
            if step["step"] == 0:
                self.assertAlmostEqual(step["beta_f"], want["beta_f"], places=14)
                continue
            self.assertGreater(step["beta_f_error"], 0)
            self.assertLess(abs(step["beta_f"] - want["beta_f"]), 4.5 * step["beta_f_error"],
                            f"beta {step['beta']}: {step} exact {want}")
            self.assertLess(abs(step["e"] - want["energy"]), 4.5 * step["e_error"],
                            f"beta {step['beta']}: {step} exact {want}")
            self.assertGreaterEqual(step["rho_t"], 1.0)

    def test_table_and_plot(self):
        self.assertTrue(os.path.getsize(self.plot) > 0)
        result = run([sys.executable, "-m", "analysis", "annealing", self.files[0]], TIMEOUT,
                     env=analysis_env(), cwd=self.scratch)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("beta F/V", result.stdout)
        self.assertIn("8 independent population(s)", result.stdout)

    def test_refuses_a_file_without_annealing(self):
        source = os.path.join(self.scratch, "plain.toml")
        with open(source, "w") as f:
            f.write('[lattice]\ndims = [4, 4]\n[model]\nkind = "ising"\nbeta = 0.3\n'
                    "[run]\nthermalization = 10\nmeasurements = 10\nseed = 1\n")
        out = os.path.join(self.scratch, "plain.h5")
        self.assertEqual(run([SIM, source, "--backend", "cpu", "-o", out, "-q"], TIMEOUT,
                             env=sim_env()).returncode, 0)
        result = run([sys.executable, "-m", "analysis", "annealing", out], TIMEOUT,
                     env=analysis_env(), cwd=self.scratch)
        self.assertEqual(result.returncode, 2)
        self.assertIn("no /annealing", result.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:])
