#!/usr/bin/python3
"""summary and the improved estimator m2_improved of a cluster pass (issue 19).

    test_improved.py [SIM_EXE]

On files written by synthetic.py: an Ising or Potts file with the m2_improved series reports it
as a primary observable (Gamma-method error and tau_int like the others) and compares it with
the plain estimator V <m^2> from the magnetization (Potts: the modulus): both values and errors
are those of gamma.analyse on the series, the difference's error that of the paired
differences, the error ratio plain / improved; a disagreement beyond 3 errors is warned about;
files without the series, and models other than Ising and Potts, are unchanged.
With SIM_EXE: sim's Swendsen-Wang and Wolff runs of 2D Ising and Swendsen-Wang of the 3-state
Potts model (CPU, 8x8) have m2_improved agreeing with V <m^2> (for Ising both agree with the
exact <M^2>/V), and for Swendsen-Wang the improved estimator has the smaller error; a
Metropolis run has no comparison.
Run: /usr/bin/python3 tests/analysis/test_improved.py [SIM_EXE]
"""

import json
import math
import pathlib
import sys
import unittest

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from script_support import (ScratchCase, ar1, call_analysis, positional_arguments,  # noqa: E402
                            run, sim_command, sim_env)

import synthetic  # noqa: E402

from analysis import gamma  # noqa: E402

[SIM] = positional_arguments(1)
call = call_analysis
BETA_C = 0.5 * math.log(1.0 + math.sqrt(2.0))
# <M^2>/V of the periodic 8x8 Ising model at beta_c, exactly: the row-to-row transfer matrix
# (2^8 states) carrying the distribution of the total magnetization M (computed once, in
# double precision, for this test).
EXACT_M2_8X8 = 41.40234079963


class Scratch(ScratchCase):
    prefix = "lattica_improved_"

    def summary(self, path, cut="0"):
        status, out, err = call("summary", path, "--cut", cut, "--json")
        self.assertEqual(status, 0, err)
        return json.loads(out)["files"][0]


class SyntheticTest(Scratch):
    def series(self, n, replicas, volume, offset=0.0):
        """e, m and an improved estimator of V <m^2> with the same mean and a quarter of the
        plain one's fluctuations (plus its own small noise)."""
        e = -1.4 + 0.05 * ar1(self.rng, 0.5, (n, replicas))
        m = 0.3 * ar1(self.rng, 0.7, (n, replicas))
        plain = volume * m * m
        mean = volume * 0.09  # <m^2> of the AR(1) chain
        improved = (mean + 0.25 * (plain - mean) + 0.02 * mean * self.rng.standard_normal(
            (n, replicas)) + offset)
        return e, m, improved

    def write(self, name, e, m, improved, model="ising", dims=(8, 8), **attributes):
        observables = {"energy": e, "magnetization": m}
        if improved is not None:
            observables["m2_improved"] = improved
        attributes = dict({"beta": 0.44, "h": 0.0}, **attributes)
        return synthetic.write_observables(self.path(name), observables, model=model,
                                           dims=dims, attributes=attributes,
                                           algorithm="swendsen_wang")

    def test_ising_comparison(self):
        volume = 64
        e, m, improved = self.series(20000, 3, volume)
        path = self.write("i.h5", e, m, improved)
        s = self.summary(path)
        self.assertEqual(list(s["observables"]), ["e", "m", "|m|", "m^2", "m^4", "e^2",
                                                  "m2_improved"])
        o = s["observables"]["m2_improved"]
        g = gamma.analyse(improved)
        self.assertAlmostEqual(o["mean"], g.value, places=10)
        self.assertAlmostEqual(o["error"], g.error, places=10)
        self.assertAlmostEqual(o["tau_int"], g.tau_int, places=10)
        self.assertIsNotNone(o["tau_int_sweeps"])
        c = s["m2_improved"]
        plain = gamma.analyse(volume * m * m)
        self.assertAlmostEqual(c["plain"]["mean"], plain.value, places=9)
        self.assertAlmostEqual(c["plain"]["error"], plain.error, places=9)
        self.assertAlmostEqual(c["plain"]["mean"], volume * s["observables"]["m^2"]["mean"],
                               places=9)
        self.assertAlmostEqual(c["improved"]["mean"], g.value, places=10)
        difference = gamma.analyse(volume * m * m - improved)
        self.assertAlmostEqual(c["difference"]["mean"], plain.value - g.value, places=9)
        self.assertAlmostEqual(c["difference"]["error"], difference.error, places=9)
        self.assertAlmostEqual(c["difference"]["sigmas"], difference.value / difference.error,
                               places=9)
        self.assertAlmostEqual(c["difference"]["uncorrelated_error"],
                               math.hypot(plain.error, g.error), places=9)
        # the two move together: the paired error is below the uncorrelated combination
        self.assertLess(c["difference"]["error"], c["difference"]["uncorrelated_error"])
        self.assertLess(abs(c["difference"]["sigmas"]), 4.0)
        self.assertAlmostEqual(c["error_ratio"], plain.error / g.error, places=9)
        self.assertGreater(c["error_ratio"], 2.0)  # a quarter of the fluctuations
        self.assertAlmostEqual(c["variance_ratio"], c["error_ratio"] ** 2, places=9)
        self.assertEqual(s["warnings"], [])
        status, out, err = call("summary", path, "--cut", "0")
        self.assertEqual(status, 0, err)
        for text in ("m2_improved", "<M^2>/V", "V <m^2>", "errors of the paired differences",
                     "error ratio plain / improved", "the improved estimator is the better"):
            self.assertIn(text, out)

    def test_disagreement_is_warned(self):
        e, m, improved = self.series(5000, 2, 64, offset=3.0)  # about 10 errors off
        s = self.summary(self.write("bad.h5", e, m, improved))
        self.assertGreater(abs(s["m2_improved"]["difference"]["sigmas"]), 3.0)
        self.assertTrue(any("m2_improved and V <m^2> differ" in w for w in s["warnings"]),
                        s["warnings"])
        status, out, err = call("summary", self.path("bad.h5"), "--cut", "0")
        self.assertIn("warning: m2_improved and V <m^2> differ", out)

    def test_potts_uses_the_modulus(self):
        volume = 100
        e, m, improved = self.series(8000, 2, volume)
        modulus = np.abs(m)  # Potts stores |M|/V, never negative
        path = self.write("p.h5", e, modulus, improved, model="potts", dims=(10, 10),
                          q=np.int64(3))
        c = self.summary(path)["m2_improved"]
        plain = gamma.analyse(volume * modulus ** 2)
        self.assertAlmostEqual(c["plain"]["mean"], plain.value, places=9)
        self.assertAlmostEqual(c["plain"]["error"], plain.error, places=9)

    def test_without_the_series_or_other_models(self):
        e, m, _ = self.series(2000, 1, 64)
        s = self.summary(self.write("plain.h5", e[:, 0], m[:, 0], None))
        self.assertIsNone(s["m2_improved"])
        self.assertNotIn("m2_improved", s["observables"])
        status, out, err = call("summary", self.path("plain.h5"), "--cut", "0")
        self.assertNotIn("<M^2>/V", out)
        # an O(n) file with such a series: not an Ising/Potts estimator, not reported
        vectors = 0.1 * np.stack([ar1(self.rng, 0.3, (2000, 1)) for _ in range(2)], axis=-1)
        path = synthetic.write_on_run(self.path("on.h5"), e, vectors, beta=1.0, dims=(8, 8))
        import h5py
        with h5py.File(path, "a") as f:
            f["observables"].create_dataset("m2_improved", data=np.ones((2000, 1)))
        s = self.summary(path)
        self.assertIsNone(s["m2_improved"])
        self.assertNotIn("m2_improved", s["observables"])

    def test_cut(self):
        e, m, improved = self.series(4000, 2, 64)
        path = self.write("c.h5", e, m, improved)
        s = self.summary(path, cut="1000")
        self.assertEqual(s["cut"], 1000)
        g = gamma.analyse([improved[1000:, r] for r in range(2)])
        self.assertAlmostEqual(s["m2_improved"]["improved"]["mean"], g.value, places=10)


