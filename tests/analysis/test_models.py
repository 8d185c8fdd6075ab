#!/usr/bin/python3
"""The analysis commands on the continuous models: O(n) ("on") and phi^4 ("phi4").

    test_models.py [SIM_EXE]

On files written by synthetic.py (here): info shows n, precision, hits, the update sequence,
the tuned Metropolis step and acceptance, kappa and lambda (no beta for phi4); the reader
keeps float snapshots and their component axis; summary's derived quantities have known
values: the O(n) Binder cumulant is 0 for a Gaussian magnetisation vector and 1 for an
ordered one, phi4's scalar one 0 and 2/3, chi carries beta for O(n) and none for phi4, C only
where there is a beta, the O(2) helicity modulus per axis and averaged; reweight works on
O(n) (a Gaussian energy shifts by -dbeta V var(e)) and refuses phi4 with exit status 2, as
crossing does for phi4 and for mixed models; plot draws vs_beta / vs_kappa.
With SIM_EXE: sim's own O(2) and phi4 files go through info, summary and reweight, and the
last snapshot agrees with the last measured magnetisation.
Run: /usr/bin/python3 tests/analysis/test_models.py [SIM_EXE]
"""

import json
import pathlib
import sys
import unittest

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from script_support import (ScratchCase, ar1, call_analysis, positional_arguments,  # noqa: E402
                            run, sim_command, sim_env)

import synthetic  # noqa: E402

from analysis import gamma, lattica_file, summary  # noqa: E402

[SIM] = positional_arguments(1)
call = call_analysis


class Scratch(ScratchCase):
    prefix = "lattica_models_"

    def energy(self, n, replicas=2, mean=-1.2):
        return mean + 0.05 * ar1(self.rng, 0.5, (n, replicas))

    def gaussian_vectors(self, n, replicas, components, scale=0.1):
        """Magnetisation vectors with independent Gaussian (AR(1)) components: [n, R, c]."""
        return scale * np.stack([ar1(self.rng, 0.3, (n, replicas)) for _ in range(components)],
                                axis=-1)

    def ordered_vectors(self, n, replicas, components, modulus=0.8):
        """Vectors of fixed modulus in random directions: [n, R, c]."""
        v = self.rng.standard_normal((n, replicas, components))
        return modulus * v / np.linalg.norm(v, axis=-1, keepdims=True)

    def summary(self, path, *options):
        status, out, err = call("summary", path, "--cut", "0", "--json", *options)
        self.assertEqual(status, 0, err)
        return json.loads(out)["files"][0]


