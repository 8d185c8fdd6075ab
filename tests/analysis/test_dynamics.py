#!/usr/bin/python3
"""The dynamics command (analysis/dynamics.py) and the bench driver tests/bench/cluster_dynamics.py.

    test_dynamics.py [SIM_EXE]

The fit tau = A L^z: exact on a power law, numpy's weighted polyfit (coefficients and unscaled
covariance) on scattered points, points without an error left out, no fit below two sizes.
Synthetic runs with AR(1) series of known tau_int (tau_int(e) = 0.3 L^1.5 and tau_int(m^2) =
L sweeps, measured every 2 sweeps): tau_int per run in sweeps, and the fitted z recovered
within 4 errors. Rates from --rate (file, LABEL:L and L, most specific first) and from a side
file (both forms), samples per second = rate 1e9 / (passes V 2 tau_int), gains over the
reference per size and extrapolated, --extrapolation-rate, Wolff units from m2_improved and
update.wolff_clusters; the table, --json and --plot; bad options.
With SIM_EXE: the driver runs sim (CPU) for Swendsen-Wang, Wolff and Metropolis at L = 4 and
8, writes its rates file and the analysis' table, JSON and figure.
Run: /usr/bin/python3 tests/analysis/test_dynamics.py [SIM_EXE]
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

from script_support import (REPO, ScratchCase, ar1, call_analysis,  # noqa: E402
                            positional_arguments, run, sim_env)

import synthetic  # noqa: E402

from analysis import dynamics, gamma  # noqa: E402

[SIM] = positional_arguments(1)
call = call_analysis
DRIVER = REPO / "tests" / "bench" / "cluster_dynamics.py"


def coefficient(tau):
    """The AR(1) coefficient a whose chain has tau_int = (1 + a) / (2 (1 - a)) = tau."""
    return (2.0 * tau - 1.0) / (2.0 * tau + 1.0)


class Scratch(ScratchCase):
    prefix = "lattica_dynamics_"

    def write_run(self, name, size, tau_e, tau_m2, *, spacing=2, replicas=4, per_tau=3000,
                  algorithm="metropolis", improved=None, clusters=None, d=2):
        """A run whose e has tau_int(e) = tau_e sweeps and whose m (Gaussian AR(1)) has
        tau_int(m^2) = tau_m2 sweeps, measured every `spacing` sweeps; per_tau times the
        longer tau_int (in measurements) per replica. improved: the m2_improved values (a
        constant), clusters: update.wolff_clusters in the resolved configuration."""
        tau_e_meas, tau_m2_meas = tau_e / spacing, tau_m2 / spacing
        n = int(per_tau * max(tau_e_meas, tau_m2_meas, 1.0))
        e = -1.4 + 0.05 * ar1(self.rng, coefficient(tau_e_meas), (n, replicas))
        a = math.sqrt(coefficient(tau_m2_meas))  # m^2 of a Gaussian AR(1) chain: a^2
        m = 0.5 * ar1(self.rng, a, (n, replicas))
        observables = {"energy": e, "magnetization": m}
        if improved is not None:
            observables["m2_improved"] = np.full((n, replicas), float(improved))
        path = synthetic.write_observables(
            self.path(name), observables, model="ising", dims=(size,) * d,
            attributes={"beta": 0.44, "h": 0.0}, algorithm=algorithm,
            sweep=1000 + spacing * np.arange(1, n + 1))
        if clusters is not None:
            with h5py.File(path, "a") as f:
                f.attrs["resolved_config"] = (f"[run]\nmeasure_every = {spacing}\n"
                                              f"[update]\nsequence = ['{algorithm}']\n"
                                              f"wolff_clusters = {clusters}\n")
        return path

    def dynamics(self, *argv):
        status, out, err = call("dynamics", *argv, "--cut", "0", "--json")
        self.assertEqual(status, 0, err)
        return json.loads(out)


class FitTest(unittest.TestCase):
    def test_exact_power_law(self):
        sizes = [8, 16, 32, 64]
        taus = [2.0 * s ** 0.5 for s in sizes]
        fit = dynamics.fit_power_law(sizes, taus, [0.05 * t for t in taus])
        self.assertAlmostEqual(fit.amplitude, 2.0, places=10)
        self.assertAlmostEqual(fit.z, 0.5, places=12)
        self.assertAlmostEqual(fit.chi2, 0.0, places=18)
        self.assertEqual((fit.dof, fit.sizes), (2, sizes))
        self.assertAlmostEqual(fit.chi2_dof, 0.0, places=18)
        tau, error = fit.at(128)
        self.assertAlmostEqual(tau, 2.0 * 128 ** 0.5, places=9)
        self.assertGreater(error, 0.0)

    def test_against_polyfit(self):
        rng = np.random.default_rng(5)
        sizes = np.array([8.0, 16.0, 32.0, 64.0, 128.0])
        errors = np.array([0.1, 0.3, 0.5, 1.5, 4.0])
        taus = 1.3 * sizes ** 0.8 + errors * rng.standard_normal(len(sizes))
        fit = dynamics.fit_power_law(sizes, taus, errors)
        sigma = errors / taus
        (z, ln_a), cov = np.polyfit(np.log(sizes), np.log(taus), 1, w=1.0 / sigma,
                                    cov="unscaled")
        self.assertAlmostEqual(fit.z, z, places=10)
        self.assertAlmostEqual(math.log(fit.amplitude), ln_a, places=10)
        self.assertAlmostEqual(fit.z_error, math.sqrt(cov[0, 0]), places=10)
        self.assertAlmostEqual(fit.amplitude_error, fit.amplitude * math.sqrt(cov[1, 1]),
                               places=10)
        residual = np.log(taus) - (ln_a + z * np.log(sizes))
        self.assertAlmostEqual(fit.chi2, float(np.sum((residual / sigma) ** 2)), places=9)
        self.assertEqual(fit.dof, 3)
        # the error of the fitted tau at L: from the covariance of (ln A, z)
        x = math.log(1000.0)
        variance = cov[1, 1] + 2 * x * cov[0, 1] + x * x * cov[0, 0]
        tau, error = fit.at(1000.0)
        self.assertAlmostEqual(error / tau, math.sqrt(variance), places=9)
        d = fit.as_dict()
        self.assertAlmostEqual(d["z_error_scaled"], fit.z_error * max(1.0, fit.scale),
                               places=12)

    def test_too_few_points(self):
        self.assertIsNone(dynamics.fit_power_law([8], [3.0], [0.1]))
        self.assertIsNone(dynamics.fit_power_law([8, 8], [3.0, 3.1], [0.1, 0.1]))
        # a point without an error (a constant series) is left out
        self.assertIsNone(dynamics.fit_power_law([8, 16], [3.0, 4.0], [0.1, 0.0]))
        fit = dynamics.fit_power_law([8, 16, 32], [3.0, 4.0, 5.0], [0.1, 0.0, 0.2])
        self.assertEqual(fit.sizes, [8, 32])
        self.assertEqual((fit.dof, fit.chi2_dof), (0, None))

    def test_samples_per_second(self):
        value, error = dynamics.samples_per_second(2.0, 1, 1024, 4.0, 0.4)
        self.assertAlmostEqual(value, 2.0e9 / (1024 * 8.0))
        self.assertAlmostEqual(error, 0.1 * value)
        value, _ = dynamics.samples_per_second(2.0, 3, 1024, 4.0, 0.4)  # 3 passes per sweep
        self.assertAlmostEqual(value, 2.0e9 / (3 * 1024 * 8.0))
        self.assertEqual(dynamics.samples_per_second(None, 1, 64, 4.0, 0.4), (None, None))

    def test_rate_options(self):
        self.assertEqual(dynamics.parse_rate_option("a.h5=1.5"), ("a.h5", 1.5))
        self.assertEqual(dynamics.parse_rate_option("wolff (2 clusters):64=0.5"),
                         ("wolff (2 clusters):64", 0.5))
        for bad in ("1.5", "=3", "a.h5=x", "a.h5=-1", "a.h5=0"):
            with self.assertRaises(ValueError):
                dynamics.parse_rate_option(bad)
        options = [("16", 1.0), ("wolff:16", 2.0), ("dir/w16.h5", 3.0)]
        self.assertEqual(dynamics.find_rate("dir/w16.h5", "wolff", 16, options, {}),
                         (3.0, "--rate (file)"))
        self.assertEqual(dynamics.find_rate("other/w16.h5", "wolff", 16, options, {}),
                         (2.0, "--rate (label:L)"))
        self.assertEqual(dynamics.find_rate("m16.h5", "metropolis", 16, options, {}),
                         (1.0, "--rate (L)"))
        self.assertEqual(dynamics.find_rate("m32.h5", "metropolis", 32, options,
                                            {"m32.h5": 7.0}), (7.0, "--rates"))
        self.assertEqual(dynamics.find_rate("m32.h5", "metropolis", 32, [], {}), (None, None))


class SyntheticRunsTest(Scratch):
    SIZES = (8, 16, 32, 64)

    def test_z_recovered(self):
        files = [self.write_run(f"m{size}.h5", size, 0.3 * size ** 1.5, float(size))
                 for size in self.SIZES]
        d = self.dynamics(*files)
        self.assertEqual(d["schema"], "lattica-dynamics/1")
        for r, size in zip(d["runs"], self.SIZES):
            self.assertEqual((r["L"], r["measure_every"], r["replicas"], r["label"]),
                             (size, 2.0, 4, "metropolis"))
            # the tau_int in sweeps is the Gamma method's, in measurements, times the spacing
            e = lattica_chain(r["file"], "energy")
            g = gamma.analyse(e)
            self.assertAlmostEqual(r["observables"]["e"]["tau_int"], 2 * g.tau_int, places=9)
            self.assertAlmostEqual(r["observables"]["e"]["tau_int_error"],
                                   2 * g.tau_int_error, places=9)
            for name, exact in (("e", 0.3 * size ** 1.5), ("m^2", float(size))):
                o = r["observables"][name]
                self.assertLess(abs(o["tau_int"] - exact), 4 * o["tau_int_error"] + 0.02 * exact,
                                (size, name, o, exact))
            self.assertIsNone(r["observables"]["e"]["samples_per_second"])  # no rate
        fits = {f["observable"]: f["fit"] for f in d["fits"]}
        for name, z in (("e", 1.5), ("m^2", 1.0)):
            fit = fits[name]
            self.assertLess(fit["z_error"], 0.1, fit)
            self.assertLess(abs(fit["z"] - z), 4 * fit["z_error"], (name, fit))
            self.assertEqual(fit["sizes"], list(self.SIZES))
            self.assertEqual(fit["dof"], 2)
        self.assertGreater(fits["|m|"]["z"], 0.7)  # no exact value: it follows m^2's
        self.assertTrue(any("no rates" in w for w in d["warnings"]))

    def test_rates_gains_and_extrapolation(self):
        files, rates = [], {}
        for size in (8, 16, 32):
            files.append(self.write_run(f"metropolis_{size}.h5", size, 0.2 * size ** 2,
                                        0.2 * size ** 2, spacing=4, per_tau=1500))
            rates[os.path.basename(files[-1])] = 1.0 + 0.01 * size
            files.append(self.write_run(f"sw_{size}.h5", size, 2.0 * size ** 0.25,
                                        2.0 * size ** 0.25, spacing=1, per_tau=1500,
                                        algorithm="swendsen_wang"))
        side = self.path("rates.json")
        with open(side, "w") as f:
            json.dump({"schema": "lattica-rates/1",
                       "runs": [{"file": k, "site_updates_per_ns": v} for k, v in rates.items()]
                       + [{"file": "sw_8.h5", "site_updates_per_ns": 99.0}]}, f)
        d = self.dynamics(*files, "--rates", side, "--rate", "sw_8.h5=0.5", "--rate", "16=0.25",
                          "--rate", "swendsen_wang:32=0.125", "--extrapolate", "1024")
        runs = {(r["label"], r["L"]): r for r in d["runs"]}
        self.assertEqual(runs[("swendsen_wang", 8)]["rate"], 0.5)  # --rate before --rates
        self.assertEqual(runs[("swendsen_wang", 8)]["rate_source"], "--rate (file)")
        self.assertEqual(runs[("swendsen_wang", 16)]["rate"], 0.25)
        self.assertEqual(runs[("metropolis", 16)]["rate"], 0.25)  # L applies to every run
        self.assertEqual(runs[("swendsen_wang", 32)]["rate"], 0.125)
        self.assertEqual(runs[("metropolis", 32)]["rate"], 1.32)
        self.assertEqual(runs[("metropolis", 32)]["rate_source"], "--rates")
        for (label, size), r in runs.items():
            for name in dynamics.OBSERVABLES:
                o = r["observables"][name]
                expected = r["rate"] * 1e9 / (size * size * 2 * o["tau_int"])
                self.assertAlmostEqual(o["samples_per_second"] / expected, 1.0, places=12)
            if label == "swendsen_wang":
                ref = runs[("metropolis", size)]
                gain = r["gain"]["m^2"]
                self.assertAlmostEqual(gain["value"],
                                       r["observables"]["m^2"]["samples_per_second"]
                                       / ref["observables"]["m^2"]["samples_per_second"],
                                       places=9)
                self.assertGreater(gain["error"], 0.0)
        x = {(e["label"], e["observable"]): e for e in d["extrapolated"]}
        fits = {(f["label"], f["observable"]): f["fit"] for f in d["fits"]}
        for label, rate in (("metropolis", 1.32), ("swendsen_wang", 0.125)):
            e = x[(label, "m^2")]
            fit = fits[(label, "m^2")]
            self.assertEqual((e["L"], e["volume"], e["rate"]), (1024, 1024.0 ** 2, rate))
            self.assertAlmostEqual(e["tau_int"], fit["A"] * 1024 ** fit["z"], places=6)
            self.assertAlmostEqual(e["samples_per_second"],
                                   rate * 1e9 / (1024.0 ** 2 * 2 * e["tau_int"]), places=6)
        sw, metropolis = x[("swendsen_wang", "m^2")], x[("metropolis", "m^2")]
        self.assertAlmostEqual(sw["gain"], sw["samples_per_second"]
                               / metropolis["samples_per_second"], places=9)
        self.assertEqual((metropolis["gain"], metropolis["gain_error"]), (1.0, 0.0))
        # the fitted exponents: 2 and 0.25
        self.assertLess(abs(fits[("metropolis", "e")]["z"] - 2.0),
                        4 * fits[("metropolis", "e")]["z_error"])
        self.assertLess(abs(fits[("swendsen_wang", "e")]["z"] - 0.25),
                        4 * fits[("swendsen_wang", "e")]["z_error"])
        # another rate at the extrapolated size, and another reference
        d = self.dynamics(*files, "--rates", side, "--extrapolate", "1024",
                          "--extrapolation-rate", "swendsen_wang=10", "--reference",
                          "swendsen_wang")
        x = {(e["label"], e["observable"]): e for e in d["extrapolated"]}
        self.assertEqual(x[("swendsen_wang", "e")]["rate"], 10.0)
        self.assertEqual(x[("swendsen_wang", "e")]["rate_from"], "--extrapolation-rate")
        self.assertEqual(x[("metropolis", "e")]["reference"], "swendsen_wang")
        self.assertLess(x[("metropolis", "e")]["gain"], 1.0)
        # the table and the figure
        figure = self.path("tau.png")
        status, out, err = call("dynamics", *files, "--rates", side, "--plot", figure)
        self.assertEqual(status, 0, err)
        for text in ("tau_int(m^2)", "gain over metropolis at the same L", "fits tau_int = A L^z",
                     "extrapolated to L = 4096", "swendsen_wang", "samples/s", f"plot: {figure}"):
            self.assertIn(text, out)
        with open(figure, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        report = self.path("d.json")
        status, out, err = call("dynamics", *files, f"--json={report}")
        self.assertEqual(status, 0, err)
        with open(report) as f:
            self.assertEqual(len(json.load(f)["runs"]), 6)

    def test_wolff_units_and_labels(self):
        files = [self.write_run(f"w{size}.h5", size, 2.0, 2.0, spacing=1, per_tau=500,
                                algorithm="wolff", improved=0.25 * size * size, clusters=2)
                 for size in (8, 16)]
        d = self.dynamics(*files)
        for r in d["runs"]:
            self.assertEqual((r["label"], r["wolff_clusters"]), ("wolff (2 clusters)", 2))
            w = r["wolff"]
            self.assertAlmostEqual(w["mean_cluster_size"], 0.25 * r["volume"])
            self.assertAlmostEqual(w["flipped_fraction_per_sweep"], 0.5)
            for name in dynamics.OBSERVABLES:
                self.assertAlmostEqual(w["tau_int_wolff_units"][name],
                                       0.5 * r["observables"][name]["tau_int"])
        self.assertTrue(any("reference algorithm 'metropolis'" in w for w in d["warnings"]))
        status, out, err = call("dynamics", *files, "--cut", "0")
        self.assertIn("Wolff: flipped fraction per sweep", out)
        self.assertIn("wolff (2 clusters)", out)

    def test_coarse_measurements_and_several_dimensions(self):
        # tau_int 2.4 sweeps, measured every 4: 0.6 measurements
        coarse = self.write_run("coarse.h5", 8, 2.4, 2.4, spacing=4, per_tau=3000)
        d = self.dynamics(coarse)
        self.assertTrue(any("do not resolve it" in w for w in d["warnings"]), d["warnings"])
        three = [self.write_run(f"c{size}.h5", size, 1.0 * size, 1.0 * size, spacing=1,
                                per_tau=300, d=3) for size in (4, 8)]
        d = self.dynamics(coarse, *three, "--extrapolate", "64")
        groups = {f["group"] for f in d["fits"]}
        self.assertEqual(groups, {"metropolis (ising 2D)", "metropolis (ising 3D)"})
        x = [e for e in d["extrapolated"] if e["d"] == 3]
        self.assertEqual(x[0]["volume"], 64.0 ** 3)

    def test_fit_sizes_and_refit_from_a_document(self):
        # the smallest size is off the power law (a correction to scaling): z = 1 only without it
        taus = {8: 40.0, 16: 16.0, 32: 32.0, 64: 64.0}
        files = [self.write_run(f"m{size}.h5", size, tau, tau, spacing=1, per_tau=1500)
                 for size, tau in taus.items()]
        rates = [a for size in taus for a in ("--rate", f"{size}=1.0")]
        everything = self.dynamics(*files, *rates)
        window = self.dynamics(*files, *rates, "--fit-sizes", "16:")
        self.assertEqual(window["fit_sizes"], [16.0, None])
        for f in window["fits"]:
            self.assertEqual(f["fit"]["sizes"], [16, 32, 64])
        self.assertEqual(len(window["runs"]), 4)  # every run is still listed
        fits = {f["observable"]: f["fit"] for f in window["fits"]}
        self.assertLess(abs(fits["m^2"]["z"] - 1.0), 4 * fits["m^2"]["z_error"], fits["m^2"])
        slope = {f["observable"]: f["fit"]["z"] for f in everything["fits"]}
        self.assertLess(slope["m^2"], 0.9)  # the point at L = 8 pulls the fit down
        upper = self.dynamics(*files, *rates, "--fit-sizes", "8:32")
        self.assertEqual(upper["fits"][0]["fit"]["sizes"], [8, 16, 32])
        # an earlier document refitted: the same runs, rates and, over all sizes, the same fits
        report = self.path("all.json")
        with open(report, "w") as f:
            json.dump(everything, f)
        again = self.dynamics(report)
        self.assertEqual([r["rate"] for r in again["runs"]], [1.0] * 4)
        self.assertEqual(again["fits"], everything["fits"])
        self.assertEqual(again["extrapolated"], everything["extrapolated"])
        refit = self.dynamics(report, "--fit-sizes", "16:", "--extrapolation-rate",
                              "metropolis=2")
        self.assertEqual(refit["fits"], window["fits"])
        x = {e["observable"]: e for e in refit["extrapolated"]}
        self.assertEqual(x["m^2"]["rate"], 2.0)
        status, out, err = call("dynamics", report, "--fit-sizes", "16:")
        self.assertEqual(status, 0, err)
        self.assertIn("fits tau_int = A L^z", out)
        self.assertIn("over L >= 16:", out)

    def test_bad_options(self):
        path = self.write_run("a.h5", 8, 2.0, 2.0, per_tau=100)
        for argv, text in ((("--fit-sizes", "64"), "MIN:MAX"),
                           (("--fit-sizes", "a:"), "not a number"),
                           (("--fit-sizes", "0:"), "positive"),
                           (("--fit-sizes", "64:16"), "MIN is above MAX"),
                           (("--rate", "x"), "KEY=VALUE"),
                           (("--extrapolation-rate", "wolff=no"), "--extrapolation-rate"),
                           (("--extrapolate", "0"), "positive"),
                           (("--plot", path), "not a figure path")):
            status, out, err = call("dynamics", path, *argv)
            self.assertEqual(status, 2, (argv, err))
            self.assertIn(text, err)
        status, out, err = call("dynamics", path, "--rates", self.path("missing.json"))
        self.assertEqual(status, 2)
        self.assertIn("missing.json", err)
        status, out, err = call("dynamics", path, self.path("missing.h5"))
        self.assertEqual(status, 1)  # the other file is still analysed
        self.assertIn("metropolis", out)
        other = self.path("other.json")  # a JSON file that is not a dynamics document
        with open(other, "w") as f:
            json.dump({"schema": "lattica-rates/1", "runs": []}, f)
        status, out, err = call("dynamics", path, other)
        self.assertEqual(status, 1)
        self.assertIn("not a dynamics document", err)
        self.assertIn("metropolis", out)


def lattica_chain(path, name):
    from analysis import lattica_file
    return lattica_file.load(path).chains[name]


@unittest.skipIf(SIM is None, "needs SIM_EXE")
class DriverTest(Scratch):
    """tests/bench/cluster_dynamics.py end to end on the CPU, at tiny sizes."""

    def test_driver(self):
        out_dir = self.path("bench")
        command = [sys.executable, str(DRIVER), out_dir, "--sim", SIM, "--backend", "cpu",
                   "--threads", "1", "--sizes", "4,8", "--replicas", "2", "--sweeps", "2000",
                   "--thermalization", "200", "--extrapolate", "64"]
        result = run(command, 280, merge_stderr=True, env=sim_env())
        self.assertEqual(result.returncode, 0, result.stdout)
        for text in ("swendsen_wang_2d_L8", "site updates/ns", "fits tau_int = A L^z",
                     "gain over metropolis"):
            self.assertIn(text, result.stdout)
        with open(os.path.join(out_dir, "rates_2d.json")) as f:
            rates = json.load(f)
        self.assertEqual(rates["schema"], "lattica-rates/1")
        self.assertEqual(len(rates["runs"]), 6)
        for r in rates["runs"]:
            self.assertGreater(r["site_updates_per_ns"], 0.0)
            self.assertGreater(r["wall_seconds"], 0.0)
            self.assertEqual(r["site_updates"], r["sweeps"] * r["volume"] * r["replicas"])
        with open(os.path.join(out_dir, "dynamics_2d.json")) as f:
            d = json.load(f)
        self.assertEqual({r["label"] for r in d["runs"]},
                         {"swendsen_wang", "wolff", "metropolis"})
        self.assertTrue(all(f["fit"] is not None for f in d["fits"]))
        self.assertTrue(all(r["rate_source"] == "--rates" for r in d["runs"]))
        for name in ("dynamics_2d.txt", "dynamics_2d.png", "wolff_2d_L8.toml"):
            self.assertTrue(os.path.exists(os.path.join(out_dir, name)), name)
        # one algorithm in a second call: the first call's runs stay in the rates file
        result = run(command[:-2] + ["--algorithms", "wolff", "--sizes", "wolff=4,8,16",
                                     "--extrapolate", "64"], 280, merge_stderr=True,
                     env=sim_env())
        self.assertEqual(result.returncode, 0, result.stdout)
        with open(os.path.join(out_dir, "rates_2d.json")) as f:
            self.assertEqual(len(json.load(f)["runs"]), 7)


if __name__ == "__main__":
    unittest.main()
