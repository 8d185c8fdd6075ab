#!/usr/bin/python3
"""The reader and the commands on synthetic files written with synthetic.py (this directory).

Covers: observables [n] and [n, R] normalised to [n, R]; committed_length truncation;
replica-count and histogram consistency checks; sweep index .json expansion (a missing point
is reported and skipped); summary (table and --json, R = 4, automatic and given cut, drift);
reweight at the simulated beta equals the plain means; crossing reports curves that do not
cross; plot writes its figures; --json refuses to overwrite a data file; --help everywhere.
Run: /usr/bin/python3 tests/analysis/test_reader_cli.py
"""

import json
import os
import pathlib
import subprocess
import sys
import unittest

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from script_support import ScratchCase, analysis_env, ar1, call_analysis  # noqa: E402

import synthetic  # noqa: E402

from analysis import gamma, lattica_file  # noqa: E402


def ising_like(rng, n, replicas, volume, a=0.6, e_mean=-1.4, m_scale=0.5):
    """Per-site e and m on the lattice grids (e = integer/V, m = integer/V) with
    autocorrelated fluctuations; shapes [n] for one replica, else [n, R]."""
    shape = (n, replicas)
    e = np.rint((e_mean + 0.05 * ar1(rng, a, shape)) * volume) / volume
    m = np.rint(np.clip(m_scale * ar1(rng, a, shape), -1, 1) * volume) / volume
    if replicas == 1:
        return e[:, 0], m[:, 0]
    return e, m


call = call_analysis  # the command line, in this process: (status, stdout, stderr)


class Scratch(ScratchCase):
    prefix = "lattica_reader_"
    seed = 1234