class InfoAndReaderTest(Scratch):
    def test_on_info_and_snapshots(self):
        e = self.energy(100)
        path = synthetic.write_on_run(self.path("on.h5"), e, self.gaussian_vectors(100, 2, 2),
                                      beta=1.1, dims=(8, 6), precision="float",
                                      algorithm="metropolis, overrelaxation", hits=3,
                                      metropolis=(0.9, 0.45),
                                      helicity=self.rng.random((100, 2, 2)))
        status, out, err = call("info", path)
        self.assertEqual(status, 0, err)
        for text in ("model      on n = 2 (metropolis, overrelaxation)", "precision  float",
                     "hits       3", "step       0.9 (Metropolis step, acceptance 0.45)",
                     "beta       1.1", "helicity_1", "magnetization_1",
                     "float32 (2 components on the last axis)"):
            self.assertIn(text, out)
        run_ = lattica_file.load(path)
        self.assertEqual((run_.model, run_.components, run_.beta), ("on", 2, 1.1))
        s = run_.snapshots
        self.assertEqual((s.frame_shape, s.dtype, s.components), ((2, 8, 6, 2), np.float32, 2))
        frame = s[0]
        self.assertEqual((frame.shape, frame.dtype), ((2, 8, 6, 2), np.float32))
        np.testing.assert_array_equal(frame[..., 0], 1.0)
        self.assertEqual(s[1:1].dtype, np.float32)  # an empty slice keeps the dtype

    def test_phi4_info_without_beta(self):
        path = synthetic.write_phi4_run(self.path("p.h5"), self.rng.standard_normal(50),
                                        kappa=0.18, lam=1.1, dims=(4, 4), precision="float",
                                        metropolis=(1.5, -1.0))
        status, out, err = call("info", path)
        self.assertEqual(status, 0, err)
        for text in ("model      phi4 (metropolis, overrelaxation)", "kappa      0.18",
                     "lambda     1.1", "acceptance not measured", "abs_phi", "float32"):
            self.assertIn(text, out)
        self.assertNotIn("  beta", out)
        run_ = lattica_file.load(path)
        self.assertIsNone(run_.beta)
        self.assertEqual((run_.coupling_name, run_.coupling), ("kappa", 0.18))
        self.assertEqual(run_.snapshots[-1].shape, (4, 4))

    def test_schema_checks(self):
        e = self.energy(20, 1)[:, 0]
        m = self.gaussian_vectors(20, 1, 3)[:, 0]
        path = synthetic.write_on_run(self.path("bad.h5"), e, m, beta=1.0, dims=(4, 4),
                                      configuration=np.zeros((4, 4), dtype=np.float32))
        with self.assertRaisesRegex(lattica_file.SchemaError, "last axis of n = 3"):
            lattica_file.load(path)
        path = synthetic.write_observables(self.path("non.h5"), {"energy": e}, model="on",
                                           dims=(4, 4), attributes={"beta": 1.0})
        with self.assertRaisesRegex(lattica_file.SchemaError, "no root attribute n"):
            lattica_file.load(path)
        path = synthetic.write_observables(self.path("nokappa.h5"), {"phi": e}, model="phi4",
                                           dims=(4, 4), attributes={"lambda": 1.0})
        with self.assertRaisesRegex(lattica_file.SchemaError, "no root attribute kappa"):
            lattica_file.load(path)


