#!/usr/bin/python3
"""`analysis tempering` on a parallel-tempering run of the 4x4 Ising model, against exact
enumeration of all 2^16 states.

    test_tempering.py SIM_EXE

sim runs 4 ladders of 5 rungs (beta 0.2 .. 0.6) with exchanges every sweep; every rung's <e>
must agree with the exact values within 4 Gamma errors, MBAR's free energies
f_k = -ln(Z_k / Z_0) with the exact ones, and MBAR reweighting to betas between the rungs with
the exact <e>. The file's statistics must hold round trips and pair acceptances in (0, 1);
`summary` must refuse the file (its columns are rungs, not replicas). unittest test cases;
arguments after SIM_EXE go to unittest.
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
BETAS = (0.2, 0.3, 0.4, 0.5, 0.6)
TARGETS = (0.35, 0.45)
TIMEOUT = 120
[SIM] = positional_arguments(1, __doc__)

INPUT = f"""
[lattice]
dims = [{L}, {L}]
[model]
kind = "ising"
[tempering]
beta = [{", ".join(map(str, BETAS))}]
[run]
thermalization = 500
measurements = 20000
replicas = 4
seed = 77
threads = 1
"""


def exact(beta):
    return exact_square_ising(L, beta)


class TemperingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._scratch = tempfile.TemporaryDirectory(prefix="lattica_tempering_")
        cls.scratch = cls._scratch.name
        cls.out = os.path.join(cls.scratch, "pt.h5")
        source = os.path.join(cls.scratch, "pt.toml")
        with open(source, "w") as f:
            f.write(INPUT)
        result = run([SIM, source, "--backend", "cpu", "-o", cls.out, "-q"], TIMEOUT,
                     env=sim_env())
        assert result.returncode == 0, result.stderr
        result = run([sys.executable, "-m", "analysis", "tempering", cls.out, "--reweight",
                      *map(str, TARGETS), "--json"], TIMEOUT, env=analysis_env(), cwd=cls.scratch)
        assert result.returncode == 0, result.stderr
        cls.document = json.loads(result.stdout)["files"][0]

    @classmethod
    def tearDownClass(cls):
        cls._scratch.cleanup()

    def test_every_rung_matches_enumeration(self):
        for k, beta in enumerate(BETAS):
            rung = self.document["rungs"][k]
            self.assertEqual(rung["couplings"]["beta"], beta)
            got, want = rung["observables"]["energy"], exact(beta)["energy"]
            self.assertLess(abs(got["value"] - want), 4 * got["error"],
                            f"rung {k}: energy {got} exact {want}")

    def test_mbar_free_energies_and_reweighting(self):
        reweighted = self.document["reweight"]
        self.assertEqual(reweighted["coupling"], "beta")
        exact_f = [-(exact(b)["log_z"] - exact(BETAS[0])["log_z"]) for b in BETAS]
        for k, (got, want) in enumerate(zip(reweighted["free_energies"], exact_f)):
            self.assertLess(abs(got - want), 0.02 + 0.002 * abs(want), f"f_{k}: {got} vs {want}")
        for target in reweighted["targets"]:
            beta = target["beta"]
            got = target["observables"]["energy"]
            want = exact(beta)["energy"]
            self.assertGreater(got["error"], 0)
            self.assertLess(abs(got["value"] - want), 4 * got["error"],
                            f"beta {beta}: {got} exact {want}")

    def test_exchange_statistics(self):
        stats = self.document["exchange"]
        self.assertEqual(len(stats["pair_acceptance"]), len(BETAS) - 1)
        for a in stats["pair_acceptance"]:
            self.assertTrue(0 < a < 1, stats)
        self.assertGreater(stats["round_trips"], 10)
        self.assertEqual(len(stats["up_fraction"]), len(BETAS))
        self.assertAlmostEqual(stats["up_fraction"][0], 1.0)
        self.assertAlmostEqual(stats["up_fraction"][-1], 0.0)
        ladder = stats["feedback_ladder"]
        self.assertEqual((ladder[0], ladder[-1]), (BETAS[0], BETAS[-1]))
        self.assertTrue(all(a < b for a, b in zip(ladder, ladder[1:])), ladder)

    def test_feedback_keeps_a_ladder_with_a_linear_profile(self):
        from analysis.tempering import feedback_ladder
        self.assertEqual(feedback_ladder([1.0, 2.0, 3.0], [1.0, 0.5, 0.0]), [1.0, 2.0, 3.0])
        moved = feedback_ladder([0.0, 1.0, 2.0, 3.0, 4.0], [1.0, 0.95, 0.5, 0.05, 0.0])
        self.assertLess(abs(moved[2] - 2.0), 1e-12)
        self.assertGreater(moved[1], 1.0)  # rungs gather where f drops fastest
        self.assertLess(moved[3], 3.0)

    def test_feedback_matches_the_hand_computed_step(self):
        # The same case as sim's C++ rule (tests/unit/tempering_ladder_test.cpp): densities
        # sqrt(0.1), sqrt(0.8), sqrt(0.1) on unit intervals put the interior rungs at
        # 1 + (4 - sqrt 2) / 12 and its mirror image.
        from analysis.tempering import feedback_ladder
        shift = (4 - 2 ** 0.5) / 12
        moved = feedback_ladder([0.0, 1.0, 2.0, 3.0], [1.0, 0.9, 0.1, 0.0])
        for got, want in zip(moved, [0.0, 1 + shift, 2 - shift, 3.0]):
            self.assertAlmostEqual(got, want, places=12)

    def test_summary_refuses_a_tempered_file(self):
        result = run([sys.executable, "-m", "analysis", "summary", self.out], TIMEOUT,
                     env=analysis_env(), cwd=self.scratch)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("analysis tempering", result.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:])
