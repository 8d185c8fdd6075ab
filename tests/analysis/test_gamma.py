#!/usr/bin/python3
"""The Gamma method and the blocked jackknife (analysis/gamma.py) on synthetic chains.

AR(1) chains x_t = a x_{t-1} + sqrt(1 - a^2) eps_t (unit variance, started in equilibrium)
have tau_int = (1/2)(1 + a)/(1 - a) exactly and, for N measurements, the asymptotic error of
the mean sqrt(2 tau_int / N). A derived quantity (ratio of means of two correlated chains)
is checked against the spread over many independent repetitions. Fixed seeds: the test is
deterministic. Run: PYTHONPATH=<repo> /usr/bin/python3 tests/analysis/test_gamma.py
"""

import math
import pathlib
import sys
import unittest

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from script_support import ar1 as ar1_chains  # noqa: E402

from analysis import gamma  # noqa: E402


def ar1(rng, a, n, replicas=1):
    """[n, replicas] AR(1) chains with unit stationary variance, started in equilibrium."""
    return ar1_chains(rng, a, (n, replicas))


def exact_tau(a):
    return 0.5 * (1.0 + a) / (1.0 - a)


class Ar1Test(unittest.TestCase):
    N = 200_000  # measurements in all replicas together

    def check_chain(self, a, replicas, seed):
        rng = np.random.default_rng(seed)
        data = ar1(rng, a, self.N // replicas, replicas)
        r = gamma.analyse(data if replicas > 1 else data[:, 0])
        tau = exact_tau(a)
        label = f"a = {a}, R = {replicas}"
        self.assertEqual(r.n, self.N, label)
        self.assertEqual(r.replicas, replicas, label)
        self.assertTrue(r.window_found, label)
        self.assertGreater(r.tau_int_error, 0.0, label)
        self.assertLessEqual(abs(r.tau_int - tau), 3.0 * r.tau_int_error,
                             f"{label}: tau_int {r.tau_int} +- {r.tau_int_error}, exact {tau}")
        exact_error = math.sqrt(2.0 * tau / self.N)
        self.assertLess(abs(r.error / exact_error - 1.0), 0.15,
                        f"{label}: error {r.error}, exact asymptotic {exact_error}")
        self.assertAlmostEqual(r.value, float(data.mean()), places=12)
        self.assertAlmostEqual(r.rho[0], 1.0, places=12)
        # the error of the error is consistent with the tau_int error
        self.assertAlmostEqual(r.error_of_error, r.error * r.tau_int_error / (2 * r.tau_int))

    def test_independent(self):
        self.check_chain(0.0, 1, 11)

    def test_a05(self):
        self.check_chain(0.5, 1, 12)

    def test_a09(self):
        self.check_chain(0.9, 1, 13)

    def test_independent_replicas(self):
        self.check_chain(0.0, 4, 21)

    def test_a05_replicas(self):
        self.check_chain(0.5, 4, 22)

    def test_a09_replicas(self):
        self.check_chain(0.9, 4, 23)

    def test_unequal_replicas(self):
        rng = np.random.default_rng(31)
        a = 0.7
        reps = [ar1(rng, a, n)[:, 0] for n in (40_000, 25_000, 60_000)]
        r = gamma.analyse(reps)
        self.assertEqual(r.n, 125_000)
        self.assertLessEqual(abs(r.tau_int - exact_tau(a)), 3.0 * r.tau_int_error)
        self.assertAlmostEqual(r.value, float(np.concatenate(reps).mean()), places=12)

    def test_constant_series(self):
        r = gamma.analyse(np.full(100, 2.5))
        self.assertEqual((r.value, r.error, r.tau_int), (2.5, 0.0, 0.5))

    def test_input_forms_agree(self):
        rng = np.random.default_rng(5)
        data = ar1(rng, 0.6, 5000, 3)
        a = gamma.analyse(data)
        b = gamma.analyse([data[:, r] for r in range(3)])
        self.assertAlmostEqual(a.error, b.error, places=14)
        self.assertEqual(a.window, b.window)


class DerivedTest(unittest.TestCase):
    """F = <x>/<y> with x, y correlated with each other and in time."""

    @staticmethod
    def pair(rng, n):
        u = ar1(rng, 0.8, n)[:, 0]
        v = ar1(rng, 0.3, n)[:, 0]
        return 2.0 + u, 1.0 + 0.5 * u + 0.4 * v

    @staticmethod
    def ratio(means):
        return means[0] / means[1]

    def test_against_repetitions(self):
        rng = np.random.default_rng(7)
        n, repeats = 4000, 300
        values, errors = [], []
        for _ in range(repeats):
            x, y = self.pair(rng, n)
            r = gamma.analyse_derived(self.ratio, [x, y])
            values.append(r.value)
            errors.append(r.error)
        spread = float(np.std(values, ddof=1))  # known to ~4 % from 300 repetitions
        mean_error = float(np.mean(errors))
        self.assertLess(abs(mean_error / spread - 1.0), 0.15,
                        f"Gamma error {mean_error} vs spread of {repeats} repetitions {spread}")
        # and the estimates are unbiased within their spread: exact ratio 2/1
        self.assertLess(abs(np.mean(values) - 2.0), 4 * spread / math.sqrt(repeats))

    def test_replicas_and_primary_limit(self):
        rng = np.random.default_rng(8)
        x, y = self.pair(rng, 40_000)
        # a linear f reproduces the primary analysis
        linear = gamma.analyse_derived(lambda a: a[0], [x, y])
        primary = gamma.analyse(x)
        self.assertAlmostEqual(linear.value, primary.value, places=12)
        self.assertLess(abs(linear.error / primary.error - 1.0), 1e-6)
        # replicas: four pieces of the same length analysed together
        xs, ys = x.reshape(4, -1).T, y.reshape(4, -1).T
        r = gamma.analyse_derived(self.ratio, [xs, ys])
        self.assertEqual(r.replicas, 4)
        self.assertLess(abs(r.value - 2.0), 4 * r.error)


class JackknifeTest(unittest.TestCase):
    def test_mean_and_ratio_agree_with_gamma(self):
        rng = np.random.default_rng(9)
        x = 1.0 + ar1(rng, 0.9, 200_000)[:, 0]
        y = 3.0 + 0.5 * x + ar1(rng, 0.5, 200_000)[:, 0]
        g = gamma.analyse(x)
        length, ok = gamma.choose_block_length(g.tau_int, [len(x)])
        self.assertTrue(ok)
        self.assertGreaterEqual(length, 20 * g.tau_int)
        jk = gamma.blocked_jackknife([x], lambda a: a.mean(), length)
        self.assertGreaterEqual(jk.blocks, 20)
        self.assertAlmostEqual(float(jk.value), float(x.mean()), places=12)
        self.assertLess(abs(float(jk.error) / g.error - 1.0), 0.15)

        ratio = gamma.analyse_derived(lambda a: a[0] / a[1], [x, y])
        jk = gamma.blocked_jackknife([x, y], lambda a, b: a.mean() / b.mean(), length)
        self.assertLess(abs(float(jk.error) / ratio.error - 1.0), 0.15)

    def test_block_length_choice(self):
        self.assertEqual(gamma.choose_block_length(2.0, [10_000]), (50, True))  # max 200 blocks
        self.assertEqual(gamma.choose_block_length(2.0, [1000]), (40, True))
        length, ok = gamma.choose_block_length(10.0, [1000])  # 20 blocks of 50 < 200
        self.assertEqual((length, ok), (50, False))
        self.assertEqual(len(gamma.block_bounds([1000], length)), 20)
        bounds = gamma.block_bounds([105, 0, 30], 50)
        self.assertEqual(bounds, [(0, 0, 50), (0, 50, 105), (2, 0, 30)])


if __name__ == "__main__":
    unittest.main()