class SummaryTest(Scratch):
    def test_on_binder_limits(self):
        n = 20000
        for components in (2, 3, 4):
            path = synthetic.write_on_run(
                self.path(f"g{components}.h5"), self.energy(n),
                self.gaussian_vectors(n, 2, components), beta=0.5, dims=(8, 8))
            u = self.summary(path)["derived"]["U4"]
            self.assertIn(f"n = {components}", u["definition"])
            # Gaussian m vector: 0 (the Ising formula would give 1 - (n+2)/(3n))
            self.assertLess(abs(u["value"]), 4 * u["error"] + 1e-3, (components, u))
            path = synthetic.write_on_run(
                self.path(f"o{components}.h5"), self.energy(n),
                self.ordered_vectors(n, 2, components), beta=0.5, dims=(8, 8))
            u = self.summary(path)["derived"]["U4"]
            self.assertAlmostEqual(u["value"], 1.0, places=10)  # fixed modulus: exactly 1
        # a modulus that fluctuates a little: just below 1, as the formula says
        m = self.ordered_vectors(n, 2, 3) * (1 + 0.01 * self.rng.standard_normal((n, 2, 1)))
        path = synthetic.write_on_run(self.path("near.h5"), self.energy(n), m, beta=0.5,
                                      dims=(8, 8))
        mod = np.linalg.norm(m, axis=-1)
        expected = gamma.analyse_derived(lambda a: 2.5 * (1 - 0.6 * a[0] / a[1] ** 2),
                                         [mod ** 4, mod ** 2])
        u = self.summary(path)["derived"]["U4"]
        self.assertAlmostEqual(u["value"], expected.value, places=12)
        self.assertAlmostEqual(u["error"], expected.error, places=12)
        self.assertTrue(0.99 < u["value"] < 1.0)

    def test_on_chi_c_helicity(self):
        n, beta, volume = 5000, 0.7, 48
        e = self.energy(n)
        m = self.gaussian_vectors(n, 2, 2) + np.array([0.3, 0.0])
        helicity = np.stack([0.6 + 0.05 * ar1(self.rng, 0.4, (n, 2)),
                             0.4 + 0.05 * ar1(self.rng, 0.4, (n, 2))], axis=-1)
        path = synthetic.write_on_run(self.path("h.h5"), e, m, beta=beta, h=0.2, dims=(8, 6),
                                      helicity=helicity)
        s = self.summary(path)
        self.assertEqual(s["parameters"], {"n": 2, "beta": beta, "h": 0.2})
        self.assertEqual(list(s["observables"]),
                         ["e", "|m|", "m^2", "m^4", "e^2", "m_0", "m_0^2", "helicity_0",
                          "helicity_1"])
        self.assertEqual(sorted(s["derived"]), ["C", "U4", "Upsilon", "chi", "chi_c"])
        mod = np.linalg.norm(m, axis=-1)
        chi = gamma.analyse_derived(lambda a: beta * volume * (a[0] - a[1] ** 2),
                                    [mod ** 2, mod])
        self.assertAlmostEqual(s["derived"]["chi"]["value"], chi.value, places=10)
        self.assertIn("beta V", s["derived"]["chi"]["definition"])
        m0 = m[..., 0]
        chi_c = gamma.analyse_derived(lambda a: beta * volume * (a[0] - a[1] ** 2),
                                      [m0 ** 2, m0])
        self.assertAlmostEqual(s["derived"]["chi_c"]["value"], chi_c.value, places=10)
        self.assertIn("m_0", s["derived"]["chi_c"]["definition"])
        # the helicity modulus per axis is the mean of helicity_a, Upsilon their average
        for a in range(2):
            g = gamma.analyse(helicity[..., a])
            o = s["observables"][f"helicity_{a}"]
            self.assertAlmostEqual(o["mean"], g.value, places=12)
            self.assertAlmostEqual(o["error"], g.error, places=12)
        average = gamma.analyse(helicity.mean(axis=-1))
        upsilon = s["derived"]["Upsilon"]
        self.assertAlmostEqual(upsilon["value"], average.value, places=10)
        self.assertAlmostEqual(upsilon["error"], average.error, delta=1e-6 * average.error)
        status, out, err = call("summary", path, "--cut", "0")
        self.assertEqual(status, 0, err)
        for text in ("Upsilon", "helicity_1", "n = 2, beta = 0.7, h = 0.2", "note: m is |m|"):
            self.assertIn(text, out)

    def test_on_three_components_at_zero_field(self):
        path = synthetic.write_on_run(self.path("h3.h5"), self.energy(2000, 1),
                                      self.gaussian_vectors(2000, 1, 3), beta=0.7, dims=(4, 4))
        s = self.summary(path)
        self.assertEqual(sorted(s["derived"]), ["C", "U4", "chi", "chi'"])  # no helicity
        self.assertNotIn("helicity_0", s["observables"])

    def test_phi4(self):
        n, volume = 20000, 64
        phi = 0.1 * ar1(self.rng, 0.3, (n, 2))
        path = synthetic.write_phi4_run(self.path("p.h5"), phi, kappa=0.18, lam=1.1,
                                        dims=(8, 8), action=self.energy(n, mean=0.9))
        s = self.summary(path)
        self.assertIsNone(s["beta"])
        self.assertEqual(s["parameters"], {"kappa": 0.18, "lambda": 1.1, "h": 0.0})
        self.assertEqual(list(s["observables"]),
                         ["m", "|m|", "m^2", "m^4", "phi2", "link", "action"])
        self.assertEqual(sorted(s["derived"]), ["U4", "chi", "chi'"])  # no C: no beta
        u = s["derived"]["U4"]
        self.assertLess(abs(u["value"]), 4 * u["error"] + 1e-3)  # Gaussian: 0
        chi = gamma.analyse_derived(lambda a: volume * (a[0] - a[1] ** 2),
                                    [phi ** 2, np.abs(phi)])
        self.assertAlmostEqual(s["derived"]["chi"]["value"], chi.value, places=10)
        self.assertIn("no beta", s["derived"]["chi"]["definition"])
        self.assertAlmostEqual(s["derived"]["chi'"]["value"], volume * np.mean(phi ** 2),
                               delta=1e-3 * volume * np.mean(phi ** 2))
        # ordered: phi = +-0.8, the scalar (Ising-convention) cumulant 2/3
        phi = np.where(self.rng.random((n, 2)) < 0.5, -0.8, 0.8)
        path = synthetic.write_phi4_run(self.path("q.h5"), phi, kappa=0.3, lam=1.1,
                                        dims=(8, 8), h=0.01, action=self.energy(n, mean=0.9))
        s = self.summary(path)
        self.assertAlmostEqual(s["derived"]["U4"]["value"], 2.0 / 3.0, places=10)
        self.assertIn("chi_c", s["derived"])
        status, out, err = call("summary", path)
        self.assertEqual(status, 0, err)
        for text in ("kappa = 0.3, lambda = 1.1", "phi2", "no beta"):
            self.assertIn(text, out)


