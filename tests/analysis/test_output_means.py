#!/usr/bin/python3
"""output.observables = "means" (issue 21: output that scales with many replicas).

    test_output_means.py SIM_EXE

The same chains written both ways: a 4x4 Ising run of 64 replicas, and a 4-ladder, 5-rung
tempered one. The means file's /observables must hold, per measurement, the mean over the
replicas (per rung over the ladders) of x, |x|, x^2 and x^4 of every observable x, equal to
those of the replicas file's series; /kept_replicas the first replicas' (ladders') series bit
for bit; the exact histograms the same counts; 8 values per measurement, not 128. `summary` of
the means file must give the replicas file's values; reweighting (which needs every
configuration) is refused with exit 2. The structure factor's and time-slice series of the
plain run hold the same means over the replicas (tempered runs take no spectra). A means run stopped at a checkpoint and extended with
--resume equals the straight run. Bad keys exit 2 naming the key. unittest test cases;
arguments after SIM_EXE go to unittest.
"""

import json
import os
import pathlib
import sys
import tempfile
import unittest

import h5py
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from script_support import analysis_env, positional_arguments, run, sim_env  # noqa: E402

TIMEOUT = 120
[SIM] = positional_arguments(1, __doc__)

PLAIN = """
[lattice]
dims = [4, 4]
[model]
kind = "ising"
beta = 0.4
[run]
thermalization = 100
measurements = 400
replicas = 64
seed = 3
threads = 1
[measure]
structure_factor = true
timeslice = true
"""

TEMPERED = """
[lattice]
dims = [4, 4]
[model]
kind = "ising"
[tempering]
beta = [0.2, 0.3, 0.4, 0.5, 0.6]
[run]
thermalization = 100
measurements = 400
replicas = 4
seed = 5
threads = 1
"""

MEANS = ['--set', 'output.observables="means"']
MOMENTS = {"{}": lambda x: x, "|{}|": np.abs, "{}^2": lambda x: x * x, "{}^4": lambda x: x ** 4}


class OutputMeansTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._scratch = tempfile.TemporaryDirectory(prefix="lattica_means_")
        cls.scratch = cls._scratch.name
        for name, text in (("plain", PLAIN), ("tempered", TEMPERED)):
            with open(cls.path(name + ".toml"), "w") as f:
                f.write(text)
        cls.sim("plain.toml", "plain_replicas.h5")
        cls.sim("plain.toml", "plain_means.h5", *MEANS, "--set", "output.kept_replicas=3")
        cls.sim("tempered.toml", "tempered_replicas.h5")
        cls.sim("tempered.toml", "tempered_means.h5", *MEANS, "--set", "output.kept_replicas=1")

    @classmethod
    def tearDownClass(cls):
        cls._scratch.cleanup()

    @classmethod
    def path(cls, name):
        return os.path.join(cls.scratch, name)

    @classmethod
    def sim(cls, source, out, *settings, expect=0):
        result = run([SIM, cls.path(source), "--backend", "cpu", "-o", cls.path(out), "-q",
                      "--force", *settings], TIMEOUT, env=sim_env())
        assert result.returncode == expect, result.stderr
        return result

    def analysis(self, *argv, expect=0):
        result = run([sys.executable, "-m", "analysis", *argv], TIMEOUT, env=analysis_env(),
                     cwd=self.scratch)
        self.assertEqual(result.returncode, expect, result.stderr)
        return result

    def check_means(self, replicas_file, means_file, ladders, rungs, kept):
        with h5py.File(self.path(replicas_file)) as a, h5py.File(self.path(means_file)) as b:
            self.assertEqual(b["observables"].attrs["averaged_over"], ladders)
            for name in ("energy", "magnetization"):
                series = a["observables"][name][()]  # [n, ladders x rungs], rung order
                by_rung = series.reshape(len(series), ladders, rungs)
                for pattern, power in MOMENTS.items():
                    want = power(by_rung).mean(axis=1)
                    got = b["observables"][pattern.format(name)][()]
                    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-13,
                                               atol=1e-15, err_msg=pattern.format(name))
                np.testing.assert_array_equal(b["kept_replicas"][name][()],
                                              series[:, :kept * rungs].reshape(
                                                  b["kept_replicas"][name].shape))
                np.testing.assert_array_equal(a[f"histograms/{name}/counts"][()],
                                              b[f"histograms/{name}/counts"][()])
            np.testing.assert_array_equal(a["observables/sweep"][()],
                                          b["observables/sweep"][()])

    def check_correlator_means(self, replicas_file, means_file, ladders, rungs):
        """S(0), S(k_min) and C(dt, p) are the replicas' means, xi2 from them."""
        with h5py.File(self.path(replicas_file)) as a, h5py.File(self.path(means_file)) as b:
            for series, names in (("correlators/structure_factor/series", ("s0", "s_min")),
                                  ("correlators/timeslice", ("C",))):
                self.assertEqual(b[series].attrs["averaged_over"], ladders)
                for name in names:
                    full = a[series][name][()]  # [n, ladders x rungs, ...], rung order
                    want = full.reshape((len(full), ladders, rungs) + full.shape[2:]).mean(axis=1)
                    got = b[series][name][()]
                    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-12,
                                               atol=1e-14, err_msg=f"{series}/{name}")
                np.testing.assert_array_equal(a[series]["sweep"][()], b[series]["sweep"][()])
            sf = b["correlators/structure_factor/series"]
            s0, s_min = sf["s0"][()], sf["s_min"][()]
            want = np.sqrt(s0 / s_min - 1) / (2 * np.sin(np.pi / 4))
            want[~(s0 > s_min)] = np.nan
            np.testing.assert_allclose(sf["xi2"][()], want, rtol=1e-12, equal_nan=True)
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
        from analysis import lattica_file
        run_ = lattica_file.load(self.path(means_file))
        self.assertEqual(run_.warnings, [])
        self.assertEqual(run_.timeslice.replicas, rungs)
        self.assertEqual(run_.structure_factor.chain("s0").shape[1], rungs)
        # Values stored per measurement: S(0), S(k_min), xi2 once, not per replica.
        with h5py.File(self.path(means_file)) as f:
            self.assertEqual(f["correlators/structure_factor/series/s0"].shape, (400,))

    def test_plain_means_are_the_replicas_means(self):
        self.check_means("plain_replicas.h5", "plain_means.h5", 64, 1, 3)
        self.check_correlator_means("plain_replicas.h5", "plain_means.h5", 64, 1)
        # Values stored per measurement: 4 moments of 2 observables, not 64 replicas of 2.
        for name, per_row in (("plain_means.h5", 8), ("plain_replicas.h5", 128)):
            with h5py.File(self.path(name)) as f:
                values = sum(d.size for k, d in f["observables"].items() if k != "sweep")
                self.assertEqual(values, per_row * len(f["observables/sweep"]), name)

    def test_tempered_means_are_each_rungs_means(self):
        self.check_means("tempered_replicas.h5", "tempered_means.h5", 4, 5, 1)
        with h5py.File(self.path("tempered_means.h5")) as f:
            self.assertEqual(sorted(k for k in f["tempering"] if isinstance(f["tempering"][k],
                                                                            h5py.Dataset)),
                             ["beta", "h", "sweep"])  # no per-slot series
        doc = json.loads(self.analysis("tempering", "tempered_means.h5", "--json").stdout)
        full = json.loads(self.analysis("tempering", "tempered_replicas.h5", "--json").stdout)
        for mine, theirs in zip(doc["files"][0]["rungs"], full["files"][0]["rungs"]):
            a, b = mine["observables"]["energy"], theirs["observables"]["energy"]
            self.assertAlmostEqual(a["value"], b["value"], delta=1e-12)
        self.analysis("tempering", "tempered_means.h5", "--reweight", "0.35", expect=2)

    def test_summary_of_means_is_the_replicas_summary(self):
        means = json.loads(self.analysis("summary", "plain_means.h5", "--json").stdout)
        full = json.loads(self.analysis("summary", "plain_replicas.h5", "--json").stdout)
        means, full = means["files"][0], full["files"][0]
        self.assertEqual(means["cut"], full["cut"])
        self.assertEqual(means["averaged_over"], 64)
        for group in ("observables", "derived"):
            for name in ("e", "|m|", "m^2", "m^4", "e^2", "U4", "chi", "C"):
                if name not in full[group]:
                    continue
                got, want = means[group][name], full[group][name]
                key = "value" if "value" in want else "mean"
                # Primaries: the same mean to rounding. Derived quantities: the Gamma method's
                # bias correction depends on how the data are split, far below the error.
                tolerance = (1e-12 * abs(want[key]) + 1e-15 if group == "observables"
                             else 0.05 * want["error"])
                self.assertAlmostEqual(got[key], want[key], delta=tolerance, msg=name)
                # The error from 1 mean series and from 64 series: the same quantity, estimated
                # both ways (the Gamma method's own error of the error is ~10 % here).
                self.assertLess(abs(got["error"] / want["error"] - 1), 0.3, msg=name)
        for command in (("reweight", "plain_means.h5", "--beta", "0.41"),
                        ("crossing", "plain_means.h5", "plain_replicas.h5")):
            result = self.analysis(*command, expect=2)
            self.assertIn("means", result.stderr)

    def test_resumed_means_run_is_the_straight_run(self):
        extra = MEANS + ["--set", "output.kept_replicas=2", "--set", "run.checkpoint_every=150"]
        self.sim("plain.toml", "straight.h5", *extra)
        self.sim("plain.toml", "resumed.h5", *extra, "--set", "run.measurements=100")
        result = run([SIM, self.path("plain.toml"), "--backend", "cpu", "-o",
                      self.path("resumed.h5"), "-q", "--resume", *extra], TIMEOUT, env=sim_env())
        self.assertEqual(result.returncode, 0, result.stderr)
        with h5py.File(self.path("straight.h5")) as a, h5py.File(self.path("resumed.h5")) as b:
            for group in ("observables", "kept_replicas"):
                self.assertEqual(sorted(a[group]), sorted(b[group]))
                for name in a[group]:
                    np.testing.assert_array_equal(a[group][name][()], b[group][name][()],
                                                  err_msg=f"{group}/{name}")

    def test_bad_keys_exit_2_naming_them(self):
        cases = [(["--set", "output.kept_replicas=2"], "output.kept_replicas"),
                 (MEANS + ["--set", "output.kept_replicas=65"], "output.kept_replicas"),
                 (['--set', 'output.observables="average"'], "output.observables")]
        for settings, key in cases:
            result = self.sim("plain.toml", "bad.h5", *settings, expect=2)
            self.assertIn(key, result.stderr)
            self.assertFalse(os.path.exists(self.path("bad.h5")))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[2:])