@unittest.skipIf(SIM is None, "needs SIM_EXE")
class SimFilesTest(Scratch):
    """What sim's cluster passes write, on the CPU."""

    def simulate(self, name, model_lines, sequence, *settings, measurements=6000):
        toml = self.path(f"{name}.toml")
        with open(toml, "w") as f:
            f.write(f"[lattice]\ndims = [8, 8]\n[model]\n{model_lines}\n"
                    f"[update]\nsequence = [\"{sequence}\"]\n"
                    f"[run]\nthermalization = 200\nmeasurements = {measurements}\n"
                    "measure_every = 1\nreplicas = 2\nthreads = 1\nstart = \"hot\"\n")
        out = self.path(f"{name}.h5")
        result = run(sim_command(SIM, toml, out, 19, *settings), 240, env=sim_env())
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return out

    def check(self, path, better, exact=None):
        s = self.summary(path)
        c = s["m2_improved"]
        if exact is not None:  # both estimators against the exact value
            for d in (c["plain"], c["improved"]):
                self.assertLess(abs(d["mean"] - exact), 4.5 * d["error"], (d, exact))
        self.assertIsNotNone(c, path)
        self.assertIn("m2_improved", s["observables"])
        self.assertLess(abs(c["difference"]["sigmas"]), 4.5, c)
        self.assertAlmostEqual(c["plain"]["mean"], 64 * s["observables"]["m^2"]["mean"],
                               places=8)
        if better:
            self.assertGreater(c["error_ratio"], 1.0, c)
        # a cluster's size is at most V: every value lies in [1, V]
        self.assertTrue(0.0 < c["improved"]["mean"] <= 64.0)
        return c

    def test_ising(self):
        beta = f"kind = \"ising\"\nbeta = {BETA_C!r}"
        self.check(self.simulate("sw", beta, "swendsen_wang"), better=True,
                   exact=EXACT_M2_8X8)
        self.check(self.simulate("wolff", beta, "wolff", "update.wolff_clusters=2"),
                   better=False, exact=EXACT_M2_8X8)
        s = self.summary(self.simulate("metropolis", beta, "metropolis", measurements=500))
        self.assertIsNone(s["m2_improved"])

    def test_potts(self):
        beta = f"kind = \"potts\"\nq = 3\nbeta = {math.log(1.0 + math.sqrt(3.0))!r}"
        self.check(self.simulate("potts_sw", beta, "swendsen_wang"), better=True)


if __name__ == "__main__":
    unittest.main()