class CommandTest(Scratch):
    def phi4_file(self, name, kappa, size=4):
        phi = 0.2 * self.rng.standard_normal((400, 1))
        return synthetic.write_phi4_run(self.path(name), phi, kappa=kappa, lam=1.0,
                                        dims=(size, size),
                                        action=0.9 + 0.05 * self.rng.standard_normal((400, 1)))

    def on_file(self, name, beta, size=4, components=2, replicas=1):
        n = 2000
        return synthetic.write_on_run(
            self.path(name), self.energy(n, replicas),
            self.gaussian_vectors(n, replicas, components), beta=beta, dims=(size, size),
            helicity=(self.rng.random((n, replicas, 2)) if components == 2 else None))

    def test_reweight_refuses_phi4(self):
        path = self.phi4_file("p.h5", 0.2)
        for extra in ((), ("--json",)):
            status, out, err = call("reweight", path, "--beta", "0.3", *extra)
            self.assertEqual(status, 2)
            self.assertIn("phi4 run has none", err)
            self.assertEqual(out, "")

    def test_crossing_refuses(self):
        files = [self.phi4_file("p4.h5", 0.2, 4), self.phi4_file("p8.h5", 0.2, 8)]
        status, out, err = call("crossing", *files)
        self.assertEqual(status, 2)
        self.assertIn("no beta", err)
        e = -1.4 + 0.05 * self.rng.standard_normal(300)
        ising = synthetic.write_run(self.path("i.h5"), e, 0.2 * self.rng.standard_normal(300),
                                    beta=0.4, dims=(8, 8))
        status, out, err = call("crossing", self.on_file("o.h5", 0.5), ising)
        self.assertEqual(status, 2)
        self.assertIn("different models (ising, on n = 2)", err)

    def test_reweight_on(self):
        # A Gaussian e: reweighting by exp(-dbeta V e) shifts its mean by -dbeta V var(e).
        n, volume, beta, target = 40000, 64, 0.5, 0.7
        e = -1.0 + 0.02 * self.rng.standard_normal((n, 2))
        m = self.gaussian_vectors(n, 2, 3)
        path = synthetic.write_on_run(self.path("w.h5"), e, m, beta=beta, dims=(8, 8))
        status, out, err = call("reweight", path, "--beta", str(beta), str(target), "--cut",
                                "0", "--json")
        self.assertEqual(status, 0, err)
        d = json.loads(out)
        self.assertEqual(d["model"], "on")
        self.assertIn("n = 3", d["U4_definition"])
        at, moved = d["points"]
        mod = np.linalg.norm(m, axis=-1)
        self.assertAlmostEqual(at["e"]["value"], float(e.mean()), places=12)
        self.assertAlmostEqual(at["|m|"]["value"], float(mod.mean()), places=12)
        m2, m4 = float(np.mean(mod ** 2)), float(np.mean(mod ** 4))
        self.assertAlmostEqual(at["U4"]["value"], summary.binder(m4, m2, 3), places=10)
        self.assertAlmostEqual(at["U4"]["value"], 2.5 * (1 - 0.6 * m4 / m2 ** 2), places=10)
        expected = float(e.mean() - (target - beta) * volume * e.var())
        self.assertLess(abs(moved["e"]["value"] - expected), 4 * moved["e"]["error"])
        self.assertTrue(moved["in_range"])
        status, out, err = call("reweight", path, "--beta", "0.6")
        self.assertEqual(status, 0, err)
        self.assertIn("on n = 3", out)

    def test_crossing_on_runs(self):
        files = [self.on_file(f"c{size}_{beta}.h5", beta, size)
                 for size in (4, 8) for beta in (0.5, 0.6)]
        status, out, err = call("crossing", *files, "--json")
        self.assertEqual(status, 0, err)
        self.assertEqual(len(json.loads(out)["pairs"]), 1)

    def test_plot(self):
        out_dir = self.path("figures")
        on = [self.on_file(f"o{beta}.h5", beta, replicas=2) for beta in (0.5, 0.6)]
        phi4 = [self.phi4_file(f"p{kappa}.h5", kappa) for kappa in (0.18, 0.2)]
        for files, figure in ((on, "vs_beta.png"), (phi4, "vs_kappa.png")):
            status, out, err = call("plot", *files, "--out", out_dir)
            self.assertEqual(status, 0, err)
            written = out.split()
            self.assertEqual(len(written), 3 * len(files) + 1)
            self.assertTrue(written[-1].endswith(figure), written)
            for p in written:
                with open(p, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", p)
        status, out, err = call("plot", on[0], phi4[1], "--out", out_dir)
        self.assertEqual(status, 0, err)
        self.assertEqual(len(out.split()), 6)
        self.assertIn("different models", err)


@unittest.skipIf(SIM is None, "needs SIM_EXE")
class SimFilesTest(Scratch):
    """What sim itself writes for the continuous models."""

    def simulate(self, name, model_lines, *settings):
        toml = self.path(f"{name}.toml")
        with open(toml, "w") as f:
            f.write(f"[lattice]\ndims = [8, 8]\n[model]\n{model_lines}\n"
                    "[run]\nthermalization = 200\nmeasurements = 400\nmeasure_every = 1\n"
                    "start = \"hot\"\n[output]\nsnapshot_every = 100\n")
        out = self.path(f"{name}.h5")
        result = run(sim_command(SIM, toml, out, 77, *settings), 120, env=sim_env())
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return out

    def test_on(self):
        path = self.simulate("on2", "kind = \"on\"\nn = 2\nbeta = 1.1\nprecision = \"float\"",
                             "update.sequence=[\"metropolis\", \"overrelaxation\"]")
        status, out, err = call("info", path)
        self.assertEqual(status, 0, err)
        for text in ("on n = 2 (metropolis, overrelaxation)", "precision  float", "step",
                     "float32 (2 components on the last axis)"):
            self.assertIn(text, out)
        s = self.summary(path)
        self.assertIn("Upsilon", s["derived"])
        self.assertTrue(0.3 < s["derived"]["U4"]["value"] < 1.05, s["derived"]["U4"])
        run_ = lattica_file.load(path)
        frame = run_.snapshots[-1].astype(np.float64)  # taken at the last measurement
        self.assertEqual(run_.snapshots.sweep[-1], run_.sweep[-1])
        np.testing.assert_allclose(np.linalg.norm(frame, axis=-1), 1.0, atol=1e-5)
        for c in range(2):
            self.assertAlmostEqual(frame[..., c].mean(),
                                   run_.chains[f"magnetization_{c}"][-1, 0], places=5)
        status, out, err = call("reweight", path, "--beta", "1.1", "1.12")
        self.assertEqual(status, 0, err)

    def test_phi4(self):
        path = self.simulate("phi4", "kind = \"phi4\"\nkappa = 0.18\nlambda = 1.1",
                             "run.replicas=2")
        status, out, err = call("info", path)
        self.assertEqual(status, 0, err)
        self.assertIn("kappa      0.18", out)
        s = self.summary(path)
        self.assertEqual(sorted(s["derived"]), ["U4", "chi", "chi'"])
        run_ = lattica_file.load(path)
        frame = run_.snapshots[-1]
        self.assertEqual((frame.shape, frame.dtype), ((2, 8, 8), np.float64))
        np.testing.assert_allclose(frame.mean(axis=(1, 2)), run_.chains["phi"][-1], atol=1e-12)
        status, out, err = call("reweight", path, "--beta", "0.3")
        self.assertEqual(status, 2)


if __name__ == "__main__":
    unittest.main()