class ReaderTest(Scratch):
    def test_replicas_and_truncation(self):
        e, m = ising_like(self.rng, 500, 3, 64)
        path = synthetic.write_run(self.path("r3.h5"), e, m, beta=0.4, dims=(8, 8),
                                   committed_length=480, extra_rows=25, point_index=2)
        run = lattica_file.load(path)
        self.assertEqual(run.replicas, 3)
        self.assertEqual(run.point_index, 2)
        self.assertEqual(len(run), 480)
        self.assertEqual(run.chains["energy"].shape, (480, 3))
        self.assertEqual(run.observables["magnetization"].shape, (480, 3))
        np.testing.assert_array_equal(run.chains["energy"], e[:480])
        np.testing.assert_array_equal(run.sweep, np.arange(1, 481))
        self.assertEqual(run.volume, 64)
        self.assertEqual(run.snapshots.frame_shape, (3, 8, 8))

    def test_one_replica_without_attribute(self):
        e, m = ising_like(self.rng, 200, 1, 16)
        path = synthetic.write_run(self.path("r1.h5"), e, m, beta=0.4, dims=(4, 4),
                                   committed_length=150, extra_rows=3)
        run = lattica_file.load(path)
        self.assertNotIn("replicas", run.attrs)
        self.assertEqual(run.replicas, 1)
        self.assertIsNone(run.point_index)
        self.assertEqual(run.observables["energy"].shape, (150,))  # as stored
        self.assertEqual(run.chains["energy"].shape, (150, 1))  # normalised
        np.testing.assert_array_equal(run.chains["magnetization"][:, 0], m[:150])

    def test_one_replica_stored_2d(self):
        e, m = ising_like(self.rng, 100, 1, 16)
        path = synthetic.write_run(self.path("r1.h5"), e[:, None], m[:, None], beta=0.4,
                                   dims=(4, 4), replicas=1)
        self.assertEqual(lattica_file.load(path).chains["energy"].shape, (100, 1))

    def test_replica_mismatch_and_bad_length(self):
        e, m = ising_like(self.rng, 100, 2, 16)
        path = synthetic.write_run(self.path("bad.h5"), e, m, beta=0.4, dims=(4, 4),
                                   replicas=3)
        with self.assertRaisesRegex(lattica_file.SchemaError, "replicas = 3"):
            lattica_file.load(path)
        path = synthetic.write_run(self.path("long.h5"), e, m, beta=0.4, dims=(4, 4),
                                   committed_length=101)
        with self.assertRaisesRegex(lattica_file.SchemaError, "committed_length is 101"):
            lattica_file.load(path)

    def test_histograms(self):
        e, m = ising_like(self.rng, 300, 2, 16)
        hist = synthetic.exact_histograms(e, m, 16)
        path = synthetic.write_run(self.path("h.h5"), e, m, beta=0.4, dims=(4, 4),
                                   histograms=hist)
        run = lattica_file.load(path)
        self.assertEqual(sorted(run.histograms), ["energy", "magnetization"])
        h = run.histograms["energy"]
        self.assertEqual(h.samples, 600)
        self.assertAlmostEqual(h.mean() / 16, float(e.mean()), places=12)
        self.assertEqual(run.warnings, [])
        path = synthetic.write_run(self.path("hbad.h5"), e, m, beta=0.4, dims=(4, 4),
                                   histograms=hist, histogram_lengths={"energy": 599})
        run = lattica_file.load(path)
        self.assertEqual(sorted(run.histograms), ["magnetization"])
        self.assertTrue(any("599" in w for w in run.warnings), run.warnings)

    def test_index_expansion(self):
        sub = self.path("sweep")
        os.makedirs(sub)
        points = []
        for i, beta in enumerate((0.40, 0.42, 0.44)):
            if i != 1:  # point 1 never ran
                e, m = ising_like(self.rng, 200, 1, 16)
                synthetic.write_run(os.path.join(sub, f"fss.{i}.h5"), e, m, beta=beta,
                                    dims=(4, 4), point_index=i)
            points.append({"file": f"fss.{i}.h5", "parameters": {"model.beta": beta},
                           "seed": 7 + i})
        index = synthetic.write_index(os.path.join(sub, "fss.index.json"), points,
                                      swept=["model.beta"])
        messages = []
        files = lattica_file.expand_paths([index], report=messages.append)
        self.assertEqual([os.path.basename(f) for f in files], ["fss.0.h5", "fss.2.h5"])
        self.assertEqual(len(messages), 1)
        self.assertIn("fss.1.h5", messages[0])
        self.assertIn("model.beta = 0.42", messages[0])
        # relative to the index's directory, whatever the working directory
        self.assertTrue(all(os.path.isabs(f) and os.path.exists(f) for f in files))
        # plain files pass through, in order
        files = lattica_file.expand_paths(["x.h5", index, "y.h5"])
        self.assertEqual(files[0], "x.h5")
        self.assertEqual(files[-1], "y.h5")
        # through the command line: the missing point on stderr, status still 0
        status, out, err = call("summary", index, "--json")
        self.assertEqual(status, 0, err)
        self.assertIn("fss.1.h5", err)
        self.assertEqual([s["point_index"] for s in json.loads(out)["files"]], [0, 2])
        status, out, err = call("info", index)
        self.assertEqual(status, 0, err)
        self.assertIn("point      2", out)
        # a JSON file that is not an index
        other = self.path("other.json")
        with open(other, "w") as f:
            json.dump({"schema": "something/1"}, f)
        with self.assertRaisesRegex(lattica_file.SchemaError, "lattica-index/1"):
            lattica_file.expand_paths([other])
        status, _, err = call("summary", other)
        self.assertEqual(status, 1)
        self.assertIn("lattica-index/1", err)


class CommandTest(Scratch):
    def test_summary_replicas(self):
        volume = 64
        e, m = ising_like(self.rng, 4000, 4, volume)
        path = synthetic.write_run(self.path("s.h5"), e, m, beta=0.43, dims=(8, 8),
                                   sweep=10 + 5 * np.arange(1, 4001))
        status, out, err = call("summary", path, "--json")
        self.assertEqual(status, 0, err)
        s = json.loads(out)["files"][0]
        self.assertEqual((s["replicas"], s["L"], s["volume"], s["beta"], s["h"]),
                         (4, 8, 64, 0.43, 0.0))
        self.assertEqual(s["cut"], 0)  # stationary from the start
        self.assertEqual(s["measurements_used"], 16000)
        self.assertEqual(s["sweep_spacing"], 5.0)
        g = gamma.analyse(e)
        o = s["observables"]["e"]
        self.assertAlmostEqual(o["mean"], g.value, places=12)
        self.assertAlmostEqual(o["error"], g.error, places=12)
        self.assertAlmostEqual(o["tau_int_sweeps"], 5 * o["tau_int"], places=12)
        exact_tau = 0.5 * 1.6 / 0.4  # the AR(1) fluctuations, a = 0.6
        self.assertLess(abs(o["tau_int"] - exact_tau), 4 * o["tau_int_error"])
        u4 = gamma.analyse_derived(lambda a: 1 - a[0] / (3 * a[1] ** 2), [m ** 4, m ** 2])
        self.assertAlmostEqual(s["derived"]["U4"]["value"], u4.value, places=12)
        self.assertEqual(sorted(s["derived"]), ["C", "U4", "chi", "chi'"])
        c = s["derived"]["C"]
        self.assertAlmostEqual(c["value"], 0.43 ** 2 * 64 * (np.mean(e * e) - np.mean(e) ** 2),
                               delta=c["error"])
        # the table, and a JSON file next to it
        report = self.path("s.json")
        status, out, err = call("summary", path, f"--json={report}")
        self.assertEqual(status, 0, err)
        for text in ("U4", "chi'", "tau_int", "replicas = 4", "8x8"):
            self.assertIn(text, out)
        with open(report) as f:
            self.assertEqual(json.load(f)["files"][0]["replicas"], 4)

    def test_cut(self):
        e, m = ising_like(self.rng, 8000, 1, 64, a=0.3)
        e[:1500] += np.linspace(0.6, 0.0, 1500)  # a relaxation from a hot start
        path = synthetic.write_run(self.path("c.h5"), e, m, beta=0.43, dims=(8, 8), h=0.05)
        status, out, err = call("summary", path, "--json")
        self.assertEqual(status, 0, err)
        s = json.loads(out)["files"][0]
        self.assertEqual(s["cut"], 2000)  # 1/4: the first candidate past the drift
        self.assertTrue(s["drift_free"])
        self.assertIn("chi_c", s["derived"])  # h != 0
        self.assertNotIn("chi'", s["derived"])
        status, out, err = call("summary", path, "--cut", "1600", "--json")
        self.assertEqual(json.loads(out)["files"][0]["cut"], 1600)
        # a series that drifts throughout
        e = np.linspace(-1.0, -1.8, 8000)
        path = synthetic.write_run(self.path("d.h5"), e, m, beta=0.43, dims=(8, 8))
        status, out, err = call("summary", path)
        self.assertEqual(status, 0, err)
        self.assertIn("drifts", out)

    def test_reweight_at_simulated_beta(self):
        volume = 64
        e, m = ising_like(self.rng, 6000, 2, volume)
        path = synthetic.write_run(self.path("w.h5"), e, m, beta=0.43, dims=(8, 8))
        status, out, err = call("reweight", path, "--beta", "0.43", "0.44", "--cut", "0",
                                "--json")
        self.assertEqual(status, 0, err)
        d = json.loads(out)
        at = d["points"][0]
        self.assertAlmostEqual(at["e"]["value"], float(e.mean()), places=12)
        self.assertAlmostEqual(at["m^2"]["value"], float((m * m).mean()), places=12)
        self.assertAlmostEqual(at["ess_fraction"], 1.0, places=12)
        # the jackknife error of the mean agrees with the Gamma method
        self.assertLess(abs(at["e"]["error"] / gamma.analyse(e).error - 1), 0.25)
        self.assertLess(d["points"][1]["e"]["value"], at["e"]["value"])  # larger beta, lower e
        status, out, err = call("reweight", path, "--beta", "0.43", "0.44")
        self.assertEqual(status, 0, err)
        self.assertIn("jackknife", out)

    def test_crossing_without_crossing(self):
        # e independent of m, so U4 does not change under reweighting: L = 4 has
        # |m| = 1/2 always (U4 = 2/3), L = 8 Gaussian m (U4 near 0). No crossing.
        files = []
        for size, beta in ((4, 0.40), (4, 0.44), (8, 0.40), (8, 0.44)):
            volume = size * size
            e = np.rint((-1.4 + 0.1 * ar1(self.rng, 0.3, (3000,))) * volume) / volume
            if size == 4:
                m = np.where(self.rng.random(3000) < 0.5, -0.5, 0.5)
            else:
                m = np.rint(0.3 * self.rng.standard_normal(3000) * volume) / volume
            files.append(synthetic.write_run(self.path(f"x{size}_{beta}.h5"), e, m, beta=beta,
                                             dims=(size, size)))
        status, out, err = call("crossing", *files, "--json")
        self.assertEqual(status, 0, err)
        pair = json.loads(out)["pairs"][0]
        self.assertEqual(pair["status"], "no crossing")
        self.assertEqual(pair["crossings"], [])
        self.assertIn("U4(L = 4) > U4(L = 8)", pair["message"])
        status, out, err = call("crossing", *files)
        self.assertIn("NO CROSSING", out)
        status, out, err = call("crossing", files[0], files[1])
        self.assertIn("fewer than two lattice sizes", out)

    def test_plot(self):
        files = []
        for size in (4, 8):
            for beta in (0.40, 0.44):
                volume = size * size
                e, m = ising_like(self.rng, 2000, 1 if size == 4 else 2, volume)
                hist = synthetic.exact_histograms(e, m, volume) if size == 8 else None
                files.append(synthetic.write_run(self.path(f"p{size}_{beta}.h5"), e, m,
                                                 beta=beta, dims=(size, size), histograms=hist))
        out_dir = self.path("figures")
        status, out, err = call("plot", *files, "--out", out_dir)
        self.assertEqual(status, 0, err)
        written = out.split()
        self.assertEqual(len(written), 3 * len(files) + 1)
        self.assertTrue(any(p.endswith("vs_beta.png") for p in written))
        for p in written:
            with open(p, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", p)

    def test_json_guard_and_errors(self):
        e, m = ising_like(self.rng, 200, 1, 16)
        a = synthetic.write_run(self.path("a.h5"), e, m, beta=0.4, dims=(4, 4))
        b = synthetic.write_run(self.path("b.h5"), e, m, beta=0.4, dims=(4, 4))
        before = os.path.getsize(a)
        status, _, err = call("summary", "--json", a, b)
        self.assertEqual(status, 2)
        self.assertIn("not a report path", err)
        self.assertEqual(os.path.getsize(a), before)
        self.assertEqual(lattica_file.load(a).attrs["schema"], "lattica/1")
        status, out, err = call("summary", a, self.path("missing.h5"))
        self.assertEqual(status, 1)
        self.assertIn("missing.h5", err)
        self.assertIn("a.h5", out)

    def test_values_that_are_not_finite(self):
        # Files from before sim refused overflowing couplings hold -inf or NaN: every command
        # that analyses the series says where (exit status 1), none raises.
        e, m = ising_like(self.rng, 200, 2, 16)
        e_inf = e.copy()
        e_inf[7, 1] = -np.inf
        m_nan = m.copy()
        m_nan[3, 0] = np.nan
        inf = synthetic.write_run(self.path("inf.h5"), e_inf, m, beta=0.4, dims=(4, 4))
        nan = synthetic.write_run(self.path("nan.h5"), e, m_nan, beta=0.4, dims=(4, 4))
        for path, found in ((inf, "energy is -inf at sweep 8 (replica 1)"),
                            (nan, "magnetization is nan at sweep 4 (replica 0)")):
            for command in (("summary", path), ("reweight", path, "--beta", "0.41"),
                            ("crossing", path), ("plot", path, "--out", self.path("figures"))):
                status, _, err = call(*command)
                self.assertEqual(status, 1, command)
                self.assertIn(found, err, command)
                self.assertIn("not finite", err, command)
            status, out, err = call("info", path)
            self.assertEqual(status, 0, err)
            self.assertIn("not finite", out + err)
        # An enormous but finite beta (sim allows it where its tables stay finite) is analysed:
        # beta^2 V overflows to inf, reported as not finite instead of raising.
        cold = synthetic.write_run(self.path("cold.h5"), e, m, beta=1e300, dims=(4, 4))
        status, out, err = call("summary", cold, "--json")
        self.assertEqual(status, 0, err)
        warnings = json.loads(out)["files"][0]["warnings"]
        self.assertTrue(any(w.startswith("C:") for w in warnings), warnings)
        status, _, err = call("reweight", cold, "--beta", "1e300")
        self.assertEqual(status, 0, err)

    def test_help(self):
        for command in ("info", "summary", "reweight", "crossing", "plot"):
            status, out, _ = call(command, "--help")
            self.assertEqual(status, 0)
            self.assertIn("usage:", out)
        status, out, _ = call("--help")
        self.assertIn("crossing", out)

    def test_module_entry_point(self):
        e, m = ising_like(self.rng, 100, 1, 16)
        path = synthetic.write_run(self.path("i.h5"), e, m, beta=0.4, dims=(4, 4))
        result = subprocess.run([sys.executable, "-m", "analysis", "info", path],
                                env=analysis_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("replicas   1", result.stdout)


if __name__ == "__main__":
    unittest.main()
